// Stand-in for the closed CPU-debug header "stub_def.h" that the official AscendC
// headers include when ASCENDC_CPU_DEBUG is 1.
//
// It supplies only what a compiler for the Ascend vector core would: the address-space
// and function qualifiers (empty on the CPU), the builtin enums and scalar types of the
// CCE compiler, and the per-core globals of the CPU-debug runtime. It declares no
// AscendC API: every class and function a kernel calls must come from the official
// headers, so a wrong call fails there.
#ifndef AF_ASCENDC_STANDIN_STUB_DEF_H
#define AF_ASCENDC_STANDIN_STUB_DEF_H

#include <cstdint>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <iostream>
#include <vector>
#include <type_traits>

// ---- qualifiers: address spaces and function kinds mean nothing to g++
#define __aicore__
#define __host_aicore__
#define __host__
#define __global__
#define __gm__
#define __ubuf__
#define __cbuf__
#define __ca__
#define __cb__
#define __cc__
#define __fbuf__
#define __ssbuf__
#define __biasbuf__
#define __local_mem__
#define __simd_callee__
#define __simd_vf__
#define __simt_callee__
#define __simt_vf__
#define __no_simd_vf_fusion__
#define __in_pipe__(...)
#define __out_pipe__(...)
#define __inout_pipe__(...)
#define __sync_alias__
#define __sync_noalias__
#define __check_sync_alias__
#define __BLOCK_LOCAL__
#define __WORKGROUP_LOCAL__
#define __disable_kernel_type_autoinfer__
#define ASCENDC_HOST
#define ASCENDC_AICORE
#define ASCENDC_HOST_AICORE
#define __VEC_SCOPE__

#include "kernel_fp16.h"
#include "kernel_bf16.h"
#include "af_standin_types.h"
#include "kernel_vectorized.h"

// ---- the CPU-debug runtime's per-core state
extern int32_t g_coreType;
extern int32_t g_kernelMode;
extern int64_t block_idx;
extern int64_t block_num;
extern int64_t sub_block_idx;
extern int64_t g_taskRation;
extern uint64_t g_fixpipeNdNzParam;

// ---- tiling data: no header defines GET_TILING_DATA*; the device compiler's tiling pass generates them
// from the struct a kernel registers (REGISTER_TILING_DEFAULT, which is official). A copy of the bytes
// is what they do; the struct type and the argument still have to be right for this to compile.
#ifndef GET_TILING_DATA_WITH_STRUCT
#define GET_TILING_DATA_WITH_STRUCT(tiling_struct, var, tiling) \
    tiling_struct var;                                         \
    std::memcpy(&var, (tiling), sizeof(tiling_struct))
#endif

#include "stub_fun.h"

#endif
