// Positive control: a small, correct AscendC vector + SIMT kernel for the A5 vector core.
#include "kernel_operator.h"
#include "simt_api/math_functions.h"

using namespace AscendC;

constexpr int32_t TILE = 256;  // elements; TILE * sizeof(float) is a multiple of 32

__simt_vf__ __aicore__ __launch_bounds__(1024) inline void ScaleLanes(__gm__ float* out, const __gm__ float* in,
                                                                      int64_t count)
{
    for (int64_t i = static_cast<int64_t>(Simt::GetThreadIdx()); i < count;
         i += static_cast<int64_t>(Simt::GetThreadNum())) {
        out[i] = expf(in[i]) * 0.5f;
    }
}

extern "C" __global__ __aicore__ void control_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR w)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQueue;
    TQue<QuePosition::VECOUT, 1> outQueue;
    TBuf<TPosition::VECCALC> tmp;
    GlobalTensor<float> xGm;
    GlobalTensor<float> yGm;
    GlobalTensor<float> zGm;
    GlobalTensor<float> wGm;
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x));
    yGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y));
    zGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(z));
    wGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(w));
    pipe.InitBuffer(inQueue, 1, TILE * sizeof(float));
    pipe.InitBuffer(outQueue, 1, TILE * sizeof(float));
    pipe.InitBuffer(tmp, TILE * sizeof(float));

    LocalTensor<float> in = inQueue.AllocTensor<float>();
    DataCopy(in, xGm, TILE);
    inQueue.EnQue(in);
    in = inQueue.DeQue<float>();
    LocalTensor<float> out = outQueue.AllocTensor<float>();
    LocalTensor<float> t = tmp.Get<float>();
    Exp(t, in, TILE);
    Muls(t, t, 2.0f, TILE);
    Add(out, t, in, TILE);
    Max(out, out, in, TILE);
    outQueue.EnQue(out);
    inQueue.FreeTensor(in);
    out = outQueue.DeQue<float>();
    DataCopy(yGm, out, TILE);
    outQueue.FreeTensor(out);

    Simt::VF_CALL<ScaleLanes>(Simt::Dim3(1024), wGm.GetPhyAddr(0), zGm.GetPhyAddr(), static_cast<int64_t>(TILE));
}
