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
    h.inflight.clear();
    h.swapped.clear();
    if (!h.ubWrite) {
        h.ubWrite.reset(static_cast<uint32_t*>(std::calloc(kPhysicalUb, sizeof(uint32_t))));
        for (auto& r : h.ubRead) r.reset(static_cast<uint32_t*>(std::calloc(kPhysicalUb, sizeof(uint32_t))));
        if (!h.ubWrite) Fail("launch", "the race check could not allocate its UB shadow");
        for (auto& r : h.ubRead) {
            if (!r) Fail("launch", "the race check could not allocate its UB shadow");
        }
    } else if (h.ubDirty) {
        std::memset(h.ubWrite.get(), 0, size_t{h.ubDirty} * sizeof(uint32_t));
        for (auto& r : h.ubRead) std::memset(r.get(), 0, size_t{h.ubDirty} * sizeof(uint32_t));
    }
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
    if (gHb.lag && write && off + n <= kPhysicalUb) a.old.assign(c->arena + off, c->arena + off + n);
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

inline void HbCommitUb(CoreCtx* c, const HbAccess& a, uint32_t pipe, uint32_t epoch, const char* api) {
    HbCore& h = c->hb;
    const HbClock& vc = h.vc[pipe];
    const uint32_t me = HbUbRecord(pipe, epoch);
    uint32_t* w = h.ubWrite.get();
    const uint64_t end = std::min<uint64_t>(a.off + a.n, kPhysicalUb);
    for (uint64_t b = a.off; b < end; ++b) {
        const uint32_t wr = w[b];
        if (wr && wr != me && !HbOrderedUb(vc, wr)) {
            uint64_t e = b + 1;
            while (e < end && w[e] == wr) ++e;
            if (gHb.lag && c->hb.readsAfter && !a.write && HbLagRead(c, wr, b, e)) {
                b = e - 1;
                continue;
            }
            HbRace(c, api, pipe, epoch, a.write, "UB", b, e, HbName(c, wr >> kHbEpochBits, wr & kHbEpochMask),
                   wr >> kHbEpochBits, wr & kHbEpochMask, true, -1);
        }
        if (a.write) {
            for (uint32_t q = 0; q < kHbPipes; ++q) {
                const uint32_t rd = h.ubRead[q][b];
                if (rd && !(q == pipe && rd == epoch) && vc.t[q] < rd) {
                    uint64_t e = b + 1;
                    while (e < end && h.ubRead[q][e] == rd) ++e;
                    HbRace(c, api, pipe, epoch, true, "UB", b, e, HbName(c, q, rd), q, rd, false, -1);
                }
            }
        }
    }
    if (a.write && gHb.lag && !a.old.empty()) {
        // bounded: a write dropped here is no longer lagged, and a read racing with it is reported instead
        if (h.inflight.size() >= kHbInFlightMax) h.inflight.erase(h.inflight.begin());
        h.inflight.push_back(HbInFlight{me, a.off, a.old});
    }
    if (a.write) {
        std::fill(w + a.off, w + end, me);
        for (uint32_t q = 0; q < kHbPipes; ++q) std::memset(h.ubRead[q].get() + a.off, 0, (end - a.off) * 4);
    } else {
        std::fill(h.ubRead[pipe].get() + a.off, h.ubRead[pipe].get() + end, epoch);
    }
    if (end > h.ubDirty) h.ubDirty = static_cast<uint32_t>(end);
}

inline bool HbOrderedGm(const CoreCtx* c, const HbClock& vc, uint64_t rec) {
    const uint64_t core1 = HbGmCore1(rec);
    if (core1 == kHbMany || core1 != static_cast<uint64_t>(c->idx) + 1) return HbGmGen(rec) < (c->hb.gen & kHbGenMask);
    return vc.t[HbGmPipe(rec)] >= HbGmEpoch(rec);
}

inline void HbCommitGm(CoreCtx* c, const HbAccess& a, uint32_t pipe, uint32_t epoch, const char* api) {
    const GmAlloc* g = static_cast<const GmAlloc*>(a.gm);
    HbGmShadow* s = g->hb.get();
    if (!s || !s->write) return;  // not shadowed (read-only, or too large to shadow)
    HbCore& h = c->hb;
    const HbClock& vc = h.vc[pipe];
    const uint64_t me = HbGmRecord(static_cast<uint64_t>(c->idx) + 1, h.gen, pipe, epoch);
    std::lock_guard<std::mutex> lock(s->mu);
    const uint64_t end = std::min<uint64_t>(a.off + a.n, g->bytes);
    for (uint64_t b = a.off; b < end; ++b) {
        const uint64_t wr = s->write[b];
        if (wr && wr != me && !HbOrderedGm(c, vc, wr)) {
            uint64_t e = b + 1;
            while (e < end && s->write[e] == wr) ++e;
            const long long core = static_cast<long long>(HbGmCore1(wr)) - 1;
            HbRace(c, api, pipe, epoch, a.write, ("GM '" + g->name + "'").c_str(), b, e,
                   core == c->idx ? HbName(c, HbGmPipe(wr), HbGmEpoch(wr)) : "", HbGmPipe(wr), HbGmEpoch(wr), true,
                   core);
        }
        if (a.write) {
            const uint64_t rd = s->read[b];
            if (rd && rd != me && !HbOrderedGm(c, vc, rd)) {
                uint64_t e = b + 1;
                while (e < end && s->read[e] == rd) ++e;
                const uint64_t core1 = HbGmCore1(rd);
                const long long core = core1 == kHbMany ? -2 : static_cast<long long>(core1) - 1;
                HbRace(c, api, pipe, epoch, true, ("GM '" + g->name + "'").c_str(), b, e,
                       core == c->idx ? HbName(c, HbGmPipe(rd), HbGmEpoch(rd)) : "", HbGmPipe(rd), HbGmEpoch(rd),
                       false, core);
            }
        }
    }
    if (h.gen > kHbGenMask) Fail("launch", "the race check orders at most %llu SyncAll barriers",
                                 static_cast<unsigned long long>(kHbGenMask));
    const uint64_t gen = h.gen;
    for (uint64_t b = a.off; b < end; ++b) {
        if (a.write) {
            s->write[b] = me;
            s->read[b] = 0;
            continue;
        }
        const uint64_t rd = s->read[b];
        const uint64_t core1 = HbGmCore1(rd);
        const bool otherCoreNow = rd && core1 != static_cast<uint64_t>(c->idx) + 1 && HbGmGen(rd) == gen;
        s->read[b] = otherCoreNow ? HbGmRecord(kHbMany, gen, 0, 0) : me;
    }
}

// SIMT threads of one VF_CALL: one byte touched by two threads, one of them writing, is a race. Each access is
// an interval of host addresses; every interval is compared with the writes that may overlap it (the writes
// sorted by start, and none longer than the longest), so the check costs O(n log n) in the accesses, not in
// the bytes.
inline void HbCheckThreads(CoreCtx* c, const char* api) {
    struct Span {
        uintptr_t lo, hi;
        const HbAccess* a;
    };
    std::vector<Span> all, writes;
    uintptr_t longest = 0;
    for (const HbAccess& a : c->hb.pending) {
        if (a.thread == 0) continue;
        const GmAlloc* g = static_cast<const GmAlloc*>(a.gm);
        const uintptr_t base = (g ? g->base : reinterpret_cast<uintptr_t>(c->arena)) + a.off;
        const Span span{base, base + a.n, &a};
        all.push_back(span);
        if (a.write) {
            writes.push_back(span);
            longest = std::max<uintptr_t>(longest, a.n);
        }
    }
    if (writes.empty()) return;
    std::sort(writes.begin(), writes.end(), [](const Span& x, const Span& y) { return x.lo < y.lo; });
    for (const Span& s : all) {
        auto it = std::lower_bound(writes.begin(), writes.end(), s.hi,
                                   [](const Span& w, uintptr_t key) { return w.lo < key; });
        while (it != writes.begin()) {
            --it;
            if (it->lo + longest <= s.lo) break;  // no earlier write reaches s
            if (it->hi <= s.lo || it->a->thread == s.a->thread) continue;
            // report the access that ran later against the one before it
            const HbAccess& later = *std::max(s.a, it->a);
            const HbAccess& earlier = *std::min(s.a, it->a);
            const GmAlloc* g = static_cast<const GmAlloc*>(later.gm);
            const uintptr_t at = std::max(it->lo, s.lo);
            const uintptr_t base = g ? g->base : reinterpret_cast<uintptr_t>(c->arena);
            Fail("race",
                 "%s: SIMT thread %u %s %s byte %llu that thread %u %s, and no barrier orders the two threads", api,
                 later.thread - 1, later.write ? "writes" : "reads", g ? ("GM '" + g->name + "'").c_str() : "UB",
                 static_cast<unsigned long long>(at - base), earlier.thread - 1, earlier.write ? "wrote" : "read");
        }
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
inline void HbCommit(CoreCtx* c, uint32_t pipe, const char* api, bool readsAfter = false) {
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
    if (pipe == kPipeV) HbCheckThreads(c, api);
    for (const HbAccess& a : h.pending) {
        if (a.gm) {
            HbCommitGm(c, a, pipe, epoch, api);
        } else {
            HbCommitUb(c, a, pipe, epoch, api);
        }
    }
    h.pending.clear();
}

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
        s.write.reset();
        s.read.reset();
        if (s.readOnly || !gHb.raceCheck || a->bytes == 0) continue;
        auto* w = static_cast<uint64_t*>(std::calloc(a->bytes, sizeof(uint64_t)));
        auto* r = static_cast<uint64_t*>(std::calloc(a->bytes, sizeof(uint64_t)));
        if (!w || !r) {
            std::free(w);
            std::free(r);
            continue;
        }
        s.write.reset(w);
        s.read.reset(r);
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
