// af_twin/vector.h
// Emulates: the "first count elements" forms of the AscendC vector APIs used by
// generated kernels: Add Sub Mul Div Max Min And Or, Adds Muls Maxs Mins Ands,
// Abs Exp Ln Sqrt Rsqrt Relu Reciprocal Not, Duplicate, Cast, Compare,
// Compares, Select, ReduceSum ReduceMax ReduceMin, Gather, CreateVecIndex,
// ArithProgression, Truncate.
// Semantics: half / bfloat16_t compute in float and round to nearest even on
// store; integer arithmetic wraps; Max / Min propagate NaN.
// Checks: at compile time, the element types of every call against the 3510
// table in api_dtypes.h (generated from af_v35_regbase/api_dtypes.py): a type,
// mask type or Cast pair the official dav_3510 implementation rejects fails a
// static_assert; at run time, every operand starts 32-byte aligned (ub-misaligned) and the elements
// touched lie in its LocalTensor (ub-out-of-bounds); count >= 0 and valid mode
// arguments (api-params); Cast rounding modes the 3510 Cast implements for the pair (cast-mode); Gather offsets
// (gather-misaligned, gather-offset-packing for the uint16 offsets of 1- and
// 2-byte types, gather-out-of-range).
// Counts: vector_calls (every call, also with count 0), gather_elements.
// Not emulated: the mask / repeatTimes / repeat-stride forms; Compare and
// Compares write ceil(count / 8) mask bytes, where hardware writes the masks of
// whole 256-byte repeats, and no hardware constraint on their count is checked;
// ReduceSum adds in index order (hardware uses a tree) and sharedTmpBuffer is
// never written; Exp, Ln, Sqrt, Rsqrt and Reciprocal use the C library in float
// and round once (hardware approximations may differ in the last bits);
// partially overlapping operands are processed element by element in index
// order. Integer Div by zero aborts (api-params). Cast between integer types
// keeps the low bits; the 3510 Cast runs with SatMode::SAT, so values outside
// the target's range may saturate on the device (generated kernels narrow
// integers only for values in range).
#ifndef AF_TWIN_VECTOR_H
#define AF_TWIN_VECTOR_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "api_dtypes.h"
#include "core.h"
#include "runtime.h"
#include "tensor.h"

namespace AfTwin {

template <class T>
struct NoDeduceS {
    using type = T;
};
template <class T>
using NoDeduce = typename NoDeduceS<T>::type;

template <class T>
struct IsVectorType
    : std::integral_constant<bool, IsFloatLike<T>::value ||
                                       (std::is_integral<T>::value && !std::is_same<T, bool>::value && sizeof(T) <= 8)> {};

// Unsigned type wide enough to hold T's bits without integer promotion surprises.
template <class T>
using WrapType = typename std::conditional<sizeof(T) <= 4, uint32_t, uint64_t>::type;

template <class T>
inline T WrapAdd(T a, T b) {
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
}
template <class T>
inline T WrapSub(T a, T b) {
    return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
}
template <class T>
inline T WrapMul(T a, T b) {
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
}
template <class T>
inline T WrapNeg(T a) {
    return static_cast<T>(WrapType<T>{0} - static_cast<WrapType<T>>(a));
}

// Counts a vector call and issues it as one PIPE_V instruction of the pipe model (hb.h); every vector API
// calls it after checking its operands, which recorded the accesses the instruction makes.
inline CoreCtx* CountVector(const char* api) {
    CoreCtx* c = RequireCore(api);
    ++c->c.vector;
    HbCommit(c, kPipeV, api, true);  // the call computes after this: in lag mode it may read stale bytes
    return c;
}

template <class T, class F>
inline void Elementwise2(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                         const AscendC::LocalTensor<T>& src1, int32_t count, F f) {
    static_assert(IsVectorType<T>::value, "vector API: unsupported element type");
    CheckCount(count, api);
    T* d = UbOperand(dst, static_cast<uint64_t>(count), api, "dst");
    const T* a = UbOperand(src0, static_cast<uint64_t>(count), api, "src0");
    const T* b = UbOperand(src1, static_cast<uint64_t>(count), api, "src1");
    CountVector(api);
    for (int32_t i = 0; i < count; ++i) d[i] = f(a[i], b[i]);
}

template <class T, class F>
inline void Elementwise1(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                         int32_t count, F f) {
    static_assert(IsVectorType<T>::value, "vector API: unsupported element type");
    CheckCount(count, api);
    T* d = UbOperand(dst, static_cast<uint64_t>(count), api, "dst");
    const T* a = UbOperand(src, static_cast<uint64_t>(count), api, "src");
    CountVector(api);
    for (int32_t i = 0; i < count; ++i) d[i] = f(a[i]);
}

template <class T>
inline bool IsNan(T v) {
    if constexpr (IsFloatLike<T>::value) {
        return std::isnan(static_cast<float>(v));
    } else {
        (void)v;
        return false;
    }
}

template <class T>
inline T MaxOf(T a, T b) {
    if (IsNan(a)) return a;
    if (IsNan(b)) return b;
    using C = typename CalcType<T>::type;
    return static_cast<C>(a) >= static_cast<C>(b) ? a : b;
}

template <class T>
inline T MinOf(T a, T b) {
    if (IsNan(a)) return a;
    if (IsNan(b)) return b;
    using C = typename CalcType<T>::type;
    return static_cast<C>(a) <= static_cast<C>(b) ? a : b;
}

template <class T>
inline T AddOf(T a, T b) {
    if constexpr (IsFloatLike<T>::value) {
        return T(static_cast<float>(a) + static_cast<float>(b));
    } else {
        return WrapAdd(a, b);
    }
}

template <class T>
inline T MulOf(T a, T b) {
    if constexpr (IsFloatLike<T>::value) {
        return T(static_cast<float>(a) * static_cast<float>(b));
    } else {
        return WrapMul(a, b);
    }
}

// ---------------------------------------------------------------------------
// Cast helpers.

inline Rounding ToRounding(AscendC::RoundMode m) {
    switch (m) {
        case AscendC::RoundMode::CAST_NONE:
        case AscendC::RoundMode::CAST_RINT:
            return Rounding::NearestEven;
        case AscendC::RoundMode::CAST_FLOOR:
            return Rounding::Down;
        case AscendC::RoundMode::CAST_CEIL:
            return Rounding::Up;
        case AscendC::RoundMode::CAST_ROUND:
            return Rounding::HalfAway;
        case AscendC::RoundMode::CAST_TRUNC:
            return Rounding::TowardZero;
        case AscendC::RoundMode::CAST_ODD:
            return Rounding::Odd;
        case AscendC::RoundMode::UNKNOWN:
            break;
    }
    return Rounding::NearestEven;
}

inline const char* RoundModeName(AscendC::RoundMode m) {
    switch (m) {
        case AscendC::RoundMode::CAST_NONE:
            return "CAST_NONE";
        case AscendC::RoundMode::CAST_RINT:
            return "CAST_RINT";
        case AscendC::RoundMode::CAST_FLOOR:
            return "CAST_FLOOR";
        case AscendC::RoundMode::CAST_CEIL:
            return "CAST_CEIL";
        case AscendC::RoundMode::CAST_ROUND:
            return "CAST_ROUND";
        case AscendC::RoundMode::CAST_TRUNC:
            return "CAST_TRUNC";
        case AscendC::RoundMode::CAST_ODD:
            return "CAST_ODD";
        case AscendC::RoundMode::UNKNOWN:
            return "UNKNOWN";
    }
    return "invalid";
}

template <class D, class S>
inline void CheckCastMode(AscendC::RoundMode mode) {
    const int m = static_cast<int>(mode);
    if (m < 0 || m > static_cast<int>(AscendC::RoundMode::CAST_ODD))
        Fail("cast-mode", "Cast<%s -> %s>: %d is not a RoundMode", TypeName<S>(), TypeName<D>(), m);
    if ((kCastModes<D, S> & (1u << m)) == 0u)
        Fail("cast-mode", "Cast<%s -> %s> with %s: the 3510 Cast does not implement this rounding for these types",
             TypeName<S>(), TypeName<D>(), RoundModeName(mode));
}

template <class D>
struct FloatFormat;
template <>
struct FloatFormat<half> {
    static constexpr int kExp = 5;
    static constexpr int kMant = 10;
};
template <>
struct FloatFormat<bfloat16_t> {
    static constexpr int kExp = 8;
    static constexpr int kMant = 7;
};
template <>
struct FloatFormat<float> {
    static constexpr int kExp = 8;
    static constexpr int kMant = 23;
};

template <class D>
inline D FromEncoded(uint32_t bits) {
    if constexpr (std::is_same<D, float>::value) {
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
    } else {
        return D::FromBits(static_cast<uint16_t>(bits));
    }
}

template <class D>
inline D SaturateToInt(double x) {
    if (std::isnan(x)) return D(0);
    const double lo = static_cast<double>(std::numeric_limits<D>::min());
    const double hi = static_cast<double>(std::numeric_limits<D>::max());  // may round up to 2^k
    if (x <= lo) return std::numeric_limits<D>::min();
    if (x >= hi) return std::numeric_limits<D>::max();
    return static_cast<D>(x);
}

template <class D, class S>
inline D CastValue(S v, AscendC::RoundMode mode) {
    if constexpr (IsFloatLike<S>::value && IsFloatLike<D>::value) {
        if constexpr (std::is_same<D, S>::value) {
            (void)mode;
            return v;
        } else if constexpr (std::is_same<D, float>::value) {
            (void)mode;
            return static_cast<float>(v);  // exact
        } else {
            const float f = static_cast<float>(v);
            if (mode == AscendC::RoundMode::CAST_NONE || mode == AscendC::RoundMode::CAST_RINT) return D(f);
            return FromEncoded<D>(EncodeBinary(f, FloatFormat<D>::kExp, FloatFormat<D>::kMant, ToRounding(mode)));
        }
    } else if constexpr (IsFloatLike<S>::value) {  // float-like -> integer
        double x = static_cast<float>(v);
        switch (mode) {
            case AscendC::RoundMode::CAST_NONE:  // the pairs that take CAST_NONE round to nearest even
            case AscendC::RoundMode::CAST_RINT:
                x = std::nearbyint(x);
                break;
            case AscendC::RoundMode::CAST_TRUNC:
                x = std::trunc(x);
                break;
            case AscendC::RoundMode::CAST_FLOOR:
                x = std::floor(x);
                break;
            case AscendC::RoundMode::CAST_CEIL:
                x = std::ceil(x);
                break;
            case AscendC::RoundMode::CAST_ROUND:
                x = std::round(x);
                break;
            default:
                break;  // rejected by CheckCastMode
        }
        return SaturateToInt<D>(x);
    } else if constexpr (IsFloatLike<D>::value) {  // integer -> float-like
        if constexpr (std::is_same<D, float>::value) {
            if (mode == AscendC::RoundMode::CAST_NONE || mode == AscendC::RoundMode::CAST_RINT)
                return static_cast<float>(v);
        }
        return FromEncoded<D>(
            EncodeBinary(IntegerValue(v), FloatFormat<D>::kExp, FloatFormat<D>::kMant, ToRounding(mode)));
    } else {  // integer -> integer: keep the low bits
        (void)mode;
        return static_cast<D>(v);
    }
}

template <class T>
inline bool CompareOne(T a, T b, AscendC::CMPMODE mode) {
    using C = typename CalcType<T>::type;
    const C x = static_cast<C>(a);
    const C y = static_cast<C>(b);
    switch (mode) {
        case AscendC::CMPMODE::LT:
            return x < y;
        case AscendC::CMPMODE::GT:
            return x > y;
        case AscendC::CMPMODE::EQ:
            return x == y;
        case AscendC::CMPMODE::LE:
            return x <= y;
        case AscendC::CMPMODE::GE:
            return x >= y;
        case AscendC::CMPMODE::NE:
            return x != y;
    }
    Fail("api-params", "Compare: %d is not a CMPMODE", static_cast<int>(mode));
}

// Bit i of the mask (bit i % 8 of byte i / 8).
inline bool MaskBit(const uint8_t* mask, uint32_t i) { return ((mask[i >> 3] >> (i & 7u)) & 1u) != 0; }

template <class U>
inline uint8_t* MaskOperand(const AscendC::LocalTensor<U>& t, uint32_t count, const char* api, const char* operand) {
    static_assert(std::is_integral<U>::value && !std::is_same<U, bool>::value,
                  "compare / select masks are integer tensors (uint8_t)");
    uint8_t* p = reinterpret_cast<uint8_t*>(UbStart(t, api, operand));
    UbBytes(t, 0, (uint64_t{count} + 7u) / 8u, api, operand);
    return p;
}

// Compare / Compares on 3510: count * sizeof(T) must be whole 256-byte repeats.
template <typename T>
inline void CheckCompareCount(uint32_t count, const char* api) {
    if ((static_cast<uint64_t>(count) * sizeof(T)) % 256 != 0)
        Fail("compare-count", "%s: count %u of %u-byte elements is %llu bytes, not a multiple of 256; the 3510 "
             "interface asserts count * sizeof(T) %% 256 == 0 (round the count up to %u elements and size the "
             "operands for it)", api, count, static_cast<unsigned>(sizeof(T)),
             static_cast<unsigned long long>(static_cast<uint64_t>(count) * sizeof(T)),
             static_cast<unsigned>((count + 256 / sizeof(T) - 1) / (256 / sizeof(T)) * (256 / sizeof(T))));
}

}  // namespace AfTwin

namespace AscendC {

// ---------------------------------------------------------------------------
// Binary: dst[i] = src0[i] op src1[i].

template <typename T>
inline void Add(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count) {
    static_assert(AfTwin::AcceptsAdd<T>, "Add: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise2("Add", dst, src0, src1, count, [](T a, T b) { return AfTwin::AddOf(a, b); });
}

template <typename T>
inline void Sub(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count) {
    static_assert(AfTwin::AcceptsSub<T>, "Sub: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise2("Sub", dst, src0, src1, count, [](T a, T b) -> T {
        if constexpr (AfTwin::IsFloatLike<T>::value) {
            return T(static_cast<float>(a) - static_cast<float>(b));
        } else {
            return AfTwin::WrapSub(a, b);
        }
    });
}

template <typename T>
inline void Mul(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count) {
    static_assert(AfTwin::AcceptsMul<T>, "Mul: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise2("Mul", dst, src0, src1, count, [](T a, T b) { return AfTwin::MulOf(a, b); });
}

template <typename T>
inline void Div(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count) {
    static_assert(AfTwin::AcceptsDiv<T>, "Div: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise2("Div", dst, src0, src1, count, [](T a, T b) -> T {
        if constexpr (AfTwin::IsFloatLike<T>::value) {
            return T(static_cast<float>(a) / static_cast<float>(b));
        } else {
            if (b == 0) AfTwin::Fail("api-params", "Div: integer division by zero (%s)", AfTwin::TypeName<T>());
            if constexpr (std::is_signed<T>::value) {
                if (b == static_cast<T>(-1)) return AfTwin::WrapNeg(a);
            }
            return static_cast<T>(a / b);
        }
    });
}

template <typename T>
inline void Max(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count) {
    static_assert(AfTwin::AcceptsMax<T>, "Max: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise2("Max", dst, src0, src1, count, [](T a, T b) { return AfTwin::MaxOf(a, b); });
}

template <typename T>
inline void Min(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count) {
    static_assert(AfTwin::AcceptsMin<T>, "Min: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise2("Min", dst, src0, src1, count, [](T a, T b) { return AfTwin::MinOf(a, b); });
}

template <typename T>
inline void And(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                const int32_t& count) {
    static_assert(AfTwin::AcceptsAnd<T>, "And: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise2("And", dst, src0, src1, count, [](T a, T b) { return static_cast<T>(a & b); });
}

template <typename T>
inline void Or(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
               const int32_t& count) {
    static_assert(AfTwin::AcceptsOr<T>, "Or: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise2("Or", dst, src0, src1, count, [](T a, T b) { return static_cast<T>(a | b); });
}

// ---------------------------------------------------------------------------
// Tensor-scalar: dst[i] = src[i] op scalar.

template <typename T>
inline void Adds(const LocalTensor<T>& dst, const LocalTensor<T>& src, const AfTwin::NoDeduce<T>& scalarValue,
                 const int32_t& count) {
    static_assert(AfTwin::AcceptsAdds<T>, "Adds: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    const T s = scalarValue;
    AfTwin::Elementwise1("Adds", dst, src, count, [s](T a) { return AfTwin::AddOf(a, s); });
}

template <typename T>
inline void Muls(const LocalTensor<T>& dst, const LocalTensor<T>& src, const AfTwin::NoDeduce<T>& scalarValue,
                 const int32_t& count) {
    static_assert(AfTwin::AcceptsMuls<T>, "Muls: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    const T s = scalarValue;
    AfTwin::Elementwise1("Muls", dst, src, count, [s](T a) { return AfTwin::MulOf(a, s); });
}

template <typename T>
inline void Maxs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const AfTwin::NoDeduce<T>& scalarValue,
                 const int32_t& count) {
    static_assert(AfTwin::AcceptsMaxs<T>, "Maxs: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    const T s = scalarValue;
    AfTwin::Elementwise1("Maxs", dst, src, count, [s](T a) { return AfTwin::MaxOf(a, s); });
}

template <typename T>
inline void Mins(const LocalTensor<T>& dst, const LocalTensor<T>& src, const AfTwin::NoDeduce<T>& scalarValue,
                 const int32_t& count) {
    static_assert(AfTwin::AcceptsMins<T>, "Mins: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    const T s = scalarValue;
    AfTwin::Elementwise1("Mins", dst, src, count, [s](T a) { return AfTwin::MinOf(a, s); });
}

template <typename T>
inline void Ands(const LocalTensor<T>& dst, const LocalTensor<T>& src, const AfTwin::NoDeduce<T>& scalarValue,
                 const int32_t& count) {
    static_assert(AfTwin::AcceptsAnds<T>, "Ands: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    const T s = scalarValue;
    AfTwin::Elementwise1("Ands", dst, src, count, [s](T a) { return static_cast<T>(a & s); });
}

// ---------------------------------------------------------------------------
// Unary.

template <typename T>
inline void Abs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    static_assert(AfTwin::AcceptsAbs<T>, "Abs: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise1("Abs", dst, src, count, [](T a) -> T {
        if constexpr (std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value) {
            return T::FromBits(static_cast<uint16_t>(a.bits & 0x7FFFu));
        } else if constexpr (std::is_same<T, float>::value) {
            return std::fabs(a);
        } else if constexpr (std::is_signed<T>::value) {
            return a < 0 ? AfTwin::WrapNeg(a) : a;
        } else {
            return a;
        }
    });
}

template <typename T>
inline void Exp(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    static_assert(AfTwin::AcceptsExp<T>, "Exp: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise1("Exp", dst, src, count, [](T a) { return T(std::exp(static_cast<float>(a))); });
}

template <typename T>
inline void Ln(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    static_assert(AfTwin::AcceptsLn<T>, "Ln: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise1("Ln", dst, src, count, [](T a) { return T(std::log(static_cast<float>(a))); });
}

template <typename T>
inline void Sqrt(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    static_assert(AfTwin::AcceptsSqrt<T>, "Sqrt: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise1("Sqrt", dst, src, count, [](T a) { return T(std::sqrt(static_cast<float>(a))); });
}

template <typename T>
inline void Rsqrt(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    static_assert(AfTwin::AcceptsRsqrt<T>, "Rsqrt: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise1("Rsqrt", dst, src, count,
                         [](T a) { return T(1.0f / std::sqrt(static_cast<float>(a))); });
}

template <typename T>
inline void Reciprocal(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    static_assert(AfTwin::AcceptsReciprocal<T>, "Reciprocal: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise1("Reciprocal", dst, src, count, [](T a) { return T(1.0f / static_cast<float>(a)); });
}

template <typename T>
inline void Relu(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    static_assert(AfTwin::AcceptsRelu<T>, "Relu: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise1("Relu", dst, src, count, [](T a) -> T {
        using C = typename AfTwin::CalcType<T>::type;
        return static_cast<C>(a) > C(0) ? a : T(0);
    });
}

template <typename T>
inline void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
    static_assert(AfTwin::AcceptsNot<T>, "Not: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::Elementwise1("Not", dst, src, count, [](T a) -> T {
        if constexpr (std::is_integral<T>::value) {
            return static_cast<T>(~a);
        } else {  // half / float: the complement of the bit pattern
            using Bits = typename std::conditional<sizeof(T) == 2, uint16_t, uint32_t>::type;
            Bits b;
            std::memcpy(&b, &a, sizeof b);
            b = static_cast<Bits>(~b);
            T r;
            std::memcpy(&r, &b, sizeof r);
            return r;
        }
    });
}

// ---------------------------------------------------------------------------
// Fill and index generation.

template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, const AfTwin::NoDeduce<T>& scalarValue, const int32_t& count) {
    static_assert(AfTwin::AcceptsDuplicate<T>, "Duplicate: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    const char* api = "Duplicate";
    AfTwin::CheckCount(count, api);
    T* d = AfTwin::UbOperand(dst, static_cast<uint64_t>(count), api, "dst");
    AfTwin::CountVector(api);
    for (int32_t i = 0; i < count; ++i) d[i] = scalarValue;
}

// dst[i] = firstValue + i
template <typename T>
inline void CreateVecIndex(const LocalTensor<T>& dst, const AfTwin::NoDeduce<T> firstValue, uint32_t count) {
    static_assert(AfTwin::AcceptsCreateVecIndex<T>, "CreateVecIndex: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    const char* api = "CreateVecIndex";
    T* d = AfTwin::UbOperand(dst, count, api, "dst");
    AfTwin::CountVector(api);
    for (uint32_t i = 0; i < count; ++i) {
        if constexpr (AfTwin::IsFloatLike<T>::value) {
            d[i] = T(static_cast<float>(firstValue) + static_cast<float>(i));
        } else {
            d[i] = AfTwin::WrapAdd(firstValue, static_cast<T>(i));
        }
    }
}

// dst[i] = firstValue + i * diffValue
template <typename T>
inline void ArithProgression(const LocalTensor<T>& dst, const AfTwin::NoDeduce<T> firstValue,
                             const AfTwin::NoDeduce<T> diffValue, const int32_t count) {
    static_assert(AfTwin::IsVectorType<T>::value, "ArithProgression: unsupported element type");
    const char* api = "ArithProgression";
    AfTwin::CheckCount(count, api);
    T* d = AfTwin::UbOperand(dst, static_cast<uint64_t>(count), api, "dst");
    AfTwin::CountVector(api);
    for (int32_t i = 0; i < count; ++i) {
        if constexpr (AfTwin::IsFloatLike<T>::value) {
            d[i] = T(static_cast<float>(firstValue) + static_cast<float>(i) * static_cast<float>(diffValue));
        } else {
            d[i] = AfTwin::WrapAdd(firstValue, AfTwin::WrapMul(static_cast<T>(i), diffValue));
        }
    }
}

// ---------------------------------------------------------------------------
// Cast.

template <typename D, typename S>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& round_mode,
                 const uint32_t count) {
    static_assert(AfTwin::kCastModes<D, S> != 0u,
                  "Cast: no such conversion in the 3510 implementation (af_twin/api_dtypes.h)");
    const char* api = "Cast";
    AfTwin::CheckCastMode<D, S>(round_mode);
    D* d = AfTwin::UbOperand(dst, count, api, "dst");
    const S* s = AfTwin::UbOperand(src, count, api, "src");
    AfTwin::CountVector(api);
    for (uint32_t i = 0; i < count; ++i) d[i] = AfTwin::CastValue<D, S>(s[i], round_mode);
}

// ---------------------------------------------------------------------------
// Compare / Select. Masks hold one bit per element, LSB first; the twin writes
// exactly ceil(count / 8) mask bytes (hardware writes whole 256-byte repeats).
// The 3510 interface of Compare and Compares asserts count * sizeof(T) % 256 == 0
// (kernel_operator_vec_cmpsel_intf_impl.h): callers round the count up to whole
// 256-byte repeats, so every operand must hold the rounded count.

template <typename T, typename U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
                    uint32_t count) {
    static_assert(AfTwin::AcceptsCompare<T>, "Compare: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    static_assert(AfTwin::MaskCompare<U>, "Compare: mask type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    const char* api = "Compare";
    AfTwin::CheckCompareCount<T>(count, api);
    uint8_t* m = AfTwin::MaskOperand(dst, count, api, "dst");
    const T* a = AfTwin::UbOperand(src0, count, api, "src0");
    const T* b = AfTwin::UbOperand(src1, count, api, "src1");
    AfTwin::CountVector(api);
    for (uint32_t base = 0; base < count; base += 8) {
        uint8_t byte = 0;
        for (uint32_t k = 0; k < 8 && base + k < count; ++k) {
            if (AfTwin::CompareOne(a[base + k], b[base + k], cmpMode)) byte = static_cast<uint8_t>(byte | (1u << k));
        }
        m[base / 8] = byte;
    }
}

template <typename T, typename U>
inline void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const AfTwin::NoDeduce<T> src1Scalar,
                     CMPMODE cmpMode, uint32_t count) {
    static_assert(AfTwin::AcceptsCompares<T>, "Compares: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    static_assert(AfTwin::MaskCompares<U>, "Compares: mask type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    const char* api = "Compares";
    AfTwin::CheckCompareCount<T>(count, api);
    uint8_t* m = AfTwin::MaskOperand(dst, count, api, "dst");
    const T* a = AfTwin::UbOperand(src0, count, api, "src0");
    AfTwin::CountVector(api);
    for (uint32_t base = 0; base < count; base += 8) {
        uint8_t byte = 0;
        for (uint32_t k = 0; k < 8 && base + k < count; ++k) {
            if (AfTwin::CompareOne(a[base + k], src1Scalar, cmpMode)) byte = static_cast<uint8_t>(byte | (1u << k));
        }
        m[base / 8] = byte;
    }
}

// VSEL_TENSOR_TENSOR_MODE: dst[i] = bit i ? src0[i] : src1[i]
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE selMode, uint32_t count) {
    static_assert(AfTwin::AcceptsSelect<T>, "Select: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    static_assert(AfTwin::MaskSelect<U>, "Select: mask type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    const char* api = "Select(tensor, tensor)";
    if (selMode != SELMODE::VSEL_TENSOR_TENSOR_MODE)
        AfTwin::Fail("api-params", "%s: selMode %d given, the tensor/tensor form needs VSEL_TENSOR_TENSOR_MODE (%d)",
                     api, static_cast<int>(selMode), static_cast<int>(SELMODE::VSEL_TENSOR_TENSOR_MODE));
    const uint8_t* m = AfTwin::MaskOperand(selMask, count, api, "selMask");
    T* d = AfTwin::UbOperand(dst, count, api, "dst");
    const T* a = AfTwin::UbOperand(src0, count, api, "src0");
    const T* b = AfTwin::UbOperand(src1, count, api, "src1");
    AfTwin::CountVector(api);
    for (uint32_t i = 0; i < count; ++i) d[i] = AfTwin::MaskBit(m, i) ? a[i] : b[i];
}

// VSEL_TENSOR_SCALAR_MODE: dst[i] = bit i ? src0[i] : src1
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   AfTwin::NoDeduce<T> src1, SELMODE selMode, uint32_t count) {
    static_assert(AfTwin::AcceptsSelect<T>, "Select: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    static_assert(AfTwin::MaskSelect<U>, "Select: mask type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    const char* api = "Select(tensor, scalar)";
    if (selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE)
        AfTwin::Fail("api-params", "%s: selMode %d given, the tensor/scalar form needs VSEL_TENSOR_SCALAR_MODE (%d)",
                     api, static_cast<int>(selMode), static_cast<int>(SELMODE::VSEL_TENSOR_SCALAR_MODE));
    const uint8_t* m = AfTwin::MaskOperand(selMask, count, api, "selMask");
    T* d = AfTwin::UbOperand(dst, count, api, "dst");
    const T* a = AfTwin::UbOperand(src0, count, api, "src0");
    AfTwin::CountVector(api);
    for (uint32_t i = 0; i < count; ++i) d[i] = AfTwin::MaskBit(m, i) ? a[i] : src1;
}

// ---------------------------------------------------------------------------
// Reductions: the result goes to dst[0]. Float-like inputs accumulate in float
// in index order (hardware adds in a tree, so the last bits of a float sum can
// differ); integers accumulate in 64-bit two's complement and wrap on store.
// sharedTmpBuffer is only checked for alignment, never read or written.

template <typename T>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count) {
    static_assert(AfTwin::AcceptsReduceSum<T>, "ReduceSum: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    const char* api = "ReduceSum";
    AfTwin::CheckCount(count, api);
    T* d = AfTwin::UbOperand(dst, 1, api, "dst");
    const T* s = AfTwin::UbOperand(src, static_cast<uint64_t>(count), api, "src");
    (void)AfTwin::UbStart(sharedTmpBuffer, api, "sharedTmpBuffer");
    AfTwin::CountVector(api);
    if constexpr (AfTwin::IsFloatLike<T>::value) {
        float acc = 0.0f;
        for (int32_t i = 0; i < count; ++i) acc += static_cast<float>(s[i]);
        d[0] = T(acc);
    } else {
        uint64_t acc = 0;
        for (int32_t i = 0; i < count; ++i) acc += static_cast<uint64_t>(static_cast<int64_t>(s[i]));
        d[0] = static_cast<T>(acc);
    }
}

}  // namespace AscendC

namespace AfTwin {

// Index of the first extreme element (NaN wins, like Max / Min).
template <class T, bool kMax>
inline void ReduceExtreme(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                          const AscendC::LocalTensor<T>& tmp, int32_t count, bool calIndex) {
    static_assert(IsVectorType<T>::value, "ReduceMax / ReduceMin: unsupported element type");
    CheckCount(count, api);
    T* d = UbOperand(dst, calIndex ? 2u : 1u, api, "dst");
    const T* s = UbOperand(src, static_cast<uint64_t>(count), api, "src");
    (void)UbStart(tmp, api, "sharedTmpBuffer");
    CountVector(api);
    if (count == 0) return;
    using C = typename CalcType<T>::type;
    uint32_t best = 0;
    for (int32_t i = 1; i < count && !IsNan(s[best]); ++i) {
        const bool better = kMax ? static_cast<C>(s[i]) > static_cast<C>(s[best])
                                 : static_cast<C>(s[i]) < static_cast<C>(s[best]);
        if (IsNan(s[i]) || better) best = static_cast<uint32_t>(i);
    }
    d[0] = s[best];
    if (calIndex) {
        // The index is stored as the bit pattern of an unsigned integer of T's width.
        if constexpr (sizeof(T) == 2) {
            const uint16_t idx = static_cast<uint16_t>(best);
            std::memcpy(&d[1], &idx, 2);
        } else if constexpr (sizeof(T) == 4) {
            const uint32_t idx = best;
            std::memcpy(&d[1], &idx, 4);
        } else if constexpr (sizeof(T) == 8) {
            const uint64_t idx = best;
            std::memcpy(&d[1], &idx, 8);
        } else {
            d[1] = static_cast<T>(best);
        }
    }
}

}  // namespace AfTwin

namespace AscendC {

template <typename T>
inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, bool calIndex = false) {
    static_assert(AfTwin::AcceptsReduceMax<T>, "ReduceMax: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::ReduceExtreme<T, true>("ReduceMax", dst, src, sharedTmpBuffer, count, calIndex);
}

template <typename T>
inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
                      const int32_t count, bool calIndex = false) {
    static_assert(AfTwin::AcceptsReduceMin<T>, "ReduceMin: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    AfTwin::ReduceExtreme<T, false>("ReduceMin", dst, src, sharedTmpBuffer, count, calIndex);
}

// ---------------------------------------------------------------------------
// Gather (count form), as the 3510 implementation computes it: srcOffset holds byte offsets; the source
// element read is srcBaseOffset / sizeof(T) plus
//   1-byte T: the low 16 bits of the offset (the offsets are packed to uint16 indices),
//   2-byte T: the low 16 bits of offset >> 1 (shifted to element indices, then packed to uint16),
//   4-byte T: offset >> 2.
// A 1- or 2-byte offset whose element index does not fit in 16 bits therefore reads another element on the
// device; the twin reports it (gather-offset-packing) instead of reading the wrong element. The official
// count form takes no 8-byte types on 3510.

}  // namespace AscendC

namespace AfTwin {
// The element index the device's Gather derives from one byte offset (without the base).
template <class T>
inline uint32_t GatherDeviceIndex(uint32_t offset) {
    if constexpr (sizeof(T) == 1) return offset & 0xFFFFu;
    if constexpr (sizeof(T) == 2) return (offset >> 1) & 0xFFFFu;
    return offset >> 2;
}
}  // namespace AfTwin

namespace AscendC {

template <typename T>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
                   const uint32_t srcBaseOffset, const uint32_t count) {
    static_assert(AfTwin::AcceptsGather<T>,
                  "Gather: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h): "
                  "Gather on 3510 supports uint8 / int8 / half / bfloat16_t / uint16_t / int16_t / float / uint32_t / "
                  "int32_t (no 64-bit types)");
    const char* api = "Gather";
    T* d = AfTwin::UbOperand(dst, count, api, "dst");
    const T* s = AfTwin::UbStart(src, api, "src");
    const uint32_t* off = AfTwin::UbOperand(srcOffset, count, api, "srcOffset");
    AfTwin::CoreCtx* c = AfTwin::CountVector(api);
    const uint64_t n = src.GetSize();
    const uint64_t base = srcBaseOffset / sizeof(T);
    for (uint32_t i = 0; i < count; ++i) {
        const uint64_t byteOff = uint64_t{srcBaseOffset} + off[i];
        if (byteOff % sizeof(T) != 0)
            AfTwin::Fail("gather-misaligned",
                         "Gather: element %u has byte offset %llu (base %u + offset %u), not a multiple of "
                         "sizeof(%s) = %u",
                         i, static_cast<unsigned long long>(byteOff), srcBaseOffset, off[i], AfTwin::TypeName<T>(),
                         static_cast<unsigned>(sizeof(T)));
        const uint64_t idx = base + AfTwin::GatherDeviceIndex<T>(off[i]);
        if (idx != byteOff / sizeof(T))
            AfTwin::Fail("gather-offset-packing",
                         "Gather<%s>: element %u has byte offset %u, element index %llu; 3510 packs %u-byte Gather "
                         "offsets to uint16 element indices, so the device reads src[%llu] instead of src[%llu] "
                         "(keep the offsets below %u bytes)",
                         AfTwin::TypeName<T>(), i, off[i], static_cast<unsigned long long>(off[i] / sizeof(T)),
                         static_cast<unsigned>(sizeof(T)), static_cast<unsigned long long>(idx),
                         static_cast<unsigned long long>(byteOff / sizeof(T)),
                         static_cast<unsigned>(65536u * sizeof(T)));
        if (idx >= n)
            AfTwin::Fail("gather-out-of-range",
                         "Gather: element %u reads src[%llu] (byte offset %llu = base %u + offset %u) but src holds "
                         "%llu elements",
                         i, static_cast<unsigned long long>(idx), static_cast<unsigned long long>(byteOff),
                         srcBaseOffset, off[i], static_cast<unsigned long long>(n));
        d[i] = s[idx];
    }
    c->c.gather += count;
    c->c.vectorUbBytes += uint64_t{count} * sizeof(T);  // the source elements it reads, as the register Gather counts
}

}  // namespace AscendC


// ---------------------------------------------------------------------------
// Truncate<T, roundMode>: dst[i] = src[i] rounded to an integral value of the
// same float type (CAST_RINT ties to even, CAST_ROUND ties away from zero).
// Official dav_3510 form: impl/basic_api/dav_3510/kernel_operator_vec_vconv_impl.h
// (TruncateImpl): T in {half, float, bfloat16_t}, roundMode in {CAST_RINT,
// CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC}; both are static_asserts there
// and here, through the table's AcceptsTruncate and kTruncateModes
// (api_dtypes.h). Every such result is exact in T, so the twin rounds in float.

namespace AfTwin {

template <AscendC::RoundMode kMode>
inline float RoundIntegral(float v) {
    if constexpr (kMode == AscendC::RoundMode::CAST_RINT) {
        return std::nearbyint(v);
    } else if constexpr (kMode == AscendC::RoundMode::CAST_FLOOR) {
        return std::floor(v);
    } else if constexpr (kMode == AscendC::RoundMode::CAST_CEIL) {
        return std::ceil(v);
    } else if constexpr (kMode == AscendC::RoundMode::CAST_ROUND) {
        return std::round(v);
    } else {
        return std::trunc(v);
    }
}

}  // namespace AfTwin

namespace AscendC {

template <typename T, RoundMode roundMode>
inline void Truncate(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    static_assert(AfTwin::AcceptsTruncate<T>,
                  "Truncate: element type not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    static_assert((AfTwin::kTruncateModes >> static_cast<unsigned>(roundMode)) & 1u,
                  "Truncate: round mode not accepted by the 3510 implementation (af_twin/api_dtypes.h)");
    const char* api = "Truncate";
    T* d = AfTwin::UbOperand(dst, count, api, "dst");
    const T* s = AfTwin::UbOperand(src, count, api, "src");
    AfTwin::CountVector(api);
    for (uint32_t i = 0; i < count; ++i) d[i] = T(AfTwin::RoundIntegral<roundMode>(static_cast<float>(s[i])));
}

}  // namespace AscendC

#endif  // AF_TWIN_VECTOR_H
