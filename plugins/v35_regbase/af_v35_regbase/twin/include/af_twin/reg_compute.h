// af_twin/reg_compute.h
// One family of the register API that af_twin/reg.h includes (reg.h says what the twin emulates, checks and
// counts): the computing instructions (arithmetic, Compare / Select, Duplicate, Cast).
#ifndef AF_TWIN_REG_COMPUTE_H
#define AF_TWIN_REG_COMPUTE_H

#include "reg_load_store.h"

namespace AscendC {
namespace Reg {

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

}  // namespace Reg
}  // namespace AscendC

#endif  // AF_TWIN_REG_COMPUTE_H
