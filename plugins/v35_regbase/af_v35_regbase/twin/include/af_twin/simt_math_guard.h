// af_twin/simt_math_guard.h
// Emulates: the include boundary of the SIMT math functions. The official
// kernel_operator.h does not declare expf, logf, sqrtf, ... for kernels; they
// come from "simt_api/math_functions.h". A host compiler sees the C library's
// functions of the same names everywhere, so this header, included last by
// kernel_operator.h, hides each of them behind a function-like macro whose
// use fails to compile with a message naming the missing include, unless
// simt_api/math_functions.h was included before. That header (the twin's
// own, same path as the official one) removes the macros again.
// Checks: at compile time (static_assert), a kernel that calls one of the
// float math functions below without including simt_api/math_functions.h.
// Not emulated: the device implementations; with the header the C library's
// float functions are used.
#ifndef AF_TWIN_SIMT_MATH_GUARD_H
#define AF_TWIN_SIMT_MATH_GUARD_H

#ifndef AF_TWIN_SIMT_MATH_FUNCTIONS_H

namespace AfTwin {
template <class... Args>
struct SimtMathHeaderIncluded {
    static constexpr bool value = false;
};
}  // namespace AfTwin

// One stand-in per function: instantiated only where a kernel calls it, and then it does not compile.
#define AF_TWIN_SIMT_MATH_MISSING(name)                                                                    \
    template <class... Args>                                                                               \
    inline float AfTwinMissingSimtMathHeader_##name(Args...) {                                             \
        static_assert(AfTwin::SimtMathHeaderIncluded<Args...>::value,                                      \
                      #name "() is a SIMT math function: #include \"simt_api/math_functions.h\" "        \
                      "(kernel_operator.h does not include it)");                                          \
        return 0.0f;                                                                                       \
    }

AF_TWIN_SIMT_MATH_MISSING(acosf)
AF_TWIN_SIMT_MATH_MISSING(acoshf)
AF_TWIN_SIMT_MATH_MISSING(asinf)
AF_TWIN_SIMT_MATH_MISSING(asinhf)
AF_TWIN_SIMT_MATH_MISSING(atan2f)
AF_TWIN_SIMT_MATH_MISSING(atanf)
AF_TWIN_SIMT_MATH_MISSING(atanhf)
AF_TWIN_SIMT_MATH_MISSING(cbrtf)
AF_TWIN_SIMT_MATH_MISSING(ceilf)
AF_TWIN_SIMT_MATH_MISSING(copysignf)
AF_TWIN_SIMT_MATH_MISSING(cosf)
AF_TWIN_SIMT_MATH_MISSING(coshf)
AF_TWIN_SIMT_MATH_MISSING(erfcf)
AF_TWIN_SIMT_MATH_MISSING(erff)
AF_TWIN_SIMT_MATH_MISSING(exp10f)
AF_TWIN_SIMT_MATH_MISSING(exp2f)
AF_TWIN_SIMT_MATH_MISSING(expf)
AF_TWIN_SIMT_MATH_MISSING(expm1f)
AF_TWIN_SIMT_MATH_MISSING(fabsf)
AF_TWIN_SIMT_MATH_MISSING(fdimf)
AF_TWIN_SIMT_MATH_MISSING(floorf)
AF_TWIN_SIMT_MATH_MISSING(fmaf)
AF_TWIN_SIMT_MATH_MISSING(fmaxf)
AF_TWIN_SIMT_MATH_MISSING(fminf)
AF_TWIN_SIMT_MATH_MISSING(fmodf)
AF_TWIN_SIMT_MATH_MISSING(frexpf)
AF_TWIN_SIMT_MATH_MISSING(hypotf)
AF_TWIN_SIMT_MATH_MISSING(ilogbf)
AF_TWIN_SIMT_MATH_MISSING(ldexpf)
AF_TWIN_SIMT_MATH_MISSING(lgammaf)
AF_TWIN_SIMT_MATH_MISSING(llrintf)
AF_TWIN_SIMT_MATH_MISSING(llroundf)
AF_TWIN_SIMT_MATH_MISSING(log10f)
AF_TWIN_SIMT_MATH_MISSING(log1pf)
AF_TWIN_SIMT_MATH_MISSING(log2f)
AF_TWIN_SIMT_MATH_MISSING(logbf)
AF_TWIN_SIMT_MATH_MISSING(logf)
AF_TWIN_SIMT_MATH_MISSING(lrintf)
AF_TWIN_SIMT_MATH_MISSING(lroundf)
AF_TWIN_SIMT_MATH_MISSING(modff)
AF_TWIN_SIMT_MATH_MISSING(nearbyintf)
AF_TWIN_SIMT_MATH_MISSING(nextafterf)
AF_TWIN_SIMT_MATH_MISSING(powf)
AF_TWIN_SIMT_MATH_MISSING(remainderf)
AF_TWIN_SIMT_MATH_MISSING(remquof)
AF_TWIN_SIMT_MATH_MISSING(rintf)
AF_TWIN_SIMT_MATH_MISSING(roundf)
AF_TWIN_SIMT_MATH_MISSING(scalblnf)
AF_TWIN_SIMT_MATH_MISSING(scalbnf)
AF_TWIN_SIMT_MATH_MISSING(sinf)
AF_TWIN_SIMT_MATH_MISSING(sinhf)
AF_TWIN_SIMT_MATH_MISSING(sqrtf)
AF_TWIN_SIMT_MATH_MISSING(tanf)
AF_TWIN_SIMT_MATH_MISSING(tanhf)
AF_TWIN_SIMT_MATH_MISSING(tgammaf)
AF_TWIN_SIMT_MATH_MISSING(truncf)

#define acosf(...) AfTwinMissingSimtMathHeader_acosf(__VA_ARGS__)
#define acoshf(...) AfTwinMissingSimtMathHeader_acoshf(__VA_ARGS__)
#define asinf(...) AfTwinMissingSimtMathHeader_asinf(__VA_ARGS__)
#define asinhf(...) AfTwinMissingSimtMathHeader_asinhf(__VA_ARGS__)
#define atan2f(...) AfTwinMissingSimtMathHeader_atan2f(__VA_ARGS__)
#define atanf(...) AfTwinMissingSimtMathHeader_atanf(__VA_ARGS__)
#define atanhf(...) AfTwinMissingSimtMathHeader_atanhf(__VA_ARGS__)
#define cbrtf(...) AfTwinMissingSimtMathHeader_cbrtf(__VA_ARGS__)
#define ceilf(...) AfTwinMissingSimtMathHeader_ceilf(__VA_ARGS__)
#define copysignf(...) AfTwinMissingSimtMathHeader_copysignf(__VA_ARGS__)
#define cosf(...) AfTwinMissingSimtMathHeader_cosf(__VA_ARGS__)
#define coshf(...) AfTwinMissingSimtMathHeader_coshf(__VA_ARGS__)
#define erfcf(...) AfTwinMissingSimtMathHeader_erfcf(__VA_ARGS__)
#define erff(...) AfTwinMissingSimtMathHeader_erff(__VA_ARGS__)
#define exp10f(...) AfTwinMissingSimtMathHeader_exp10f(__VA_ARGS__)
#define exp2f(...) AfTwinMissingSimtMathHeader_exp2f(__VA_ARGS__)
#define expf(...) AfTwinMissingSimtMathHeader_expf(__VA_ARGS__)
#define expm1f(...) AfTwinMissingSimtMathHeader_expm1f(__VA_ARGS__)
#define fabsf(...) AfTwinMissingSimtMathHeader_fabsf(__VA_ARGS__)
#define fdimf(...) AfTwinMissingSimtMathHeader_fdimf(__VA_ARGS__)
#define floorf(...) AfTwinMissingSimtMathHeader_floorf(__VA_ARGS__)
#define fmaf(...) AfTwinMissingSimtMathHeader_fmaf(__VA_ARGS__)
#define fmaxf(...) AfTwinMissingSimtMathHeader_fmaxf(__VA_ARGS__)
#define fminf(...) AfTwinMissingSimtMathHeader_fminf(__VA_ARGS__)
#define fmodf(...) AfTwinMissingSimtMathHeader_fmodf(__VA_ARGS__)
#define frexpf(...) AfTwinMissingSimtMathHeader_frexpf(__VA_ARGS__)
#define hypotf(...) AfTwinMissingSimtMathHeader_hypotf(__VA_ARGS__)
#define ilogbf(...) AfTwinMissingSimtMathHeader_ilogbf(__VA_ARGS__)
#define ldexpf(...) AfTwinMissingSimtMathHeader_ldexpf(__VA_ARGS__)
#define lgammaf(...) AfTwinMissingSimtMathHeader_lgammaf(__VA_ARGS__)
#define llrintf(...) AfTwinMissingSimtMathHeader_llrintf(__VA_ARGS__)
#define llroundf(...) AfTwinMissingSimtMathHeader_llroundf(__VA_ARGS__)
#define log10f(...) AfTwinMissingSimtMathHeader_log10f(__VA_ARGS__)
#define log1pf(...) AfTwinMissingSimtMathHeader_log1pf(__VA_ARGS__)
#define log2f(...) AfTwinMissingSimtMathHeader_log2f(__VA_ARGS__)
#define logbf(...) AfTwinMissingSimtMathHeader_logbf(__VA_ARGS__)
#define logf(...) AfTwinMissingSimtMathHeader_logf(__VA_ARGS__)
#define lrintf(...) AfTwinMissingSimtMathHeader_lrintf(__VA_ARGS__)
#define lroundf(...) AfTwinMissingSimtMathHeader_lroundf(__VA_ARGS__)
#define modff(...) AfTwinMissingSimtMathHeader_modff(__VA_ARGS__)
#define nearbyintf(...) AfTwinMissingSimtMathHeader_nearbyintf(__VA_ARGS__)
#define nextafterf(...) AfTwinMissingSimtMathHeader_nextafterf(__VA_ARGS__)
#define powf(...) AfTwinMissingSimtMathHeader_powf(__VA_ARGS__)
#define remainderf(...) AfTwinMissingSimtMathHeader_remainderf(__VA_ARGS__)
#define remquof(...) AfTwinMissingSimtMathHeader_remquof(__VA_ARGS__)
#define rintf(...) AfTwinMissingSimtMathHeader_rintf(__VA_ARGS__)
#define roundf(...) AfTwinMissingSimtMathHeader_roundf(__VA_ARGS__)
#define scalblnf(...) AfTwinMissingSimtMathHeader_scalblnf(__VA_ARGS__)
#define scalbnf(...) AfTwinMissingSimtMathHeader_scalbnf(__VA_ARGS__)
#define sinf(...) AfTwinMissingSimtMathHeader_sinf(__VA_ARGS__)
#define sinhf(...) AfTwinMissingSimtMathHeader_sinhf(__VA_ARGS__)
#define sqrtf(...) AfTwinMissingSimtMathHeader_sqrtf(__VA_ARGS__)
#define tanf(...) AfTwinMissingSimtMathHeader_tanf(__VA_ARGS__)
#define tanhf(...) AfTwinMissingSimtMathHeader_tanhf(__VA_ARGS__)
#define tgammaf(...) AfTwinMissingSimtMathHeader_tgammaf(__VA_ARGS__)
#define truncf(...) AfTwinMissingSimtMathHeader_truncf(__VA_ARGS__)

#endif  // AF_TWIN_SIMT_MATH_FUNCTIONS_H

#endif  // AF_TWIN_SIMT_MATH_GUARD_H
