// af_twin/reg.h
// Emulates: the register-based vector API of the A5 vector core (namespace AscendC::Reg) that generated
// vector functions use, and the SIMD VF launch asc_vf_call<func>(args...). A vector register holds 256
// bytes (64 lanes of a 4-byte type, 128 of a 2-byte type, 256 of a 1-byte type):
//   RegTensor<T>, MaskReg, UpdateMask<T>, CreateMask<T, MaskPattern>, LoadAlign / StoreAlign (DIST_NORM),
//   the register Gather (Reg::Gather from a UB base by element indices, see its section at the end),
//   Add Sub Mul Div Max Min, Adds Muls Maxs Mins, Abs Exp Ln Sqrt Relu Neg, Truncate, Duplicate,
//   Compare / Compares (into a MaskReg), Select (by a MaskReg), Cast between float and half / bfloat16_t
//   (RegLayout::ZERO: the 2-byte elements sit in the even lanes, as LoadAlign DIST_UNPACK_B16 puts them and
//   StoreAlign DIST_PACK_B32 takes them) and between float and int32_t, and the 2-byte integer / half <->
//   bfloat16_t pairs of the section before Cast (int16_t <-> float, 2-byte <-> 4-byte integers, int16_t <->
//   half, half <-> bfloat16_t) and the 1-byte <-> 2-byte pairs (int8_t / uint8_t in the even byte lanes,
//   LoadAlign DIST_UNPACK_B8, StoreAlign DIST_PACK_B16; or every fourth, LoadAlign DIST_UNPACK4_B8, for a
//   byte widened to 4 bytes in two Casts); the block-masked LoadAlign<T,
//   DataCopyMode::DATA_BLOCK_COPY>, Reduce (SUM / MAX / MIN) and StoreAlign DIST_FIRST_ELEMENT_B32 / B16 (see the
//   register reduce section at the end); And / Or / Xor / Not (the bitwise section at the end), and their
//   MaskReg overloads (the mask-register logic section after it); LoadUnAlignPre / LoadUnAlign with an
//   UnalignRegForLoad (the unaligned register load section); the moves of a MaskReg to and from a bit-mask
//   tile (the mask register moves section at the end).
// Semantics: every computing instruction takes a mask and zeroes the lanes the mask leaves off
// (MaskMergeMode::ZEROING, the official default); half / bfloat16_t compute in float and round to nearest
// even, integers wrap, Max / Min propagate NaN -- the same per-element rules as the memory-based API in
// vector.h, so a chain gives the same bits in registers and in UB.
// Checks, at compile time: the element types of every call against the 3510 register table in api_dtypes.h
// (AcceptsRegX, read from impl/basic_api/reg_compute/dav_3510); the pointer type of LoadAlign / StoreAlign equals
// the register's element type; only DIST_NORM and RegTraitNumOne (and the RegTraitNumTwo pair of 64-bit elements
// below); the arguments of asc_vf_call are raw pointers or arithmetic values (the documented limit). At run time: a
// Reg call outside a VF launched by asc_vf_call (reg-outside-vf); LoadAlign / StoreAlign addresses start 32-byte
// aligned (ub-misaligned) and the bytes they touch -- all 256 for a load, the masked-on lanes for a store -- lie in
// one live TPipe buffer of the running core (ub-out-of-bounds); a mask that was never set or was made for another
// element width (reg-mask); reading a register lane that no instruction under the current mask wrote, e.g. a store
// whose mask reaches lanes computed under a narrower mask (reg-mask).
// Counts: vf_calls, reg_loads / reg_stores (instructions) with reg_load_bytes (256 per load) and
// reg_store_bytes (the masked-on bytes), reg_compute (computing, compare, select, duplicate and cast
// instructions), reg_masks (UpdateMask / CreateMask), reg_cycles (modelled: each load, store and
// computing instruction takes ceil(vector elements / the documented elements per cycle), see RegRate;
// mask instructions are not in that table and count nothing; no dual issue).
// Cast traits: the twin emulates the CastTrait values the documented table lists for its pairs with
// ZEROING, NO_SAT for float narrowing, bfloat16_t -> half and 4-byte -> 2-byte integers, SAT for float ->
// int32_t and float / half -> int16_t (static_assert otherwise).
// 64-bit elements: RegTensor<int64_t / uint64_t> (RegTraitNumOne, 32 lanes) with UpdateMask, LoadAlign /
// StoreAlign (DIST_NORM), Duplicate, Add / Sub / Mul / Max / Min, And / Or / Xor / Not, Adds / Muls / Maxs /
// Mins (Duplicate + the binary instruction, as AddsImpl ... MinsImpl do), Compare / Compares (Duplicate +
// Compare) / Select and, on int64_t, Abs / Relu / Neg -- each computed half by half over a register pair as the
// 3510 sequence does and counted per call of it (see "64-bit lanes over a register pair").
// The dual load LoadAlign(dst0, dst1, src) with DIST_DINTLV_B8 / B16 / B32 (even / odd elements).
// RegTensor<int64_t, RegTraitNumTwo> (the low and high words of 64 elements) with its LoadAlign (the dual load)
// and its Cast to float (see the Cast of a RegTraitNumTwo register).
// Not emulated: the other LoadDist / StoreDist modes, post-update and AddrReg addressing, MERGING masks,
// other RegTraitNumTwo forms and the other 64-bit instructions, other Cast pairs (those with 1-byte types among them) and RegLayout::ONE, the widening and 64-bit Reduce forms, the precision-mode template
// arguments; the lanes of one instruction are computed in index order.
#ifndef AF_TWIN_REG_H
#define AF_TWIN_REG_H

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

namespace AscendC {
namespace Reg {

// ---------------------------------------------------------------------------
// Masks.

template <typename T, const RegTrait& regTrait = RegTraitNumOne>
inline MaskReg UpdateMask(uint32_t& scalarValue) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "UpdateMask: element type must be b8/b16/b32/b64");
    static_assert(sizeof(T) != 8 || regTrait.REG_NUM == 1, "UpdateMask: the twin emulates RegTraitNumOne");
    AfTwin::CoreCtx* c = AfTwin::RegCore("UpdateMask");
    ++c->c.regMasks;
    constexpr uint32_t lanes = LanesOf<T>();
    const uint32_t on = scalarValue < lanes ? scalarValue : lanes;
    MaskReg m;
    m.afWidth = sizeof(T);
    for (uint32_t i = 0; i < on; ++i) m.afOn[i] = true;
    scalarValue = scalarValue < lanes ? 0u : scalarValue - lanes;
    return m;
}

template <typename T, MaskPattern mode = MaskPattern::ALL, const RegTrait& regTrait = RegTraitNumOne>
inline MaskReg CreateMask() {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4, "CreateMask: the twin emulates 1-, 2- and "
                  "4-byte elements only");
    static_assert(mode != MaskPattern::M3 && mode != MaskPattern::M4, "CreateMask: M3 / M4 are not emulated");
    AfTwin::CoreCtx* c = AfTwin::RegCore("CreateMask");
    ++c->c.regMasks;
    constexpr uint32_t lanes = LanesOf<T>();
    uint32_t on = lanes;
    switch (mode) {
        case MaskPattern::ALL: on = lanes; break;
        case MaskPattern::ALLF: on = 0; break;
        case MaskPattern::VL1: on = 1; break;
        case MaskPattern::VL2: on = 2; break;
        case MaskPattern::VL3: on = 3; break;
        case MaskPattern::VL4: on = 4; break;
        case MaskPattern::VL8: on = 8; break;
        case MaskPattern::VL16: on = 16; break;
        case MaskPattern::VL32: on = 32; break;
        case MaskPattern::VL64: on = 64; break;
        case MaskPattern::VL128: on = 128; break;
        case MaskPattern::H: on = lanes / 2; break;
        case MaskPattern::Q: on = lanes / 4; break;
        default: break;
    }
    if (on > lanes) on = lanes;
    MaskReg m;
    m.afWidth = sizeof(T);
    for (uint32_t i = 0; i < on; ++i) m.afOn[i] = true;
    return m;
}

// ---------------------------------------------------------------------------
// Loads and stores (DIST_NORM: one whole vector, the start 32-byte aligned).

template <typename T = DefaultType, LoadDist dist = LoadDist::DIST_NORM, typename U>
inline void LoadAlign(U& dstReg, __ubuf__ T* srcAddr) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::LoadAlign: the pointer's element type differs from the register's");
    static_assert(AfTwin::AcceptsRegLoadAlign<ActualT>, "Reg::LoadAlign: element type not accepted by the 3510 "
                  "register implementation (af_twin/api_dtypes.h)");
    static_assert(dist == LoadDist::DIST_NORM || dist == LoadDist::DIST_UNPACK_B16 ||
                      dist == LoadDist::DIST_UNPACK_B8 || dist == LoadDist::DIST_UNPACK4_B8,
                  "Reg::LoadAlign: the twin emulates DIST_NORM, DIST_UNPACK_B16, DIST_UNPACK_B8 and DIST_UNPACK4_B8 "
                  "only");
    static_assert(dist != LoadDist::DIST_UNPACK_B16 || sizeof(ActualT) == 2,
                  "Reg::LoadAlign: DIST_UNPACK_B16 loads 2-byte elements");
    static_assert((dist != LoadDist::DIST_UNPACK_B8 && dist != LoadDist::DIST_UNPACK4_B8) || sizeof(ActualT) == 1,
                  "Reg::LoadAlign: DIST_UNPACK_B8 / DIST_UNPACK4_B8 load 1-byte elements");
    AfTwin::CoreCtx* c = AfTwin::RegCore("LoadAlign");
    if constexpr (U::REG_NUM == 2) {
        // a RegTraitNumTwo register: the 3510 DataCopyImpl issues the dual load DIST_DINTLV_B32 into reg[0] /
        // reg[1] (its dist argument passes CheckLoadDist<1> and is not used); the twin takes DIST_NORM only
        static_assert(dist == LoadDist::DIST_NORM, "Reg::LoadAlign: the twin loads a RegTraitNumTwo register with "
                      "DIST_NORM only");
        LoadAlign<uint32_t, LoadDist::DIST_DINTLV_B32>(dstReg.reg[0], dstReg.reg[1],
                                                        reinterpret_cast<__ubuf__ uint32_t*>(srcAddr));
    } else if constexpr (dist == LoadDist::DIST_UNPACK4_B8) {
        // a quarter vector: byte j goes to lane 4j, lanes 4j + 1 .. 4j + 3 are zero (the LoadAlign page's
        // DIST_UNPACK4_B8 row: VL / 4 bytes, three zeros after each)
        AfTwin::RegUbRange(c, srcAddr, kVecBytes / 4, "LoadAlign", "srcAddr");
        ++c->c.regLoads;
        c->c.regLoadBytes += kVecBytes / 4;
        AfTwin::RegCycles(c, "LoadAlign", LanesOf<ActualT>() / 4, 256 / sizeof(ActualT));
        for (uint32_t j = 0; j < LanesOf<ActualT>() / 4; ++j) {
            std::memcpy(&dstReg.afLane[4 * j], srcAddr + j, 1);
            std::memset(&dstReg.afLane[4 * j + 1], 0, 3);
        }
    } else if constexpr (dist == LoadDist::DIST_UNPACK_B16 || dist == LoadDist::DIST_UNPACK_B8) {
        // half a vector: element j goes to lane 2j, lane 2j + 1 is zero
        AfTwin::RegUbRange(c, srcAddr, kVecBytes / 2, "LoadAlign", "srcAddr");
        ++c->c.regLoads;
        c->c.regLoadBytes += kVecBytes / 2;
        AfTwin::RegCycles(c, "LoadAlign", LanesOf<ActualT>() / 2, 256 / sizeof(ActualT));
        for (uint32_t j = 0; j < LanesOf<ActualT>() / 2; ++j) {
            std::memcpy(&dstReg.afLane[2 * j], srcAddr + j, sizeof(ActualT));
            std::memset(&dstReg.afLane[2 * j + 1], 0, sizeof(ActualT));
        }
    } else {
        AfTwin::RegUbRange(c, srcAddr, kVecBytes, "LoadAlign", "srcAddr");
        ++c->c.regLoads;
        c->c.regLoadBytes += kVecBytes;
        AfTwin::RegCycles(c, "LoadAlign", LanesOf<ActualT>(), 256 / sizeof(ActualT));
        std::memcpy(dstReg.afLane, srcAddr, kVecBytes);
    }
    if constexpr (U::REG_NUM == 1) {
        for (uint32_t i = 0; i < LanesOf<ActualT>(); ++i) dstReg.afWritten[i] = true;
    }
}

// The dual load LoadAlign<T, DIST_DINTLV_B8 / B16 / B32>(dst0, dst1, src) (CheckLoadDist<2, dist> of the 3510
// DataCopyImpl): two vectors read from src (32-byte aligned, all 512 bytes in one live buffer), the elements
// of even index to dst0, those of odd index to dst1. On 4-byte elements it splits 64-bit values into their low
// and high words (a RegTraitNumTwo register pair, as the 3510 LoadAlign of one does). One load instruction of
// 2 * VL bytes: the throughput table lists no dual-load row, so it counts the contiguous rate over both
// vectors (2 cycles), as reg_cost.py does.
template <typename T = DefaultType, LoadDist dist, typename U>  // no default dist, as the official dual form
inline void LoadAlign(U& dstReg0, U& dstReg1, __ubuf__ T* srcAddr) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::LoadAlign: the pointer's element type differs from the register's");
    static_assert(dist == LoadDist::DIST_DINTLV_B8 || dist == LoadDist::DIST_DINTLV_B16 ||
                  dist == LoadDist::DIST_DINTLV_B32,
                  "Reg::LoadAlign: the two-register load takes DIST_DINTLV_B8 / B16 / B32 only (CheckLoadDist<2>)");
    static_assert((dist == LoadDist::DIST_DINTLV_B8 && sizeof(ActualT) == 1) ||
                  (dist == LoadDist::DIST_DINTLV_B16 && sizeof(ActualT) == 2) ||
                  (dist == LoadDist::DIST_DINTLV_B32 && sizeof(ActualT) == 4),
                  "Reg::LoadAlign: DIST_DINTLV_Bn loads n-bit elements");
    static_assert(AfTwin::AcceptsRegLoadAlign<ActualT>, "Reg::LoadAlign: element type not accepted by the 3510 "
                  "register implementation (af_twin/api_dtypes.h)");
    AfTwin::CoreCtx* c = AfTwin::RegCore("LoadAlign");
    AfTwin::RegUbRange(c, srcAddr, 2 * kVecBytes, "LoadAlign", "srcAddr");
    ++c->c.regLoads;
    c->c.regLoadBytes += 2 * kVecBytes;
    AfTwin::RegCycles(c, "LoadAlign", 2 * LanesOf<ActualT>(), 256 / sizeof(ActualT));
    for (uint32_t j = 0; j < LanesOf<ActualT>(); ++j) {
        std::memcpy(&dstReg0.afLane[j], srcAddr + 2 * j, sizeof(ActualT));
        std::memcpy(&dstReg1.afLane[j], srcAddr + 2 * j + 1, sizeof(ActualT));
        dstReg0.afWritten[j] = true;
        dstReg1.afWritten[j] = true;
    }
}

template <typename T = DefaultType, StoreDist dist = StoreDist::DIST_NORM, typename U>
inline void StoreAlign(__ubuf__ T* dstAddr, U& srcReg, MaskReg& mask) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::StoreAlign: the pointer's element type differs from the register's");
    static_assert(AfTwin::AcceptsRegStoreAlign<ActualT>, "Reg::StoreAlign: element type not accepted by the 3510 "
                  "register implementation (af_twin/api_dtypes.h)");
    static_assert(dist == StoreDist::DIST_NORM || dist == StoreDist::DIST_PACK_B32 || dist == StoreDist::DIST_PACK_B16 ||
                  dist == StoreDist::DIST_PACK4_B32 || dist == StoreDist::DIST_FIRST_ELEMENT_B32 ||
                  dist == StoreDist::DIST_FIRST_ELEMENT_B16,
                  "Reg::StoreAlign: the twin emulates DIST_NORM, DIST_PACK_B32 / B16, DIST_PACK4_B32 and "
                  "DIST_FIRST_ELEMENT_B32 / B16 only");
    static_assert(dist != StoreDist::DIST_PACK4_B32 || sizeof(ActualT) == 4,
                  "Reg::StoreAlign: the twin emulates DIST_PACK4_B32 for 4-byte element registers (the low byte of "
                  "each)");
    static_assert(dist != StoreDist::DIST_PACK_B32 || sizeof(ActualT) == 2,
                  "Reg::StoreAlign: the twin emulates DIST_PACK_B32 for 2-byte element registers");
    static_assert(dist != StoreDist::DIST_PACK_B16 || sizeof(ActualT) == 1,
                  "Reg::StoreAlign: the twin emulates DIST_PACK_B16 for 1-byte element registers");
    static_assert(dist != StoreDist::DIST_FIRST_ELEMENT_B32 || sizeof(ActualT) == 4,
                  "Reg::StoreAlign: DIST_FIRST_ELEMENT_B32 stores a b32 element");
    static_assert(dist != StoreDist::DIST_FIRST_ELEMENT_B16 || sizeof(ActualT) == 2,
                  "Reg::StoreAlign: DIST_FIRST_ELEMENT_B16 stores a b16 element");
    AfTwin::CoreCtx* c = AfTwin::RegCore("StoreAlign");
    if constexpr (dist == StoreDist::DIST_FIRST_ELEMENT_B32 || dist == StoreDist::DIST_FIRST_ELEMENT_B16) {
        // lane 0 to dstAddr, the mask ignored (as the StoreDist table says); dstAddr aligned to the element
        // size only (the table's alignment column), the element inside one live TPipe buffer
        (void)mask;
        AfTwin::RegCheckRead(srcReg, 0, "StoreAlign", "srcReg");
        const uintptr_t q = reinterpret_cast<uintptr_t>(dstAddr);
        if (q % sizeof(ActualT) != 0)
            AfTwin::Fail("ub-misaligned", "Reg::StoreAlign: a first-element store to %p, not %u-byte aligned",
                         static_cast<const void*>(dstAddr), static_cast<unsigned>(sizeof(ActualT)));
        const uintptr_t base = q - q % AfTwin::kUbAlign;  // the check below wants a 32-byte start
        const uint32_t lead = static_cast<uint32_t>(q - base);
        const uint32_t off = AfTwin::RegUbRange(c, reinterpret_cast<const void*>(base), lead + sizeof(ActualT),
                                                "StoreAlign", "dstAddr");
        ++c->c.regStores;
        c->c.regStoreBytes += sizeof(ActualT);
        AfTwin::RegCycles(c, "StoreAlign", 1, 256 / sizeof(ActualT));
        std::memcpy(dstAddr, &srcReg.afLane[0], sizeof(ActualT));
        if (off + lead + sizeof(ActualT) > c->dirtyEnd)
            c->dirtyEnd = off + lead + static_cast<uint32_t>(sizeof(ActualT));
        return;
    }
    if constexpr (dist == StoreDist::DIST_PACK4_B32) {
        // the low byte of each masked-on 4-byte lane j to byte j of dstAddr (the StoreAlign page's
        // DIST_PACK4_B32 row: the low 8 bits, a quarter of each element, stored contiguously)
        AfTwin::RegCheckMask<ActualT>(mask, "StoreAlign", "mask");
        const auto [last, on] = AfTwin::RegStoreLanes(mask, srcReg, LanesOf<ActualT>(), 1);
        const uint32_t off = AfTwin::RegUbRange(c, dstAddr, last, "StoreAlign", "dstAddr");
        ++c->c.regStores;
        c->c.regStoreBytes += on;
        AfTwin::RegCycles(c, "StoreAlign", LanesOf<ActualT>(), 256 / sizeof(ActualT));
        auto* bytes = reinterpret_cast<__ubuf__ uint8_t*>(dstAddr);
        for (uint32_t j = 0; j < LanesOf<ActualT>(); ++j) {
            if (mask.afOn[j]) std::memcpy(&bytes[j], &srcReg.afLane[j], 1);  // the low byte (little-endian)
        }
        if (off + last > c->dirtyEnd) c->dirtyEnd = off + last;
        return;
    }
    if constexpr (dist == StoreDist::DIST_PACK_B32 || dist == StoreDist::DIST_PACK_B16) {
        // the low half of each masked-on 32-bit (16-bit) lane j -- lane 2j of the 2-byte (1-byte) register
        // -- to element j
        using Pair = typename std::conditional<dist == StoreDist::DIST_PACK_B32, uint32_t, uint16_t>::type;
        AfTwin::RegCheckMask<Pair>(mask, "StoreAlign", "mask");
        const auto [last, on] = AfTwin::RegStoreLanes(mask, srcReg, kVecBytes / sizeof(Pair), 2);
        const uint32_t off = AfTwin::RegUbRange(c, dstAddr, last * sizeof(ActualT), "StoreAlign", "dstAddr");
        ++c->c.regStores;
        c->c.regStoreBytes += uint64_t{on} * sizeof(ActualT);
        AfTwin::RegCycles(c, "StoreAlign", kVecBytes / sizeof(Pair), 256 / sizeof(ActualT));
        for (uint32_t j = 0; j < kVecBytes / sizeof(Pair); ++j) {
            if (mask.afOn[j]) std::memcpy(dstAddr + j, &srcReg.afLane[2 * j], sizeof(ActualT));
        }
        if (off + last * sizeof(ActualT) > c->dirtyEnd)
            c->dirtyEnd = off + last * static_cast<uint32_t>(sizeof(ActualT));
        return;
    }
    AfTwin::RegCheckMask<ActualT>(mask, "StoreAlign", "mask");
    const auto [last, on] = AfTwin::RegStoreLanes(mask, srcReg, LanesOf<ActualT>(), 1);
    const uint32_t off = AfTwin::RegUbRange(c, dstAddr, last * sizeof(ActualT), "StoreAlign", "dstAddr");
    ++c->c.regStores;
    c->c.regStoreBytes += uint64_t{on} * sizeof(ActualT);
    AfTwin::RegCycles(c, "StoreAlign", LanesOf<ActualT>(), 256 / sizeof(ActualT));
    for (uint32_t i = 0; i < LanesOf<ActualT>(); ++i) {
        if (mask.afOn[i]) std::memcpy(dstAddr + i, &srcReg.afLane[i], sizeof(ActualT));
    }
    if (off + last * sizeof(ActualT) > c->dirtyEnd) c->dirtyEnd = off + last * static_cast<uint32_t>(sizeof(ActualT));
}

// The dual store StoreAlign<T, DIST_INTLV_B32>(dst, src0, src1, mask) (CheckStoreDist<2, dist> of the 3510
// DataCopyImpl) for 4-byte elements: src0's and src1's elements interleaved, dst[2j] = src0[j] and
// dst[2j + 1] = src1[j] for every lane -- the StoreDist table: "ignores the mask, dst holds 2 * VL". So all
// 512 bytes are written and must lie in one live buffer (32-byte aligned). A register pair of low / high
// words stored so is 64 int64 values (what the 3510 StoreAlign of a RegTraitNumTwo register issues). The twin
// checks that the lanes under `mask` were written (the elements the function computed: a stricter check than
// the hardware's, which takes any mask); the lanes off it hold whatever the registers hold (tile padding).
// One store of 2 * VL bytes, counted at the contiguous rate over both vectors (2 cycles), as the dual load.
template <typename T = DefaultType, StoreDist dist, typename U>  // no default dist, as the official dual form
inline void StoreAlign(__ubuf__ T* dstAddr, U& srcReg0, U& srcReg1, MaskReg& mask) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::StoreAlign: the pointer's element type differs from the register's");
    static_assert(dist == StoreDist::DIST_INTLV_B8 || dist == StoreDist::DIST_INTLV_B16 ||
                      dist == StoreDist::DIST_INTLV_B32,
                  "Reg::StoreAlign: the two-register store takes DIST_INTLV_B8 / B16 / B32 only (CheckStoreDist<2>)");
    static_assert(dist == StoreDist::DIST_INTLV_B32 && sizeof(ActualT) == 4,
                  "Reg::StoreAlign: the twin emulates the dual store DIST_INTLV_B32 of 4-byte elements only");
    static_assert(AfTwin::AcceptsRegStoreAlign<ActualT>, "Reg::StoreAlign: element type not accepted by the 3510 "
                  "register implementation (af_twin/api_dtypes.h)");
    AfTwin::CoreCtx* c = AfTwin::RegCore("StoreAlign");
    AfTwin::RegCheckMask<ActualT>(mask, "StoreAlign", "mask");
    AfTwin::RegStoreLanes(mask, srcReg0, LanesOf<ActualT>(), 1);
    AfTwin::RegStoreLanes(mask, srcReg1, LanesOf<ActualT>(), 1);
    const uint32_t off = AfTwin::RegUbRange(c, dstAddr, 2 * kVecBytes, "StoreAlign", "dstAddr");
    ++c->c.regStores;
    c->c.regStoreBytes += 2 * kVecBytes;
    AfTwin::RegCycles(c, "StoreAlign", 2 * LanesOf<ActualT>(), 256 / sizeof(ActualT));
    for (uint32_t j = 0; j < LanesOf<ActualT>(); ++j) {
        std::memcpy(dstAddr + 2 * j, &srcReg0.afLane[j], sizeof(ActualT));
        std::memcpy(dstAddr + 2 * j + 1, &srcReg1.afLane[j], sizeof(ActualT));
    }
    if (off + 2 * kVecBytes > c->dirtyEnd) c->dirtyEnd = off + 2 * kVecBytes;
}

// ---------------------------------------------------------------------------
// Computing instructions (ZEROING: lanes off the mask are zero and count as unwritten).

#define AF_TWIN_REG_BINARY(NAME, EXPR)                                                                     \
    template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U>          \
    inline void NAME(U& dstReg, U& srcReg0, U& srcReg1, MaskReg& mask) {                                   \
        using ActualT = typename U::ActualT;                                                               \
        static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,              \
                      "Reg::" #NAME ": T type is not the register's element type");                        \
        static_assert(mode == MaskMergeMode::ZEROING, "Reg::" #NAME ": the twin emulates ZEROING only");   \
        static_assert(AfTwin::AcceptsReg##NAME<ActualT>, "Reg::" #NAME ": element type not accepted by "   \
                      "the 3510 register implementation (af_twin/api_dtypes.h)");                          \
        AfTwin::RegMap2(#NAME, dstReg, srcReg0, srcReg1, mask, [](ActualT a, ActualT b) { return EXPR; }); \
    }

// 64-bit elements (RegTraitNumOne, 32 lanes): the 3510 implementation computes Add / Sub / Mul / Max / Min of
// them as a sequence over a register pair; the twin computes each lane half by half as that sequence does
// (AfTwin::PairAdd ...) and counts the sequence (AfTwin::RegPairSequence): for Max / Min the calls
// MaxOperator / MinOperator issues -- two B64TraitOneToTraitTwo, Compare, Select, Duplicate, Select and
// B64TraitTwoToTraitOne (seven computing instructions; the MaskPack is a mask instruction of one cycle); for Add / Sub /
// Mul see RegB64Sequence. The throughput table lists no 64-bit rates, so each counts one cycle.
#define AF_TWIN_REG_BINARY64(NAME, EXPR, PAIR)                                                             \
    template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U>          \
    inline void NAME(U& dstReg, U& srcReg0, U& srcReg1, MaskReg& mask) {                                   \
        using ActualT = typename U::ActualT;                                                               \
        static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,              \
                      "Reg::" #NAME ": T type is not the register's element type");                        \
        static_assert(mode == MaskMergeMode::ZEROING, "Reg::" #NAME ": the twin emulates ZEROING only");   \
        static_assert(AfTwin::AcceptsReg##NAME<ActualT>, "Reg::" #NAME ": element type not accepted by "   \
                      "the 3510 register implementation (af_twin/api_dtypes.h)");                          \
        if constexpr (sizeof(ActualT) == 8) {                                                              \
            AfTwin::RegPairSequence<ActualT>(#NAME);                                                       \
            AfTwin::RegMap2(#NAME, dstReg, srcReg0, srcReg1, mask, [](ActualT a, ActualT b) { return PAIR; }); \
        } else {                                                                                           \
            AfTwin::RegMap2(#NAME, dstReg, srcReg0, srcReg1, mask, [](ActualT a, ActualT b) { return EXPR; }); \
        }                                                                                                  \
    }

AF_TWIN_REG_BINARY64(Add, AfTwin::AddOf(a, b), AfTwin::PairAdd(a, b))
AF_TWIN_REG_BINARY64(Sub, AfTwin::SubOf(a, b), AfTwin::PairSub(a, b))
AF_TWIN_REG_BINARY64(Mul, AfTwin::MulOf(a, b), AfTwin::PairMul(a, b))
AF_TWIN_REG_BINARY(Div, AfTwin::DivOf(a, b))
AF_TWIN_REG_BINARY64(Max, AfTwin::MaxOf(a, b), AfTwin::MaxOf(a, b))
AF_TWIN_REG_BINARY64(Min, AfTwin::MinOf(a, b), AfTwin::MinOf(a, b))
#undef AF_TWIN_REG_BINARY
#undef AF_TWIN_REG_BINARY64

#define AF_TWIN_REG_SCALAR(NAME, EXPR)                                                                      \
    template <typename T = DefaultType, typename U, MaskMergeMode mode = MaskMergeMode::ZEROING, typename S> \
    inline void NAME(S& dstReg, S& srcReg, U scalarValue, MaskReg& mask) {                                  \
        using ActualT = typename S::ActualT;                                                                \
        static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,               \
                      "Reg::" #NAME ": T type is not the register's element type");                         \
        static_assert(mode == MaskMergeMode::ZEROING, "Reg::" #NAME ": the twin emulates ZEROING only");    \
        static_assert(AfTwin::AcceptsReg##NAME<ActualT>, "Reg::" #NAME ": element type not accepted by "    \
                      "the 3510 register implementation (af_twin/api_dtypes.h)");                           \
        static_assert(AfTwin::AcceptsReg##NAME<U>, "Reg::" #NAME ": scalar type not accepted by the 3510 "  \
                      "register implementation (af_twin/api_dtypes.h)");                                    \
        const ActualT s = static_cast<ActualT>(scalarValue);                                                \
        if constexpr (sizeof(ActualT) == 8) {                                                               \
            /* Adds / Muls / Maxs / Mins on 64-bit elements: Duplicate the scalar, then the binary one */     \
            AfTwin::RegCore(#NAME);                                                                         \
            S scalarReg;                                                                                    \
            Duplicate(scalarReg, s, mask);                                                                  \
            AF_TWIN_REG_SCALAR64_##NAME(dstReg, srcReg, scalarReg, mask);                                   \
        } else {                                                                                            \
            AfTwin::RegMap1(#NAME, dstReg, srcReg, mask, [s](ActualT a) { return EXPR; });                  \
        }                                                                                                   \
    }

// (the 64-bit forms call Duplicate, defined below, found at instantiation by argument-dependent lookup)
#define AF_TWIN_REG_SCALAR64_Adds(d, s0, s1, m) Add(d, s0, s1, m)
#define AF_TWIN_REG_SCALAR64_Muls(d, s0, s1, m) Mul(d, s0, s1, m)
#define AF_TWIN_REG_SCALAR64_Maxs(d, s0, s1, m) Max(d, s0, s1, m)
#define AF_TWIN_REG_SCALAR64_Mins(d, s0, s1, m) Min(d, s0, s1, m)

AF_TWIN_REG_SCALAR(Adds, AfTwin::AddOf(a, s))
AF_TWIN_REG_SCALAR(Muls, AfTwin::MulOf(a, s))
AF_TWIN_REG_SCALAR(Maxs, AfTwin::MaxOf(a, s))
AF_TWIN_REG_SCALAR(Mins, AfTwin::MinOf(a, s))
#undef AF_TWIN_REG_SCALAR
#undef AF_TWIN_REG_SCALAR64_Adds
#undef AF_TWIN_REG_SCALAR64_Muls
#undef AF_TWIN_REG_SCALAR64_Maxs
#undef AF_TWIN_REG_SCALAR64_Mins

#define AF_TWIN_REG_UNARY(NAME, MODE_T, EXPR)                                                             \
    template <typename T = DefaultType, MODE_T mode = MaskMergeMode::ZEROING, typename U>                 \
    inline void NAME(U& dstReg, U& srcReg, MaskReg& mask) {                                               \
        using ActualT = typename U::ActualT;                                                              \
        static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,             \
                      "Reg::" #NAME ": T type is not the register's element type");                       \
        static_assert(std::is_same<decltype(mode), MaskMergeMode>::value,                                 \
                      "Reg::" #NAME ": the twin emulates the MaskMergeMode form only");                   \
        static_assert(AfTwin::AcceptsReg##NAME<ActualT>, "Reg::" #NAME ": element type not accepted by "  \
                      "the 3510 register implementation (af_twin/api_dtypes.h)");                         \
        AfTwin::RegMap1(#NAME, dstReg, srcReg, mask, [](ActualT a) { return EXPR; });                     \
    }

// Abs / Relu / Neg on int64_t (the only 64-bit type AbsImpl / ReluImpl / NegImpl take): the pair sequences
// AbsB64Impl / ReluB64Impl / NegB64Impl, lane by lane as AfTwin::PairAbs / PairRelu / PairNeg, counted by
// AfTwin::RegPairSequence.
#define AF_TWIN_REG_UNARY64(NAME, EXPR, PAIR)                                                             \
    template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U>         \
    inline void NAME(U& dstReg, U& srcReg, MaskReg& mask) {                                               \
        using ActualT = typename U::ActualT;                                                              \
        static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,             \
                      "Reg::" #NAME ": T type is not the register's element type");                       \
        static_assert(mode == MaskMergeMode::ZEROING, "Reg::" #NAME ": the 3510 implementation takes "     \
                      "ZEROING only");                                                                    \
        static_assert(AfTwin::AcceptsReg##NAME<ActualT>, "Reg::" #NAME ": element type not accepted by "  \
                      "the 3510 register implementation (af_twin/api_dtypes.h)");                         \
        if constexpr (sizeof(ActualT) == 8) {                                                             \
            AfTwin::RegPairSequence<ActualT>(#NAME);                                                      \
            AfTwin::RegMap1(#NAME, dstReg, srcReg, mask, [](ActualT a) { return PAIR; });                 \
        } else {                                                                                          \
            AfTwin::RegMap1(#NAME, dstReg, srcReg, mask, [](ActualT a) { return EXPR; });                 \
        }                                                                                                 \
    }

AF_TWIN_REG_UNARY64(Abs, AfTwin::AbsOf(a), AfTwin::PairAbs(a))
AF_TWIN_REG_UNARY64(Relu, AfTwin::ReluOf(a), AfTwin::PairRelu(a))
AF_TWIN_REG_UNARY64(Neg, AfTwin::NegOf(a), AfTwin::PairNeg(a))
#undef AF_TWIN_REG_UNARY64
AF_TWIN_REG_UNARY(Exp, auto, ActualT(std::exp(static_cast<float>(a))))
AF_TWIN_REG_UNARY(Ln, auto, ActualT(std::log(static_cast<float>(a))))
AF_TWIN_REG_UNARY(Sqrt, auto, ActualT(std::sqrt(static_cast<float>(a))))
#undef AF_TWIN_REG_UNARY

// Truncate<T, roundMode>: each masked-on lane rounded to an integral value of its type, as the memory-based
// Truncate computes it (CAST_NONE rounds like CAST_RINT, as the 3510 TruncateImpl does).
template <typename T = DefaultType, RoundMode roundMode = RoundMode::CAST_NONE,
          MaskMergeMode mode = MaskMergeMode::ZEROING, typename S>
inline void Truncate(S& dstReg, S& srcReg, MaskReg& mask) {
    using ActualT = typename S::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::Truncate: T type is not the register's element type");
    static_assert(mode == MaskMergeMode::ZEROING, "Reg::Truncate: the 3510 implementation takes ZEROING only");
    static_assert(AfTwin::AcceptsRegTruncate<ActualT>, "Reg::Truncate: element type not accepted by the 3510 "
                  "register implementation (af_twin/api_dtypes.h)");
    static_assert(roundMode == RoundMode::CAST_NONE || ((AfTwin::kTruncateModes >> static_cast<unsigned>(roundMode)) & 1u),
                  "Reg::Truncate: round mode not emulated");
    constexpr RoundMode kMode = roundMode == RoundMode::CAST_NONE ? RoundMode::CAST_RINT : roundMode;
    AfTwin::RegMap1("Truncate", dstReg, srcReg, mask,
                    [](ActualT a) { return ActualT(AfTwin::RoundIntegral<kMode>(static_cast<float>(a))); });
}

// Duplicate: every lane (no mask) or the masked-on lanes get the scalar.
template <typename T = DefaultType, typename U, typename S>
inline void Duplicate(S& dstReg, U scalarValue) {
    using ActualT = typename S::ActualT;
    static_assert(AfTwin::AcceptsRegDuplicate<ActualT>, "Reg::Duplicate: element type not accepted by the 3510 "
                  "register implementation (af_twin/api_dtypes.h)");
    AfTwin::CoreCtx* c = AfTwin::RegCore("Duplicate");
    ++c->c.regCompute;
    AfTwin::RegCyclesOf<ActualT>(c, "Duplicate");
    for (uint32_t i = 0; i < LanesOf<ActualT>(); ++i) {
        dstReg.afLane[i] = static_cast<ActualT>(scalarValue);
        dstReg.afWritten[i] = true;
    }
}

template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U, typename S>
inline void Duplicate(S& dstReg, U scalarValue, MaskReg& mask) {
    using ActualT = typename S::ActualT;
    static_assert(mode == MaskMergeMode::ZEROING, "Reg::Duplicate: the twin emulates ZEROING only");
    static_assert(AfTwin::AcceptsRegDuplicate<ActualT>, "Reg::Duplicate: element type not accepted by the 3510 "
                  "register implementation (af_twin/api_dtypes.h)");
    AfTwin::CoreCtx* c = AfTwin::RegCore("Duplicate");
    AfTwin::RegCheckMask<ActualT>(mask, "Duplicate", "mask");
    ++c->c.regCompute;
    AfTwin::RegCyclesOf<ActualT>(c, "Duplicate");
    S out;
    for (uint32_t i = 0; i < LanesOf<ActualT>(); ++i) {
        if (!mask.afOn[i]) continue;
        out.afLane[i] = static_cast<ActualT>(scalarValue);
        out.afWritten[i] = true;
    }
    dstReg = out;
}

// Cast pairs with a 2-byte integer or between half and bfloat16_t (the official CastImpl groups them by the
// trait fields each pair takes; the twin keeps to the forms below):
//   int16_t -> float, int16_t -> int32_t, uint16_t -> uint32_t (widening, RegLayout::ZERO, exact: SatMode and
//     RoundMode UNKNOWN);
//   float -> int16_t (RegLayout::ZERO, a RoundMode, SatMode::SAT: saturating, NaN -> 0, as the memory Cast);
//   int32_t / uint32_t -> int16_t / uint16_t (RegLayout::ZERO, SatMode::NO_SAT: the low 16 bits, as the memory
//     Cast keeps them; RoundMode UNKNOWN);
//   int16_t -> half, half -> bfloat16_t (same size: RegLayout UNKNOWN, SatMode UNKNOWN, a RoundMode);
//   half -> int16_t (RegLayout UNKNOWN, SatMode::SAT, a RoundMode); bfloat16_t -> half (RegLayout UNKNOWN,
//     SatMode::NO_SAT: overflow to infinity, a RoundMode).
constexpr bool RegCastRounds(RoundMode m) {
    return m == RoundMode::CAST_RINT || m == RoundMode::CAST_ROUND || m == RoundMode::CAST_FLOOR ||
           m == RoundMode::CAST_CEIL || m == RoundMode::CAST_TRUNC;
}

template <typename D, typename S>
inline constexpr bool kRegCastIntWiden2B =
    (std::is_same<D, float>::value && std::is_same<S, int16_t>::value) ||
    (std::is_same<D, int32_t>::value && std::is_same<S, int16_t>::value) ||
    (std::is_same<D, uint32_t>::value && std::is_same<S, uint16_t>::value);
template <typename D, typename S>
inline constexpr bool kRegCastIntNarrow2B =
    (std::is_same<D, int16_t>::value || std::is_same<D, uint16_t>::value) &&
    (std::is_same<S, int32_t>::value || std::is_same<S, uint32_t>::value);
template <typename D, typename S>
inline constexpr bool kRegCastSame2B =
    (std::is_same<D, half>::value && std::is_same<S, int16_t>::value) ||
    (std::is_same<D, int16_t>::value && std::is_same<S, half>::value) ||
    (std::is_same<D, bfloat16_t>::value && std::is_same<S, half>::value) ||
    (std::is_same<D, half>::value && std::is_same<S, bfloat16_t>::value);
template <typename D, typename S>
inline constexpr bool kRegCastPair2B = kRegCastIntWiden2B<D, S> || kRegCastIntNarrow2B<D, S> ||
                                       kRegCastSame2B<D, S> ||
                                       (std::is_same<D, int16_t>::value && std::is_same<S, float>::value);
// Between a 1-byte and a 2-byte type (the 1-byte values in the even byte lanes, RegLayout::ZERO, as LoadAlign
// DIST_UNPACK_B8 puts them and StoreAlign DIST_PACK_B16 takes them; the mask is one of the 2-byte type):
//   int8_t -> int16_t, uint8_t -> uint16_t, int8_t / uint8_t -> half (exact: SatMode, RoundMode UNKNOWN);
//   half -> int8_t / uint8_t (SatMode::SAT: saturating, NaN -> 0, as the memory Cast; a RoundMode);
//   int16_t / uint16_t -> uint8_t (SatMode::NO_SAT: the low byte, as the memory Cast; RoundMode UNKNOWN).
template <typename D, typename S>
inline constexpr bool kRegCastWiden8B =
    (std::is_same<D, int16_t>::value && std::is_same<S, int8_t>::value) ||
    (std::is_same<D, uint16_t>::value && std::is_same<S, uint8_t>::value) ||
    (std::is_same<D, half>::value && (std::is_same<S, int8_t>::value || std::is_same<S, uint8_t>::value));
template <typename D, typename S>
inline constexpr bool kRegCastNarrow8B =
    ((std::is_same<D, int8_t>::value || std::is_same<D, uint8_t>::value) && std::is_same<S, half>::value) ||
    (std::is_same<D, uint8_t>::value && (std::is_same<S, int16_t>::value || std::is_same<S, uint16_t>::value));
template <typename D, typename S>
inline constexpr bool kRegCastPair8B = kRegCastWiden8B<D, S> || kRegCastNarrow8B<D, S>;

template <typename D, typename S, const CastTrait& trait>
inline constexpr void CheckCastTrait8B() {
    if constexpr (kRegCastWiden8B<D, S>) {
        static_assert(trait.satMode == SatMode::UNKNOWN && trait.roundMode == RoundMode::UNKNOWN,
                      "Reg::Cast: a widening cast from a 1-byte integer is exact: SatMode::UNKNOWN, RoundMode::UNKNOWN");
    } else if constexpr (std::is_same<S, half>::value) {
        static_assert(trait.satMode == SatMode::SAT && RegCastRounds(trait.roundMode),
                      "Reg::Cast: half -> int8_t / uint8_t takes CAST_RINT/ROUND/FLOOR/CEIL/TRUNC; the twin emulates "
                      "SatMode::SAT (saturating, NaN -> 0)");
    } else {
        static_assert(trait.satMode == SatMode::NO_SAT && trait.roundMode == RoundMode::UNKNOWN,
                      "Reg::Cast: int16_t / uint16_t -> uint8_t takes RoundMode::UNKNOWN; the twin emulates "
                      "SatMode::NO_SAT (the low byte)");
    }
}

// Table 10 rows of the 1-byte pairs: 64 elements per cycle, none for half -> uint8_t and int16_t -> uint8_t.
template <typename D, typename S>
constexpr uint32_t RegCastRate8B() {
    if constexpr (std::is_same<D, uint8_t>::value && !std::is_same<S, uint16_t>::value) return 0u;
    return 64u;
}

// The trait rules of the pairs above (static_asserts; the other pairs are checked in Cast itself).
template <typename D, typename S, const CastTrait& trait>
inline constexpr void CheckCastTrait2B() {
    if constexpr (kRegCastIntWiden2B<D, S>) {
        static_assert(trait.satMode == SatMode::UNKNOWN && trait.roundMode == RoundMode::UNKNOWN,
                      "Reg::Cast: a widening cast from a 2-byte integer is exact: SatMode::UNKNOWN, RoundMode::UNKNOWN");
    } else if constexpr (kRegCastIntNarrow2B<D, S>) {
        static_assert(trait.satMode == SatMode::NO_SAT && trait.roundMode == RoundMode::UNKNOWN,
                      "Reg::Cast: int32_t / uint32_t -> a 2-byte integer takes RoundMode::UNKNOWN; the twin emulates "
                      "SatMode::NO_SAT (the low 16 bits)");
    } else if constexpr (std::is_same<D, int16_t>::value) {  // from float or half
        static_assert(trait.satMode == SatMode::SAT && RegCastRounds(trait.roundMode),
                      "Reg::Cast: float / half -> int16_t takes CAST_RINT/ROUND/FLOOR/CEIL/TRUNC; the twin emulates "
                      "SatMode::SAT (saturating, NaN -> 0)");
    } else if constexpr (std::is_same<S, bfloat16_t>::value) {
        static_assert(trait.satMode == SatMode::NO_SAT && RegCastRounds(trait.roundMode),
                      "Reg::Cast: bfloat16_t -> half takes CAST_RINT/ROUND/FLOOR/CEIL/TRUNC; the twin emulates "
                      "SatMode::NO_SAT (overflow to infinity)");
    } else {  // int16_t -> half, half -> bfloat16_t
        static_assert(trait.satMode == SatMode::UNKNOWN && RegCastRounds(trait.roundMode),
                      "Reg::Cast: int16_t -> half and half -> bfloat16_t take CAST_RINT/ROUND/FLOOR/CEIL/TRUNC and "
                      "SatMode::UNKNOWN");
    }
}

// Table 10 (elements per cycle) of the Cast pairs the twin emulates; 0 for the pairs it lists no rate for
// (2-byte <-> 4-byte integers, half <-> bfloat16_t: one cycle per vector).
template <typename D, typename S>
constexpr uint32_t RegCastRate() {
    if constexpr (kRegCastPair8B<D, S>) {
        return RegCastRate8B<D, S>();
    } else if constexpr (std::is_same<D, int32_t>::value || std::is_same<S, int32_t>::value) {
        return (std::is_same<D, float>::value || std::is_same<S, float>::value) ? 32u : 0u;
    } else if constexpr (std::is_same<D, uint32_t>::value || std::is_same<S, uint32_t>::value) {
        return 0u;
    } else if constexpr (std::is_same<D, int16_t>::value || std::is_same<S, int16_t>::value) {
        return (std::is_same<D, float>::value || std::is_same<S, float>::value) ? 32u : 64u;
    } else if constexpr (kRegCastSame2B<D, S>) {
        return 0u;  // half <-> bfloat16_t
    } else {
        return 64u;  // float <-> half / bfloat16_t
    }
}

// Cast: float <-> half / bfloat16_t (the 2-byte elements in the even lanes, RegLayout::ZERO) and
// float <-> int32_t (lane by lane); the mask is one of the wider type's lanes.
template <typename D, typename S>
inline constexpr bool kRegCastPair =
    (std::is_same<D, float>::value && (std::is_same<S, half>::value || std::is_same<S, bfloat16_t>::value)) ||
    (std::is_same<S, float>::value && (std::is_same<D, half>::value || std::is_same<D, bfloat16_t>::value)) ||
    (std::is_same<D, float>::value && std::is_same<S, int32_t>::value) ||
    (std::is_same<D, int32_t>::value && std::is_same<S, float>::value) || kRegCastPair2B<D, S> ||
    kRegCastPair8B<D, S>;

template <typename T = DefaultType, typename U = DefaultType, const CastTrait& trait = castTrait, typename S,
          typename V>
inline void Cast(S& dstReg, V& srcReg, MaskReg& mask) {
    using D = typename S::ActualT;
    using Src = typename V::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, D>::value,
                  "Reg::Cast: T is not the destination register's element type");
    static_assert(std::is_same<U, DefaultType>::value || std::is_same<U, Src>::value,
                  "Reg::Cast: U is not the source register's element type");
    static_assert(kRegCastPair<D, Src>, "Reg::Cast: the twin emulates float <-> half / bfloat16_t, float <-> "
                  "int32_t, int16_t -> float / int32_t / half, uint16_t -> uint32_t, float / half -> int16_t, "
                  "int32_t / uint32_t -> int16_t / uint16_t, half <-> bfloat16_t and the 1-byte <-> 2-byte pairs only");
    static_assert(trait.mrgMode == MaskMergeMode::ZEROING, "Reg::Cast: the twin emulates MaskMergeMode::ZEROING");
    constexpr bool widen = sizeof(D) > sizeof(Src);
    constexpr bool narrow = sizeof(D) < sizeof(Src);
    static_assert((widen || narrow) ? trait.layoutMode == RegLayout::ZERO : trait.layoutMode == RegLayout::UNKNOWN,
                  "Reg::Cast: RegLayout::ZERO between 2- and 4-byte types (the twin emulates no other layout), "
                  "UNKNOWN between types of one size");
    // the pairs of float with half / bfloat16_t and with int32_t; the others are checked by CheckCastTrait2B
    constexpr bool floats =
        AfTwin::IsFloatLike<D>::value && AfTwin::IsFloatLike<Src>::value && !kRegCastPair2B<D, Src>;
    constexpr bool f32i32 = (std::is_same<D, int32_t>::value && std::is_same<Src, float>::value) ||
                            (std::is_same<Src, int32_t>::value && std::is_same<D, float>::value);
    if constexpr (kRegCastPair2B<D, Src>) CheckCastTrait2B<D, Src, trait>();
    if constexpr (kRegCastPair8B<D, Src>) CheckCastTrait8B<D, Src, trait>();
    static_assert(!widen || kRegCastPair2B<D, Src> ||
                      (trait.roundMode == RoundMode::UNKNOWN && trait.satMode == SatMode::UNKNOWN),
                  "Reg::Cast: a widening float conversion is exact: RoundMode::UNKNOWN, SatMode::UNKNOWN");
    static_assert(!(narrow && floats) || (trait.satMode == SatMode::NO_SAT && trait.roundMode != RoundMode::UNKNOWN &&
                              trait.roundMode != RoundMode::CAST_NONE),
                  "Reg::Cast: a narrowing float conversion takes a RoundMode; the twin emulates SatMode::NO_SAT "
                  "(overflow to infinity)");
    static_assert(!(f32i32 && std::is_same<D, int32_t>::value) ||
                      (trait.satMode == SatMode::SAT && trait.roundMode != RoundMode::UNKNOWN &&
                       trait.roundMode != RoundMode::CAST_NONE && trait.roundMode != RoundMode::CAST_ODD),
                  "Reg::Cast: float -> int32_t takes CAST_RINT/ROUND/FLOOR/CEIL/TRUNC; the twin emulates "
                  "SatMode::SAT (saturating, NaN -> 0)");
    static_assert(!(f32i32 && std::is_same<Src, int32_t>::value) ||
                      (trait.satMode == SatMode::UNKNOWN && trait.roundMode != RoundMode::UNKNOWN &&
                       trait.roundMode != RoundMode::CAST_NONE && trait.roundMode != RoundMode::CAST_ODD),
                  "Reg::Cast: int32_t -> float takes CAST_RINT/ROUND/FLOOR/CEIL/TRUNC and SatMode::UNKNOWN");
    AfTwin::CoreCtx* c = AfTwin::RegCore("Cast");
    using Wide = typename std::conditional<(sizeof(D) > sizeof(Src)), D, Src>::type;
    AfTwin::RegCheckMask<Wide>(mask, "Cast", "mask");
    ++c->c.regCompute;
    // table 10: 64 elements per cycle between float and half / bfloat16_t, 32 between float and int32_t (see
    // RegCastRate for the other pairs)
    AfTwin::RegCycles(c, "Cast", LanesOf<Wide>(), RegCastRate<D, Src>());
    constexpr AscendC::RoundMode mode = trait.roundMode == RoundMode::UNKNOWN ? RoundMode::CAST_NONE : trait.roundMode;
    S out;
    for (uint32_t j = 0; j < LanesOf<Wide>(); ++j) {
        if (!mask.afOn[j]) continue;
        const uint32_t from = narrow ? j : (widen ? 2 * j : j);
        const uint32_t to = widen ? j : (narrow ? 2 * j : j);
        AfTwin::RegCheckRead(srcReg, from, "Cast", "srcReg");
        out.afLane[to] = AfTwin::CastValue<D, Src>(srcReg.afLane[from], mode);
        out.afWritten[to] = true;
    }
    dstReg = out;
}

// Cast<float, int64_t> of a RegTraitNumTwo register (s642f32): element j of 64 is the int64 whose low word is
// reg[0] lane j and high word reg[1] lane j, converted with the trait's RoundMode into float lane j (zero where the
// b32 mask is off). The 3510 CastImpl for this form (RegTraitNumTwo -> RegTraitNumOne) issues MaskInterleave
// <int32_t> of the mask with itself, Interleave of the two words into two RegTraitNumOne int64 registers, one
// vcvt s642f32 (RegLayout::ZERO) on each, and DeInterleave of the results into the 64 floats: four computing
// instructions (the throughput table has no s642f32 row and Interleave / DeInterleave b32 take one vector a
// cycle: one cycle each) and one mask instruction of one cycle (table 5's Interleave); reg_cost.CAST_B64_PAIR
// counts the same. The twin emulates CAST_RINT / ROUND / FLOOR / CEIL / TRUNC with SatMode::UNKNOWN and
// MaskMergeMode::ZEROING.
template <typename T = DefaultType, typename U = DefaultType, const CastTrait& trait = castTrait, typename S,
          typename E>
inline void Cast(S& dstReg, RegTensor<E, RegTraitNumTwo>& srcReg, MaskReg& mask) {
    using D = typename S::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, D>::value,
                  "Reg::Cast: T is not the destination register's element type");
    static_assert(std::is_same<U, DefaultType>::value || std::is_same<U, E>::value,
                  "Reg::Cast: U is not the source register's element type");
    static_assert(std::is_same<D, float>::value && std::is_same<E, int64_t>::value && S::REG_NUM == 1,
                  "Reg::Cast: from a RegTraitNumTwo register the twin emulates int64_t -> float (RegTraitNumOne) only");
    static_assert(trait.mrgMode == MaskMergeMode::ZEROING, "Reg::Cast: the twin emulates MaskMergeMode::ZEROING");
    static_assert(RegCastRounds(trait.roundMode) && trait.satMode == SatMode::UNKNOWN,
                  "Reg::Cast: int64_t -> float takes CAST_RINT/ROUND/FLOOR/CEIL/TRUNC; the twin emulates "
                  "SatMode::UNKNOWN");
    AfTwin::CoreCtx* c = AfTwin::RegCore("Cast");
    AfTwin::RegCheckMask<float>(mask, "Cast", "mask");
    c->c.regCompute += 4;
    ++c->c.regMasks;
    c->c.regCycles += 4 + 1;
    S out;
    for (uint32_t j = 0; j < LanesOf<float>(); ++j) {
        if (!mask.afOn[j]) continue;
        AfTwin::RegCheckRead(srcReg.reg[0], j, "Cast", "srcReg.reg[0]");
        AfTwin::RegCheckRead(srcReg.reg[1], j, "Cast", "srcReg.reg[1]");
        const int64_t v = AfTwin::PairJoin<int64_t>(srcReg.reg[1].afLane[j], srcReg.reg[0].afLane[j]);
        out.afLane[j] = AfTwin::CastValue<float, int64_t>(v, trait.roundMode);
        out.afWritten[j] = true;
    }
    dstReg = out;
}

// Compare / Compares: dst lane i is on where mask lane i is on and the comparison holds.
template <typename T = DefaultType, CMPMODE mode = CMPMODE::EQ, typename U>
inline void Compare(MaskReg& dst, U& srcReg0, U& srcReg1, MaskReg& mask) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::Compare: T type is not the register's element type");
    static_assert(AfTwin::AcceptsRegCompare<ActualT>, "Reg::Compare: element type not accepted by the 3510 "
                  "register implementation (af_twin/api_dtypes.h)");
    AfTwin::CoreCtx* c = AfTwin::RegCore("Compare");
    AfTwin::RegCheckMask<ActualT>(mask, "Compare", "mask");
    ++c->c.regCompute;
    AfTwin::RegCyclesOf<ActualT>(c, "Compare");
    AfTwin::RegPairCompare<ActualT>(c, mode);
    MaskReg out;
    out.afWidth = sizeof(ActualT);
    for (uint32_t i = 0; i < LanesOf<ActualT>(); ++i) {
        if (!mask.afOn[i]) continue;
        AfTwin::RegCheckRead(srcReg0, i, "Compare", "srcReg0");
        AfTwin::RegCheckRead(srcReg1, i, "Compare", "srcReg1");
        if constexpr (sizeof(ActualT) == 8) {
            out.afOn[i] = AfTwin::PairCompare(srcReg0.afLane[i], srcReg1.afLane[i], mode);
        } else {
            out.afOn[i] = AfTwin::CompareOne(srcReg0.afLane[i], srcReg1.afLane[i], mode);
        }
    }
    dst = out;
}

template <typename T = DefaultType, CMPMODE mode = CMPMODE::EQ, typename U, typename S>
inline void Compares(MaskReg& dst, U& srcReg, S scalarValue, MaskReg& mask) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::Compares: T type is not the register's element type");
    static_assert(AfTwin::AcceptsRegCompares<ActualT>, "Reg::Compares: element type not accepted by the 3510 "
                  "register implementation (af_twin/api_dtypes.h)");
    static_assert(std::is_convertible<S, ActualT>::value, "Reg::Compares: scalar not convertible to the element type");
    if constexpr (sizeof(ActualT) == 8) {
        // CompareScalarImpl on 64-bit elements: Duplicate the scalar, then the register Compare
        AfTwin::RegCore("Compares");
        U scalarReg;
        Duplicate(scalarReg, static_cast<ActualT>(scalarValue), mask);
        Compare<T, mode>(dst, srcReg, scalarReg, mask);
        return;
    }
    AfTwin::CoreCtx* c = AfTwin::RegCore("Compares");
    AfTwin::RegCheckMask<ActualT>(mask, "Compares", "mask");
    ++c->c.regCompute;
    AfTwin::RegCyclesOf<ActualT>(c, "Compares");
    const ActualT s = static_cast<ActualT>(scalarValue);
    MaskReg out;
    out.afWidth = sizeof(ActualT);
    for (uint32_t i = 0; i < LanesOf<ActualT>(); ++i) {
        if (!mask.afOn[i]) continue;
        AfTwin::RegCheckRead(srcReg, i, "Compares", "srcReg");
        out.afOn[i] = AfTwin::CompareOne(srcReg.afLane[i], s, mode);
    }
    dst = out;
}

// Select: dst lane i = mask lane i ? srcReg0 lane i : srcReg1 lane i, over every lane.
template <typename T = DefaultType, typename U>
inline void Select(U& dstReg, U& srcReg0, U& srcReg1, MaskReg& mask) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::Select: T type is not the register's element type");
    static_assert(AfTwin::AcceptsRegSelect<ActualT>, "Reg::Select: element type not accepted by the 3510 "
                  "register implementation (af_twin/api_dtypes.h)");
    AfTwin::CoreCtx* c = AfTwin::RegCore("Select");
    AfTwin::RegCheckMask<ActualT>(mask, "Select", "mask");
    ++c->c.regCompute;
    AfTwin::RegCyclesOf<ActualT>(c, "Select");
    AfTwin::RegPairSelect<ActualT>(c);  // 64-bit: a vsel of each half of a register pair, the same picks
    U out;
    for (uint32_t i = 0; i < LanesOf<ActualT>(); ++i) {
        const U& from = mask.afOn[i] ? srcReg0 : srcReg1;
        out.afLane[i] = from.afLane[i];
        out.afWritten[i] = from.afWritten[i];
    }
    dstReg = out;
}

// ---------------------------------------------------------------------------
// Register reduce section: the block-strided load a register reduce reads its group rows with.

enum class DataCopyMode { DATA_BLOCK_COPY };

// LoadAlign<T, DATA_BLOCK_COPY>(dst, src, dataBlockStride, mask): eight 32-byte data blocks, block k from
// src + k * dataBlockStride blocks, to register bytes [32k, 32k + 32). As the official page says, a block with
// no masked-on element is not read (its lanes are zero, and the twin marks them unwritten), so a tail needs no
// bytes past its data; a block with one masked-on element is read whole. Checks: b8 / b16 / b32 elements
// (the 3510 DataCopyImpl's static_assert), a mask of the element width, src 32-byte aligned, every block read
// inside one live TPipe buffer. Counts one register load with the bytes of the blocks read; its cycles use the
// documented rate of 非连续对齐搬入 (half the contiguous rate: 32 b32 elements per cycle).
template <typename T = DefaultType, DataCopyMode dataMode, typename U>
inline void LoadAlign(U& dstReg, __ubuf__ T* srcAddr, uint32_t dataBlockStride, MaskReg& mask) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::LoadAlign: the pointer's element type differs from the register's");
    static_assert(sizeof(ActualT) == 1 || sizeof(ActualT) == 2 || sizeof(ActualT) == 4,
                  "Reg::LoadAlign (DATA_BLOCK_COPY): the 3510 implementation takes b8 / b16 / b32 only");
    static_assert(dataMode == DataCopyMode::DATA_BLOCK_COPY, "Reg::LoadAlign: DATA_BLOCK_COPY only");
    AfTwin::CoreCtx* c = AfTwin::RegCore("LoadAlign");
    AfTwin::RegCheckMask<ActualT>(mask, "LoadAlign", "mask");
    constexpr uint32_t perBlock = 32 / sizeof(ActualT);
    U out;
    uint32_t read = 0;
    for (uint32_t k = 0; k < kVecBytes / 32; ++k) {
        bool any = false;
        for (uint32_t j = 0; j < perBlock; ++j) any = any || mask.afOn[k * perBlock + j];
        if (!any) continue;
        __ubuf__ T* block = srcAddr + static_cast<uint64_t>(k) * dataBlockStride * perBlock;
        AfTwin::RegUbRange(c, block, 32, "LoadAlign", "srcAddr block");
        std::memcpy(&out.afLane[k * perBlock], block, 32);
        for (uint32_t j = 0; j < perBlock; ++j) out.afWritten[k * perBlock + j] = true;
        ++read;
    }
    if (read == 0) AfTwin::RegUbRange(c, srcAddr, 0, "LoadAlign", "srcAddr");  // still an aligned UB address
    ++c->c.regLoads;
    c->c.regLoadBytes += uint64_t{read} * 32;
    AfTwin::RegCycles(c, "LoadAlign", LanesOf<ActualT>(), 128 / sizeof(ActualT));
    dstReg = out;
}

// Reg::Reduce<type>(dst, src, mask): the masked-on lanes of src reduced to lane 0 of dst (ZEROING, the one
// mode the 3510 ReduceSumImpl / ReduceMaxImpl / ReduceMinImpl take). What the official Reduce page documents:
// SUM adds in a binary tree -- lanes (0, 1), (2, 3), ... first, then the pair sums pairwise, up to one value --
// with masked-off lanes taken as 0; MAX / MIN take masked-off lanes as the type's lowest / highest value, give
// NaN when any masked-on lane is NaN, max(-0, +0) = +0 and min(-0, +0) = -0, and put the index of the first
// extreme (or of the first NaN) in lane 1, as a value of the element type's bits. The twin emulates the
// same-type forms of the 3510 table (SUM: half, float, int32_t, uint32_t; MAX / MIN: int16_t, uint16_t, half,
// float, int32_t, uint32_t; not the widening int16_t -> int32_t sum nor 64-bit registers) and marks lane 0
// (and lane 1 for MAX / MIN) written: the other lanes are zero and count as unwritten. Each lane is read only
// when the mask reaches it. Counts one computing instruction at the documented rate (one vector per cycle).
template <ReduceType type = ReduceType::SUM, typename T = DefaultType, typename U = DefaultType,
          MaskMergeMode mode = MaskMergeMode::ZEROING, typename S, typename V>
inline void Reduce(S& dstReg, V srcReg, MaskReg mask) {
    using D = typename S::ActualT;
    using E = typename V::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, D>::value, "Reg::Reduce: T type is not correct");
    static_assert(std::is_same<U, DefaultType>::value || std::is_same<U, E>::value, "Reg::Reduce: U type is not correct");
    static_assert(mode == MaskMergeMode::ZEROING, "Reg::Reduce: the 3510 implementation takes ZEROING only");
    static_assert(type == ReduceType::SUM || type == ReduceType::MAX || type == ReduceType::MIN,
                  "Reg::Reduce: SUM, MAX or MIN");
    // SUM: the (dst, src) pairs of ReduceSumImpl's static_assert
    static_assert(type != ReduceType::SUM ||
                  (std::is_same<D, int32_t>::value && std::is_same<E, int16_t>::value) ||
                  (std::is_same<D, uint32_t>::value && std::is_same<E, uint16_t>::value) ||
                  (std::is_same<D, E>::value && AfTwin::OneOf<E, int32_t, uint32_t, half, float, int64_t,
                                                               uint64_t>::value),
                  "Reg::Reduce: SUM does not accept this (dst, src) type pair on 3510");
    static_assert(type == ReduceType::SUM || std::is_same<D, E>::value,
                  "Reg::Reduce: MAX / MIN give the source's type");
    static_assert(type == ReduceType::SUM || AfTwin::OneOf<E, int16_t, uint16_t, int32_t, uint32_t, half, float,
                  int64_t, uint64_t>::value, "Reg::Reduce: MAX / MIN do not accept this type on 3510");
    static_assert(std::is_same<D, E>::value && sizeof(E) != 8,
                  "Reg::Reduce: the twin emulates the same-type forms of b16 / b32 registers only");
    AfTwin::CoreCtx* c = AfTwin::RegCore("Reduce");
    AfTwin::RegCheckMask<E>(mask, "Reduce", "mask");
    ++c->c.regCompute;
    AfTwin::RegCyclesOf<E>(c, "Reduce");
    constexpr uint32_t lanes = LanesOf<E>();
    S out;
    if constexpr (type == ReduceType::SUM) {
        E level[lanes];
        for (uint32_t i = 0; i < lanes; ++i) {
            if (mask.afOn[i]) AfTwin::RegCheckRead(srcReg, i, "Reduce", "srcReg");
            level[i] = mask.afOn[i] ? srcReg.afLane[i] : E(0);
        }
        for (uint32_t n = lanes; n > 1; n /= 2) {
            for (uint32_t k = 0; k < n / 2; ++k) level[k] = AfTwin::AddOf(level[2 * k], level[2 * k + 1]);
        }
        out.afLane[0] = level[0];
        out.afWritten[0] = true;
    } else {
        using C = typename AfTwin::CalcType<E>::type;
        bool found = false;
        E best{};
        uint32_t where = 0;
        for (uint32_t i = 0; i < lanes; ++i) {
            if (!mask.afOn[i]) continue;
            AfTwin::RegCheckRead(srcReg, i, "Reduce", "srcReg");
            const E v = srcReg.afLane[i];
            if (found && AfTwin::IsNan(best)) continue;
            bool take = !found || AfTwin::IsNan(v);
            if (!take) {
                const C a = static_cast<C>(v);
                const C b = static_cast<C>(best);
                if (type == ReduceType::MAX) {
                    take = a > b || (a == b && a == C(0) && std::signbit(static_cast<double>(b)) &&
                                     !std::signbit(static_cast<double>(a)));
                } else {
                    take = a < b || (a == b && a == C(0) && !std::signbit(static_cast<double>(b)) &&
                                     std::signbit(static_cast<double>(a)));
                }
            }
            if (take) {
                best = v;
                where = i;
                found = true;
            }
        }
        if (!found) {
            // no lane on: the type's lowest (MAX) / highest (MIN) finite value, the "MIN" / "MAX" of the
            // documented boundary table (-65504 / 65504 for half, -+3.4028235e38 for float)
            if constexpr (AfTwin::IsFloatLike<E>::value) {
                const float big = std::is_same<E, half>::value ? 65504.0f : std::numeric_limits<float>::max();
                best = E(type == ReduceType::MAX ? -big : big);
            } else {
                best = type == ReduceType::MAX ? std::numeric_limits<E>::lowest() : std::numeric_limits<E>::max();
            }
        } else if (AfTwin::IsNan(best)) {
            best = E(std::numeric_limits<float>::quiet_NaN());
        }
        out.afLane[0] = best;
        E index;
        if constexpr (sizeof(E) == 2) {
            const uint16_t bits = static_cast<uint16_t>(where);
            std::memcpy(&index, &bits, 2);
        } else {
            const uint32_t bits = where;
            std::memcpy(&index, &bits, 4);
        }
        out.afLane[1] = index;
        out.afWritten[0] = out.afWritten[1] = true;
    }
    dstReg = out;
}

// ---------------------------------------------------------------------------
// Bitwise instructions (a run's BitwiseAnd / Or / Xor / Not): And / Or / Xor of two registers and Not of one,
// on the bits of each masked-on lane, in the element types of the 3510 AndImpl / OrImpl / XorImpl / NotImpl
// (af_twin/api_dtypes.h). The throughput table gives one vector per cycle for each (256 / sizeof(T) elements):
// RegRate lists no rate, which counts the same one cycle. On int64_t / uint64_t the 3510 implementation
// applies the op to each half of a register pair (AndB64Impl ... NotB64Impl) -- the same bits as on the whole
// lane -- and the twin counts that sequence (AfTwin::RegPairSequence).

#define AF_TWIN_REG_BITS2(NAME, OP)                                                                        \
    template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U>          \
    inline void NAME(U& dstReg, U& srcReg0, U& srcReg1, MaskReg& mask) {                                   \
        using ActualT = typename U::ActualT;                                                               \
        static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,              \
                      "Reg::" #NAME ": T type is not the register's element type");                        \
        static_assert(mode == MaskMergeMode::ZEROING, "Reg::" #NAME ": the twin emulates ZEROING only");   \
        static_assert(AfTwin::AcceptsReg##NAME<ActualT>, "Reg::" #NAME ": element type not accepted by "   \
                      "the 3510 register implementation (af_twin/api_dtypes.h)");                          \
        AfTwin::RegPairSequence<ActualT>(#NAME);                                                           \
        AfTwin::RegMap2(#NAME, dstReg, srcReg0, srcReg1, mask,                                             \
                        [](ActualT a, ActualT b) { return static_cast<ActualT>(a OP b); });               \
    }

AF_TWIN_REG_BITS2(And, &)
AF_TWIN_REG_BITS2(Or, |)
AF_TWIN_REG_BITS2(Xor, ^)
#undef AF_TWIN_REG_BITS2

template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U>
inline void Not(U& dstReg, U& srcReg, MaskReg& mask) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::Not: T type is not the register's element type");
    static_assert(mode == MaskMergeMode::ZEROING, "Reg::Not: the twin emulates ZEROING only");
    static_assert(AfTwin::AcceptsRegNot<ActualT>, "Reg::Not: element type not accepted by the 3510 register "
                  "implementation (af_twin/api_dtypes.h)");
    AfTwin::RegPairSequence<ActualT>("Not");
    AfTwin::RegMap1("Not", dstReg, srcReg, mask, [](ActualT a) {
        unsigned char bytes[sizeof(ActualT)];
        std::memcpy(bytes, &a, sizeof(ActualT));
        for (unsigned char& b : bytes) b = static_cast<unsigned char>(~b);
        ActualT r;
        std::memcpy(&r, bytes, sizeof(ActualT));
        return r;
    });
}

// ---------------------------------------------------------------------------
// Mask-register logic (a run's LogicalAnd / Or / Xor / Not on predicates made by Compare): And / Or / Xor of
// two MaskRegs and Not of one, the non-template overloads of kernel_reg_compute_maskreg_intf.h (MaskAndImpl /
// MaskOrImpl / MaskXorImpl / MaskNotImpl of the 3510 implementation: pand / por / pxor / pnot). The mask
// argument says which predicate bits take part; a bit it leaves off is 0 in dst (zeroing, as Move with a
// mask documents: "invalid elements filled with 0"), so Not never turns on a lane past a tail. The twin keeps
// one predicate per lane: the sources and the mask must be masks of one element width (the width of a run's
// comparisons), else reg-mask -- a predicate of another width would pair unrelated bits. Counts one mask
// instruction (reg_masks) of one cycle each: table 5 of the throughput appendix (MaskReg计算) gives 1 cycle
// for every MaskReg computation it lists and does not list these four.

}  // namespace Reg
}  // namespace AscendC

namespace AfTwin {

inline void RegMaskLogic(const char* api, AscendC::Reg::MaskReg& dst, const AscendC::Reg::MaskReg& src0,
                         const AscendC::Reg::MaskReg* src1, const AscendC::Reg::MaskReg& mask, int op) {
    CoreCtx* c = RegCore(api);
    auto check = [api](const AscendC::Reg::MaskReg& m, const char* operand) {
        if (m.afWidth == 0)
            Fail("reg-mask", "Reg::%s: mask %s was never set (UpdateMask, CreateMask or Compare make a mask)", api,
                 operand);
    };
    check(mask, "mask");
    check(src0, "src0");
    if (src1 != nullptr) check(*src1, "src1");
    const uint32_t width = mask.afWidth;
    if (src0.afWidth != width || (src1 != nullptr && src1->afWidth != width))
        Fail("reg-mask", "Reg::%s: the masks were made for %u-, %u- and %u-byte elements (mask, src0, src1); the "
             "twin combines masks of one element width only", api, width, src0.afWidth,
             src1 != nullptr ? src1->afWidth : src0.afWidth);
    ++c->c.regMasks;
    c->c.regCycles += 1;
    AscendC::Reg::MaskReg out;
    out.afWidth = width;
    for (uint32_t i = 0; i < AscendC::Reg::kVecBytes / width; ++i) {
        if (!mask.afOn[i]) continue;
        const bool a = src0.afOn[i];
        const bool b = src1 != nullptr && src1->afOn[i];
        out.afOn[i] = op == 0 ? (a && b) : op == 1 ? (a || b) : op == 2 ? (a != b) : !a;
    }
    dst = out;
}

}  // namespace AfTwin

namespace AscendC {
namespace Reg {

inline void And(MaskReg& dst, MaskReg& src0, MaskReg& src1, MaskReg& mask) {
    AfTwin::RegMaskLogic("And", dst, src0, &src1, mask, 0);
}
inline void Or(MaskReg& dst, MaskReg& src0, MaskReg& src1, MaskReg& mask) {
    AfTwin::RegMaskLogic("Or", dst, src0, &src1, mask, 1);
}
inline void Xor(MaskReg& dst, MaskReg& src0, MaskReg& src1, MaskReg& mask) {
    AfTwin::RegMaskLogic("Xor", dst, src0, &src1, mask, 2);
}
inline void Not(MaskReg& dst, MaskReg& src, MaskReg& mask) { AfTwin::RegMaskLogic("Not", dst, src, nullptr, mask, 3); }

}  // namespace Reg
}  // namespace AscendC

// ---------------------------------------------------------------------------
// Register Gather (vgather2): Reg::Gather(dstReg, __ubuf__ T1* baseAddr, indexReg, mask).
// Official: include/basic_api/reg_compute/kernel_reg_compute_datacopy_intf.h, its dav_3510 form
// DataCopyGatherImpl in impl/basic_api/reg_compute/dav_3510/kernel_reg_compute_datacopy_impl.h. Each
// masked-on lane i of dstReg gets baseAddr[indexReg lane i]: the index counts ELEMENTS of T1 (not bytes),
// baseAddr starts 32-byte aligned, and every element read must lie in UB. The 3510 static_assert takes a
// 1-byte source into 2-byte lanes (the byte zero-extended) and 2-byte sources with uint16_t indices, 4-byte
// sources with uint32_t indices, and 8-byte sources with uint32_t / uint64_t indices; the twin asserts the
// same combinations and emulates every one but the 8-byte source (a RegTraitNumTwo / pairing sequence on
// 3510: static_assert here). The mask is one of dstReg's element width.
// Checks at run time: outside a VF (reg-outside-vf); baseAddr misaligned (ub-misaligned); the mask unset or
// of another width, an index lane under the mask that no instruction wrote (reg-mask); an element read that
// leaves the live TPipe buffer holding baseAddr (gather-out-of-range).
// Counts: one register load (reg_loads), the gathered bytes (masked-on lanes * sizeof(T1)) in
// reg_load_bytes and the masked-on lanes in gather_elements (as the memory-based Gather counts its
// elements), and reg_cycles ceil(lanes / rate) with the table-1 rate of 离散搬入（Gather）: b8 -> b16 64,
// b16 64, b32 32 elements per cycle.

namespace AfTwin {

// The live TPipe buffer of the running core that holds UB byte offset `off`: [first, second).
inline std::pair<uint32_t, uint32_t> RegBufferAt(const CoreCtx* c, uint32_t off, const char* api,
                                                 const char* operand) {
    for (const UbAlloc& a : c->allocs) {
        if (off < a.offset || off >= a.offset + a.bytes) continue;
        const uint32_t first = a.offset + (off - a.offset) / a.slot * a.slot;
        return {first, first + a.slot};
    }
    Fail("ub-out-of-bounds", "Reg::%s: %s at UB byte offset %u lies in no live TPipe buffer", api, operand, off);
}

}  // namespace AfTwin

namespace AscendC {
namespace Reg {

template <typename T0 = DefaultType, typename T1, typename T2 = DefaultType, typename T3, typename T4>
inline void Gather(T3& dstReg, __ubuf__ T1* baseAddr, T4& index, MaskReg& mask) {
    using Dst = typename T3::ActualT;
    using Idx = typename T4::ActualT;
    static_assert(std::is_same<T0, DefaultType>::value || std::is_same<T0, Dst>::value,
                  "Reg::Gather: T0 is not the destination register's element type");
    static_assert(std::is_same<T2, DefaultType>::value || std::is_same<T2, Idx>::value,
                  "Reg::Gather: T2 is not the index register's element type");
    static_assert((sizeof(T1) == 1 && sizeof(Dst) == 2 && std::is_same<Idx, uint16_t>::value) ||
                      (sizeof(T1) == 2 && sizeof(Dst) == 2 && std::is_same<Idx, uint16_t>::value) ||
                      (sizeof(T1) == 4 && sizeof(Dst) == 4 && std::is_same<Idx, uint32_t>::value) ||
                      (sizeof(T1) == 8 && sizeof(Dst) == 8 &&
                       (std::is_same<Idx, uint32_t>::value || std::is_same<Idx, uint64_t>::value)),
                  "Reg::Gather: the 3510 implementation takes b8 -> b16, b16 -> b16 with uint16_t indices, "
                  "b32 -> b32 with uint32_t indices, b64 -> b64 with uint32_t / uint64_t indices");
    static_assert(sizeof(T1) != 8, "Reg::Gather: the twin does not emulate the 8-byte source form");
    const char* api = "Gather";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    AfTwin::RegCheckMask<Dst>(mask, api, "mask");
    const uintptr_t q = reinterpret_cast<uintptr_t>(baseAddr);
    const uintptr_t arena = reinterpret_cast<uintptr_t>(c->arena);
    if (q < arena || q - arena >= AfTwin::kPhysicalUb)
        AfTwin::Fail("ub-out-of-bounds", "Reg::Gather: baseAddr %p is outside this core's UB",
                     static_cast<const void*>(baseAddr));
    const uint32_t base = static_cast<uint32_t>(q - arena);
    if (base % AfTwin::kUbAlign != 0)
        AfTwin::Fail("ub-misaligned", "Reg::Gather: baseAddr starts at UB byte offset %u, which is not 32-byte "
                     "aligned", base);
    const std::pair<uint32_t, uint32_t> buffer = AfTwin::RegBufferAt(c, base, api, "baseAddr");
    T3 out;
    uint32_t on = 0;
    for (uint32_t i = 0; i < LanesOf<Dst>(); ++i) {
        if (!mask.afOn[i]) continue;
        AfTwin::RegCheckRead(index, i, api, "index");
        const uint64_t elem = static_cast<uint64_t>(index.afLane[i]);
        const uint64_t at = uint64_t{base} + elem * sizeof(T1);
        if (at + sizeof(T1) > buffer.second)
            AfTwin::Fail("gather-out-of-range", "Reg::Gather<%s>: lane %u reads element %llu of baseAddr (UB bytes "
                         "[%llu, %llu)) but the buffer holding baseAddr is [%u, %u)", AfTwin::TypeName<T1>(), i,
                         static_cast<unsigned long long>(elem), static_cast<unsigned long long>(at),
                         static_cast<unsigned long long>(at + sizeof(T1)), buffer.first, buffer.second);
        if constexpr (sizeof(T1) == 1) {
            // the byte in the low half, the high half zero (also for int8_t: -40 -> 216)
            uint8_t byte;
            std::memcpy(&byte, baseAddr + elem, 1);
            const uint16_t wide = byte;
            std::memcpy(&out.afLane[i], &wide, sizeof(Dst));
        } else {
            std::memcpy(&out.afLane[i], baseAddr + elem, sizeof(Dst));
        }
        AfTwin::HbUb(c, at, sizeof(T1), false);
        out.afWritten[i] = true;
        ++on;
    }
    ++c->c.regLoads;
    c->c.regLoadBytes += uint64_t{on} * sizeof(T1);
    c->c.gather += on;
    AfTwin::RegCycles(c, api, LanesOf<Dst>(), AfTwin::RegRate(api, sizeof(T1), false));
    dstReg = out;
}

}  // namespace Reg
}  // namespace AscendC

// ---------------------------------------------------------------------------
// Unaligned register load section (vldas / vldus): LoadUnAlignPre(ureg, srcAddr) then
// LoadUnAlign(dstReg, ureg, srcAddr), the plain interface of include/basic_api/reg_compute/
// kernel_reg_compute_datacopy_intf.h (DataCopyUnAlignPreImpl / DataCopyUnAlignImpl in the dav_3510
// kernel_reg_compute_datacopy_load_impl.h). What the official page (连续非对齐搬入（LoadUnAlign）, 关键特性说明)
// documents, and the twin does: LoadUnAlignPre puts the 32-byte aligned UB block holding srcAddr into the
// UnalignRegForLoad (a 32-byte register); LoadUnAlign reads the 256 aligned bytes that follow that block,
// writes dstReg = the ureg's bytes from srcAddr to the block end, then the read bytes up to srcAddr + 256,
// and keeps the last 32-byte block it read in the ureg -- the block holding srcAddr + 256, so a next
// LoadUnAlign at srcAddr + 256 bytes needs no new LoadUnAlignPre. The page's figure shows an unaligned
// srcAddr; for an aligned one the twin takes the same rule (the 256 bytes after srcAddr's own block),
// which reads one block more than the data: a kernel the twin passes reads nothing past its buffers
// under either reading. The register lanes are all written (no mask).
// Checks, at compile time (the 3510 static_asserts): b8 / b16 / b32 / b64 pointer and register types, the
// pointer's element type the register's (or DefaultType); RegTraitNumOne. At run time: outside a VF
// (reg-outside-vf); srcAddr outside UB or not aligned to its element size (ub-out-of-bounds /
// ub-misaligned); the block LoadUnAlignPre reads, or the 256 bytes LoadUnAlign reads, not inside one live
// TPipe buffer (ub-out-of-bounds, naming the bytes); LoadUnAlign with an UnalignRegForLoad that no
// LoadUnAlignPre set, or that holds another block than srcAddr's (reg-unalign: the hardware would splice
// stale bytes). Counts: one register load each, 32 (Pre) / 256 bytes in reg_load_bytes, and reg_cycles
// from table 1's 连续非对齐搬入 row: LoadUnAlign 256 / 128 / 64 b8 / b16 / b32 elements per cycle (one
// vector: 1 cycle), LoadUnAlignPre 32 / 16 / 8 (one 32-byte block: 1 cycle); b64 has no row (1 cycle).
// Not emulated: the post-update and AddrReg forms, RegTraitNumTwo, and the compiler's limit of four
// UnalignRegForLoad registers (generated functions declare at most four).

namespace AscendC {
namespace Reg {

struct UnalignRegForLoad {
    // --- twin internals: the block the register holds (its UB byte offset) and its bytes
    uint8_t afBytes[32]{};
    uint32_t afBlock = 0;
    bool afSet = false;
};

}  // namespace Reg
}  // namespace AscendC

namespace AfTwin {

// The UB byte offset of an unaligned register load's address: inside this core's UB, aligned to its
// element size.
inline uint32_t RegUnalignOffset(const CoreCtx* c, const void* p, uint32_t size, const char* api) {
    const uintptr_t q = reinterpret_cast<uintptr_t>(p);
    const uintptr_t base = reinterpret_cast<uintptr_t>(c->arena);
    if (q < base || q - base >= kPhysicalUb)
        Fail("ub-out-of-bounds", "Reg::%s: srcAddr %p is outside this core's UB", api, p);
    const uint32_t off = static_cast<uint32_t>(q - base);
    if (off % size != 0)
        Fail("ub-misaligned", "Reg::%s: srcAddr at UB byte offset %u is not aligned to its %u-byte elements", api,
             off, size);
    return off;
}

}  // namespace AfTwin

namespace AscendC {
namespace Reg {

template <typename T>
inline void LoadUnAlignPre(UnalignRegForLoad& ureg, __ubuf__ T* srcAddr) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "Reg::LoadUnAlignPre: the 3510 implementation takes b8 / b16 / b32 / b64 only");
    const char* api = "LoadUnAlignPre";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    const uint32_t off = AfTwin::RegUnalignOffset(c, srcAddr, sizeof(T), api);
    const uint32_t block = off - off % AfTwin::kUbAlign;
    AfTwin::RegUbRange(c, c->arena + block, 32, api, "the 32-byte block holding srcAddr");
    std::memcpy(ureg.afBytes, c->arena + block, 32);
    ureg.afBlock = block;
    ureg.afSet = true;
    ++c->c.regLoads;
    c->c.regLoadBytes += 32;
    constexpr uint32_t size = static_cast<uint32_t>(sizeof(T));
    AfTwin::RegCycles(c, api, 32 / size, AfTwin::RegRate(api, size, AfTwin::IsFloatLike<T>::value));
}

template <typename T = DefaultType, typename U>
inline void LoadUnAlign(U& dstReg, UnalignRegForLoad& ureg, __ubuf__ T* srcAddr) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::LoadUnAlign: the pointer's element type differs from the register's");
    static_assert(sizeof(ActualT) == 1 || sizeof(ActualT) == 2 || sizeof(ActualT) == 4 || sizeof(ActualT) == 8,
                  "Reg::LoadUnAlign: the 3510 implementation takes b8 / b16 / b32 / b64 only");
    const char* api = "LoadUnAlign";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    constexpr uint32_t size = static_cast<uint32_t>(sizeof(ActualT));
    const uint32_t off = AfTwin::RegUnalignOffset(c, srcAddr, size, api);
    const uint32_t block = off - off % AfTwin::kUbAlign;
    if (!ureg.afSet)
        AfTwin::Fail("reg-unalign", "Reg::LoadUnAlign: the UnalignRegForLoad was never set (call LoadUnAlignPre "
                     "with the address first)");
    if (ureg.afBlock != block)
        AfTwin::Fail("reg-unalign", "Reg::LoadUnAlign: srcAddr at UB byte offset %u lies in block [%u, %u) but the "
                     "UnalignRegForLoad holds block [%u, %u) (LoadUnAlignPre for this address, or load the "
                     "address 256 bytes after the previous LoadUnAlign's)", off, block, block + 32,
                     ureg.afBlock, ureg.afBlock + 32);
    AfTwin::RegUbRange(c, c->arena + block + 32, kVecBytes, api, "the 256 bytes after srcAddr's block");
    const uint32_t lead = block + 32 - off;  // bytes taken from the ureg
    uint8_t bytes[kVecBytes];
    std::memcpy(bytes, ureg.afBytes + (off - block), lead);
    std::memcpy(bytes + lead, c->arena + block + 32, kVecBytes - lead);
    std::memcpy(ureg.afBytes, c->arena + block + kVecBytes, 32);
    ureg.afBlock = block + kVecBytes;
    ++c->c.regLoads;
    c->c.regLoadBytes += kVecBytes;
    AfTwin::RegCycles(c, api, LanesOf<ActualT>(), AfTwin::RegRate(api, size, AfTwin::IsFloatLike<ActualT>::value));
    std::memcpy(dstReg.afLane, bytes, kVecBytes);
    for (uint32_t i = 0; i < LanesOf<ActualT>(); ++i) dstReg.afWritten[i] = true;
}

}  // namespace Reg
}  // namespace AscendC

// ---------------------------------------------------------------------------
// Mask register moves section (plds / psts / pstu / movvp / punpack): a predicate between a mask register and
// UB, in the layout the memory-based Compare writes and Select reads -- one bit per element, element k at bit
// k % 8 of byte k / 8 -- as the 3510 memory Compare / Select implementations move it
// (impl/basic_api/dav_3510/kernel_operator_vec_cmp_impl.h, kernel_operator_vec_sel_impl.h). The official pages
// (MaskReg搬入（LoadAlign）, MaskReg搬出（StoreAlign）, MaskReg非对齐搬出（StoreUnAlign）, MaskGenWithRegTensor,
// MaskReg计算 UnPack) document a mask register as 256 bits, 8 / sizeof(T) bits per element of which only the
// lowest counts; the twin keeps one predicate per element and the element width (MaskReg::afWidth), so it
// reads each move at one width:
//   LoadAlign<T, MaskDist::DIST_NORM>(mask, src): 32 bytes (32-byte aligned) -> a mask of 1-byte elements, one
//     bit each; LoadAlign<T, MaskDist::DIST_US>(mask, src): 16 bytes (16-byte aligned), each bit doubled -> a
//     mask of 2-byte elements, element k = bit k (the memory Select's load for 2-byte data).
//   StoreAlign<T, MaskDist::DIST_NORM>(dst, mask): a mask of 1-byte elements -> 32 bytes (32-byte aligned);
//     StoreAlign<T, MaskDist::DIST_PACK>(dst, mask): every other bit -> 16 bytes (16-byte aligned), a mask of
//     2-byte elements one bit each.
//   StoreUnAlign<T>(dst, mask, ureg), T b16 / b32: the lowest bit of each element of a mask of sizeof(T)-byte
//     elements -> 16 (b16, 16-byte aligned) / 8 (b32, 8-byte aligned) bytes at dst, buffered in the
//     UnalignRegForStore; dst advances by those bytes. The twin writes a buffered 32-byte block when a
//     StoreUnAlign moves on to the next block, and the rest at StoreUnAlignPost<T, postMode>(dst, ureg,
//     stride) (POST_MODE_UPDATE then advances dst by stride elements).
//   MaskGenWithRegTensor<T, offset>(mask, src), T b16 / b32: data block `offset` of the register (16 / 8
//     bytes) -> a mask of sizeof(T)-byte elements, element k = bit k (the memory Select's load for 4-byte
//     data, after LoadUnAlign).
//   UnPack<part>(dst, src): a mask of w-byte elements (w 1, 2, 4) -> one of 2w-byte elements, from its lower
//     (HighLowPart::LOWEST) or upper half of elements.
// Checks: the compile-time rules of the 3510 implementation (DataCopyImpl / DataCopyUnAlignImpl /
// MaskGenWithRegTensorImpl: b8 / b16 / b32 / b64 pointers for LoadAlign / StoreAlign, NORM / US / DS loads,
// NORM / PACK stores, b16 / b32 for StoreUnAlign and MaskGenWithRegTensor, offset 0-15 / 0-31); at run time
// the address inside one live TPipe buffer and aligned as above (ub-out-of-bounds / ub-misaligned); a mask
// never set, or of another element width than the move takes (reg-mask); the register lanes
// MaskGenWithRegTensor reads written (reg-mask); a StoreUnAlign or StoreUnAlignPost whose dst does not
// continue the bytes the UnalignRegForStore holds, and a vector function returning while one holds bytes
// (reg-unalign: the hardware would write them elsewhere or never).
// Counts: mask loads in reg_loads (reg_load_bytes 32 / 16), mask stores, StoreUnAlign and StoreUnAlignPost in
// reg_stores (reg_store_bytes the bytes written to UB), MaskGenWithRegTensor and UnPack in reg_masks;
// reg_cycles from tables 3-5 of the appendix: LoadAlign, StoreAlign and StoreUnAlign of a mask 1 cycle,
// MaskGenWithRegTensor 4, UnPack 1, StoreUnAlignPost 1 (table 2: one 32-byte block a cycle).
// Not emulated: DIST_DS loads, a NORM / US load read or a NORM / PACK store made at another element width,
// the AddrReg and post-update forms of the mask LoadAlign / StoreAlign, Pack and the other mask moves.

namespace AscendC {
namespace Reg {

enum class MaskDist { DIST_NORM, DIST_US = 1, DIST_DS = 2, DIST_PACK = 1 };
enum class HighLowPart { LOWEST, HIGHEST };
enum class PostLiteral { POST_MODE_NORMAL, POST_MODE_UPDATE };

struct UnalignRegForStore {
    // --- twin internals: the 32-byte UB block whose bytes the register buffers, which of them, and the UB
    // byte offset the next StoreUnAlign must write at
    uint8_t afBytes[32]{};
    bool afHeld[32]{};
    uint32_t afBlock = 0;
    uint32_t afNext = 0;
    bool afPending = false;
};

}  // namespace Reg
}  // namespace AscendC

namespace AfTwin {

constexpr uint32_t kMaskGenCycles = 4;  // table 3: MaskReg搬入（MaskGenWithRegTensor） 4 cycles

inline void RegMaskWidth(const AscendC::Reg::MaskReg& m, uint32_t width, const char* api) {
    if (m.afWidth == 0) Fail("reg-mask", "Reg::%s: the mask was never set", api);
    if (m.afWidth != width)
        Fail("reg-mask", "Reg::%s: the mask was made for %u-byte elements; this form moves a mask of %u-byte "
             "elements", api, m.afWidth, width);
}

// Byte j of a mask in the one-bit-per-element layout: element 8j + b at bit b.
inline uint8_t RegMaskByte(const AscendC::Reg::MaskReg& m, uint32_t j) {
    uint8_t byte = 0;
    for (uint32_t b = 0; b < 8; ++b) byte |= static_cast<uint8_t>(m.afOn[8 * j + b] ? 1u << b : 0u);
    return byte;
}

// A mask of `width`-byte elements read from `n` bytes of that layout (element k = bit k % 8 of byte k / 8).
inline AscendC::Reg::MaskReg RegMaskOfBits(const uint8_t* bytes, uint32_t n, uint32_t width) {
    AscendC::Reg::MaskReg m;
    m.afWidth = width;
    for (uint32_t k = 0; k < 8 * n; ++k) m.afOn[k] = (bytes[k / 8] >> (k % 8)) & 1u;
    return m;
}

// Writes the bytes an UnalignRegForStore holds to UB and empties it.
inline void RegFlushUnalign(CoreCtx* c, AscendC::Reg::UnalignRegForStore& ureg, const char* api) {
    if (!ureg.afPending) return;
    uint32_t first = 32, last = 0;
    for (uint32_t j = 0; j < 32; ++j) {
        if (!ureg.afHeld[j]) continue;
        first = j < first ? j : first;
        last = j + 1;
    }
    RegUbRange(c, c->arena + ureg.afBlock + first, last - first, api, "the buffered bytes", 1);
    for (uint32_t j = first; j < last; ++j) {
        if (!ureg.afHeld[j]) continue;
        c->arena[ureg.afBlock + j] = ureg.afBytes[j];
        ++c->c.regStoreBytes;
        ureg.afHeld[j] = false;
    }
    if (ureg.afBlock + last > c->dirtyEnd) c->dirtyEnd = ureg.afBlock + last;
    ureg.afPending = false;
    --c->pendingUnalignStores;
}

}  // namespace AfTwin

namespace AscendC {
namespace Reg {

template <typename T, MaskDist dist = MaskDist::DIST_NORM>
inline void LoadAlign(MaskReg& mask, __ubuf__ T* srcAddr) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "LoadAlign only support type b8/b16/b32/b64 on current device");
    static_assert(dist != MaskDist::DIST_DS, "Reg::LoadAlign of a mask: the twin does not emulate DIST_DS");
    const char* api = "LoadAlign";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    const uint32_t n = dist == MaskDist::DIST_NORM ? 32u : 16u;
    const uint32_t off = AfTwin::RegUbRange(c, srcAddr, n, api, "srcAddr", n);
    // NORM: 1-byte elements, one bit each; US: 2-byte elements, each bit doubled
    mask = AfTwin::RegMaskOfBits(c->arena + off, n, 32u / n);
    ++c->c.regLoads;
    c->c.regLoadBytes += n;
    c->c.regCycles += 1;  // table 3
}

template <typename T, MaskDist dist = MaskDist::DIST_NORM>
inline void StoreAlign(__ubuf__ T* dstAddr, MaskReg& mask) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "StoreAlign only support type b8/b16/b32/b64 on current device");
    static_assert(dist == MaskDist::DIST_NORM || dist == MaskDist::DIST_PACK,
                  "StoreAlign not support this dist on current device");
    const char* api = "StoreAlign";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    const uint32_t n = dist == MaskDist::DIST_NORM ? 32u : 16u;  // DIST_PACK drops every other bit
    AfTwin::RegMaskWidth(mask, 32u / n, api);
    const uint32_t off = AfTwin::RegUbRange(c, dstAddr, n, api, "dstAddr", n);
    for (uint32_t j = 0; j < n; ++j) c->arena[off + j] = AfTwin::RegMaskByte(mask, j);
    if (off + n > c->dirtyEnd) c->dirtyEnd = off + n;
    ++c->c.regStores;
    c->c.regStoreBytes += n;
    c->c.regCycles += 1;  // table 4
}

template <typename T>
inline void StoreUnAlign(__ubuf__ T*& dstAddr, MaskReg& mask, UnalignRegForStore& ureg) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "StoreUnAlign only support type b16/b32 on current device");
    const char* api = "StoreUnAlign";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    constexpr uint32_t n = 32u / sizeof(T);  // b16: 16 bytes, b32: 8 bytes (the lowest bit of each element)
    AfTwin::RegMaskWidth(mask, sizeof(T), api);
    const uint32_t off = AfTwin::RegUbRange(c, dstAddr, n, api, "dstAddr", n);
    if (ureg.afPending && off != ureg.afNext)
        AfTwin::Fail("reg-unalign", "Reg::StoreUnAlign: dstAddr at UB byte offset %u does not continue the bytes "
                     "the UnalignRegForStore holds (they end at %u); StoreUnAlignPost them first", off,
                     ureg.afNext);
    const uint32_t block = off - off % AfTwin::kUbAlign;
    if (ureg.afPending && ureg.afBlock != block) AfTwin::RegFlushUnalign(c, ureg, api);
    if (!ureg.afPending) {
        ureg.afPending = true;
        ureg.afBlock = block;
        ++c->pendingUnalignStores;
    }
    for (uint32_t j = 0; j < n; ++j) {
        ureg.afBytes[off - block + j] = AfTwin::RegMaskByte(mask, j);
        ureg.afHeld[off - block + j] = true;
    }
    ureg.afNext = off + n;
    dstAddr += n / sizeof(T);
    ++c->c.regStores;
    c->c.regCycles += 1;  // table 4
}

template <typename T, PostLiteral postMode = PostLiteral::POST_MODE_UPDATE>
inline void StoreUnAlignPost(__ubuf__ T*& dstAddr, UnalignRegForStore& ureg, int32_t postUpdateStride) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "StoreUnAlignPost only support type b8/b16/b32/b64 on current device");
    const char* api = "StoreUnAlignPost";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    if (ureg.afPending) {
        const uint32_t off = AfTwin::RegUbRange(c, dstAddr, 0, api, "dstAddr", 1);
        if (off != ureg.afNext)
            AfTwin::Fail("reg-unalign", "Reg::StoreUnAlignPost: dstAddr at UB byte offset %u is not where the "
                         "bytes the UnalignRegForStore holds end (%u)", off, ureg.afNext);
        AfTwin::RegFlushUnalign(c, ureg, api);
    }
    if constexpr (postMode == PostLiteral::POST_MODE_UPDATE) dstAddr += postUpdateStride;
    ++c->c.regStores;
    c->c.regCycles += 1;  // table 2: one 32-byte block a cycle
}

template <typename T = DefaultType, int16_t offset, typename U>
inline void MaskGenWithRegTensor(MaskReg& dst, U& srcReg) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value, "T type is not correct!");
    static_assert(sizeof(ActualT) == 2 || sizeof(ActualT) == 4,
                  "MaskGenWithRegTensor only support type b16/b32 on current device");
    // a data block is 32 / sizeof(T) bytes: 16 blocks of a register for b16, 32 for b32
    static_assert(offset >= 0 && offset < static_cast<int16_t>(8 * sizeof(ActualT)),
                  "MaskGenWithRegTensor offset must be in 0~15 when T is b16, 0~31 when T is b32");
    const char* api = "MaskGenWithRegTensor";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    constexpr uint32_t n = 32u / sizeof(ActualT);  // bytes of the data block
    constexpr uint32_t first = offset * n;
    for (uint32_t lane = first / sizeof(ActualT); lane < (first + n) / sizeof(ActualT); ++lane)
        AfTwin::RegCheckRead(srcReg, lane, api, "srcReg");
    dst = AfTwin::RegMaskOfBits(reinterpret_cast<const uint8_t*>(srcReg.afLane) + first, n, sizeof(ActualT));
    ++c->c.regMasks;
    c->c.regCycles += AfTwin::kMaskGenCycles;
}

template <HighLowPart part = HighLowPart::LOWEST>
inline void UnPack(MaskReg& dst, MaskReg& src) {
    const char* api = "UnPack";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    if (src.afWidth == 0) AfTwin::Fail("reg-mask", "Reg::UnPack: the mask was never set");
    if (src.afWidth > 4)
        AfTwin::Fail("reg-mask", "Reg::UnPack: the mask was made for %u-byte elements; no wider mask exists",
                     src.afWidth);
    const uint32_t lanes = kVecBytes / (2 * src.afWidth);
    const uint32_t from = part == HighLowPart::LOWEST ? 0u : lanes;
    MaskReg m;
    m.afWidth = 2 * src.afWidth;
    for (uint32_t k = 0; k < lanes; ++k) m.afOn[k] = src.afOn[from + k];
    dst = m;
    ++c->c.regMasks;
    c->c.regCycles += 1;  // table 5
}

}  // namespace Reg
}  // namespace AscendC

#endif  // AF_TWIN_REG_H
