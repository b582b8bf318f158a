// kernel_operator.h (CPU twin)
// Entry header of the CPU twin: a g++-compilable emulation of the subset of the
// AscendC kernel API (Ascend A5, SoC 3510) that generated kernels use. Kernels
// include it unchanged; a harness drives them through namespace AfTwin
// (Configure, RegisterGm, SetTilingKey, Launch, WriteReportJson).
// See README.md in this directory for what is emulated, checked and counted.
#ifndef AF_TWIN_KERNEL_OPERATOR_H
#define AF_TWIN_KERNEL_OPERATOR_H

#ifndef AF_CPU_TWIN
#define AF_CPU_TWIN 1
#endif

#include "af_twin/types.h"
#include "af_twin/runtime.h"
#include "af_twin/core.h"
#include "af_twin/tensor.h"
#include "af_twin/pipe.h"
#include "af_twin/datacopy.h"
#include "af_twin/vector.h"
#include "af_twin/reg.h"
#include "af_twin/simt.h"
#include "af_twin/instances.h"
#include "af_twin/simt_math_guard.h"

#endif  // AF_TWIN_KERNEL_OPERATOR_H
