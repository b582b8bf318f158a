// The operators shared by the two 16-bit float stand-ins (`half`, `bfloat16_t`).
// Two 16-bit values combine to a 16-bit value; mixed with a built-in arithmetic type
// the value takes part as float, like a built-in promotion. Declares no AscendC API.
#ifndef AF_ASCENDC_STANDIN_FLOAT16_H
#define AF_ASCENDC_STANDIN_FLOAT16_H

#include <type_traits>

#define AF_STANDIN_FLOAT16_BINARY(Type, op)                                                          \
    inline Type operator op(Type a, Type b) { return Type(a.ToFloat() op b.ToFloat()); }              \
    template <typename U, typename = typename std::enable_if<std::is_arithmetic<U>::value>::type>     \
    inline auto operator op(Type a, U b) -> decltype(float() op b) { return a.ToFloat() op b; }       \
    template <typename U, typename = typename std::enable_if<std::is_arithmetic<U>::value>::type>     \
    inline auto operator op(U a, Type b) -> decltype(a op float()) { return a op b.ToFloat(); }

#define AF_STANDIN_FLOAT16_COMPARE(Type, op)                                                         \
    inline bool operator op(Type a, Type b) { return a.ToFloat() op b.ToFloat(); }                    \
    template <typename U, typename = typename std::enable_if<std::is_arithmetic<U>::value>::type>     \
    inline bool operator op(Type a, U b) { return a.ToFloat() op b; }                                 \
    template <typename U, typename = typename std::enable_if<std::is_arithmetic<U>::value>::type>     \
    inline bool operator op(U a, Type b) { return a op b.ToFloat(); }

#define AF_STANDIN_FLOAT16_OPERATORS(Type)                                                           \
    AF_STANDIN_FLOAT16_BINARY(Type, +)                                                               \
    AF_STANDIN_FLOAT16_BINARY(Type, -)                                                               \
    AF_STANDIN_FLOAT16_BINARY(Type, *)                                                               \
    AF_STANDIN_FLOAT16_BINARY(Type, /)                                                               \
    AF_STANDIN_FLOAT16_COMPARE(Type, ==)                                                             \
    AF_STANDIN_FLOAT16_COMPARE(Type, !=)                                                             \
    AF_STANDIN_FLOAT16_COMPARE(Type, <)                                                              \
    AF_STANDIN_FLOAT16_COMPARE(Type, <=)                                                             \
    AF_STANDIN_FLOAT16_COMPARE(Type, >)                                                              \
    AF_STANDIN_FLOAT16_COMPARE(Type, >=)                                                             \
    inline Type operator-(Type a) { return Type(-a.ToFloat()); }                                     \
    inline Type& operator+=(Type& a, Type b) { return a = Type(a.ToFloat() + b.ToFloat()); }          \
    inline Type& operator-=(Type& a, Type b) { return a = Type(a.ToFloat() - b.ToFloat()); }          \
    inline Type& operator*=(Type& a, Type b) { return a = Type(a.ToFloat() * b.ToFloat()); }          \
    inline Type& operator/=(Type& a, Type b) { return a = Type(a.ToFloat() / b.ToFloat()); }

#endif
