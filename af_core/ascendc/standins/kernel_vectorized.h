// Stand-in for the closed CPU-debug header "kernel_vectorized.h": the vector register
// types of the CCE compiler (one distinct empty type per element type, the predicate,
// alignment and address registers). Declares no AscendC API.
#ifndef AF_ASCENDC_STANDIN_KERNEL_VECTORIZED_H
#define AF_ASCENDC_STANDIN_KERNEL_VECTORIZED_H

template <int Tag>
struct af_standin_vreg {};

using vector_u8 = af_standin_vreg<1>;
using vector_u16 = af_standin_vreg<2>;
using vector_u32 = af_standin_vreg<3>;
using vector_u64 = af_standin_vreg<4>;
using vector_s8 = af_standin_vreg<5>;
using vector_s16 = af_standin_vreg<6>;
using vector_s32 = af_standin_vreg<7>;
using vector_s64 = af_standin_vreg<8>;
using vector_f16 = af_standin_vreg<9>;
using vector_f32 = af_standin_vreg<10>;
using vector_bf16 = af_standin_vreg<11>;
using vector_hif8 = af_standin_vreg<12>;
using vector_f8e4m3 = af_standin_vreg<13>;
using vector_f8e5m2 = af_standin_vreg<14>;
using vector_f8e8m0 = af_standin_vreg<15>;
using vector_s4x2 = af_standin_vreg<16>;
using vector_f4e2m1x2 = af_standin_vreg<17>;
using vector_f4e1m2x2 = af_standin_vreg<18>;
using vector_bool = af_standin_vreg<19>;
using vector_align = af_standin_vreg<20>;
using vector_address = af_standin_vreg<21>;

#endif
