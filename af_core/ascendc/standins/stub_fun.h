// Stand-in for the closed CPU-debug header "stub_fun.h": declarations of the CCE compiler
// intrinsics the official implementation calls. They take anything and return a value
// that converts to anything, so the type check rests on the AscendC API layer (its
// overloads, templates and static_asserts), never on a guess of an intrinsic's signature.
// Declares no AscendC API.
#ifndef AF_ASCENDC_STANDIN_STUB_FUN_H
#define AF_ASCENDC_STANDIN_STUB_FUN_H

#include <cassert>
#include "stub_def.h"

struct af_standin_any {
    template <typename T>
    operator T() const;
};

// an intrinsic's result in scalar arithmetic (e.g. a status register masked and shifted)
#define AF_STANDIN_ANY_BINARY(op)                                                                  \
    template <typename U, typename = typename std::enable_if<std::is_arithmetic<U>::value>::type>  \
    int64_t operator op(af_standin_any, U);                                                        \
    template <typename U, typename = typename std::enable_if<std::is_arithmetic<U>::value>::type>  \
    int64_t operator op(U, af_standin_any);
AF_STANDIN_ANY_BINARY(+)
AF_STANDIN_ANY_BINARY(-)
AF_STANDIN_ANY_BINARY(*)
AF_STANDIN_ANY_BINARY(/)
AF_STANDIN_ANY_BINARY(%)
AF_STANDIN_ANY_BINARY(&)
AF_STANDIN_ANY_BINARY(|)
AF_STANDIN_ANY_BINARY(^)
AF_STANDIN_ANY_BINARY(<<)
AF_STANDIN_ANY_BINARY(>>)
AF_STANDIN_ANY_BINARY(<)
AF_STANDIN_ANY_BINARY(<=)
AF_STANDIN_ANY_BINARY(>)
AF_STANDIN_ANY_BINARY(>=)
AF_STANDIN_ANY_BINARY(==)
AF_STANDIN_ANY_BINARY(!=)
#undef AF_STANDIN_ANY_BINARY

#define AF_STANDIN_INTRINSIC(name)    \
    template <typename... Args>       \
    af_standin_any name(Args&&...);
#include "af_standin_intrinsics.h"
#undef AF_STANDIN_INTRINSIC

bool __isfinite(float x);
bool __isfinite(double x);

// integer min/max and signbitf: device builtins of the SIMT compiler
long long int max(const long long int x, const long long int y);
unsigned long long int max(const unsigned long long int x, const unsigned long long int y);
unsigned int max(const unsigned int x, const unsigned int y);
long long int min(const long long int x, const long long int y);
unsigned long long int min(const unsigned long long int x, const unsigned long long int y);
unsigned int min(const unsigned int x, const unsigned int y);
int signbitf(float x);

// the CPU-debug runtime's record of the last conversion mode
namespace AscendC {
extern bool g_isVdeq;
}

#endif
