// Builtin scalar types and enums of the CCE compiler that the official headers use
// (stand-ins shared by stub_def.h and stub_fun.h). Declares no AscendC API.
#ifndef AF_ASCENDC_STANDIN_TYPES_H
#define AF_ASCENDC_STANDIN_TYPES_H

#include <cstdint>

// pipelines and events of the vector core
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4, PIPE_MTE5,
              PIPE_V2, PIPE_FIX, PIPE_MTE, PIPE_NUM };
enum event_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

// rounding modes of the conversion builtins
enum class ROUND { R = 0, A, F, C, Z, O, H, CAST_RINT = 0, CAST_ROUND, CAST_FLOOR, CAST_CEIL, CAST_TRUNC,
                   CAST_ODD, CAST_HYBRID };
enum class RoundingSaturation { RS_DISABLE_VALUE = 0, RS_ENABLE_VALUE = 1 };

// operand enums of the intrinsics (vector load/store distributions, predicate patterns,
// conversion parts, ...); the headers pass them through to the builtins
enum Dist { DIST_NORM = 0, DIST_BRC_B16, DIST_BRC_B32, DIST_DINTLV_B32, DIST_INTLV_B32, DIST_PK, DIST_US };
enum DistVST { DIST_VST_NORM = 0 };
enum Post { POST_UPDATE = 0, POST_UPDATE_VALUE = 0, NO_POST_UPDATE = 1 };
enum Part { PART_EVEN = 0, PART_ODD };
enum Part_T { PART_P0 = 0, PART_P1, PART_P2, PART_P3 };
enum HiloPart { LOWER = 0, HIGHER };
enum Pat { PAT_ALL = 0, PAT_ALLF };
enum Pos { LOWEST = 0 };
enum Order { INC_ORDER_VALUE = 0 };
enum Mode { MODE_ZEROING = 0, MODE_MERGING, MODE_UNKNOWN, MERGING = 1, ZEROING = 0 };
enum CpuMode { CPU_MODE_DEFAULT = 0 };
enum StoreMode { STORE_MODE_DEFAULT = 0 };
enum Spr { SPR_DEFAULT = 0 };
enum Bin { BIN_DEFAULT = 0 };
enum RoundModeConst { ROUND_R = 0, ROUND_A, ROUND_F, ROUND_C, ROUND_Z, ROUND_O };
enum SatModeConst { RS_DISABLE = 0, RS_ENABLE };
enum LoadDirection { inc = 0, dec };
enum VaReg { VA0 = 0, VA1, VA2, VA3 };
enum MemBarKind { VST_VLD = 0, VLD_VST, VST_VST, VST_LD, VST_ST, VLD_ST, ST_VLD, ST_VST, LD_VST, VV_ALL, VS_ALL,
                  SV_ALL };
enum mem_t { MEM_DEFAULT = 0 };
enum mem_dsb_t { DSB_DEFAULT = 0 };
enum dcci_dst_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
enum cache_line_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum atomic_type_t { ATOMIC_TYPE_DEFAULT = 0 };
enum atomic_op_t { ATOMIC_OP_DEFAULT = 0 };
enum class pad_t { PAD_NONE = 0 };
enum KernelMode { MIX_MODE = 0, AIC_MODE, AIV_MODE };
enum class QuantMode_post { NoConv = 0 };
enum QuantMode_t { NoQuant = 0, DEQF16, DEQS16, F322BF16, F322F16, QF162B8_PRE, QF162S16_PRE, QF162S4_PRE,
                   QF322B8_PRE, QF322BF16_PRE, QF322F16_PRE, QF322F32_PRE, QF322FP8_PRE, QF322HIF8_PRE,
                   QF322HIF8_PRE_HYBRID, QS322BF16_PRE, REQ4, REQ8, VDEQF16, VDEQS16, VQF162B8_PRE,
                   VQF162S16_PRE, VQF162S4_PRE, VQF322B8_PRE, VQF322BF16_PRE, VQF322F16_PRE, VQF322F32_PRE,
                   VQF322FP8_PRE, VQF322HIF8_PRE, VQF322HIF8_PRE_HYBRID, VQS322BF16_PRE, VREQ4, VREQ8 };
enum class Fp32BasicParam : uint32_t {
    K_FP32_SIGN_INDEX = 31, K_FP32_EXP_BIAS = 127, K_FP32_MAN_LEN = 23, K_FP32_MAN_HIDE_BIT = 0x800000,
    K_FP32_MAX_EXP = 0xFF, K_FP32_MAN_MASK = 0x7FFFFF, K_FP32_EXP_MASK = 0x7F800000, K_FP32_ABS_MAX = 0x7FFFFFFF,
    K_FP32_SIGN_MASK = 0x80000000,
};
constexpr uint32_t FP32_MAN_MASK = 0x7FFFFF;

// CUDA-like small vector types of the SIMT side
struct float1 { float x; };
struct float2 { float x, y; };
struct float3 { float x, y, z; };
struct float4 { float x, y, z, w; };
struct int1 { int x; };
struct int2 { int x, y; };
struct int3 { int x, y, z; };
struct int4 { int x, y, z, w; };
struct long1 { long x; };
struct long2 { long x, y; };
struct long3 { long x, y, z; };
struct long4 { long x, y, z, w; };

// narrow float storage types: one byte (or two packed nibbles) each
#define AF_STANDIN_BYTE_TYPE(name)                                                  \
    struct name {                                                                    \
        uint8_t val = 0;                                                             \
        name() = default;                                                            \
        template <typename T, typename = typename std::enable_if<std::is_arithmetic<T>::value>::type> \
        name(T v) : val(static_cast<uint8_t>(v)) {}                                  \
        operator float() const { return static_cast<float>(val); }                  \
        float ToFloat() const { return static_cast<float>(val); }                   \
    };
AF_STANDIN_BYTE_TYPE(fp4x2_e1m2_t)
AF_STANDIN_BYTE_TYPE(fp4x2_e2m1_t)
AF_STANDIN_BYTE_TYPE(fp8_e4m3fn_t)
AF_STANDIN_BYTE_TYPE(fp8_e5m2_t)
AF_STANDIN_BYTE_TYPE(fp8_e8m0_t)
AF_STANDIN_BYTE_TYPE(hifloat8_t)
AF_STANDIN_BYTE_TYPE(int4x2_t)
#undef AF_STANDIN_BYTE_TYPE

struct float8_e4m3x2_t { fp8_e4m3fn_t x; fp8_e4m3fn_t y; };
struct float8_e5m2x2_t { fp8_e5m2_t x; fp8_e5m2_t y; };
struct hifloat8x2_t { hifloat8_t x; hifloat8_t y; };

struct half2 { half x; half y; };
struct bfloat16x2_t { bfloat16_t x; bfloat16_t y; };

#endif
