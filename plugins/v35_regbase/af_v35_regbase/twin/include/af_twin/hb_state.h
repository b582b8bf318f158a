// af_twin/hb_state.h
// The data of the pipe model (the logic is in hb.h): which pipe each access belongs to, the per-core
// happens-before clocks and event flags, and the shadow memory the race check compares accesses against.
//
// Pipes of the A5 vector core (AIV) that the twin models, from the official docs
// (docs/zh/api/SIMD-API/基础API/同步控制/核内同步/核内同步能力概述.md, 表1 and 表3): PIPE_S (scalar:
// GetValue / SetValue), PIPE_V (vector calls, register vector functions, SIMT VF_CALL), PIPE_MTE2 (GM -> UB
// copies) and PIPE_MTE3 (UB -> GM copies). The cube pipes (M, MTE1, FIX) do not exist on an AIV.
#ifndef AF_TWIN_HB_STATE_H
#define AF_TWIN_HB_STATE_H

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

namespace AfTwin {

enum HbPipe : uint8_t { kPipeS = 0, kPipeV = 1, kPipeMte2 = 2, kPipeMte3 = 3 };
constexpr uint32_t kHbPipes = 4;
constexpr uint32_t kHbEventIds = 8;  // EVENT_ID0 .. EVENT_ID7 (QUE_MAX_EVENT of the official TPipe)
constexpr uint32_t kHbEvents = 40;   // >= HardEvent::MAX

inline const char* HbPipeName(uint32_t p) {
    static const char* const kNames[kHbPipes] = {"S", "V", "MTE2", "MTE3"};
    return p < kHbPipes ? kNames[p] : "?";
}

// HardEvent names in the order of the enum (core.h checks the count).
constexpr uint32_t kHbEventCount = 32;
inline const char* const kHbEventNames[kHbEvents] = {
    "MTE2_MTE1", "MTE1_MTE2", "MTE1_M",   "M_MTE1",   "MTE2_V",    "V_MTE2",    "MTE3_V",   "V_MTE3",
    "M_V",       "V_M",       "V_V",      "MTE3_MTE1", "MTE1_MTE3", "MTE1_V",   "MTE2_M",   "M_MTE2",
    "V_MTE1",    "M_FIX",     "FIX_M",    "MTE3_MTE2", "MTE2_MTE3", "S_V",      "V_S",      "S_MTE2",
    "MTE2_S",    "S_MTE3",    "MTE3_S",   "MTE2_FIX", "FIX_MTE2",  "FIX_S",    "M_S",      "FIX_MTE3"};

// A vector clock over the pipes of one core: t[q] is the last instruction of pipe q known to be complete.
struct HbClock {
    uint32_t t[kHbPipes] = {0, 0, 0, 0};
    void Join(const HbClock& o) {
        for (uint32_t q = 0; q < kHbPipes; ++q) t[q] = t[q] > o.t[q] ? t[q] : o.t[q];
    }
};

// One hardware event flag (HardEvent, event id): set by SetFlag with the source pipe's clock, consumed by
// the WaitFlag that finds it set.
struct HbFlag {
    bool set = false;
    HbClock snap;
};

// An access an API call made, waiting for the instruction it belongs to (HbCommit).
struct HbAccess {
    const void* gm = nullptr;  // the GmAlloc for a GM access, nullptr for UB
    uint64_t off = 0;          // byte offset in the allocation / in UB
    uint64_t n = 0;
    bool write = false;
    uint32_t thread = 0;  // SIMT thread + 1, 0 outside SIMT
    std::vector<uint8_t> old;  // lag mode: the UB bytes a write replaces, as they were before it
};

// Lag mode: a UB write whose effect has not yet landed for every pipe (the bytes it replaced), and bytes a
// lagged read swapped back that the next instruction sees restored.
struct HbInFlight {
    uint32_t record = 0;  // the writer (pipe << 30 | epoch)
    uint64_t off = 0;
    std::vector<uint8_t> old;
};
struct HbSwapped {
    uint64_t off = 0;
    std::vector<uint8_t> now;
};

// Per-core state of the pipe model.
struct HbCore {
    uint32_t issued[kHbPipes] = {0, 0, 0, 0};  // instructions issued per pipe (an instruction's epoch)
    HbClock vc[kHbPipes];                       // what each pipe knows to be complete
    HbFlag flags[kHbEvents][kHbEventIds];
    uint8_t eventOccupy[kHbEvents] = {};        // TPipe::AllocEventID bitmaps
    uint32_t gen = 0;                           // SyncAll barriers this core passed
    std::vector<HbAccess> pending;              // accesses of the API call being emulated
    std::vector<HbInFlight> inflight;           // lag mode: writes not yet known complete by every pipe
    std::vector<HbSwapped> swapped;             // lag mode: bytes to put back before the next instruction
    uint64_t laggedReads = 0;                   // lag mode: reads that saw a write before it landed
    bool readsAfter = false;                    // the instruction being committed reads its operands after
    // api of every instruction, by epoch - 1, as an index into `apis` (the few API names a kernel calls): two
    // bytes an instruction, where a pointer would take eight
    std::vector<uint16_t> names[kHbPipes];
    std::vector<const char*> apis;
    // UB shadow: per byte, the last write (pipe << 30 | epoch, 0 = none) and the last read per pipe
    struct Free {
        void operator()(uint32_t* p) const { std::free(p); }
    };
    std::unique_ptr<uint32_t[], Free> ubWrite;
    std::unique_ptr<uint32_t[], Free> ubRead[kHbPipes];
    uint32_t ubDirty = 0;  // shadow bytes [0, ubDirty) may be non-zero
};

// Shadow of one GM allocation: per byte the last write and the last read, each packed by HbGmRecord.
struct HbGmShadow {
    std::mutex mu;
    struct Free {
        void operator()(uint64_t* p) const { std::free(p); }
    };
    std::unique_ptr<uint64_t[], Free> write;
    std::unique_ptr<uint64_t[], Free> read;
    bool readOnly = false;  // the harness declared it an input: a kernel never writes it
};

}  // namespace AfTwin

#endif  // AF_TWIN_HB_STATE_H
