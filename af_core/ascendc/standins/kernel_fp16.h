// Stand-in for the closed CPU-debug header "kernel_fp16.h": the `half` scalar type, a
// 16-bit storage class that converts to and from float, and the layout constants the
// headers read. Declares no AscendC API.
#ifndef AF_ASCENDC_STANDIN_KERNEL_FP16_H
#define AF_ASCENDC_STANDIN_KERNEL_FP16_H

#include <cstdint>
#include <type_traits>
#include "af_standin_float16.h"

enum class Fp16BasicParam : uint32_t {
    K_FP16_SIGN_INDEX = 15,
    K_FP16_EXP_BIAS = 15,
    K_FP16_MAN_LEN = 10,
    K_FP16_MAN_HIDE_BIT = 0x400,
    K_FP16_MAX_EXP = 0x001F,
    K_FP16_MAX_MAN = 0x03FF,
    K_FP16_MAN_MASK = 0x03FF,
    K_FP16_EXP_MASK = 0x7C00,
    K_FP16_ABS_MAX = 0x7FFF,
    K_FP16_MAX = 0x7BFF,
};

struct half {
    uint16_t val = 0;
    half() = default;
    template <typename T, typename = typename std::enable_if<std::is_convertible<T, float>::value>::type>
    half(T v) { *this = static_cast<float>(v); }
    half& operator=(float f);
    operator float() const { return ToFloat(); }
    float ToFloat() const;
};
AF_STANDIN_FLOAT16_OPERATORS(half)

#endif
