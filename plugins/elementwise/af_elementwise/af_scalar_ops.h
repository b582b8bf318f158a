// Scalar helpers behind the elementwise ops' SIMT expressions.
//
// Each helper is the one-element form of an op, with the numerics the
// reference interpreter uses: float16/bfloat16 operands arrive as float,
// NaN propagates through AfMax/AfMin, Relu maps NaN to 0, Abs clears the
// sign of -0.0. They are __simt_callee__ so SIMT lanes can call them.
#ifndef AF_SCALAR_OPS_H
#define AF_SCALAR_OPS_H

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

#endif  // AF_SCALAR_OPS_H
