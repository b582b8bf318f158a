// af_twin/simt.h
// Emulates: AscendC::Simt::VF_CALL, which starts a SIMT "vector function" on
// the running core, and the thread-index queries (GetThreadIdx, GetThreadNum,
// CUDA-style threadIdx / blockDim). The threads of one VF_CALL run one after
// the other on the core's std::thread, in x-fastest order.
// Checks: the thread count x*y*z is in [1, 2048] (simt-threads); a kernel that
// launches VF_CALL keeps its TPipe buffers within UB - 8 KiB system reserve -
// data cache, before and after the call (simt-dcache, with pipe.h);
// VF_CALL is not nested (api-params).
// Counts: simt_threads (threads launched). Raw GM / UB accesses of SIMT code are
// checked and counted by the AfTwin::SimtGm* / SimtUb* hooks in runtime.h.
// The data cache model sees the threads' reads in lockstep order (every
// thread's first read, then every thread's second read, ...), as the lanes of
// a VF advance together on the device.
// Not emulated: concurrency between SIMT threads (no warps, data races between
// threads are not detected); raw accesses that bypass the hooks are unchecked.
#ifndef AF_TWIN_SIMT_H
#define AF_TWIN_SIMT_H

#include <algorithm>
#include <cstdint>

#include "runtime.h"

// CUDA-style index variables, per core thread.
struct AfTwinDim3Value {
    uint32_t x;
    uint32_t y;
    uint32_t z;
};
inline thread_local AfTwinDim3Value threadIdx{0u, 0u, 0u};
inline thread_local AfTwinDim3Value blockDim{1u, 1u, 1u};

namespace AscendC {
namespace Simt {

struct Dim3 {
    uint32_t x = 1;
    uint32_t y = 1;
    uint32_t z = 1;

    constexpr Dim3() = default;
    constexpr Dim3(uint32_t xIn, uint32_t yIn = 1, uint32_t zIn = 1) : x(xIn), y(yIn), z(zIn) {}
};

// Linear index of the running SIMT thread (x fastest) and the thread count.
inline uint32_t GetThreadIdx() { return AfTwin::RequireCore("Simt::GetThreadIdx")->simtLinear; }
inline uint32_t GetThreadNum() { return AfTwin::RequireCore("Simt::GetThreadNum")->simtTotal; }

template <auto func, typename... Args>
inline void VF_CALL(Dim3 threads, Args... args) {
    AfTwin::CoreCtx* c = AfTwin::RequireCore("VF_CALL");
    const uint64_t total = uint64_t{threads.x} * threads.y * threads.z;
    if (total < 1 || total > AfTwin::kMaxSimtThreads)
        AfTwin::Fail("simt-threads", "VF_CALL launches %u x %u x %u = %llu threads; the count must be in [1, %u]",
                     threads.x, threads.y, threads.z, static_cast<unsigned long long>(total),
                     AfTwin::kMaxSimtThreads);
    // UB is laid out per kernel: once it launches a VF, its TPipe buffers (the peak so far and every later
    // InitBuffer, see pipe.h) must leave the 8 KiB system reserve and the data cache free.
    const uint32_t budget = AfTwin::VfUbBudget();
    if (c->c.ubHigh > budget)
        AfTwin::Fail("simt-dcache",
                     "VF_CALL in a kernel whose TPipe buffers reached %llu bytes of UB; a kernel that launches "
                     "VF_CALL may use %u (min(UB %u - %u reserved, usable %u) - %u data cache)",
                     static_cast<unsigned long long>(c->c.ubHigh), budget,
                     AfTwin::kPhysicalUb, AfTwin::kSystemReserve, AfTwin::UbSize(), AfTwin::DcacheReserve());
    c->vfKernel = true;
    if (c->inSimt) AfTwin::Fail("api-params", "VF_CALL inside a SIMT function (nested VF_CALL)");
    c->c.simt += total;
    c->inSimt = true;
    c->simtTotal = static_cast<uint32_t>(total);
    c->simtSteps.assign(total, 0);
    blockDim = AfTwinDim3Value{threads.x, threads.y, threads.z};
    uint32_t linear = 0;
    for (uint32_t z = 0; z < threads.z; ++z) {
        for (uint32_t y = 0; y < threads.y; ++y) {
            for (uint32_t x = 0; x < threads.x; ++x) {
                threadIdx = AfTwinDim3Value{x, y, z};
                c->simtLinear = linear++;
                func(args...);
            }
        }
    }
    threadIdx = AfTwinDim3Value{0u, 0u, 0u};
    blockDim = AfTwinDim3Value{1u, 1u, 1u};
    c->simtLinear = 0;
    c->simtTotal = 0;
    c->inSimt = false;
    AfTwin::ReplaySimtReads(c);
    AfTwin::HbCommit(c, AfTwin::kPipeV, "VF_CALL");  // every thread's accesses: one PIPE_V instruction
}

}  // namespace Simt
}  // namespace AscendC

#endif  // AF_TWIN_SIMT_H
