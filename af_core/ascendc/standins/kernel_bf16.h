// Stand-in for the closed CPU-debug header "kernel_bf16.h": `bfloat16_t`, the 16-bit
// brain float, as a storage class in namespace bfloat16 (the headers name it
// `bfloat16::Bf16T` and read its layout constants). Declares no AscendC API.
#ifndef AF_ASCENDC_STANDIN_KERNEL_BF16_H
#define AF_ASCENDC_STANDIN_KERNEL_BF16_H

#include <cstdint>
#include <type_traits>
#include "af_standin_float16.h"

namespace bfloat16 {
constexpr uint32_t BF16_SIGN_INDEX = 15;
constexpr uint32_t BF16_MAN_LEN = 7;
constexpr uint32_t BF16_MAN_MASK = 0x007F;
constexpr uint32_t BF16_EXP_MASK = 0x7F80;
constexpr uint32_t BF16_ABS_MAX = 0x7FFF;
constexpr uint32_t FP32_MAN_LEN = 23;
constexpr int32_t FP32_EXP_BIAS = 127;
constexpr uint16_t BF16_INFINITY = 0x7F80;
constexpr uint16_t BF16_NAN = 0x7FC0;

struct Bf16T {
    uint16_t val = 0;
    Bf16T() = default;
    template <typename T, typename = typename std::enable_if<std::is_convertible<T, float>::value>::type>
    Bf16T(T v) { *this = static_cast<float>(v); }
    Bf16T& operator=(float f);
    operator float() const { return ToFloat(); }
    float ToFloat() const;
};
AF_STANDIN_FLOAT16_OPERATORS(Bf16T)

uint32_t Fp32ExtracSign(uint32_t bits);
int32_t Fp32ExtracExp(uint32_t bits);
}  // namespace bfloat16

using bfloat16_t = bfloat16::Bf16T;

#endif
