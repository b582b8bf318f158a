// af_twin/simt.h
// Emulates: AscendC::Simt::VF_CALL, which starts a SIMT "vector function" on
// the running core, and the thread-index queries (GetThreadIdx, GetThreadNum,
// CUDA-style threadIdx / blockDim). The threads of one VF_CALL run one after
// the other on the core's std::thread, in x-fastest order (AF_TWIN_SIMT_ORDER: reverse or a seeded shuffle).
// Checks: the thread count x*y*z is in [1, 2048] (simt-threads); a kernel that
// launches VF_CALL keeps its TPipe buffers within UB - 8 KiB system reserve -
// data cache, before and after the call (simt-dcache, with pipe.h);
// VF_CALL is not nested (api-params).
// Counts: simt_threads (threads launched). Raw GM / UB accesses of SIMT code are
// checked and counted by the AfTwin::SimtGm* / SimtUb* hooks in runtime.h.
// The data cache model sees the threads' reads in lockstep order (every
// thread's first read, then every thread's second read, ...), as the lanes of
// a VF advance together on the device.
// Two threads touching one byte through the hooks, one writing, are a race (hb.h).
// Not emulated: concurrency between SIMT threads (no warps, no SIMT barrier); raw
// accesses that bypass the hooks are unchecked.
#ifndef AF_TWIN_SIMT_H
#define AF_TWIN_SIMT_H

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime.h"

// CUDA-style index variables, per core thread.
struct AfTwinDim3Value {
    uint32_t x;
    uint32_t y;
    uint32_t z;
};
inline thread_local AfTwinDim3Value threadIdx{0u, 0u, 0u};
inline thread_local AfTwinDim3Value blockDim{1u, 1u, 1u};

namespace AfTwin {

// The order the threads of a VF_CALL run in: x fastest (the default, AF_TWIN_SIMT_ORDER unset or "forward"),
// "reverse", or "shuffle:SEED" (a seeded permutation, the same for every call of the process). The race check
// reports two threads touching one byte whatever the order; another order only changes what such a racy
// kernel computes, so a differential test sees it too.
inline std::vector<uint32_t> SimtOrder(uint32_t total) {
    static const std::string mode = [] {
        const char* v = std::getenv("AF_TWIN_SIMT_ORDER");
        return std::string(v ? v : "forward");
    }();
    std::vector<uint32_t> order(total);
    for (uint32_t i = 0; i < total; ++i) order[i] = i;
    if (mode == "reverse") {
        std::reverse(order.begin(), order.end());
    } else if (mode.rfind("shuffle:", 0) == 0) {
        uint64_t state = std::strtoull(mode.c_str() + 8, nullptr, 10) * 0x9E3779B97F4A7C15ull + 1;
        for (uint32_t i = total; i > 1; --i) {  // Fisher-Yates with a 64-bit LCG
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            std::swap(order[i - 1], order[static_cast<uint32_t>((state >> 33) % i)]);
        }
    } else if (mode != "forward") {
        Fail("launch", "AF_TWIN_SIMT_ORDER=%s: use forward, reverse or shuffle:SEED", mode.c_str());
    }
    return order;
}

}  // namespace AfTwin

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
    c->simtAccesses.assign(total, 0);
    blockDim = AfTwinDim3Value{threads.x, threads.y, threads.z};
    for (const uint32_t linear : AfTwin::SimtOrder(static_cast<uint32_t>(total))) {
        threadIdx = AfTwinDim3Value{linear % threads.x, linear / threads.x % threads.y,
                                    linear / (threads.x * threads.y)};
        c->simtLinear = linear;
        func(args...);
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
