// af_twin/reg_core.h
// One family of the register API that af_twin/reg.h includes (reg.h says what the twin emulates, checks and
// counts): the register types (RegTensor, MaskReg, the unaligned registers), the checks and counting helpers every
// family uses (RegCore, RegUbRange, RegRate, RegCount, RegAccount), 64-bit lanes over a register pair, and
// asc_vf_call.
#ifndef AF_TWIN_REG_CORE_H
#define AF_TWIN_REG_CORE_H

#include <cmath>
#include <limits>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "api_dtypes.h"
#include "core.h"
#include "runtime.h"
#include "tensor.h"
#include "vector.h"

#ifndef __simd_vf__
#define __simd_vf__
#endif
#ifndef __simd_callee__
#define __simd_callee__
#endif

namespace AscendC {
#ifndef AF_TWIN_REDUCE_TYPE
#define AF_TWIN_REDUCE_TYPE
enum class ReduceType { NONE = -1, SUM = 0, MAX, MIN };  // impl/utils/common_types.h
#endif
namespace Reg {

using ReduceType = AscendC::ReduceType;
enum class MaskMergeMode { UNKNOWN, MERGING, ZEROING };
enum class MaskPattern { ALL, VL1, VL2, VL3, VL4, VL8, VL16, VL32, VL64, VL128, M3, M4, H, Q, ALLF = 15 };
enum class RegLayout { UNKNOWN = -1, ZERO, ONE, TWO, THREE };
enum class SatMode { UNKNOWN = -1, NO_SAT, SAT };
// The official distribution modes; the twin emulates DIST_NORM, DIST_UNPACK_B16, DIST_UNPACK_B8 and DIST_UNPACK4_B8
// loads, the dual DIST_DINTLV_B8 / B16 / B32 loads,
// DIST_NORM, DIST_PACK_B32 / B16, DIST_PACK4_B32 (4-byte registers) and DIST_FIRST_ELEMENT_B32 / B16 stores and
// the dual DIST_INTLV_B32 store (the others fail a static_assert).
enum class LoadDist {
    DIST_NORM,
    DIST_BRC_B8,
    DIST_BRC_B16,
    DIST_BRC_B32,
    DIST_US_B8 = 6,
    DIST_US_B16,
    DIST_DS_B8,
    DIST_DS_B16,
    DIST_BDINTLV,
    DIST_DINTLV_B8,
    DIST_DINTLV_B16,
    DIST_UNPACK_B8,
    DIST_UNPACK_B16,
    DIST_BLK,
    DIST_E2B_B16,
    DIST_E2B_B32,
    DIST_UNPACK_B32,
    DIST_DINTLV_B32,
    DIST_UNPACK4_B8,
    DIST_SPLT4CHN_B8,
    DIST_SPLT2CHN_B8,
    DIST_SPLT2CHN_B16,
};
enum class StoreDist {
    DIST_NORM_B8,
    DIST_NORM_B16,
    DIST_NORM_B32,
    DIST_FIRST_ELEMENT_B8,
    DIST_FIRST_ELEMENT_B16,
    DIST_FIRST_ELEMENT_B32,
    DIST_PACK_B16,
    DIST_PACK_B32,
    DIST_INTLV_B8,
    DIST_INTLV_B16,
    DIST_PACK_B64,
    DIST_INTLV_B32,
    DIST_PACK4_B32,
    DIST_MRG4CHN_B8,
    DIST_MRG2CHN_B8,
    DIST_MRG2CHN_B16,
    DIST_NORM
};
struct DefaultType {};

struct CastTrait {
    RegLayout layoutMode = RegLayout::UNKNOWN;
    SatMode satMode = SatMode::UNKNOWN;
    MaskMergeMode mrgMode = MaskMergeMode::UNKNOWN;
    RoundMode roundMode = RoundMode::UNKNOWN;
};
constexpr CastTrait castTrait = {RegLayout::UNKNOWN, SatMode::UNKNOWN, MaskMergeMode::UNKNOWN, RoundMode::UNKNOWN};

struct RegTrait {
    int REG_NUM = 1;
};
constexpr RegTrait RegTraitNumOne = {1};
constexpr RegTrait RegTraitNumTwo = {2};

constexpr uint32_t kVecBytes = 256;  // one vector register

template <typename T>
constexpr uint32_t LanesOf() {
    return kVecBytes / static_cast<uint32_t>(sizeof(T));
}

// may_alias: generated code (like the 3510 implementation) reinterprets a register as one of another element
// type of the same size, `(RegTensor<float>&)intReg`; every RegTensor of one element size has one layout.
template <typename T, const RegTrait& regTrait = RegTraitNumOne>
struct __attribute__((may_alias)) RegTensor {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "RegTensor: the twin emulates registers of 1-, 2-, 4- and 8-byte elements only");
    static_assert(regTrait.REG_NUM == 1, "RegTensor: the twin emulates RegTraitNumTwo for 64-bit elements only");
    using ActualT = T;
    static constexpr int REG_NUM = 1;
    static constexpr uint32_t kLanes = LanesOf<T>();
    RegTensor() { std::memset(afWritten, 0, sizeof afWritten); }
    // --- twin internals: the lanes and, per lane, whether an instruction wrote it under a mask.
    T afLane[kLanes]{};
    bool afWritten[kLanes];
};

static_assert(sizeof(RegTensor<float>) == sizeof(RegTensor<int32_t>), "register reinterpretation keeps the layout");

// A RegTraitNumTwo register of 64-bit elements: a pair of 4-byte registers, reg[0] the low words and reg[1] the
// high words of 64 elements (what the 3510 LoadAlign of one fills with DIST_DINTLV_B32, and what its Cast to
// float reads). The twin emulates it for that load and that Cast only.
template <typename T>
struct RegTensor<T, RegTraitNumTwo> {
    static_assert(sizeof(T) == 8, "RegTensor<T, RegTraitNumTwo>: the twin emulates register pairs of 64-bit "
                  "elements only");
    using ActualT = T;
    static constexpr int REG_NUM = 2;
    static constexpr uint32_t kLanes = 2 * LanesOf<T>();
    RegTensor<uint32_t> reg[2];
};

// One predicate per lane of the element width it was made for (afWidth bytes; 0 = never set).
struct MaskReg {
    MaskReg() { std::memset(afOn, 0, sizeof afOn); }
    bool afOn[kVecBytes];
    uint32_t afWidth = 0;
};

}  // namespace Reg
}  // namespace AscendC

namespace AfTwin {

inline CoreCtx* RegCore(const char* api) {
    CoreCtx* c = RequireCore(api);
    if (!c->inRegVf)
        Fail("reg-outside-vf", "Reg::%s called outside a vector function (launch a __simd_vf__ function with "
             "asc_vf_call)", api);
    return c;
}

template <typename T>
inline void RegCheckMask(const AscendC::Reg::MaskReg& m, const char* api, const char* operand) {
    if (m.afWidth == 0)
        Fail("reg-mask", "Reg::%s: mask %s was never set (UpdateMask, CreateMask or Compare make a mask)", api,
             operand);
    if (m.afWidth != sizeof(T))
        Fail("reg-mask", "Reg::%s<%s>: mask %s was made for %u-byte elements, the operands have %u-byte elements",
             api, TypeName<T>(), operand, m.afWidth, static_cast<unsigned>(sizeof(T)));
}

template <typename T>
inline void RegCheckRead(const AscendC::Reg::RegTensor<T>& r, uint32_t lane, const char* api,
                         const char* operand) {
    if (!r.afWritten[lane])
        Fail("reg-mask", "Reg::%s<%s>: lane %u of operand %s was not written by an instruction under a mask that "
             "covers it (uninitialised register, or a mask wider than the one it was computed under)", api,
             TypeName<T>(), lane, operand);
}

// The elements a masked StoreAlign writes: element j for each mask lane j < lanes that is on, read from register
// lane j * stride (checked written). last: one past the last element written; on: how many are written.
struct RegStored {
    uint32_t last = 0;
    uint32_t on = 0;
};

template <typename T>
inline RegStored RegStoreLanes(const AscendC::Reg::MaskReg& mask, const AscendC::Reg::RegTensor<T>& src,
                               uint32_t lanes, uint32_t stride) {
    RegStored out;
    for (uint32_t j = 0; j < lanes; ++j) {
        if (!mask.afOn[j]) continue;
        RegCheckRead(src, j * stride, "StoreAlign", "srcReg");
        out.last = j + 1;
        ++out.on;
    }
    return out;
}

// The UB byte offset of a raw UB pointer of the running core; it must be `align`-byte aligned (32 unless a
// form documents less, e.g. a mask store's 8 or 16) and [off, off + n) must lie in one live TPipe buffer.
inline uint32_t RegUbRange(CoreCtx* c, const void* p, uint32_t n, const char* api, const char* operand,
                           uint32_t align = kUbAlign) {
    const uintptr_t q = reinterpret_cast<uintptr_t>(p);
    const uintptr_t base = reinterpret_cast<uintptr_t>(c->arena);
    if (q < base || q - base >= kPhysicalUb)
        Fail("ub-out-of-bounds", "Reg::%s: %s address %p is outside this core's UB", api, operand, p);
    const uint32_t off = static_cast<uint32_t>(q - base);
    if (off % align != 0)
        Fail("ub-misaligned", "Reg::%s: %s starts at UB byte offset %u, which is not %u-byte aligned", api, operand,
             off, align);
    // one buffer of the allocation: a queue of num buffers is num buffers, not one (a read running from one
    // tile into the next is an error on the device too)
    for (const UbAlloc& a : c->allocs) {
        if (off < a.offset || off >= a.offset + a.bytes) continue;
        const uint32_t first = a.offset + (off - a.offset) / a.slot * a.slot;
        if (uint64_t{off} + n <= uint64_t{first} + a.slot) {
            HbUb(c, off, n, HbWritesOperand(operand));  // part of the vector function's PIPE_V instruction
            return off;
        }
        Fail("ub-out-of-bounds", "Reg::%s: %s touches UB bytes [%u, %llu) but its buffer is [%u, %u)", api,
             operand, off, static_cast<unsigned long long>(uint64_t{off} + n), first, first + a.slot);
    }
    Fail("ub-out-of-bounds", "Reg::%s: %s at UB byte offset %u lies in no live TPipe buffer", api, operand, off);
}

// Elements per cycle of one register instruction on Ascend 950 (single issue), from the asc-devkit table
// docs/zh/api/附录/Reg矢量计算接口理论性能汇总.md (tables 1, 2, 6, 7, 9, 10, 11, 12); 0 when it lists no rate for the
// instruction and element type (the instruction then counts one cycle per vector). The cost model's copy of
// the table is af_v35_regbase/reg_cost.py; plugins/v35_regbase/tests/test_reg_cost.py compares the two.
inline uint32_t RegRate(const char* api, uint32_t size, bool isFloat) {
    auto is = [api](const char* name) { return std::strcmp(api, name) == 0; };
    if (is("LoadAlign") || is("StoreAlign")) return 256 / size;
    if (is("Exp") || is("Ln") || is("Sqrt")) return isFloat ? 16 : 0;
    if (is("Div")) return isFloat ? 16 : 0;
    if (is("Add") || is("Sub") || is("Adds") || is("Mul") || is("Muls") || is("Abs") || is("Neg")) {
        if (size == 1) return 128;  // int8_t / uint8_t (Mul / Muls take no 8-bit type)
        if (size == 2) return isFloat ? 128 : 64;
        if (size == 4) return isFloat ? 64 : 32;
        return 0;
    }
    if (is("Truncate")) return isFloat ? (size == 4 ? 32 : 64) : 0;  // table 10
    if (is("Relu")) return size == 2 ? (isFloat ? 128 : 0) : (size == 4 ? 64 : 0);
    if (is("Max") || is("Min") || is("Maxs") || is("Mins") || is("Compare") || is("Compares") || is("Select") ||
        is("Duplicate"))
        return 256 / size;
    if (is("And") || is("Or") || is("Xor")) return isFloat ? 0 : 256 / size;  // table 7
    if (is("Not")) return 256 / size;                                         // table 7 (half / float too)
    if (is("Reduce")) return size == 2 || size == 4 ? 256 / size : 0;        // table 11
    if (is("Gather")) return size == 4 ? 32 : 64;  // table 1, by the source's size (b8 -> b16 64)
    if (is("LoadUnAlign")) return 256 / size;     // table 1, 连续非对齐搬入 (see the unaligned load section)
    if (is("LoadUnAlignPre")) return 32 / size;   // the same row's LoadUnAlignPre figure (one 32-byte block)
    return 0;
}

// Adds the modelled cycles of one instruction over a vector of `lanes` elements.
inline void RegCycles(CoreCtx* c, const char* api, uint32_t lanes, uint32_t rate) {
    (void)api;  // names the instruction at the call site
    c->c.regCycles += rate == 0 ? 1u : (lanes + rate - 1) / rate;
}

// Register loads and stores are counted by these helpers: the instruction counter, the byte counter and the
// modelled cycles move together, and RegAccount checks the UB range first, so no load or store can
// update one counter and miss another or count bytes it never checked. The one other count is the flush of an
// unaligned store's buffered bytes (RegFlushUnalign): its StoreUnAlign was counted, the bytes count as written.
enum class RegMove { kLoad, kStore };

// The counters of one load or store of `bytes` and `cycles` modelled cycles (a table's figure: the mask
// register moves, the unaligned store).
inline void RegCountCycles(CoreCtx* c, RegMove move, uint64_t bytes, uint32_t cycles) {
    if (move == RegMove::kLoad) {
        ++c->c.regLoads;
        c->c.regLoadBytes += bytes;
    } else {
        ++c->c.regStores;
        c->c.regStoreBytes += bytes;
    }
    c->c.regCycles += cycles;
}

// The same with the cycles of `lanes` elements at the documented `rate` per cycle (RegCycles).
inline void RegCount(CoreCtx* c, RegMove move, uint64_t bytes, const char* api, uint32_t lanes, uint32_t rate) {
    RegCountCycles(c, move, bytes, 0);
    RegCycles(c, api, lanes, rate);
}

// One load or store touching `range` bytes at `p` (one live buffer of this core: RegUbRange), counted as
// `bytes` (a store counts its masked-on bytes); returns the offset of `p` in the core's UB.
inline uint32_t RegAccount(CoreCtx* c, RegMove move, const void* p, uint32_t range, uint64_t bytes, const char* api,
                           const char* operand, uint32_t lanes, uint32_t rate) {
    const uint32_t off = RegUbRange(c, p, range, api, operand);
    RegCount(c, move, bytes, api, lanes, rate);
    return off;
}

template <typename T>
inline void RegCyclesOf(CoreCtx* c, const char* api) {
    constexpr uint32_t size = static_cast<uint32_t>(sizeof(T));
    RegCycles(c, api, 256 / size, RegRate(api, size, IsFloatLike<T>::value));
}

template <typename T, typename F>
inline void RegMap1(const char* api, AscendC::Reg::RegTensor<T>& dst, const AscendC::Reg::RegTensor<T>& src,
                    const AscendC::Reg::MaskReg& mask, F f) {
    CoreCtx* c = RegCore(api);
    RegCheckMask<T>(mask, api, "mask");
    ++c->c.regCompute;
    RegCyclesOf<T>(c, api);
    AscendC::Reg::RegTensor<T> out;
    for (uint32_t i = 0; i < AscendC::Reg::LanesOf<T>(); ++i) {
        if (!mask.afOn[i]) continue;
        RegCheckRead(src, i, api, "src");
        out.afLane[i] = f(src.afLane[i]);
        out.afWritten[i] = true;
    }
    dst = out;
}

template <typename T, typename F>
inline void RegMap2(const char* api, AscendC::Reg::RegTensor<T>& dst, const AscendC::Reg::RegTensor<T>& src0,
                    const AscendC::Reg::RegTensor<T>& src1, const AscendC::Reg::MaskReg& mask, F f) {
    CoreCtx* c = RegCore(api);
    RegCheckMask<T>(mask, api, "mask");
    ++c->c.regCompute;
    RegCyclesOf<T>(c, api);
    AscendC::Reg::RegTensor<T> out;
    for (uint32_t i = 0; i < AscendC::Reg::LanesOf<T>(); ++i) {
        if (!mask.afOn[i]) continue;
        RegCheckRead(src0, i, api, "src0");
        RegCheckRead(src1, i, api, "src1");
        out.afLane[i] = f(src0.afLane[i], src1.afLane[i]);
        out.afWritten[i] = true;
    }
    dst = out;
}

template <typename T>
inline T SubOf(T a, T b) {
    if constexpr (IsFloatLike<T>::value) {
        return T(static_cast<float>(a) - static_cast<float>(b));
    } else {
        return WrapSub(a, b);
    }
}

template <typename T>
inline T DivOf(T a, T b) {
    if constexpr (IsFloatLike<T>::value) {
        return T(static_cast<float>(a) / static_cast<float>(b));
    } else {
        if (b == 0) Fail("api-params", "Reg::Div: integer division by zero (%s)", TypeName<T>());
        if constexpr (std::is_signed<T>::value) {
            if (b == static_cast<T>(-1)) return WrapNeg(a);
        }
        return static_cast<T>(a / b);
    }
}

template <typename T>
inline T AbsOf(T a) {
    if constexpr (std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value) {
        return T::FromBits(static_cast<uint16_t>(a.bits & 0x7FFFu));
    } else if constexpr (std::is_same<T, float>::value) {
        return std::fabs(a);
    } else if constexpr (std::is_signed<T>::value) {
        return a < 0 ? WrapNeg(a) : a;
    } else {
        return a;
    }
}

template <typename T>
inline T NegOf(T a) {
    if constexpr (std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value) {
        return T::FromBits(static_cast<uint16_t>(a.bits ^ 0x8000u));
    } else if constexpr (std::is_same<T, float>::value) {
        return -a;
    } else {
        return WrapNeg(a);
    }
}

template <typename T>
inline T ReluOf(T a) {
    using C = typename CalcType<T>::type;
    return static_cast<C>(a) > C(0) ? a : T(0);
}

// ---------------------------------------------------------------------------
// 64-bit lanes over a register pair. The 3510 implementation computes most instructions on RegTraitNumOne
// int64_t / uint64_t registers by converting each source into a pair (B64TraitOneToTraitTwo: the low 32 bits
// of every element in reg[0], the high 32 in reg[1]), computing on the 32-bit halves and converting back;
// these functions compute a lane the same way, half by half (the carry / borrow of the low halves into the
// high ones, the low product's high word plus the cross products), so the twin's result is the pair
// arithmetic's, compared with the memory path's 64-bit wrap-around arithmetic by the tests.
inline uint32_t PairLo(uint64_t v) { return static_cast<uint32_t>(v); }
inline uint32_t PairHi(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
template <typename T>
inline T PairJoin(uint32_t hi, uint32_t lo) {
    return static_cast<T>((uint64_t{hi} << 32) | uint64_t{lo});
}
// AddB64Impl: Add of the low halves (carry out into a mask), AddC of the high halves with that carry.
template <typename T>
inline T PairAdd(T a, T b) {
    const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    const uint32_t lo = PairLo(x) + PairLo(y);
    const uint32_t carry = lo < PairLo(x) ? 1u : 0u;
    return PairJoin<T>(PairHi(x) + PairHi(y) + carry, lo);
}
// SubB64Impl: Sub of the low halves (borrow into a mask), SubC of the high halves with that borrow.
template <typename T>
inline T PairSub(T a, T b) {
    const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    const uint32_t borrow = PairLo(x) < PairLo(y) ? 1u : 0u;
    return PairJoin<T>(PairHi(x) - PairHi(y) - borrow, PairLo(x) - PairLo(y));
}
// MulB64Impl: Mull of the low halves (the 64-bit product into both halves), then two vmula adding the cross
// products lo(a) * hi(b) and hi(a) * lo(b) into the high half (modulo 2^32: the product modulo 2^64).
template <typename T>
inline T PairMul(T a, T b) {
    const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    const uint64_t low = uint64_t{PairLo(x)} * uint64_t{PairLo(y)};
    uint32_t hi = PairHi(low);
    hi += PairLo(x) * PairHi(y);
    hi += PairHi(x) * PairLo(y);
    return PairJoin<T>(hi, PairLo(low));
}
// NegB64Impl: Duplicate of 0 and the pair Sub.
template <typename T>
inline T PairNeg(T a) {
    return PairSub(T(0), a);
}
// AbsB64Impl: the lanes whose high half is negative (vcmp_lt against 0) take 0 - x (Sub / SubC), the others
// keep x (two vsel): Abs(INT64_MIN) is INT64_MIN, as the memory path's wrap-around gives.
template <typename T>
inline T PairAbs(T a) {
    const int32_t hi = static_cast<int32_t>(PairHi(static_cast<uint64_t>(a)));
    return hi < 0 ? PairSub(T(0), a) : a;
}
// ReluB64Impl: the pair Maxs by 0 (Compare GT, Select).
template <typename T>
inline T PairRelu(T a) {
    return a > T(0) ? a : T(0);
}

// Computing calls of each 64-bit sequence (the cost model's reg_cost.B64_SEQUENCES, one cycle each: the
// throughput table has no 64-bit rows); 0 for an instruction without one.
inline uint32_t RegB64Sequence(const char* api) {
    auto is = [api](const char* name) { return std::strcmp(api, name) == 0; };
    if (is("Max") || is("Min")) return 7;
    if (is("Add") || is("Sub") || is("And") || is("Or") || is("Xor")) return 5;
    if (is("Mul")) return 6;
    if (is("Not")) return 4;
    if (is("Neg")) return 5;
    if (is("Abs")) return 8;
    if (is("Relu")) return 7;
    return 0;
}

// CompareB64Impl on one lane: EQ / NE compare both halves (the low ones unsigned, the high ones in the
// element's signedness); the ordered modes take the low halves' unsigned comparison where the high halves
// are equal (psel by their vcmp_eq), else the high halves' comparison.
template <typename T>
inline bool PairCompare(T a, T b, AscendC::CMPMODE mode) {
    using Hi = typename std::conditional<std::is_signed<T>::value, int32_t, uint32_t>::type;
    const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    const uint32_t xl = PairLo(x), yl = PairLo(y);
    const Hi xh = static_cast<Hi>(PairHi(x)), yh = static_cast<Hi>(PairHi(y));
    if (mode == AscendC::CMPMODE::EQ) return xl == yl && xh == yh;
    if (mode == AscendC::CMPMODE::NE) return xl != yl || xh != yh;
    if (xh == yh) return CompareOne(xl, yl, mode);
    return CompareOne(xh, yh, mode);
}

// A 64-bit Compare's sequence beyond its one counted computing instruction (reg_cost.B64_COMPARE): the two
// conversions and the vcmp (two for EQ / NE, three otherwise), one cycle each; MaskPack and MaskUnPack (mask
// instructions, one cycle each: table 5's Pack / UnPack) and the por / psel of NE and the ordered modes (mask
// logic, one cycle).
template <typename T>
inline void RegPairCompare(CoreCtx* c, AscendC::CMPMODE mode) {
    if constexpr (sizeof(T) == 8) {
        const bool eq = mode == AscendC::CMPMODE::EQ;
        const bool ne = mode == AscendC::CMPMODE::NE;
        const uint32_t calls = 2 + (eq || ne ? 2 : 3);
        const uint32_t logic = eq ? 0 : 1;
        c->c.regCompute += calls - 1;
        c->c.regMasks += 2 + logic;
        c->c.regCycles += calls - 1 + logic + 2;
    }
}

// A 64-bit Select's sequence (SelectImpl, reg_cost.B64_SELECT): MaskPack, two conversions, a vsel of each half
// and the conversion back -- five computing calls, one counted by Select itself; the MaskPack one cycle.
template <typename T>
inline void RegPairSelect(CoreCtx* c) {
    if constexpr (sizeof(T) == 8) {
        c->c.regCompute += 4;
        ++c->c.regMasks;
        c->c.regCycles += 4 + 1;
    }
}

// Counts a 64-bit instruction's sequence beyond the one computing instruction its lane map counts: the
// MaskPack (a mask instruction, one cycle: table 5's Pack) and the other calls, one cycle each.
template <typename T>
inline void RegPairSequence(const char* api) {
    if constexpr (sizeof(T) == 8) {
        CoreCtx* c = RegCore(api);
        const uint32_t calls = RegB64Sequence(api);
        if (calls == 0) Fail("api-params", "Reg::%s: no 64-bit sequence emulated", api);
        ++c->c.regMasks;
        c->c.regCompute += calls - 1;
        c->c.regCycles += calls - 1 + 1;
    }
}

}  // namespace AfTwin

// ---------------------------------------------------------------------------
// asc_vf_call: runs a __simd_vf__ function on the running core.
template <typename A>
struct AfTwinVfArg
    : std::integral_constant<bool, std::is_pointer<std::decay_t<A>>::value ||
                                       std::is_arithmetic<std::decay_t<A>>::value ||
                                       AfTwin::IsFloatLike<std::decay_t<A>>::value> {};

template <auto funcPtr, typename... Args>
inline void asc_vf_call(Args&&... args) {
    static_assert((AfTwinVfArg<Args>::value && ...),
                  "asc_vf_call: a SIMD VF takes raw pointers and basic data types only (no structs, no arrays)");
    AfTwin::CoreCtx* c = AfTwin::RequireCore("asc_vf_call");
    if (c->inRegVf || c->inSimt) AfTwin::Fail("api-params", "asc_vf_call: nested vector function launch");
    ++c->c.vfCalls;
    c->inRegVf = true;
    funcPtr(args...);
    c->inRegVf = false;
    AfTwin::HbCommit(c, AfTwin::kPipeV, "asc_vf_call");  // the function is one PIPE_V instruction
    if (c->pendingUnalignStores != 0)
        AfTwin::Fail("reg-unalign", "asc_vf_call: the vector function returned with %u UnalignRegForStore "
                     "register(s) holding bytes a StoreUnAlign buffered and no StoreUnAlignPost wrote to UB",
                     c->pendingUnalignStores);
}

#endif  // AF_TWIN_REG_CORE_H
