// Scalar helpers behind the elementwise ops' SIMT expressions.
//
// Each helper is the one-element form of an op, with the numerics the
// reference interpreter uses: float16/bfloat16 operands arrive as float,
// NaN propagates through AfMax/AfMin, Relu maps NaN to 0, Abs clears the
// sign of -0.0, float -> int32 saturates with NaN giving 0. They are
// __simt_callee__ so SIMT lanes can call them.
#ifndef AF_SCALAR_OPS_H
#define AF_SCALAR_OPS_H

// expf, logf, sqrtf, exp2f, fabsf, ... of the ops' scalar forms: not declared by kernel_operator.h
#include "simt_api/math_functions.h"
#include <cstdint>
#include <type_traits>

// Integer + - * and negation wrap (two's complement, like the reference and the
// vector units) without signed overflow: they compute in an unsigned type at least
// as wide as int, so neither promotion nor the operation itself can overflow.
template <typename T>
using AfWrapUnsigned = typename std::conditional<(sizeof(T) > 4), uint64_t, uint32_t>::type;
template <typename A, typename B>
__simt_callee__ inline auto AfWrapAdd(A a, B b)
{
    using T = typename std::common_type<A, B>::type;
    if constexpr (std::is_integral<T>::value) {
        return static_cast<T>(static_cast<AfWrapUnsigned<T>>(a) + static_cast<AfWrapUnsigned<T>>(b));
    } else {
        return static_cast<T>(a + b);
    }
}
template <typename A, typename B>
__simt_callee__ inline auto AfWrapSub(A a, B b)
{
    using T = typename std::common_type<A, B>::type;
    if constexpr (std::is_integral<T>::value) {
        return static_cast<T>(static_cast<AfWrapUnsigned<T>>(a) - static_cast<AfWrapUnsigned<T>>(b));
    } else {
        return static_cast<T>(a - b);
    }
}
template <typename A, typename B>
__simt_callee__ inline auto AfWrapMul(A a, B b)
{
    using T = typename std::common_type<A, B>::type;
    if constexpr (std::is_integral<T>::value) {
        return static_cast<T>(static_cast<AfWrapUnsigned<T>>(a) * static_cast<AfWrapUnsigned<T>>(b));
    } else {
        return static_cast<T>(a * b);
    }
}
template <typename T>
__simt_callee__ inline T AfWrapNeg(T v)
{
    if constexpr (std::is_integral<T>::value) {
        return static_cast<T>(AfWrapUnsigned<T>{0} - static_cast<AfWrapUnsigned<T>>(v));
    } else {
        return -v;
    }
}

__simt_callee__ inline float AfAbs(float v) { return fabsf(v); }
template <typename T> __simt_callee__ inline T AfAbs(T v) { return v < 0 ? AfWrapNeg(v) : v; }

__simt_callee__ inline float AfRelu(float v) { return v > 0.0f ? v : 0.0f; }
template <typename T> __simt_callee__ inline T AfRelu(T v) { return v > 0 ? v : static_cast<T>(0); }

__simt_callee__ inline float AfMax(float a, float b)
{
    if (a != a || b != b) {
        return a + b;
    }
    return a > b ? a : b;
}
template <typename T> __simt_callee__ inline T AfMax(T a, T b) { return a > b ? a : b; }

__simt_callee__ inline float AfMin(float a, float b)
{
    if (a != a || b != b) {
        return a + b;
    }
    return a < b ? a : b;
}
template <typename T> __simt_callee__ inline T AfMin(T a, T b) { return a < b ? a : b; }

// Sign: -1, 0 or 1; NaN stays NaN.
__simt_callee__ inline float AfSign(float v)
{
    if (v != v) {
        return v;
    }
    return v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : 0.0f);
}
template <typename T> __simt_callee__ inline T AfSign(T v)
{
    return v > T(0) ? T(1) : (v == T(0) ? T(0) : static_cast<T>(-1));
}

// Float -> int32 after floor / ceil, saturating like AscendC's Cast; NaN gives 0.
__simt_callee__ inline int32_t AfSaturateToInt32(float v)
{
    if (v != v) {
        return 0;
    }
    if (v >= 2147483648.0f) {
        return 2147483647;
    }
    if (v <= -2147483648.0f) {
        return static_cast<int32_t>(-2147483647 - 1);
    }
    return static_cast<int32_t>(v);
}
__simt_callee__ inline int32_t AfFloorToInt(float v) { return AfSaturateToInt32(floorf(v)); }
__simt_callee__ inline int32_t AfCeilToInt(float v) { return AfSaturateToInt32(ceilf(v)); }

// Shifts: a count outside [0, bit width) shifts every bit out. Left shifts
// work on the unsigned bits (no signed overflow); right shifts of signed
// values are arithmetic.
template <typename T, typename S> __simt_callee__ inline T AfShiftLeft(T v, S count)
{
    if (count < S(0) || count >= static_cast<S>(sizeof(T) * 8)) {
        return T(0);
    }
    return static_cast<T>(static_cast<unsigned long long>(v) << count);
}
template <typename T, typename S> __simt_callee__ inline T AfShiftRight(T v, S count)
{
    if (count < S(0) || count >= static_cast<S>(sizeof(T) * 8)) {
        return v > T(0) || v == T(0) ? T(0) : static_cast<T>(-1);
    }
    return static_cast<T>(v >> count);
}

#endif  // AF_SCALAR_OPS_H
