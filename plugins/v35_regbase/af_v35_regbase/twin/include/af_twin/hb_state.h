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
// 32 bytes, copied as such: a SIMT VF records millions of them.
struct HbAccess {
    const void* gm = nullptr;  // the GmAlloc for a GM access, nullptr for UB
    uint64_t off = 0;          // byte offset in the allocation / in UB
    uint64_t n = 0;
    uint32_t thread = 0;       // SIMT thread + 1, 0 outside SIMT
    uint16_t old = 0;          // lag mode: 1 + the index in HbCore::olds of the UB bytes a write replaces
    bool write = false;
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
    std::vector<std::vector<uint8_t>> olds;     // lag mode: bytes pending UB writes replace (HbAccess::old)
    std::vector<HbInFlight> inflight;           // lag mode: writes not yet known complete by every pipe
    std::vector<HbSwapped> swapped;             // lag mode: bytes to put back before the next instruction
    uint64_t laggedReads = 0;                   // lag mode: reads that saw a write before it landed
    bool readsAfter = false;                    // the instruction being committed reads its operands after
    // api of every instruction, by epoch - 1, as an index into `apis` (the few API names a kernel calls): two
    // bytes an instruction, where a pointer would take eight
    std::vector<uint16_t> names[kHbPipes];
    std::vector<const char*> apis;
    // UB shadow: the last write (pipe << 30 | epoch, 0 = none) and the last read per pipe, kept per 32-byte
    // block while one instruction's access covered the whole block (DataCopy and vector calls move whole
    // blocks: one record stands for 32 bytes), and per byte in a block a partial access split (scalar
    // GetValue / SetValue, unaligned register stores). A block is split when an access covers part of it
    // (its records copied to each of its bytes, in a slot of `bytes`) and joined again when a write covers
    // all of it (its slot freed). Few blocks are ever split, so the shadow stays small and its pages few.
    struct Free {
        void operator()(void* p) const { std::free(p); }
    };
    std::unique_ptr<uint32_t[], Free> blkWrite;  // per block, valid in blocks not split
    std::unique_ptr<uint32_t[], Free> blkRead[kHbPipes];
    std::unique_ptr<uint32_t[], Free> blkSlot;   // 0: not split; else 1 + the block's slot in `bytes`
    std::vector<uint32_t> bytes;                 // slots of (1 + kHbPipes) x 32 per-byte records: write, reads
    std::vector<uint32_t> freeSlots;
    uint32_t ubDirty = 0;  // blocks below ceil(ubDirty / 32) may hold records
};
constexpr uint32_t kHbBlockShift = 5;  // 32-byte blocks: the UB block of DataCopy and the vector calls
constexpr uint32_t kHbBlock = 1u << kHbBlockShift;
constexpr uint32_t kHbSlotWords = (1 + kHbPipes) * kHbBlock;  // a split block's records

// Shadow of one GM allocation: the last write and the last read (each packed by HbGmRecord), per 32-byte block
// while one access covered the whole block or all its bytes hold the same records, else per byte in a slot of
// `bytes` (as the UB shadow: hb_state.h's HbCore). Under 1 byte of shadow per byte of GM when few blocks are
// split, where a record per byte took 16.
struct HbGmShadow {
    std::mutex mu;
    struct Free {
        void operator()(void* p) const { std::free(p); }
    };
    std::unique_ptr<uint64_t[], Free> blkWrite;  // nullptr: not shadowed (read-only, empty, or too large)
    std::unique_ptr<uint64_t[], Free> blkRead;
    std::unique_ptr<uint32_t[], Free> blkSlot;  // 0: not split; else 1 + the block's slot in `bytes`
    std::vector<uint64_t> bytes;                // slots of 2 x 32 per-byte records: writes, then reads
    std::vector<uint32_t> freeSlots;
    bool readOnly = false;  // the harness declared it an input: a kernel never writes it
};

}  // namespace AfTwin

#endif  // AF_TWIN_HB_STATE_H
