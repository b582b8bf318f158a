// af_twin/instances.h
// Build time only, no behaviour: the template instances that nearly every
// generated kernel uses (the queues of the VECIN / VECOUT positions at depth 1
// and 2 and their InitBuffer, the VECCALC buffer, LocalTensor / GlobalTensor, DataCopyPad and the
// queue and buffer member templates for the common element types, the twin's
// own std::vector instances), compiled once instead of in every kernel.
//
// Without a define this header declares nothing. A build that links one object
// compiled with AF_TWIN_INSTANTIATE (explicit instantiation definitions) may
// compile its kernels with AF_TWIN_EXTERN_INSTANCES (explicit instantiation
// declarations): the compiler then emits no out-of-line copy of these
// functions in the kernel and calls the shared object's (it may still inline
// them). The CPU twin's runner does this with the harness main's object.
#ifndef AF_TWIN_INSTANCES_H
#define AF_TWIN_INSTANCES_H

#include <cstdint>
#include <vector>

#include "datacopy.h"
#include "pipe.h"
#include "runtime.h"
#include "tensor.h"

#if defined(AF_TWIN_INSTANTIATE)
#define AF_TWIN_INSTANCE template
#elif defined(AF_TWIN_EXTERN_INSTANCES)
#define AF_TWIN_INSTANCE extern template
#endif

#ifdef AF_TWIN_INSTANCE

// The member templates of one queue for one element type.
#define AF_TWIN_QUE_TYPE(P, D, T)                                                          \
    AF_TWIN_INSTANCE AscendC::LocalTensor<T> AscendC::TQueBind<P, P, D>::AllocTensor<T>();        \
    AF_TWIN_INSTANCE bool AscendC::TQueBind<P, P, D>::EnQue<T>(const AscendC::LocalTensor<T>&);   \
    AF_TWIN_INSTANCE AscendC::LocalTensor<T> AscendC::TQueBind<P, P, D>::DeQue<T>();              \
    AF_TWIN_INSTANCE void AscendC::TQueBind<P, P, D>::FreeTensor<T>(AscendC::LocalTensor<T>&);

#define AF_TWIN_QUE(P, D)                                                                      \
    AF_TWIN_INSTANCE class AscendC::TQueBind<P, P, D>;                                                \
    AF_TWIN_INSTANCE void AscendC::TPipe::InitBuffer(AscendC::TQueBind<P, P, D>&, uint8_t, uint32_t); \
    AF_TWIN_QUE_TYPE(P, D, half)                                                               \
    AF_TWIN_QUE_TYPE(P, D, bfloat16_t)                                                         \
    AF_TWIN_QUE_TYPE(P, D, float)                                                              \
    AF_TWIN_QUE_TYPE(P, D, int32_t)                                                            \
    AF_TWIN_QUE_TYPE(P, D, int64_t)                                                            \
    AF_TWIN_QUE_TYPE(P, D, uint8_t)

// Tensors, the VECCALC buffer's views and DataCopyPad for one element type.
#define AF_TWIN_ELEMENT(T)                                                                                  \
    AF_TWIN_INSTANCE class AscendC::LocalTensor<T>;                                                         \
    AF_TWIN_INSTANCE class AscendC::GlobalTensor<T>;                                                        \
    AF_TWIN_INSTANCE AscendC::LocalTensor<T> AscendC::TBuf<AscendC::TPosition::VECCALC>::Get<T>();          \
    AF_TWIN_INSTANCE AscendC::LocalTensor<T> AscendC::TBuf<AscendC::TPosition::VECCALC>::Get<T>(uint32_t);  \
    AF_TWIN_INSTANCE void AscendC::DataCopyPad<T>(const AscendC::LocalTensor<T>&,                           \
                                                  const AscendC::GlobalTensor<T>&,                          \
                                                  const AscendC::DataCopyExtParams&,                        \
                                                  const AscendC::DataCopyPadExtParams<T>&);                 \
    AF_TWIN_INSTANCE void AscendC::DataCopyPad<T>(const AscendC::GlobalTensor<T>&,                          \
                                                  const AscendC::LocalTensor<T>&,                           \
                                                  const AscendC::DataCopyExtParams&);

AF_TWIN_QUE(AscendC::TPosition::VECIN, 1)
AF_TWIN_QUE(AscendC::TPosition::VECIN, 2)
AF_TWIN_QUE(AscendC::TPosition::VECOUT, 1)
AF_TWIN_QUE(AscendC::TPosition::VECOUT, 2)
AF_TWIN_INSTANCE class AscendC::TBuf<AscendC::TPosition::VECCALC>;
AF_TWIN_INSTANCE void AscendC::TPipe::InitBuffer(AscendC::TBuf<AscendC::TPosition::VECCALC>&, uint32_t);
AF_TWIN_ELEMENT(half)
AF_TWIN_ELEMENT(bfloat16_t)
AF_TWIN_ELEMENT(float)
AF_TWIN_ELEMENT(int32_t)
AF_TWIN_ELEMENT(int64_t)
AF_TWIN_ELEMENT(uint8_t)
AF_TWIN_INSTANCE class std::vector<AfTwin::CoreCtx::SimtRead>;
AF_TWIN_INSTANCE class std::vector<AfTwin::UbAlloc>;

#undef AF_TWIN_ELEMENT
#undef AF_TWIN_QUE
#undef AF_TWIN_QUE_TYPE
#undef AF_TWIN_INSTANCE

#endif  // AF_TWIN_INSTANCE

#endif  // AF_TWIN_INSTANCES_H
