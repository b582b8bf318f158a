/*
 * Stand-in for platform/soc_spec.h, which asc-devkit's tiling/platform/platform_ascendc.h includes but
 * which belongs to CANN's platform package, not to asc-devkit. platform_ascendc.h declares what it
 * uses itself (fe::PlatFormInfos and NpuArch, both forward-declared there), so this file is empty on
 * purpose: the NpuArch enumerators (NpuArch::DAV_3510, ...) are not declared, and code comparing
 * against them fails the check instead of passing against made-up values.
 */
#ifndef AF_CANN_STANDIN_PLATFORM_SOC_SPEC_H
#define AF_CANN_STANDIN_PLATFORM_SOC_SPEC_H
#endif  // AF_CANN_STANDIN_PLATFORM_SOC_SPEC_H
