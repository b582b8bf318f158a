// Scalar helpers behind the elementwise ops' SIMT expressions.
//
// Each helper is the one-element form of an op, with the numerics the
// reference interpreter uses: float16/bfloat16 operands arrive as float,
// NaN propagates through AfMax/AfMin, Relu maps NaN to 0, Abs clears the
// sign of -0.0. They are __simt_callee__ so SIMT lanes can call them.
#ifndef AF_SCALAR_OPS_H
#define AF_SCALAR_OPS_H

// expf, logf, sqrtf, exp2f, fabsf, ... of the ops' scalar forms: not declared by kernel_operator.h
#include "simt_api/math_functions.h"

__simt_callee__ inline float AfAbs(float v) { return fabsf(v); }
template <typename T> __simt_callee__ inline T AfAbs(T v) { return v < 0 ? static_cast<T>(-v) : v; }

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
