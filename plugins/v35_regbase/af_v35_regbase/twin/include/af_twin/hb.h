// af_twin/hb.h
// The pipe model: happens-before between the asynchronous pipes of a core and between cores, and the race
// check built on it (sanitizer kind "race", on by default; AF_TWIN_RACE=off turns the memory check off).
//
// Rules, each from the official asc-devkit docs (docs/zh/api/SIMD-API/基础API/同步控制/):
// - Every API call is one instruction of one pipe (hb_state.h lists them). The scalar unit issues the
//   instructions in program order, but a pipe runs its instructions asynchronously to the others
//   (核内同步/核内同步能力概述.md "为什么需要核内同步"). Instructions of one pipe run in order but the
//   next may start before the previous one's reads and writes are done, so a dependency inside MTE2 or
//   MTE3 needs PipeBarrier<pipe> (核内同步/核内同步能力概述.md "单流水同步"; PipeBarrier(ISASI).md,
//   约束说明: overlapping DataCopy destinations). Scalar instructions are ordered by the hardware
//   (PipeBarrier(ISASI).md: no PIPE_S barrier), and on Ascend 950 so are vector instructions among
//   themselves (核内同步/关键特性说明.md "硬件保证的同步": PIPE_V and PIPE_V is guaranteed by the
//   hardware); ConfigureSync(..., strictPipeV = true) drops the latter for kernels meant to be portable.
// - SetFlag<SRC_DST>(id) runs on SRC once every earlier SRC instruction's reads and writes are done and
//   sets the flag; WaitFlag<SRC_DST>(id) blocks DST until the flag is set and clears it
//   (核内同步能力概述.md "多流水同步"). A WaitFlag with no SetFlag before it is reported
//   (sync-deadlock), a SetFlag on a flag still set (sync-event-reuse), a flag still set when the core
//   returns (sync-flag-left), an event that has no pipe pair on a vector core (sync-illegal; 表3).
// - PipeBarrier<p> orders the instructions of p; PipeBarrier<PIPE_ALL> waits for every earlier
//   instruction of every pipe (PipeBarrier(ISASI).md).
// - A pipe that waits also holds back what the scalar unit issues after the wait, so an instruction
//   issued after a WaitFlag<X_S> starts after X's instructions before the SetFlag (issue order).
// - TQue::EnQue sets and DeQue waits the queue's producer -> consumer event; FreeTensor sets and the
//   AllocTensor that reuses the buffer waits the consumer -> producer event, with event ids taken from the
//   TPipe (资源管理/TQue EnQue.md, DeQue.md; the guide's TPipe-TQue框架编程原理.md "数据依赖与同步机制").
// - SyncAll, by default, waits for every pipe (DEFAULT_SYNC_ALL_CONFIG = {PIPE_ALL, PIPE_ALL}) and
//   orders the cores (核间同步/SyncAll.md): an access before it on one core happens before every access
//   after it on any core.
// Adversarial schedule (AF_TWIN_RACE=lag): a UB write lands for a pipe only once that pipe is ordered after it;
// a vector call or UB -> GM copy reading bytes such a write made before then reads the bytes as they were, so
// a missing flag also gives wrong numbers that a differential test sees (other races are still reported).
// Race check: two accesses to overlapping UB bytes of a core, or GM bytes of any core, at least one a
// write, that happens-before does not order, abort with both sides. Two SIMT threads of one VF_CALL
// touching one byte, one of them writing, are a race too (the twin has no SIMT barrier).
// Not modelled: the order of accesses inside one register vector function or one SIMT thread (program
// order); GM reads by two pipes of one core keep only the last reader; GM allocations the harness
// declares read-only (SetGmReadOnly) are not shadowed and a write to one is reported (gm-readonly).
#ifndef AF_TWIN_HB_H
#define AF_TWIN_HB_H

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <mutex>
#include <vector>

#include "hb_state.h"
#include "runtime.h"

// The race check runs on every access of every kernel: its loops are compiled optimised even in the twin's
// -Og builds (the rest of the twin keeps the build's level).
#pragma GCC push_options
#pragma GCC optimize("O2")

namespace AfTwin {

struct HbConfig {
    bool raceCheck = true;
    bool strictPipeV = false;
    bool lag = false;  // the adversarial schedule (AF_TWIN_RACE=lag)
};
inline HbConfig gHb;
inline bool gHbEnvRead = false;

// Race check on / off and the portable V rule; AF_TWIN_RACE=off in the environment turns the check off for
// a whole process (read once, before the first launch).
inline void ConfigureSync(bool raceCheck, bool strictPipeV) {
    gHb.raceCheck = raceCheck;
    gHb.strictPipeV = strictPipeV;
    gHbEnvRead = true;
}

inline void HbReadEnv() {
    if (gHbEnvRead) return;
    gHbEnvRead = true;
    const char* v = std::getenv("AF_TWIN_RACE");
    if (v && std::strcmp(v, "off") == 0) gHb.raceCheck = false;
    if (v && std::strcmp(v, "strict") == 0) gHb.strictPipeV = true;
    if (v && std::strcmp(v, "lag") == 0) gHb.lag = true;
}

constexpr uint32_t kHbEpochBits = 30;
constexpr uint32_t kHbEpochMask = (1u << kHbEpochBits) - 1u;
constexpr uint32_t kHbNames = 1u << 22;  // api names kept per pipe for reports
constexpr size_t kHbInFlightMax = 4096;  // lag mode: writes remembered per core before they land

inline uint32_t HbUbRecord(uint32_t pipe, uint32_t epoch) { return (pipe << kHbEpochBits) | epoch; }

// GM records: core + 1 (17 bits: blockDim is at most 65535; kHbMany = several cores read), SyncAll generation
// (13 bits: more SyncAlls are refused), pipe (2), epoch (32).
constexpr uint64_t kHbMany = 0x1FFFF;
constexpr uint64_t kHbGenMask = 0x1FFF;
inline uint64_t HbGmRecord(uint64_t core1, uint64_t gen, uint64_t pipe, uint64_t epoch) {
    return (core1 << 47) | ((gen & kHbGenMask) << 34) | (pipe << 32) | epoch;
}
inline uint64_t HbGmCore1(uint64_t r) { return r >> 47; }
inline uint64_t HbGmGen(uint64_t r) { return (r >> 34) & kHbGenMask; }
inline uint32_t HbGmPipe(uint64_t r) { return static_cast<uint32_t>((r >> 32) & 3); }
inline uint32_t HbGmEpoch(uint64_t r) { return static_cast<uint32_t>(r); }

inline const char* HbName(const CoreCtx* c, uint32_t pipe, uint32_t epoch) {
    const auto& v = c->hb.names[pipe];
    return epoch >= 1 && epoch <= v.size() ? c->hb.apis[v[epoch - 1]] : "an earlier instruction";
}

// The sync a kernel owes between an earlier access on pipe `from` and a later one on pipe `to`.
inline void HbHint(char* buf, size_t size, uint32_t from, uint32_t to) {
    if (from == to) {
        std::snprintf(buf, size, "PipeBarrier<PIPE_%s>() between them is missing", HbPipeName(to));
    } else {
        std::snprintf(buf, size, "SetFlag<HardEvent::%s_%s> / WaitFlag<HardEvent::%s_%s> between them is missing",
                      HbPipeName(from), HbPipeName(to), HbPipeName(from), HbPipeName(to));
    }
}

// ---------------------------------------------------------------------------
// Per-core life cycle.
inline void HbReset(CoreCtx* c) {
    HbCore& h = c->hb;
    for (uint32_t p = 0; p < kHbPipes; ++p) {
        h.issued[p] = 0;
        h.vc[p] = HbClock{};
        h.names[p].clear();
    }
    h.apis.clear();
    for (auto& row : h.flags) {
        for (HbFlag& f : row) f = HbFlag{};
    }
    std::memset(h.eventOccupy, 0, sizeof h.eventOccupy);
    h.gen = 0;
    h.pending.clear();
    h.olds.clear();
    h.inflight.clear();
    h.swapped.clear();
    constexpr size_t kBlocks = kPhysicalUb / kHbBlock;
    if (!h.blkWrite) {
        auto words = [](size_t n) { return static_cast<uint32_t*>(std::calloc(n, sizeof(uint32_t))); };
        h.blkWrite.reset(words(kBlocks));
        for (auto& r : h.blkRead) r.reset(words(kBlocks));
        h.blkSlot.reset(words(kBlocks));
        bool ok = h.blkWrite && h.blkSlot;
        for (uint32_t q = 0; q < kHbPipes; ++q) ok = ok && h.blkRead[q];
        if (!ok) Fail("launch", "the race check could not allocate its UB shadow");
    } else if (h.ubDirty) {
        const size_t blocks = (size_t{h.ubDirty} + kHbBlock - 1) >> kHbBlockShift;
        std::memset(h.blkWrite.get(), 0, blocks * sizeof(uint32_t));
        for (auto& r : h.blkRead) std::memset(r.get(), 0, blocks * sizeof(uint32_t));
        std::memset(h.blkSlot.get(), 0, blocks * sizeof(uint32_t));
    }
    h.bytes.clear();
    h.freeSlots.clear();
    h.ubDirty = 0;
}

// ---------------------------------------------------------------------------
// Recording accesses: the API's checks call these; HbCommit then issues the instruction they belong to.
// Lag mode: the bytes a lagged read saw swapped back go back to their current values before the next API
// call touches memory (every call records its operands before it reads or writes them).
inline void HbRestore(CoreCtx* c) {
    for (HbSwapped& s : c->hb.swapped) std::memcpy(c->arena + s.off, s.now.data(), s.now.size());
    c->hb.swapped.clear();
}

inline void HbUb(CoreCtx* c, uint64_t off, uint64_t n, bool write) {
    if (!gHb.raceCheck || n == 0) return;
    if (!c->hb.swapped.empty()) HbRestore(c);
    HbAccess a;
    a.off = off;
    a.n = n;
    a.write = write;
    if (gHb.lag && write && off + n <= kPhysicalUb && c->hb.olds.size() < 0xFFFF) {
        c->hb.olds.emplace_back(c->arena + off, c->arena + off + n);
        a.old = static_cast<uint16_t>(c->hb.olds.size());
    }
    a.thread = c->inSimt ? c->simtLinear + 1 : 0;
    c->hb.pending.push_back(a);
}

inline void HbGm(CoreCtx* c, const GmAlloc* g, uint64_t off, uint64_t n, bool write) {
    if (n == 0) return;
    if (!c->hb.swapped.empty()) HbRestore(c);
    if (g->hb && g->hb->readOnly) {
        if (write)
            Fail("gm-readonly", "a kernel writes bytes [%llu, %llu) of '%s', an input the kernel only reads",
                 static_cast<unsigned long long>(off), static_cast<unsigned long long>(off + n), g->name.c_str());
        return;
    }
    if (!gHb.raceCheck) return;
    HbAccess a;
    a.gm = g;
    a.off = off;
    a.n = n;
    a.write = write;
    a.thread = c->inSimt ? c->simtLinear + 1 : 0;
    c->hb.pending.push_back(a);
}

// Operand names: an operand whose name starts with "dst" (or the bytes a StoreUnAlignPost flushes) is
// written, every other operand is read. Every check of a data-movement, vector or register API names its
// operands this way, so the race check learns the direction from the same call that checks the range.
inline bool HbWritesOperand(const char* operand) {
    return std::strncmp(operand, "dst", 3) == 0 || std::strcmp(operand, "the buffered bytes") == 0;
}

// ---------------------------------------------------------------------------
// Issuing an instruction.
[[noreturn]] inline void HbRace(CoreCtx* c, const char* api, uint32_t pipe, uint32_t epoch, bool write,
                                const char* where, uint64_t lo, uint64_t hi, const char* otherApi,
                                uint32_t otherPipe, uint32_t otherEpoch, bool otherWrite, long long otherCore) {
    char hint[160];
    if (otherCore >= 0 && otherCore != c->idx) {
        std::snprintf(hint, sizeof hint, "a SyncAll between them is missing");
    } else {
        HbHint(hint, sizeof hint, otherPipe, pipe);
    }
    char other[160];
    if (otherCore >= 0 && otherCore != c->idx) {
        std::snprintf(other, sizeof other, "core %lld (pipe %s)", otherCore, HbPipeName(otherPipe));
    } else if (otherCore == -2) {
        std::snprintf(other, sizeof other, "several cores");
    } else {
        std::snprintf(other, sizeof other, "%s (pipe %s, instruction #%u)", otherApi, HbPipeName(otherPipe),
                      otherEpoch);
    }
    Fail("race",
         "%s (pipe %s, instruction #%u) %s %s bytes [%llu, %llu) that %s %s, and nothing orders the two: %s", api,
         HbPipeName(pipe), epoch, write ? "writes" : "reads", where, static_cast<unsigned long long>(lo),
         static_cast<unsigned long long>(hi), other, otherWrite ? "wrote" : "read", hint);
}

inline bool HbOrderedUb(const HbClock& vc, uint32_t rec) {
    return vc.t[rec >> kHbEpochBits] >= (rec & kHbEpochMask);
}

// Lag mode: a read of UB bytes [lo, hi) that write `rec` made and the reader is not ordered after sees them as
// they were before the write (the write has not landed for this pipe), until the next API call. Returns false
// when the write's old bytes are not known (the read is then reported as a race).
inline bool HbLagRead(CoreCtx* c, uint32_t rec, uint64_t lo, uint64_t hi) {
    HbCore& h = c->hb;
    // the bytes before write `rec`: from its oldest recorded range holding each byte (an instruction may
    // write a byte twice, e.g. two stores of one vector function)
    std::vector<uint8_t> before(hi - lo);
    std::vector<bool> known(hi - lo, false);
    uint64_t found = 0;
    for (const HbInFlight& f : h.inflight) {
        if (f.record != rec) continue;
        const uint64_t from = std::max(lo, f.off), to = std::min(hi, f.off + f.old.size());
        for (uint64_t b = from; b < to; ++b) {
            if (known[b - lo]) continue;
            known[b - lo] = true;
            before[b - lo] = f.old[b - f.off];
            ++found;
        }
    }
    if (found != hi - lo) return false;
    h.swapped.push_back(HbSwapped{lo, std::vector<uint8_t>(c->arena + lo, c->arena + hi)});
    std::memcpy(c->arena + lo, before.data(), hi - lo);
    ++h.laggedReads;
    return true;
}

// Lag mode: writes every pipe knows complete have landed everywhere; forget them.
inline void HbLandWrites(CoreCtx* c) {
    HbCore& h = c->hb;
    auto landed = [&](const HbInFlight& f) {
        for (uint32_t p = 0; p < kHbPipes; ++p) {
            if (h.vc[p].t[f.record >> kHbEpochBits] < (f.record & kHbEpochMask)) return false;
        }
        return true;
    };
    h.inflight.erase(std::remove_if(h.inflight.begin(), h.inflight.end(), landed), h.inflight.end());
}

// Whether each of the `rows` rows of 32 per-byte records of a slot holds one value.
template <class T>
inline bool HbUniform(const T* r, uint32_t rows) {
    for (uint32_t k = 0; k < rows; ++k, r += kHbBlock) {
        for (uint32_t i = 1; i < kHbBlock; ++i) {
            if (r[i] != r[0]) return false;
        }
    }
    return true;
}

// A split block's per-byte records: its write records, then each pipe's read records (kHbBlock each).
inline uint32_t* HbSlot(HbCore& h, uint64_t blk) {
    return h.bytes.data() + size_t{h.blkSlot[blk] - 1} * kHbSlotWords;
}
inline const uint32_t* HbSlot(const HbCore& h, uint64_t blk) {
    return h.bytes.data() + size_t{h.blkSlot[blk] - 1} * kHbSlotWords;
}

// The UB shadow's write record of byte b, and its read record for pipe q (block or byte, whichever holds it).
inline uint32_t HbUbWriteAt(const HbCore& h, uint64_t b) {
    const uint64_t blk = b >> kHbBlockShift;
    return h.blkSlot[blk] ? HbSlot(h, blk)[b & (kHbBlock - 1)] : h.blkWrite[blk];
}
inline uint32_t HbUbReadAt(const HbCore& h, uint32_t q, uint64_t b) {
    const uint64_t blk = b >> kHbBlockShift;
    return h.blkSlot[blk] ? HbSlot(h, blk)[(1 + q) * kHbBlock + (b & (kHbBlock - 1))] : h.blkRead[q][blk];
}

// Where the run of bytes from b with the same write (q < 0) or pipe-q read record ends, at most `end`; the
// byte range a race report names.
inline uint64_t HbUbRunEnd(const HbCore& h, int q, uint32_t rec, uint64_t b, uint64_t end) {
    while (b < end && (q < 0 ? HbUbWriteAt(h, b) : HbUbReadAt(h, static_cast<uint32_t>(q), b)) == rec) ++b;
    return b;
}

// The records of block `blk` move to its bytes, in a slot: an access is about to cover part of it.
inline uint32_t* HbSplitBlock(HbCore& h, uint64_t blk) {
    uint32_t slot;
    if (!h.freeSlots.empty()) {
        slot = h.freeSlots.back();
        h.freeSlots.pop_back();
    } else {
        slot = static_cast<uint32_t>(h.bytes.size() / kHbSlotWords);
        h.bytes.resize(h.bytes.size() + kHbSlotWords);
    }
    h.blkSlot[blk] = slot + 1;
    uint32_t* r = HbSlot(h, blk);
    std::fill(r, r + kHbBlock, h.blkWrite[blk]);
    for (uint32_t q = 0; q < kHbPipes; ++q) std::fill(r + (1 + q) * kHbBlock, r + (2 + q) * kHbBlock, h.blkRead[q][blk]);
    return r;
}

// Checks bytes [lo, hi) of an access, whose write record is `wr` (one record for all of them), against the
// accessing instruction: a race is reported, or in lag mode a read is served the bytes before the write.
inline void HbCheckUbWrite(CoreCtx* c, const HbAccess& a, uint32_t pipe, uint32_t epoch, const char* api,
                           uint32_t wr, uint64_t lo, uint64_t hi, uint64_t end) {
    HbCore& h = c->hb;
    if (!wr || wr == HbUbRecord(pipe, epoch) || HbOrderedUb(h.vc[pipe], wr)) return;
    if (gHb.lag && h.readsAfter && !a.write && HbLagRead(c, wr, lo, hi)) return;
    HbRace(c, api, pipe, epoch, a.write, "UB", lo, HbUbRunEnd(h, -1, wr, lo, end),
           HbName(c, wr >> kHbEpochBits, wr & kHbEpochMask), wr >> kHbEpochBits, wr & kHbEpochMask, true, -1);
}

// A write of the bytes from `lo` against each pipe's last read of them, `rd(q)`.
template <class ReadOf>
inline void HbCheckUbReads(CoreCtx* c, uint32_t pipe, uint32_t epoch, const char* api, uint64_t lo, uint64_t end,
                           ReadOf rd) {
    const HbClock& vc = c->hb.vc[pipe];
    for (uint32_t q = 0; q < kHbPipes; ++q) {
        const uint32_t r = rd(q);
        if (r && !(q == pipe && r == epoch) && vc.t[q] < r)
            HbRace(c, api, pipe, epoch, true, "UB", lo, HbUbRunEnd(c->hb, static_cast<int>(q), r, lo, end),
                   HbName(c, q, r), q, r, false, -1);
    }
}

inline void HbCommitUb(CoreCtx* c, const HbAccess& a, uint32_t pipe, uint32_t epoch, const char* api) {
    HbCore& h = c->hb;
    const uint32_t me = HbUbRecord(pipe, epoch);
    const uint64_t end = std::min<uint64_t>(a.off + a.n, kPhysicalUb);
    if (a.off >= end) return;
    for (uint64_t blk = a.off >> kHbBlockShift; blk <= (end - 1) >> kHbBlockShift; ++blk) {
        const uint64_t base = blk << kHbBlockShift;
        const uint64_t lo = std::max(a.off, base), hi = std::min(end, base + kHbBlock);
        const bool whole = lo == base && hi == base + kHbBlock;
        if (whole && !h.blkSlot[blk]) {
            // one record for the block's 32 bytes
            HbCheckUbWrite(c, a, pipe, epoch, api, h.blkWrite[blk], lo, hi, end);
            if (a.write) {
                HbCheckUbReads(c, pipe, epoch, api, lo, end, [&](uint32_t q) { return h.blkRead[q][blk]; });
                h.blkWrite[blk] = me;
                for (uint32_t q = 0; q < kHbPipes; ++q) h.blkRead[q][blk] = 0;
            } else {
                h.blkRead[pipe][blk] = epoch;
            }
            continue;
        }
        uint32_t* r = h.blkSlot[blk] ? HbSlot(h, blk) : HbSplitBlock(h, blk);
        const uint64_t i0 = lo - base, i1 = hi - base;
        for (uint64_t i = i0; i < i1; ++i) {
            uint64_t e = i + 1;
            while (e < i1 && r[e] == r[i]) ++e;  // bytes of one write are checked together
            HbCheckUbWrite(c, a, pipe, epoch, api, r[i], base + i, base + e, end);
            i = e - 1;
        }
        if (a.write) {
            for (uint64_t i = i0; i < i1; ++i)
                HbCheckUbReads(c, pipe, epoch, api, base + i, end,
                               [&](uint32_t q) { return r[(1 + q) * kHbBlock + i]; });
            if (whole) {  // the write covers the block: one record again
                h.blkWrite[blk] = me;
                for (uint32_t q = 0; q < kHbPipes; ++q) h.blkRead[q][blk] = 0;
                h.freeSlots.push_back(h.blkSlot[blk] - 1);
                h.blkSlot[blk] = 0;
                continue;
            }
            std::fill(r + i0, r + i1, me);
            for (uint32_t q = 0; q < kHbPipes; ++q) std::fill(r + (1 + q) * kHbBlock + i0, r + (1 + q) * kHbBlock + i1, 0u);
        } else {
            std::fill(r + (1 + pipe) * kHbBlock + i0, r + (1 + pipe) * kHbBlock + i1, epoch);
        }
        // an access ending at the block's end (element-wise writes or reads in address order) may leave its
        // bytes with one record each again
        if (i1 == kHbBlock && HbUniform(r, 1 + kHbPipes)) {
            h.blkWrite[blk] = r[0];
            for (uint32_t q = 0; q < kHbPipes; ++q) h.blkRead[q][blk] = r[(1 + q) * kHbBlock];
            h.freeSlots.push_back(h.blkSlot[blk] - 1);
            h.blkSlot[blk] = 0;
        }
    }
    if (a.write && a.old) {
        // bounded: a write dropped here is no longer lagged, and a read racing with it is reported instead
        if (h.inflight.size() >= kHbInFlightMax) h.inflight.erase(h.inflight.begin());
        h.inflight.push_back(HbInFlight{me, a.off, std::move(h.olds[a.old - 1])});
    }
    if (end > h.ubDirty) h.ubDirty = static_cast<uint32_t>(end);
}

inline bool HbOrderedGm(const CoreCtx* c, const HbClock& vc, uint64_t rec) {
    const uint64_t core1 = HbGmCore1(rec);
    if (core1 == kHbMany || core1 != static_cast<uint64_t>(c->idx) + 1) return HbGmGen(rec) < (c->hb.gen & kHbGenMask);
    return vc.t[HbGmPipe(rec)] >= HbGmEpoch(rec);
}

// A split GM block's per-byte records: its write records, then its read records (kHbBlock each).
inline uint64_t* HbGmSlot(HbGmShadow& s, uint64_t blk) {
    return s.bytes.data() + size_t{s.blkSlot[blk] - 1} * 2 * kHbBlock;
}
inline uint64_t HbGmAt(HbGmShadow& s, bool read, uint64_t b) {
    const uint64_t blk = b >> kHbBlockShift;
    if (!s.blkSlot[blk]) return read ? s.blkRead[blk] : s.blkWrite[blk];
    return HbGmSlot(s, blk)[(read ? kHbBlock : 0) + (b & (kHbBlock - 1))];
}
inline uint64_t HbGmRunEnd(HbGmShadow& s, bool read, uint64_t rec, uint64_t b, uint64_t end) {
    while (b < end && HbGmAt(s, read, b) == rec) ++b;
    return b;
}

inline uint64_t* HbGmSplit(HbGmShadow& s, uint64_t blk) {
    uint32_t slot;
    if (!s.freeSlots.empty()) {
        slot = s.freeSlots.back();
        s.freeSlots.pop_back();
    } else {
        slot = static_cast<uint32_t>(s.bytes.size() / (2 * kHbBlock));
        s.bytes.resize(s.bytes.size() + 2 * kHbBlock);
    }
    s.blkSlot[blk] = slot + 1;
    uint64_t* r = HbGmSlot(s, blk);
    std::fill(r, r + kHbBlock, s.blkWrite[blk]);
    std::fill(r + kHbBlock, r + 2 * kHbBlock, s.blkRead[blk]);
    return r;
}

// The caller holds the shadow's lock (cores run on threads of their own).
inline void HbCommitGm(CoreCtx* c, const HbAccess& a, uint32_t pipe, uint32_t epoch, const char* api) {
    const GmAlloc* g = static_cast<const GmAlloc*>(a.gm);
    HbGmShadow* s = g->hb.get();
    if (!s || !s->blkWrite) return;  // not shadowed (read-only, or too large to shadow)
    HbCore& h = c->hb;
    const HbClock& vc = h.vc[pipe];
    const uint64_t me = HbGmRecord(static_cast<uint64_t>(c->idx) + 1, h.gen, pipe, epoch);
    if (h.gen > kHbGenMask) Fail("launch", "the race check orders at most %llu SyncAll barriers",
                                 static_cast<unsigned long long>(kHbGenMask));
    const uint64_t gen = h.gen;
    const uint64_t myCore1 = static_cast<uint64_t>(c->idx) + 1;
    // the read record after this instruction reads bytes whose read record was `rd`
    auto readAfter = [&](uint64_t rd) {
        const bool otherCoreNow = rd && HbGmCore1(rd) != myCore1 && HbGmGen(rd) == gen;
        return otherCoreNow ? HbGmRecord(kHbMany, gen, 0, 0) : me;
    };
    auto checkWrite = [&](uint64_t wr, uint64_t lo, uint64_t end) {
        if (!wr || wr == me || HbOrderedGm(c, vc, wr)) return;
        const long long core = static_cast<long long>(HbGmCore1(wr)) - 1;
        HbRace(c, api, pipe, epoch, a.write, ("GM '" + g->name + "'").c_str(), lo, HbGmRunEnd(*s, false, wr, lo, end),
               core == c->idx ? HbName(c, HbGmPipe(wr), HbGmEpoch(wr)) : "", HbGmPipe(wr), HbGmEpoch(wr), true, core);
    };
    auto checkRead = [&](uint64_t rd, uint64_t lo, uint64_t end) {
        if (!rd || rd == me || HbOrderedGm(c, vc, rd)) return;
        const uint64_t core1 = HbGmCore1(rd);
        const long long core = core1 == kHbMany ? -2 : static_cast<long long>(core1) - 1;
        HbRace(c, api, pipe, epoch, true, ("GM '" + g->name + "'").c_str(), lo, HbGmRunEnd(*s, true, rd, lo, end),
               core == c->idx ? HbName(c, HbGmPipe(rd), HbGmEpoch(rd)) : "", HbGmPipe(rd), HbGmEpoch(rd), false, core);
    };
    const uint64_t end = std::min<uint64_t>(a.off + a.n, g->bytes);
    if (a.off >= end) return;
    for (uint64_t blk = a.off >> kHbBlockShift; blk <= (end - 1) >> kHbBlockShift; ++blk) {
        const uint64_t base = blk << kHbBlockShift;
        const uint64_t lo = std::max(a.off, base), hi = std::min(end, base + kHbBlock);
        const bool whole = lo == base && hi == base + kHbBlock;
        if (whole && !s->blkSlot[blk]) {
            checkWrite(s->blkWrite[blk], lo, end);
            if (a.write) {
                checkRead(s->blkRead[blk], lo, end);
                s->blkWrite[blk] = me;
                s->blkRead[blk] = 0;
            } else {
                s->blkRead[blk] = readAfter(s->blkRead[blk]);
            }
            continue;
        }
        uint64_t* r = s->blkSlot[blk] ? HbGmSlot(*s, blk) : HbGmSplit(*s, blk);
        const uint64_t i0 = lo - base, i1 = hi - base;
        for (uint64_t i = i0; i < i1; ++i) {
            checkWrite(r[i], base + i, end);
            if (a.write) checkRead(r[kHbBlock + i], base + i, end);
        }
        for (uint64_t i = i0; i < i1; ++i) {
            if (a.write) {
                r[i] = me;
                r[kHbBlock + i] = 0;
            } else {
                r[kHbBlock + i] = readAfter(r[kHbBlock + i]);
            }
        }
        if (i1 == kHbBlock && HbUniform(r, 2)) {  // the block's bytes hold one record again
            s->blkWrite[blk] = r[0];
            s->blkRead[blk] = r[kHbBlock];
            s->freeSlots.push_back(s->blkSlot[blk] - 1);
            s->blkSlot[blk] = 0;
        }
    }
}

// SIMT threads of one VF_CALL: one byte touched by two threads, one of them writing, is a race. Each access is
// an interval of host addresses. The intervals are swept in address order, keeping the two earlier writes
// (and the two earlier accesses) that reach furthest from two different threads: an interval that starts
// before one of them ends overlaps it. So the check costs a sort (often none: threads run in address order)
// and one pass over the accesses, not a pass over the bytes.
struct HbSpan {
    uintptr_t lo, hi;
    const HbAccess* a;
};
// The SIMT accesses of the instruction being committed, in address order (HbCheckThreads); kept between calls:
// a VF's accesses can be millions.
inline thread_local std::vector<HbSpan> gHbSpans;

// Sorts spans by start address, stably. Threads mostly touch interleaved arithmetic runs (thread t: elements t,
// t + T, t + 2T, ...), which comparison sorts handle slowly; a two-pass radix sort over the start's offset from
// the lowest start (when the spans lie within 4 GiB) takes linear time.
inline void HbSortSpans(std::vector<HbSpan>& all) {
    auto byLo = [](const HbSpan& x, const HbSpan& y) { return x.lo < y.lo; };
    if (std::is_sorted(all.begin(), all.end(), byLo)) return;
    uintptr_t lo = all.front().lo, hi = lo;
    for (const HbSpan& s : all) {
        lo = std::min(lo, s.lo);
        hi = std::max(hi, s.lo);
    }
    if (hi - lo > 0xFFFFFFFFu || all.size() > 0xFFFFFFFFu) {
        std::stable_sort(all.begin(), all.end(), byLo);
        return;
    }
    static thread_local std::vector<HbSpan> tmp;
    tmp.resize(all.size());
    std::vector<uint32_t> count(1u << 16);
    std::vector<HbSpan>* from = &all;
    std::vector<HbSpan>* to = &tmp;
    for (uint32_t shift = 0; shift < 32; shift += 16) {
        std::fill(count.begin(), count.end(), 0u);
        for (const HbSpan& s : *from) ++count[((s.lo - lo) >> shift) & 0xFFFF];
        uint32_t sum = 0;
        for (uint32_t& k : count) {
            const uint32_t n = k;
            k = sum;
            sum += n;
        }
        for (const HbSpan& s : *from) (*to)[count[((s.lo - lo) >> shift) & 0xFFFF]++] = s;
        std::swap(from, to);
    }
    // two passes: the sorted spans are back in `all`
}

inline void HbCheckThreads(CoreCtx* c, const char* api) {
    using Span = HbSpan;
    std::vector<Span>& all = gHbSpans;
    all.clear();
    bool anyWrite = false;
    for (const HbAccess& a : c->hb.pending) {
        if (a.thread == 0) continue;
        const GmAlloc* g = static_cast<const GmAlloc*>(a.gm);
        const uintptr_t base = (g ? g->base : reinterpret_cast<uintptr_t>(c->arena)) + a.off;
        all.push_back(Span{base, base + a.n, &a});
        anyWrite = anyWrite || a.write;
    }
    HbSortSpans(all);
    if (!anyWrite) return;
    // the span reaching furthest, and the one reaching furthest among the other threads'
    struct Reach {
        const Span* first = nullptr;
        const Span* second = nullptr;
        void Add(const Span& s) {
            if (first && s.a->thread == first->a->thread) {
                if (s.hi > first->hi) first = &s;
            } else if (!first || s.hi > first->hi) {
                second = first;
                first = &s;
            } else if (!second || s.hi > second->hi) {
                second = &s;
            }
        }
        const Span* Other(const Span& s) const {  // the furthest-reaching span of another thread than s's
            return first && first->a->thread != s.a->thread ? first : second;
        }
    } writes, any;
    for (const Span& s : all) {
        const Span* o = writes.Other(s);
        if (!(o && o->hi > s.lo) && s.a->write) o = any.Other(s);
        if (o && o->hi > s.lo) {
            // report the access that ran later against the one before it
            const HbAccess& later = *std::max(s.a, o->a);
            const HbAccess& earlier = *std::min(s.a, o->a);
            const GmAlloc* g = static_cast<const GmAlloc*>(later.gm);
            const uintptr_t at = std::max(o->lo, s.lo);
            const uintptr_t base = g ? g->base : reinterpret_cast<uintptr_t>(c->arena);
            Fail("race",
                 "%s: SIMT thread %u %s %s byte %llu that thread %u %s, and no barrier orders the two threads", api,
                 later.thread - 1, later.write ? "writes" : "reads", g ? ("GM '" + g->name + "'").c_str() : "UB",
                 static_cast<unsigned long long>(at - base), earlier.thread - 1, earlier.write ? "wrote" : "read");
        }
        any.Add(s);
        if (s.a->write) writes.Add(s);
    }
}

// The index of `api` among the names the core's instructions used (API names are string literals: the last
// one found is tried first, then the rest; a kernel calls a few dozen).
inline uint16_t HbApiIndex(HbCore& h, const char* api) {
    static thread_local size_t last = 0;
    if (last < h.apis.size() && h.apis[last] == api) return static_cast<uint16_t>(last);
    for (size_t i = 0; i < h.apis.size(); ++i) {
        if (h.apis[i] == api) return static_cast<uint16_t>(last = i);
    }
    if (h.apis.size() == 0xFFFF) return 0;  // never in practice; the report then names another api
    h.apis.push_back(api);
    return static_cast<uint16_t>(last = h.apis.size() - 1);
}

// Issues one instruction of `pipe` named `api` and checks and records the accesses the call made;
// `readsAfter`: the call reads its operands after this (a memory vector call, a scalar read), so in lag
// mode it can be made to read what a write not yet landed replaced.
//
// HbCommit and the checks only it calls are most of the race check's code. A kernel built beside an object
// compiled with AF_TWIN_INSTANTIATE (the twin runner's harness main; instances.h describes both defines)
// declares it and calls that object's one copy instead of compiling the check again; every other build
// keeps the inline definition.
#if defined(AF_TWIN_EXTERN_INSTANCES)
void HbCommit(CoreCtx* c, uint32_t pipe, const char* api, bool readsAfter = false);
#else
#if defined(AF_TWIN_INSTANTIATE)
#define AF_TWIN_HB_LINKAGE
void HbCommit(CoreCtx* c, uint32_t pipe, const char* api, bool readsAfter = false);
#else
#define AF_TWIN_HB_LINKAGE inline
inline void HbCommit(CoreCtx* c, uint32_t pipe, const char* api, bool readsAfter = false);
#endif
AF_TWIN_HB_LINKAGE void HbCommit(CoreCtx* c, uint32_t pipe, const char* api, bool readsAfter) {
    HbCore& h = c->hb;
    h.readsAfter = readsAfter;
    if (!h.swapped.empty()) HbRestore(c);
    if (!h.inflight.empty()) HbLandWrites(c);
    if (pipe != kPipeS) {
        // what the scalar unit knows complete when it issues this instruction (not its own accesses)
        for (uint32_t q = 0; q < kHbPipes; ++q) {
            if (q != kPipeS && h.vc[kPipeS].t[q] > h.vc[pipe].t[q]) h.vc[pipe].t[q] = h.vc[kPipeS].t[q];
        }
    }
    if (pipe == kPipeS || (pipe == kPipeV && !gHb.strictPipeV)) h.vc[pipe].t[pipe] = h.issued[pipe];
    const uint32_t epoch = ++h.issued[pipe];
    if (epoch > kHbEpochMask) Fail("launch", "the race check counts at most %u instructions a pipe", kHbEpochMask);
    if (h.names[pipe].size() < kHbNames) h.names[pipe].push_back(HbApiIndex(h, api));
    if (h.pending.empty()) return;
    gHbSpans.clear();
    if (pipe == kPipeV) HbCheckThreads(c, api);
    std::unique_lock<std::mutex> lock;  // the GM shadow last locked, held while accesses to it follow
    const GmAlloc* locked = nullptr;
    // SIMT threads' accesses are committed in address order (one instruction: the order changes no verdict),
    // so the 32-byte blocks that threads write element by element are completed one after another and their
    // shadow joins again at once; the other accesses in program order.
    size_t next = 0;
    for (size_t k = 0; k < h.pending.size() + gHbSpans.size(); ++k) {
        const HbAccess* ap;
        if (k < h.pending.size()) {
            ap = &h.pending[k];
            if (ap->thread != 0 && pipe == kPipeV) continue;  // in gHbSpans
        } else {
            ap = gHbSpans[next++].a;
        }
        const HbAccess& a = *ap;
        if (a.gm) {
            const GmAlloc* g = static_cast<const GmAlloc*>(a.gm);
            if (g != locked && g->hb) {
                lock = std::unique_lock<std::mutex>(g->hb->mu);
                locked = g;
            }
            HbCommitGm(c, a, pipe, epoch, api);
        } else {
            HbCommitUb(c, a, pipe, epoch, api);
        }
    }
    h.pending.clear();
    h.olds.clear();
}
#undef AF_TWIN_HB_LINKAGE
#endif

// A scalar access (GetValue / SetValue) is a PIPE_S instruction of its own, except inside a SIMT or register
// vector function, whose accesses belong to the function's one PIPE_V instruction.
inline void HbScalar(CoreCtx* c, const char* api) {
    if (c && !c->inSimt && !c->inRegVf) HbCommit(c, kPipeS, api, true);
}

// ---------------------------------------------------------------------------
// Synchronisation.
inline void HbBarrier(CoreCtx* c, uint32_t pipe) {
    HbCommit(c, pipe, "PipeBarrier");
    c->hb.vc[pipe].t[pipe] = c->hb.issued[pipe];
}

inline void HbBarrierAll(CoreCtx* c) {
    HbCore& h = c->hb;
    for (uint32_t p = 0; p < kHbPipes; ++p) {
        for (uint32_t q = 0; q < kHbPipes; ++q) h.vc[p].t[q] = h.issued[q];
    }
}

inline HbFlag& HbFlagOf(CoreCtx* c, uint32_t event, int32_t id, const char* api, const char* name) {
    if (id < 0 || static_cast<uint32_t>(id) >= kHbEventIds)
        Fail("api-params", "%s<HardEvent::%s>(%d): event ids are 0 .. %u", api, name, id, kHbEventIds - 1);
    return c->hb.flags[event][id];
}

inline void HbSetFlag(CoreCtx* c, uint32_t src, uint32_t event, int32_t id, const char* name) {
    HbFlag& f = HbFlagOf(c, event, id, "SetFlag", name);
    if (f.set)
        Fail("sync-event-reuse",
             "SetFlag<HardEvent::%s>(%d) while that flag is still set: no WaitFlag consumed the previous SetFlag "
             "(take another event id, e.g. from TPipe::AllocEventID)",
             name, id);
    HbCommit(c, src, "SetFlag");
    f.set = true;
    f.snap = c->hb.vc[src];
    f.snap.t[src] = c->hb.issued[src];  // every earlier instruction of the source pipe is done
}

inline void HbWaitFlag(CoreCtx* c, uint32_t dst, uint32_t event, int32_t id, const char* name) {
    HbFlag& f = HbFlagOf(c, event, id, "WaitFlag", name);
    if (!f.set)
        Fail("sync-deadlock",
             "WaitFlag<HardEvent::%s>(%d) with no SetFlag<HardEvent::%s>(%d) before it: on the device the "
             "waiting pipe blocks until one comes, and none does",
             name, id, name, id);
    HbCommit(c, dst, "WaitFlag");
    c->hb.vc[dst].Join(f.snap);
    f.set = false;
}

// TPipe::AllocEventID / ReleaseEventID / FetchEventID: the lowest id of the event not taken.
inline int32_t HbFetchId(CoreCtx* c, uint32_t event, const char* name) {
    const uint8_t occ = c->hb.eventOccupy[event];
    for (int32_t id = 0; id < static_cast<int32_t>(kHbEventIds); ++id) {
        if (!(occ & (1u << id))) return id;
    }
    Fail("sync-event-reuse", "TPipe::AllocEventID<HardEvent::%s>: all %u event ids are taken", name, kHbEventIds);
}

inline int32_t HbAllocId(CoreCtx* c, uint32_t event, const char* name) {
    const int32_t id = HbFetchId(c, event, name);
    c->hb.eventOccupy[event] = static_cast<uint8_t>(c->hb.eventOccupy[event] | (1u << id));
    return id;
}

inline void HbReleaseId(CoreCtx* c, uint32_t event, int32_t id, const char* name) {
    if (id < 0 || static_cast<uint32_t>(id) >= kHbEventIds)
        Fail("api-params", "TPipe::ReleaseEventID<HardEvent::%s>(%d): event ids are 0 .. %u", name, id,
             kHbEventIds - 1);
    c->hb.eventOccupy[event] = static_cast<uint8_t>(c->hb.eventOccupy[event] & ~(1u << id));
}

// Mutation testing (tools/sync_mutants.py): a flag pair moved from source pipe `from` to `to` by mutant `id`
// is about to be set. It orders at least what the original would have when `to` already knows complete every
// instruction `from` would have carried (its own, and what it knew of the other pipes); where it does not,
// the mutant's bit is recorded (report counter "uncovered<word>"). A surviving moved flag that was never
// weaker is an equivalent mutant: it orders a superset of what the original ordered.
inline void MoveCovers(uint32_t id, uint32_t from, uint32_t to) {
    CoreCtx* c = tCore;
    if (!c) return;
    if (id >= kMaxProbes || from >= kHbPipes || to >= kHbPipes)
        Fail("api-params", "MoveCovers(%u, %u, %u): at most %u mutants of %u pipes", id, from, to, kMaxProbes,
             kHbPipes);
    const HbCore& h = c->hb;
    for (uint32_t q = 0; q < kHbPipes; ++q) {
        const uint32_t was = q == from ? h.issued[from] : h.vc[from].t[q];
        const uint32_t now = q == to ? h.issued[to] : h.vc[to].t[q];
        if (now < was) {
            gState.moveUncovered[id / 64].fetch_or(uint64_t{1} << (id % 64), std::memory_order_relaxed);
            return;
        }
    }
}

// The core returns from the kernel: nothing may be left pending.
inline void HbCoreEnd(CoreCtx* c) {
    HbCore& h = c->hb;
    HbRestore(c);
    h.inflight.clear();
    if (!h.pending.empty()) Fail("launch", "twin bug: %zu recorded accesses belong to no instruction", h.pending.size());
    for (uint32_t e = 0; e < kHbEvents; ++e) {
        for (uint32_t id = 0; id < kHbEventIds; ++id) {
            if (h.flags[e][id].set)
                Fail("sync-flag-left",
                     "the kernel returned with HardEvent::%s event id %u still set: a SetFlag (or EnQue / "
                     "FreeTensor) that no WaitFlag (DeQue / AllocTensor) consumed",
                     kHbEventNames[e] ? kHbEventNames[e] : "?", id);
        }
    }
}

// A launch starts: every allocation not declared read-only gets a fresh zeroed shadow (calloc, so only the
// pages an access touches take memory); one too large to shadow is left unchecked.
inline void HbLaunchGm() {
    for (auto& a : gState.gm) {
        HbGmShadow& s = *a->hb;
        s.blkWrite.reset();
        s.blkRead.reset();
        s.blkSlot.reset();
        s.bytes.clear();
        s.freeSlots.clear();
        if (s.readOnly || !gHb.raceCheck || a->bytes == 0) continue;
        const size_t blocks = (a->bytes + kHbBlock - 1) >> kHbBlockShift;
        auto* w = static_cast<uint64_t*>(std::calloc(blocks, sizeof(uint64_t)));
        auto* r = static_cast<uint64_t*>(std::calloc(blocks, sizeof(uint64_t)));
        auto* k = static_cast<uint32_t*>(std::calloc(blocks, sizeof(uint32_t)));
        if (!w || !r || !k) {
            std::free(w);
            std::free(r);
            std::free(k);
            continue;
        }
        s.blkWrite.reset(w);
        s.blkRead.reset(r);
        s.blkSlot.reset(k);
    }
}

// The harness declares an input allocation read-only: it is not shadowed, and a kernel write to it fails.
inline void SetGmReadOnly(const void* base) {
    const GmAlloc* a = GmAllocAt(reinterpret_cast<uintptr_t>(base));
    if (!a || a->base != reinterpret_cast<uintptr_t>(base))
        Fail("launch", "SetGmReadOnly(%p): not the start of a registered allocation", base);
    a->hb->readOnly = true;
}

}  // namespace AfTwin

#pragma GCC pop_options

#endif  // AF_TWIN_HB_H
