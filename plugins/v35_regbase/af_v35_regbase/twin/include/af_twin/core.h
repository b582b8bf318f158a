// af_twin/core.h
// Emulates: the AscendC enums (TPosition, RoundMode, CMPMODE, SELMODE,
// HardEvent, pipe_t, event ids), the core queries GetBlockIdx / GetBlockNum,
// and the synchronisation calls.
// Checks: SyncAll is a real barrier across the cores of the launch and aborts
// (syncall-deadlock) where hardware would hang: a core returns from the kernel
// while others wait in SyncAll, or calls SyncAll after another core returned.
// Not emulated: pipe concurrency. A core executes its instructions in program
// order, so SetFlag / WaitFlag / PipeBarrier are no-ops and a missing or wrong
// flag is NOT detected; the isAIVOnly argument of SyncAll is ignored.
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

// Pipeline synchronisation: execution is sequential per core, so these only
// have to compile.
template <HardEvent e>
inline void SetFlag(int32_t evt) {
    (void)evt;
}

template <HardEvent e>
inline void WaitFlag(int32_t evt) {
    (void)evt;
}

template <pipe_t p>
inline void PipeBarrier() {}

// Barrier across all cores of the launch.
template <bool isAIVOnly = true>
inline void SyncAll() {
    AfTwin::SyncAllBarrier();
}

}  // namespace AscendC

#endif  // AF_TWIN_CORE_H
