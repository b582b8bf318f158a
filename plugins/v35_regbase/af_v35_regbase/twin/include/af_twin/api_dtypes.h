// af_twin/api_dtypes.h
// GENERATED from af_v35_regbase/api_dtypes.py by `python -m af_v35_regbase.api_dtypes`; do not edit.
// The element types each AscendC vector API accepts on 3510 (count forms), read from the
// dav_3510 implementation; vector.h static_asserts them so the twin rejects what the real API
// rejects. AcceptsX<T>: T is a legal data type of X; MaskX<U>: U is a legal mask type of X;
// kCastModes<D, S>: bit m set when Cast<D, S> implements RoundMode m (0: no such conversion);
// kTruncateModes: bit m set when Truncate<T, m> is implemented.
#ifndef AF_TWIN_API_DTYPES_H
#define AF_TWIN_API_DTYPES_H

#include <cstdint>
#include <type_traits>

#include "types.h"

namespace AfTwin {

template <class T, class... Us>
struct OneOf : std::disjunction<std::is_same<T, Us>...> {};

// Add: kernel_operator_vec_binary_continuous_impl.h
template <class T>
inline constexpr bool AcceptsAdd = OneOf<T, uint8_t, int8_t, half, uint16_t, int16_t, bfloat16_t, uint32_t, int32_t, float, int64_t, uint64_t>::value;
// Sub: kernel_operator_vec_binary_continuous_impl.h
template <class T>
inline constexpr bool AcceptsSub = OneOf<T, uint8_t, int8_t, half, uint16_t, int16_t, bfloat16_t, uint32_t, int32_t, float, int64_t, uint64_t>::value;
// Mul: kernel_operator_vec_binary_continuous_impl.h
template <class T>
inline constexpr bool AcceptsMul = OneOf<T, half, uint16_t, int16_t, bfloat16_t, uint32_t, int32_t, float, int64_t, uint64_t>::value;
// Div: kernel_operator_vec_binary_continuous_impl.h
template <class T>
inline constexpr bool AcceptsDiv = OneOf<T, uint16_t, int16_t, uint32_t, int32_t, half, float, int64_t, uint64_t>::value;
// Max: kernel_operator_vec_binary_continuous_impl.h
template <class T>
inline constexpr bool AcceptsMax = OneOf<T, uint8_t, int8_t, half, uint16_t, int16_t, bfloat16_t, uint32_t, int32_t, float, int64_t, uint64_t>::value;
// Min: kernel_operator_vec_binary_continuous_impl.h
template <class T>
inline constexpr bool AcceptsMin = OneOf<T, uint8_t, int8_t, half, uint16_t, int16_t, bfloat16_t, uint32_t, int32_t, float, int64_t, uint64_t>::value;
// And: kernel_operator_vec_binary_continuous_impl.h
template <class T>
inline constexpr bool AcceptsAnd = OneOf<T, uint8_t, int8_t, int16_t, uint16_t, uint32_t, int32_t, int64_t, uint64_t>::value;
// Or: kernel_operator_vec_binary_continuous_impl.h
template <class T>
inline constexpr bool AcceptsOr = OneOf<T, uint8_t, int8_t, int16_t, uint16_t, uint32_t, int32_t, int64_t, uint64_t>::value;
// Adds: kernel_operator_vec_binary_scalar_impl.h
template <class T>
inline constexpr bool AcceptsAdds = OneOf<T, uint8_t, int8_t, half, bfloat16_t, float, int16_t, int32_t, int64_t, uint64_t>::value;
// Muls: kernel_operator_vec_binary_scalar_impl.h
template <class T>
inline constexpr bool AcceptsMuls = OneOf<T, half, bfloat16_t, float, int16_t, int32_t, int64_t, uint64_t>::value;
// Maxs: kernel_operator_vec_binary_scalar_impl.h
template <class T>
inline constexpr bool AcceptsMaxs = OneOf<T, uint8_t, int8_t, half, bfloat16_t, float, int16_t, int32_t, int64_t, uint64_t>::value;
// Mins: kernel_operator_vec_binary_scalar_impl.h
template <class T>
inline constexpr bool AcceptsMins = OneOf<T, uint8_t, int8_t, half, bfloat16_t, float, int16_t, int32_t, int64_t, uint64_t>::value;
// Ands: kernel_operator_vec_binary_scalar_impl.h
template <class T>
inline constexpr bool AcceptsAnds = OneOf<T, int16_t, uint16_t, int64_t, uint64_t>::value;
// Ors: kernel_operator_vec_binary_scalar_impl.h
template <class T>
inline constexpr bool AcceptsOrs = OneOf<T, int16_t, uint16_t, int64_t, uint64_t>::value;
// ShiftLeft: kernel_operator_vec_binary_scalar_impl.h
template <class T>
inline constexpr bool AcceptsShiftLeft = OneOf<T, uint8_t, int8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>::value;
// ShiftRight: kernel_operator_vec_binary_scalar_impl.h
template <class T>
inline constexpr bool AcceptsShiftRight = OneOf<T, uint8_t, int8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>::value;
// Exp: kernel_operator_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsExp = OneOf<T, half, float>::value;
// Ln: kernel_operator_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsLn = OneOf<T, half, float>::value;
// Sqrt: kernel_operator_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsSqrt = OneOf<T, half, float>::value;
// Rsqrt: kernel_operator_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsRsqrt = OneOf<T, half, float>::value;
// Reciprocal: kernel_operator_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsReciprocal = OneOf<T, half, float, int64_t, uint64_t>::value;
// Abs: kernel_operator_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsAbs = OneOf<T, int8_t, half, int16_t, float, int32_t, int64_t>::value;
// Relu: kernel_operator_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsRelu = OneOf<T, half, float, int32_t, int64_t>::value;
// Neg: kernel_operator_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsNeg = OneOf<T, int8_t, int16_t, int32_t, half, float, int64_t>::value;
// Not: kernel_operator_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsNot = OneOf<T, int8_t, uint8_t, half, float, uint16_t, int16_t, uint32_t, int32_t, uint64_t, int64_t>::value;
// Duplicate: kernel_operator_vec_duplicate_impl.h
template <class T>
inline constexpr bool AcceptsDuplicate = OneOf<T, bool, int8_t, uint8_t, half, bfloat16_t, int16_t, uint16_t, int32_t, uint32_t, float, int64_t, uint64_t>::value;
// Compare: kernel_operator_vec_compare_continuous_impl.h
template <class T>
inline constexpr bool AcceptsCompare = OneOf<T, half, int16_t, uint16_t, int32_t, uint32_t, float, uint8_t, int8_t, bfloat16_t, uint64_t, int64_t>::value;
template <class U>
inline constexpr bool MaskCompare = OneOf<U, uint8_t, int8_t>::value;
// Compares: kernel_operator_vec_cmp_impl.h
template <class T>
inline constexpr bool AcceptsCompares = OneOf<T, uint8_t, int8_t, bfloat16_t, half, int16_t, uint16_t, int32_t, uint32_t, float, uint64_t, int64_t>::value;
template <class U>
inline constexpr bool MaskCompares = OneOf<U, uint8_t>::value;
// Select: kernel_operator_vec_sel_impl.h
template <class T>
inline constexpr bool AcceptsSelect = OneOf<T, uint8_t, int8_t, bfloat16_t, half, int16_t, uint16_t, int32_t, uint32_t, float, uint64_t, int64_t>::value;
template <class U>
inline constexpr bool MaskSelect = OneOf<U, uint8_t, uint16_t, uint32_t, uint64_t>::value;
// ReduceSum: kernel_operator_vec_reduce_impl.h
template <class T>
inline constexpr bool AcceptsReduceSum = OneOf<T, half, float, uint32_t, int32_t, uint64_t, int64_t>::value;
// ReduceMax: kernel_operator_vec_reduce_impl.h
template <class T>
inline constexpr bool AcceptsReduceMax = OneOf<T, int16_t, uint16_t, int32_t, uint32_t, half, float, uint64_t, int64_t>::value;
// ReduceMin: kernel_operator_vec_reduce_impl.h
template <class T>
inline constexpr bool AcceptsReduceMin = OneOf<T, int16_t, uint16_t, int32_t, uint32_t, half, float, uint64_t, int64_t>::value;
// CreateVecIndex: kernel_operator_vec_createvecindex_impl.h
template <class T>
inline constexpr bool AcceptsCreateVecIndex = OneOf<T, int8_t, int16_t, int32_t, half, float, int64_t>::value;
// Gather: kernel_operator_vec_gather_impl.h
template <class T>
inline constexpr bool AcceptsGather = OneOf<T, uint8_t, int8_t, half, bfloat16_t, uint16_t, int16_t, float, uint32_t, int32_t>::value;
// Truncate: kernel_operator_vec_vconv_impl.h
template <class T>
inline constexpr bool AcceptsTruncate = OneOf<T, half, float, bfloat16_t>::value;

// Register API (AscendC::Reg), impl/basic_api/reg_compute/dav_3510/
// Reg::LoadAlign: kernel_reg_compute_datacopy_load_impl.h
template <class T>
inline constexpr bool AcceptsRegLoadAlign = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, half, float, bfloat16_t, int64_t, uint64_t>::value;
// Reg::StoreAlign: kernel_reg_compute_datacopy_store_impl.h
template <class T>
inline constexpr bool AcceptsRegStoreAlign = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, half, float, bfloat16_t, int64_t, uint64_t>::value;
// Reg::Add: kernel_reg_compute_vec_binary_impl.h
template <class T>
inline constexpr bool AcceptsRegAdd = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, half, float, bfloat16_t, int64_t, uint64_t>::value;
// Reg::Sub: kernel_reg_compute_vec_binary_impl.h
template <class T>
inline constexpr bool AcceptsRegSub = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, half, float, bfloat16_t, int64_t, uint64_t>::value;
// Reg::Max: kernel_reg_compute_vec_binary_impl.h
template <class T>
inline constexpr bool AcceptsRegMax = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, half, float, bfloat16_t, int64_t, uint64_t>::value;
// Reg::Min: kernel_reg_compute_vec_binary_impl.h
template <class T>
inline constexpr bool AcceptsRegMin = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, half, float, bfloat16_t, int64_t, uint64_t>::value;
// Reg::Mul: kernel_reg_compute_vec_binary_impl.h
template <class T>
inline constexpr bool AcceptsRegMul = OneOf<T, uint16_t, int16_t, uint32_t, int32_t, half, float, bfloat16_t, int64_t, uint64_t>::value;
// Reg::Div: kernel_reg_compute_vec_binary_impl.h
template <class T>
inline constexpr bool AcceptsRegDiv = OneOf<T, uint16_t, int16_t, uint32_t, int32_t, half, float>::value;
// Reg::Adds: kernel_reg_compute_vec_binary_scalar_impl.h
template <class T>
inline constexpr bool AcceptsRegAdds = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, half, float, bfloat16_t, int64_t, uint64_t>::value;
// Reg::Maxs: kernel_reg_compute_vec_binary_scalar_impl.h
template <class T>
inline constexpr bool AcceptsRegMaxs = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, half, float, bfloat16_t, int64_t, uint64_t>::value;
// Reg::Mins: kernel_reg_compute_vec_binary_scalar_impl.h
template <class T>
inline constexpr bool AcceptsRegMins = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, half, float, bfloat16_t, int64_t, uint64_t>::value;
// Reg::Muls: kernel_reg_compute_vec_binary_scalar_impl.h
template <class T>
inline constexpr bool AcceptsRegMuls = OneOf<T, uint16_t, int16_t, uint32_t, int32_t, half, float, int64_t, uint64_t>::value;
// Reg::Exp: kernel_reg_compute_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsRegExp = OneOf<T, half, float>::value;
// Reg::Ln: kernel_reg_compute_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsRegLn = OneOf<T, half, float>::value;
// Reg::Sqrt: kernel_reg_compute_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsRegSqrt = OneOf<T, half, float>::value;
// Reg::Abs: kernel_reg_compute_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsRegAbs = OneOf<T, int8_t, int16_t, int32_t, half, float, int64_t>::value;
// Reg::Relu: kernel_reg_compute_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsRegRelu = OneOf<T, int32_t, half, float, int64_t>::value;
// Reg::Neg: kernel_reg_compute_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsRegNeg = OneOf<T, int8_t, int16_t, int32_t, half, float, int64_t>::value;
// Reg::Duplicate: kernel_reg_compute_vec_duplicate_impl.h
template <class T>
inline constexpr bool AcceptsRegDuplicate = OneOf<T, bool, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, half, float, bfloat16_t, int64_t, uint64_t>::value;
// Reg::Truncate: kernel_reg_compute_vec_vconv_impl.h
template <class T>
inline constexpr bool AcceptsRegTruncate = OneOf<T, half, float, bfloat16_t>::value;
// Reg::Compare: kernel_reg_compute_vec_cmpsel_impl.h
template <class T>
inline constexpr bool AcceptsRegCompare = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, half, float, bfloat16_t, int64_t, uint64_t>::value;
// Reg::Compares: kernel_reg_compute_vec_cmpsel_impl.h
template <class T>
inline constexpr bool AcceptsRegCompares = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, half, float, bfloat16_t, int64_t, uint64_t>::value;
// Reg::Select: kernel_reg_compute_vec_cmpsel_impl.h
template <class T>
inline constexpr bool AcceptsRegSelect = OneOf<T, bool, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, half, float, bfloat16_t, int64_t, uint64_t>::value;
// Reg::And: kernel_reg_compute_vec_binary_impl.h
template <class T>
inline constexpr bool AcceptsRegAnd = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, int64_t, uint64_t>::value;
// Reg::Or: kernel_reg_compute_vec_binary_impl.h
template <class T>
inline constexpr bool AcceptsRegOr = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, int64_t, uint64_t>::value;
// Reg::Xor: kernel_reg_compute_vec_binary_impl.h
template <class T>
inline constexpr bool AcceptsRegXor = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, int64_t, uint64_t>::value;
// Reg::Not: kernel_reg_compute_vec_unary_impl.h
template <class T>
inline constexpr bool AcceptsRegNot = OneOf<T, uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, half, float, int64_t, uint64_t>::value;

// Cast: kernel_operator_vec_vconv_impl.h (CastImpl, Level 2)
template <class D, class S>
inline constexpr uint32_t kCastModes = 0u;
template <>
inline constexpr uint32_t kCastModes<bfloat16_t, half> = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<bfloat16_t, float> = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<half, bfloat16_t> = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<half, float> = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5) | (1u << 6);  // CAST_NONE, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD
template <>
inline constexpr uint32_t kCastModes<half, int16_t> = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_NONE, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<half, int32_t> = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5) | (1u << 6);  // CAST_NONE, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD
template <>
inline constexpr uint32_t kCastModes<half, int8_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<half, uint8_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<float, bfloat16_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<float, half> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<float, float> = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<float, int16_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<float, int32_t> = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_NONE, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<float, int64_t> = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<int16_t, half> = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<int16_t, float> = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<int16_t, int32_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<int16_t, int8_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<int16_t, uint32_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<int32_t, bfloat16_t> = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<int32_t, half> = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<int32_t, float> = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<int32_t, int16_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<int32_t, int64_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<int32_t, int8_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<int64_t, float> = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<int64_t, int32_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<int8_t, half> = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_NONE, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<uint16_t, int32_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<uint16_t, uint32_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<uint16_t, uint8_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<uint32_t, int16_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<uint32_t, uint16_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<uint32_t, uint8_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<uint8_t, half> = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_NONE, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC
template <>
inline constexpr uint32_t kCastModes<uint8_t, int16_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<uint8_t, int32_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<uint8_t, uint16_t> = (1u << 0);  // CAST_NONE
template <>
inline constexpr uint32_t kCastModes<uint8_t, uint32_t> = (1u << 0);  // CAST_NONE

// Truncate round modes: kernel_operator_vec_vconv_impl.h (TruncateImpl)
inline constexpr uint32_t kTruncateModes = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 5);  // CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC

}  // namespace AfTwin

#endif  // AF_TWIN_API_DTYPES_H
