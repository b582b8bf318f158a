// af_twin/types.h
// Emulates: the device qualifier macros of AscendC (__aicore__, __gm__, ...),
// GM_ADDR, TILING_KEY_IS, and the 16-bit floating-point scalar types `half`
// (IEEE binary16) and `bfloat16_t` (bfloat16).
// Checks: nothing at run time. Conversions are exact where possible and
// otherwise rounded once (never twice) in the requested mode; the default
// float -> half / bfloat16 conversion rounds to nearest, ties to even.
// Not emulated: half / bfloat16_t arithmetic is done in float and rounded
// once per operation (no fused operations); conversions from double and from
// integers turn a NaN into the canonical quiet NaN (float keeps the top of its
// payload); there are no std::numeric_limits specialisations for the two types.
#ifndef AF_TWIN_TYPES_H
#define AF_TWIN_TYPES_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

// ---------------------------------------------------------------------------
// Qualifiers: they only matter to the device compiler.
#define __aicore__
#define __global__
#define __gm__
#define __ubuf__
#define __simt_vf__
#define __simt_callee__
#define __vector__
#define __launch_bounds__(n)
#define KERNEL_TASK_TYPE_DEFAULT(t)
#define GM_ADDR __gm__ uint8_t*
#define TILING_KEY_IS(k) (AfTwin::CurrentTilingKey() == (k))
// Tiling data: the kernel registers its standard C++ struct and copies it from the tiling argument
// (on the device, the compiler expands GET_TILING_DATA_WITH_STRUCT; here it is a plain copy).
#define REGISTER_TILING_DEFAULT(tiling_struct) static_assert(sizeof(tiling_struct) > 0, "a complete type")
#define GET_TILING_DATA_WITH_STRUCT(tiling_struct, var, tiling) \
    tiling_struct var;                                         \
    std::memcpy(&var, (tiling), sizeof(tiling_struct))

namespace AfTwin {

// Rounding directions used by the conversions (Cast maps RoundMode onto these).
enum class Rounding { NearestEven, TowardZero, Down, Up, HalfAway, Odd };

// Largest finite value of a binary format, as bits.
inline uint32_t MaxFiniteBits(int expBits, int mantBits) {
    const uint32_t expMax = (1u << expBits) - 1u;
    return ((expMax - 1u) << mantBits) | ((1u << mantBits) - 1u);
}

// Result of an overflowing rounding: infinity or the largest finite value,
// depending on the direction (IEEE 754 rules; round-to-odd saturates).
inline uint32_t OverflowBits(uint32_t sign, int expBits, int mantBits, Rounding r) {
    const uint32_t inf = ((1u << expBits) - 1u) << mantBits;
    const uint32_t maxf = MaxFiniteBits(expBits, mantBits);
    const bool neg = sign != 0;
    switch (r) {
        case Rounding::NearestEven:
        case Rounding::HalfAway:
            return sign | inf;
        case Rounding::TowardZero:
        case Rounding::Odd:
            return sign | maxf;
        case Rounding::Down:
            return sign | (neg ? inf : maxf);
        case Rounding::Up:
            return sign | (neg ? maxf : inf);
    }
    return sign | inf;
}

// Encodes `v` into a binary floating-point format with `expBits` exponent bits
// and `mantBits` fraction bits (half: 5/10, bfloat16: 8/7, float: 8/23),
// rounding once in direction `r`. `v` must hold its value exactly (every
// float, half, bfloat16, double and 64-bit integer value does in long double
// on x86-64). NaN becomes the quiet NaN with v's sign.
inline uint32_t EncodeBinary(long double v, int expBits, int mantBits, Rounding r) {
    const int bias = (1 << (expBits - 1)) - 1;
    const uint32_t expMax = (1u << expBits) - 1u;
    const uint32_t sign = std::signbit(v) ? (1u << (expBits + mantBits)) : 0u;
    if (std::isnan(v)) return sign | (expMax << mantBits) | (1u << (mantBits - 1));
    const long double a = std::fabs(v);
    if (std::isinf(a)) return sign | (expMax << mantBits);
    if (a == 0.0L) return sign;
    int e2 = 0;
    (void)std::frexp(a, &e2);  // a = m * 2^e2 with m in [0.5, 1)
    const int e = e2 - 1;      // a = 1.f * 2^e
    if (e > bias) return OverflowBits(sign, expBits, mantBits, r);
    const int minNormal = 1 - bias;
    int q = (e < minNormal ? minNormal : e) - mantBits;  // exponent of one unit in the last place
    const long double scaled = std::ldexp(a, -q);        // exact: only the exponent changes
    const long double whole = std::floor(scaled);
    const long double frac = scaled - whole;
    uint64_t n = static_cast<uint64_t>(whole);
    const bool neg = sign != 0;
    switch (r) {
        case Rounding::NearestEven:
            if (frac > 0.5L || (frac == 0.5L && (n & 1u))) ++n;
            break;
        case Rounding::TowardZero:
            break;
        case Rounding::Down:
            if (frac > 0.0L && neg) ++n;
            break;
        case Rounding::Up:
            if (frac > 0.0L && !neg) ++n;
            break;
        case Rounding::HalfAway:
            if (frac >= 0.5L) ++n;
            break;
        case Rounding::Odd:
            if (frac > 0.0L) n |= 1u;
            break;
    }
    const uint64_t hidden = uint64_t{1} << mantBits;
    if (n >= 2 * hidden) {  // the rounding carried into a new binade
        n >>= 1;
        ++q;
    }
    uint32_t expField = 0;
    uint32_t mant = 0;
    if (n >= hidden) {
        expField = static_cast<uint32_t>(q + mantBits + bias);
        mant = static_cast<uint32_t>(n - hidden);
    } else {  // subnormal (or zero after rounding down)
        mant = static_cast<uint32_t>(n);
    }
    if (expField >= expMax) return OverflowBits(sign, expBits, mantBits, r);
    return sign | (expField << mantBits) | mant;
}

// float -> binary16 bits, round to nearest even; NaN keeps its sign and the
// top of its payload and is made quiet.
inline uint16_t FloatToHalfBits(float f) {
    uint32_t x = 0;
    std::memcpy(&x, &f, sizeof x);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax = x & 0x7FFFFFFFu;
    if (ax >= 0x7F800000u) {
        if (ax == 0x7F800000u) return static_cast<uint16_t>(sign | 0x7C00u);
        return static_cast<uint16_t>(sign | 0x7E00u | ((ax >> 13) & 0x3FFu));
    }
    if (ax >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520 rounds to inf
    if (ax >= 0x38800000u) {                                                // normal binary16 range
        uint32_t r = ax + 0xFFFu + ((ax >> 13) & 1u);
        r -= 0x38000000u;  // exponent bias 127 -> 15
        return static_cast<uint16_t>(sign | (r >> 13));
    }
    if (ax <= 0x33000000u) return static_cast<uint16_t>(sign);  // <= 2^-25 rounds to zero
    // binary16 subnormal: count units of 2^-24.
    const uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - (ax >> 23);  // 14..24
    uint32_t n = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (n & 1u))) ++n;
    return static_cast<uint16_t>(sign | n);
}

inline float HalfBitsToFloat(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1Fu;
    const uint32_t m = h & 0x3FFu;
    uint32_t x = 0;
    if (e == 0x1Fu) {
        x = sign | 0x7F800000u | (m << 13);
    } else if (e != 0) {
        x = sign | ((e + 112u) << 23) | (m << 13);
    } else {
        const float v = static_cast<float>(m) * 5.9604644775390625e-8f;  // m * 2^-24, exact
        std::memcpy(&x, &v, sizeof x);
        x |= sign;
    }
    float f = 0.0f;
    std::memcpy(&f, &x, sizeof f);
    return f;
}

// float -> bfloat16 bits, round to nearest even; NaN stays NaN (made quiet).
inline uint16_t FloatToBf16Bits(float f) {
    uint32_t x = 0;
    std::memcpy(&x, &f, sizeof x);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
    const uint32_t r = x + 0x7FFFu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(r >> 16);
}

inline float Bf16BitsToFloat(uint16_t b) {
    const uint32_t x = static_cast<uint32_t>(b) << 16;
    float f = 0.0f;
    std::memcpy(&f, &x, sizeof f);
    return f;
}

template <class I>
inline long double IntegerValue(I v) {
    return static_cast<long double>(v);  // exact for every 64-bit integer (64-bit significand)
}

}  // namespace AfTwin

// ---------------------------------------------------------------------------
// half: IEEE binary16 held as its bit pattern.
struct half {
    uint16_t bits;

    half() = default;
    half(float f) : bits(AfTwin::FloatToHalfBits(f)) {}
    half(double d)
        : bits(static_cast<uint16_t>(AfTwin::EncodeBinary(d, 5, 10, AfTwin::Rounding::NearestEven))) {}
    template <class I, typename std::enable_if<std::is_integral<I>::value, int>::type = 0>
    half(I v)
        : bits(static_cast<uint16_t>(
              AfTwin::EncodeBinary(AfTwin::IntegerValue(v), 5, 10, AfTwin::Rounding::NearestEven))) {}

    operator float() const { return AfTwin::HalfBitsToFloat(bits); }

    static half FromBits(uint16_t b) {
        half h;
        h.bits = b;
        return h;
    }

    half operator-() const { return FromBits(static_cast<uint16_t>(bits ^ 0x8000u)); }
    half operator+() const { return *this; }
    half& operator+=(half o) { return *this = half(float(*this) + float(o)); }
    half& operator-=(half o) { return *this = half(float(*this) - float(o)); }
    half& operator*=(half o) { return *this = half(float(*this) * float(o)); }
    half& operator/=(half o) { return *this = half(float(*this) / float(o)); }
};

// ---------------------------------------------------------------------------
// bfloat16_t: the top half of an IEEE binary32, held as its bit pattern.
struct bfloat16_t {
    uint16_t bits;

    bfloat16_t() = default;
    bfloat16_t(float f) : bits(AfTwin::FloatToBf16Bits(f)) {}
    bfloat16_t(double d)
        : bits(static_cast<uint16_t>(AfTwin::EncodeBinary(d, 8, 7, AfTwin::Rounding::NearestEven))) {}
    template <class I, typename std::enable_if<std::is_integral<I>::value, int>::type = 0>
    bfloat16_t(I v)
        : bits(static_cast<uint16_t>(
              AfTwin::EncodeBinary(AfTwin::IntegerValue(v), 8, 7, AfTwin::Rounding::NearestEven))) {}

    operator float() const { return AfTwin::Bf16BitsToFloat(bits); }

    static bfloat16_t FromBits(uint16_t b) {
        bfloat16_t h;
        h.bits = b;
        return h;
    }

    bfloat16_t operator-() const { return FromBits(static_cast<uint16_t>(bits ^ 0x8000u)); }
    bfloat16_t operator+() const { return *this; }
    bfloat16_t& operator+=(bfloat16_t o) { return *this = bfloat16_t(float(*this) + float(o)); }
    bfloat16_t& operator-=(bfloat16_t o) { return *this = bfloat16_t(float(*this) - float(o)); }
    bfloat16_t& operator*=(bfloat16_t o) { return *this = bfloat16_t(float(*this) * float(o)); }
    bfloat16_t& operator/=(bfloat16_t o) { return *this = bfloat16_t(float(*this) / float(o)); }
};

static_assert(sizeof(half) == 2 && std::is_trivially_copyable<half>::value, "half must be 2 trivial bytes");
static_assert(sizeof(bfloat16_t) == 2 && std::is_trivially_copyable<bfloat16_t>::value,
              "bfloat16_t must be 2 trivial bytes");

// Arithmetic and comparisons. Same-type operands compute in float and round the
// result back (so half + half is a half); a half/bfloat16 mixed with a built-in
// arithmetic type is promoted to float first and the result is the built-in type.
#define AF_TWIN_F16_OPS(T)                                                                           \
    inline T operator+(T a, T b) { return T(float(a) + float(b)); }                                  \
    inline T operator-(T a, T b) { return T(float(a) - float(b)); }                                  \
    inline T operator*(T a, T b) { return T(float(a) * float(b)); }                                  \
    inline T operator/(T a, T b) { return T(float(a) / float(b)); }                                  \
    inline bool operator==(T a, T b) { return float(a) == float(b); }                                \
    inline bool operator!=(T a, T b) { return float(a) != float(b); }                                \
    inline bool operator<(T a, T b) { return float(a) < float(b); }                                  \
    inline bool operator<=(T a, T b) { return float(a) <= float(b); }                                \
    inline bool operator>(T a, T b) { return float(a) > float(b); }                                  \
    inline bool operator>=(T a, T b) { return float(a) >= float(b); }                                \
    AF_TWIN_F16_MIXED(T, +) AF_TWIN_F16_MIXED(T, -) AF_TWIN_F16_MIXED(T, *) AF_TWIN_F16_MIXED(T, /)  \
    AF_TWIN_F16_MIXED(T, ==) AF_TWIN_F16_MIXED(T, !=) AF_TWIN_F16_MIXED(T, <)                        \
    AF_TWIN_F16_MIXED(T, <=) AF_TWIN_F16_MIXED(T, >) AF_TWIN_F16_MIXED(T, >=)

#define AF_TWIN_F16_MIXED(T, OP)                                                             \
    template <class U, typename std::enable_if<std::is_arithmetic<U>::value, int>::type = 0> \
    inline auto operator OP(T a, U b) -> decltype(float(a) OP b) {                           \
        return float(a) OP b;                                                                \
    }                                                                                        \
    template <class U, typename std::enable_if<std::is_arithmetic<U>::value, int>::type = 0> \
    inline auto operator OP(U a, T b) -> decltype(a OP float(b)) {                           \
        return a OP float(b);                                                                \
    }

AF_TWIN_F16_OPS(half)
AF_TWIN_F16_OPS(bfloat16_t)

#undef AF_TWIN_F16_MIXED
#undef AF_TWIN_F16_OPS

namespace AfTwin {

template <class T>
struct IsFloatLike : std::integral_constant<bool, std::is_same<T, float>::value || std::is_same<T, half>::value ||
                                                      std::is_same<T, bfloat16_t>::value> {};

// The type a value is computed in: float for the 16-bit float types, itself otherwise.
template <class T>
struct CalcType {
    using type = T;
};
template <>
struct CalcType<half> {
    using type = float;
};
template <>
struct CalcType<bfloat16_t> {
    using type = float;
};

template <class T>
inline const char* TypeName() {
    if (std::is_same<T, half>::value) return "half";
    if (std::is_same<T, bfloat16_t>::value) return "bfloat16_t";
    if (std::is_same<T, float>::value) return "float";
    if (std::is_same<T, double>::value) return "double";
    if (std::is_same<T, int8_t>::value) return "int8_t";
    if (std::is_same<T, uint8_t>::value) return "uint8_t";
    if (std::is_same<T, int16_t>::value) return "int16_t";
    if (std::is_same<T, uint16_t>::value) return "uint16_t";
    if (std::is_same<T, int32_t>::value) return "int32_t";
    if (std::is_same<T, uint32_t>::value) return "uint32_t";
    if (std::is_same<T, int64_t>::value) return "int64_t";
    if (std::is_same<T, uint64_t>::value) return "uint64_t";
    if (std::is_same<T, bool>::value) return "bool";
    return "T";
}

}  // namespace AfTwin

#endif  // AF_TWIN_TYPES_H
