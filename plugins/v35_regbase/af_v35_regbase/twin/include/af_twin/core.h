// af_twin/core.h
// Emulates: the AscendC enums (TPosition, RoundMode, CMPMODE, SELMODE,
// HardEvent, pipe_t, event ids), the core queries GetBlockIdx / GetBlockNum,
// and the synchronisation calls.
// Checks: SyncAll is a real barrier across the cores of the launch and aborts
// (syncall-deadlock) where hardware would hang: a core returns from the kernel
// while others wait in SyncAll, or calls SyncAll after another core returned.
// SetFlag / WaitFlag / PipeBarrier drive the pipe model of hb.h, which orders
// the accesses of the asynchronous pipes and reports races (kind race) and
// flag misuse (sync-*); SyncAll also orders the cores' accesses.
// Not emulated: the isAIVOnly argument and the config of SyncAll (the default,
// every pipe, is assumed).
#ifndef AF_TWIN_CORE_H
#define AF_TWIN_CORE_H

#include <cstdint>

#include "runtime.h"

enum pipe_t { PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_FIX };

using event_t = int32_t;
constexpr event_t EVENT_ID0 = 0;
constexpr event_t EVENT_ID1 = 1;
constexpr event_t EVENT_ID2 = 2;
constexpr event_t EVENT_ID3 = 3;
constexpr event_t EVENT_ID4 = 4;
constexpr event_t EVENT_ID5 = 5;
constexpr event_t EVENT_ID6 = 6;
constexpr event_t EVENT_ID7 = 7;

namespace AscendC {

enum class TPosition { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM, TSCM, MAX };
using QuePosition = TPosition;

// UNKNOWN: the register Cast's "no rounding" (widening conversions); the memory-based Cast rejects it.
enum class RoundMode { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD, UNKNOWN = 0xFF };

enum class CMPMODE { LT = 0, GT, EQ, LE, GE, NE };

enum class SELMODE { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

enum class HardEvent {
    MTE2_MTE1,
    MTE1_MTE2,
    MTE1_M,
    M_MTE1,
    MTE2_V,
    V_MTE2,
    MTE3_V,
    V_MTE3,
    M_V,
    V_M,
    V_V,
    MTE3_MTE1,
    MTE1_MTE3,
    MTE1_V,
    MTE2_M,
    M_MTE2,
    V_MTE1,
    M_FIX,
    FIX_M,
    MTE3_MTE2,
    MTE2_MTE3,
    S_V,
    V_S,
    S_MTE2,
    MTE2_S,
    S_MTE3,
    MTE3_S,
    MTE2_FIX,
    FIX_MTE2,
    FIX_S,
    M_S,
    FIX_MTE3,
    MAX
};

inline int64_t GetBlockIdx() { return AfTwin::RequireCore("GetBlockIdx")->idx; }

inline int64_t GetBlockNum() {
    (void)AfTwin::RequireCore("GetBlockNum");
    return static_cast<int64_t>(AfTwin::gState.blockDim);
}

// Pipeline synchronisation: the pipe model of hb.h. A HardEvent names its source and destination pipe;
// an event with a cube pipe (M, MTE1, FIX) has no pipe pair on a vector core (同步控制/核内同步/
// 核内同步能力概述.md 表3) and is reported (sync-illegal).
static_assert(static_cast<uint32_t>(HardEvent::MAX) == AfTwin::kHbEventCount, "kHbEventNames follows HardEvent");

struct AfEventPipes {
    int32_t src;
    int32_t dst;
};

constexpr AfEventPipes AfPipesOf(HardEvent e) {
    using namespace AfTwin;
    switch (e) {
        case HardEvent::MTE2_V: return {kPipeMte2, kPipeV};
        case HardEvent::V_MTE2: return {kPipeV, kPipeMte2};
        case HardEvent::MTE3_V: return {kPipeMte3, kPipeV};
        case HardEvent::V_MTE3: return {kPipeV, kPipeMte3};
        case HardEvent::V_V: return {kPipeV, kPipeV};
        case HardEvent::MTE3_MTE2: return {kPipeMte3, kPipeMte2};
        case HardEvent::MTE2_MTE3: return {kPipeMte2, kPipeMte3};
        case HardEvent::S_V: return {kPipeS, kPipeV};
        case HardEvent::V_S: return {kPipeV, kPipeS};
        case HardEvent::S_MTE2: return {kPipeS, kPipeMte2};
        case HardEvent::MTE2_S: return {kPipeMte2, kPipeS};
        case HardEvent::S_MTE3: return {kPipeS, kPipeMte3};
        case HardEvent::MTE3_S: return {kPipeMte3, kPipeS};
        default: return {-1, -1};
    }
}

inline AfEventPipes AfEventPipesChecked(HardEvent e, const char* api) {
    const AfEventPipes p = AfPipesOf(e);
    if (p.src < 0)
        AfTwin::Fail("sync-illegal", "%s<HardEvent::%s>: a vector core has no such pipe pair (M, MTE1 and FIX are "
                     "cube pipes)", api, AfTwin::kHbEventNames[static_cast<uint32_t>(e)]);
    return p;
}

template <HardEvent e>
inline void SetFlag(int32_t evt) {
    AfTwin::CoreCtx* c = AfTwin::RequireCore("SetFlag");
    const AfEventPipes p = AfEventPipesChecked(e, "SetFlag");
    AfTwin::HbSetFlag(c, static_cast<uint32_t>(p.src), static_cast<uint32_t>(e), evt,
                      AfTwin::kHbEventNames[static_cast<uint32_t>(e)]);
}

template <HardEvent e>
inline void WaitFlag(int32_t evt) {
    AfTwin::CoreCtx* c = AfTwin::RequireCore("WaitFlag");
    const AfEventPipes p = AfEventPipesChecked(e, "WaitFlag");
    AfTwin::HbWaitFlag(c, static_cast<uint32_t>(p.dst), static_cast<uint32_t>(e), evt,
                       AfTwin::kHbEventNames[static_cast<uint32_t>(e)]);
}

// PipeBarrier<p> orders the instructions of p; PIPE_ALL waits for every pipe. PIPE_S is not supported
// (PipeBarrier(ISASI).md, 约束说明) and the cube pipes do not exist on a vector core: both are reported.
template <pipe_t p>
inline void PipeBarrier() {
    AfTwin::CoreCtx* c = AfTwin::RequireCore("PipeBarrier");
    if constexpr (p == PIPE_ALL) {
        AfTwin::HbBarrierAll(c);
    } else if constexpr (p == PIPE_V) {
        AfTwin::HbBarrier(c, AfTwin::kPipeV);
    } else if constexpr (p == PIPE_MTE2) {
        AfTwin::HbBarrier(c, AfTwin::kPipeMte2);
    } else if constexpr (p == PIPE_MTE3) {
        AfTwin::HbBarrier(c, AfTwin::kPipeMte3);
    } else {
        AfTwin::Fail("sync-illegal", "PipeBarrier<%s>: %s", p == PIPE_S ? "PIPE_S" : "a cube pipe",
                     p == PIPE_S ? "scalar instructions are ordered by the hardware; the barrier is not supported"
                                 : "a vector core has no such pipe");
    }
}

// Barrier across all cores of the launch.
template <bool isAIVOnly = true>
inline void SyncAll() {
    AfTwin::SyncAllBarrier();
}

}  // namespace AscendC

#endif  // AF_TWIN_CORE_H
