// simt_api/math_functions.h (CPU twin)
// Emulates: the official SIMT math header of the same path, which declares
// the float math functions SIMT code may call (expf, logf, sqrtf, exp2f, fabsf,
// ...); kernel_operator.h does not include it. Here it lifts the guard macros
// of af_twin/simt_math_guard.h, so the C library's functions of those names
// become usable, and keeps kernel_operator.h from installing the guard when
// it is included later.
// Not emulated: the device implementations (the twin computes with the C
// library in float; the device's last bits may differ).
#ifndef AF_TWIN_SIMT_MATH_FUNCTIONS_H
#define AF_TWIN_SIMT_MATH_FUNCTIONS_H

#include <cmath>

#undef acosf
#undef acoshf
#undef asinf
#undef asinhf
#undef atan2f
#undef atanf
#undef atanhf
#undef cbrtf
#undef ceilf
#undef copysignf
#undef cosf
#undef coshf
#undef erfcf
#undef erff
#undef exp10f
#undef exp2f
#undef expf
#undef expm1f
#undef fabsf
#undef fdimf
#undef floorf
#undef fmaf
#undef fmaxf
#undef fminf
#undef fmodf
#undef frexpf
#undef hypotf
#undef ilogbf
#undef ldexpf
#undef lgammaf
#undef llrintf
#undef llroundf
#undef log10f
#undef log1pf
#undef log2f
#undef logbf
#undef logf
#undef lrintf
#undef lroundf
#undef modff
#undef nearbyintf
#undef nextafterf
#undef powf
#undef remainderf
#undef remquof
#undef rintf
#undef roundf
#undef scalblnf
#undef scalbnf
#undef sinf
#undef sinhf
#undef sqrtf
#undef tanf
#undef tanhf
#undef tgammaf
#undef truncf

#endif  // AF_TWIN_SIMT_MATH_FUNCTIONS_H
