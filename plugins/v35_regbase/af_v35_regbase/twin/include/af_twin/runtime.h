// af_twin/runtime.h
// Emulates: the launch of a kernel on `blockDim` AI cores (one std::thread per
// resident core, each with its own 256 KiB UB arena), the SyncAll barrier,
// the global-memory (GM) allocations a harness hands to a kernel, and the
// SIMT raw-pointer access hooks.
// Checks: every GM access made through the API lies inside one registered
// allocation; SIMT raw accesses stay inside GM allocations / the core's UB;
// SyncAll cannot deadlock silently; launch parameters are valid.
// Counts: data movement, scalar GM accesses, distinct 128-byte GM lines, UB
// high-water mark, API calls, the per-core data cache's fills and the shared
// L2's hits, misses and HBM traffic (see struct Counters, and l2.h for the L2
// model). Every counter is a function of the kernel, its inputs and the
// registered allocations (their sizes and registration order) only: the cache
// models index their sets by a canonical device address (see RegisterGm), never
// by where the host heap put a buffer, and the L2 replays the cores' logged
// accesses in a fixed order after the launch, not as the threads ran.
// Not emulated: more than kMaxResidentCores cores at a time (a larger blockDim
// runs in waves on the same worker threads, and SyncAll then aborts); timing
// and bandwidth; GM accesses through raw pointers other than the SIMT hooks are
// not checked or counted.
#ifndef AF_TWIN_RUNTIME_H
#define AF_TWIN_RUNTIME_H

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "hb_state.h"
#include "l2.h"
#include "types.h"

namespace AfTwin {

constexpr uint32_t kPhysicalUb = 262144;     // bytes of UB per core on the A5 vector core
constexpr uint32_t kUbAlign = 32;            // UB operand alignment
constexpr uint32_t kGmLine = 128;            // GM cache-line size used by the line counters
// Registered allocations get device addresses kDeviceAlign apart, from kDeviceBase on (RegisterGm)
constexpr uint64_t kDeviceAlign = uint64_t{1} << 21;  // 2 MiB: far above the data cache's set period
constexpr uint64_t kDeviceBase = uint64_t{1} << 32;   // where the first allocation starts
constexpr uint8_t kPoison = 0xCD;            // fresh UB and DataCopyPad dummy bytes
constexpr uint32_t kMaxBlockDim = 65535;     // largest launchable blockDim
constexpr uint32_t kMaxResidentCores = 256;  // cores that run at the same time (see README)
constexpr uint32_t kMaxSimtThreads = 2048;   // threads of one VF_CALL
constexpr uint32_t kMaxStages = 16;          // stages a kernel can mark (MarkStage)
constexpr uint32_t kSystemReserve = 8192;    // UB the system reserves on the A5 vector core (register spill)
constexpr uint32_t kMaxProbes = 1024;        // sync probes of an instrumented kernel (Probe / Mutant)

// ---------------------------------------------------------------------------
// Counters of the last Launch, aggregated over all its cores.
struct Counters {
    uint64_t gm_read_bytes = 0;
    uint64_t gm_write_bytes = 0;
    uint64_t scalar_gm_reads = 0;
    uint64_t scalar_gm_writes = 0;
    uint64_t cachelines_read = 0;
    uint64_t cachelines_written = 0;
    uint64_t ub_high_water = 0;
    uint64_t gather_elements = 0;
    uint64_t vector_calls = 0;
    uint64_t datacopy_calls = 0;
    uint64_t simt_threads = 0;
    uint64_t sync_all = 0;
    uint64_t block_dim = 0;
    uint64_t dcache_misses = 0;
    uint64_t vf_calls = 0;         // asc_vf_call launches (reg.h)
    uint64_t reg_loads = 0;        // Reg::LoadAlign instructions
    uint64_t reg_stores = 0;       // Reg::StoreAlign instructions
    uint64_t reg_load_bytes = 0;   // UB bytes read by them (a whole vector each)
    uint64_t reg_store_bytes = 0;  // UB bytes written (the masked-on lanes)
    uint64_t reg_compute = 0;      // computing, compare, select and duplicate register instructions
    uint64_t reg_masks = 0;        // UpdateMask / CreateMask
    uint64_t vector_ub_bytes = 0;  // UB operand bytes of the memory-based vector calls (tensor.h UbOperand)
    uint64_t reg_cycles = 0;       // modelled single-issue cycles of the register instructions (reg.h)
    // The shared L2 (l2.h), replayed after the launch
    uint64_t hbm_read_bytes = 0;   // read misses x L2 line
    uint64_t hbm_write_bytes = 0;  // (dirty lines evicted + dirty lines left at the end) x L2 line
    uint64_t l2_read_bytes = 0;    // bytes cores read from L2: DataCopy GM -> UB bytes + data-cache fills x 128
    uint64_t l2_write_bytes = 0;   // bytes cores write to L2: DataCopy UB -> GM bytes + scalar / SIMT GM stores
    uint64_t l2_hits = 0;          // line accesses that hit (reads and writes)
    uint64_t l2_misses = 0;        // line accesses that missed (reads and writes)
    uint64_t l2_modelled = 1;      // 0: the log passed kL2MaxRecords, no replay (hbm_*, l2_hits, l2_misses absent)
};

// Per-core counters: plain integers, merged when the core's thread ends.
struct CoreCounters {
    uint64_t gmRead = 0;
    uint64_t gmWrite = 0;
    uint64_t scalarRead = 0;
    uint64_t scalarWrite = 0;
    uint64_t gather = 0;
    uint64_t vector = 0;
    uint64_t datacopy = 0;
    uint64_t simt = 0;
    uint64_t ubHigh = 0;
    uint64_t dcacheMiss = 0;
    uint64_t vfCalls = 0;
    uint64_t regLoads = 0;
    uint64_t regStores = 0;
    uint64_t regLoadBytes = 0;
    uint64_t regStoreBytes = 0;
    uint64_t regCompute = 0;
    uint64_t regMasks = 0;
    uint64_t vectorUbBytes = 0;
    uint64_t regCycles = 0;
    uint64_t scalarWriteBytes = 0;  // bytes written by GlobalTensor::SetValue and SimtGmStore

    void Merge(const CoreCounters& o) {
        gmRead += o.gmRead;
        gmWrite += o.gmWrite;
        scalarRead += o.scalarRead;
        scalarWrite += o.scalarWrite;
        gather += o.gather;
        vector += o.vector;
        datacopy += o.datacopy;
        simt += o.simt;
        dcacheMiss += o.dcacheMiss;
        vfCalls += o.vfCalls;
        regLoads += o.regLoads;
        regStores += o.regStores;
        regLoadBytes += o.regLoadBytes;
        regStoreBytes += o.regStoreBytes;
        regCompute += o.regCompute;
        regMasks += o.regMasks;
        vectorUbBytes += o.vectorUbBytes;
        regCycles += o.regCycles;
        scalarWriteBytes += o.scalarWriteBytes;
        ubHigh = std::max(ubHigh, o.ubHigh);
    }
};

// One registered GM allocation with its touched-line maps (one byte per line).
// `base` is the host address the kernel's pointers use (bounds checks); `device` is the canonical
// address the data-cache model sees (cache sets and lines), the same in every run.
struct GmAlloc {
    uintptr_t base = 0;
    uint64_t device = 0;
    uint64_t bytes = 0;
    std::string name;
    uint64_t lines = 0;
    std::unique_ptr<std::atomic<uint8_t>[]> readLines;
    std::unique_ptr<std::atomic<uint8_t>[]> writeLines;
    // per line: the write clock of its last write in this launch (0: none) and the core that made it
    std::unique_ptr<std::atomic<uint64_t>[]> writeStamp;
    std::unique_ptr<std::atomic<int64_t>[]> writer;
    std::unique_ptr<HbGmShadow> hb;  // the race check's shadow of the allocation (hb.h)
};

// One live UB allocation of a core (made by TPipe::InitBuffer).
struct UbAlloc {
    uint32_t offset = 0;
    uint32_t bytes = 0;
    uint32_t slot = 0;  // bytes of one buffer: a queue's InitBuffer makes `bytes / slot` of them
    const void* owner = nullptr;  // the TPipe
    uint64_t id = 0;
};

// The data cache scalar and SIMT reads go through: set-associative, LRU, 128-byte lines, as large as
// the SIMT DCache reserve (Configure). It only decides which reads fetch a line from GM (a miss);
// writes stream to GM and are not modelled. Its addresses are device addresses (DeviceAddress), so
// which lines share a set does not depend on the host heap.
// It also remembers, per way, the global GM write clock when the line was filled, so that a scalar read
// hitting a line another core wrote since can be reported (dcache-stale).
struct DcacheModel {
    static constexpr uint32_t kWays = 4;
    uint32_t sets = 1;
    uint64_t clock = 0;
    std::vector<uint64_t> tags;    // line index + 1 per way (0 = empty)
    std::vector<uint64_t> stamp;   // last use per way
    std::vector<uint64_t> filled;  // GM write clock when the way was filled

    void Reset(uint32_t bytes) {
        sets = std::max<uint32_t>(1, bytes / (kGmLine * kWays));
        tags.assign(static_cast<size_t>(sets) * kWays, 0);
        stamp.assign(static_cast<size_t>(sets) * kWays, 0);
        filled.assign(static_cast<size_t>(sets) * kWays, 0);
        clock = 0;
    }

    // The way holding the line of device address `address`, or -1; a hit counts as a use.
    int64_t Find(uint64_t address) {
        const uint64_t line = address / kGmLine;
        const size_t set = static_cast<size_t>(line % sets) * kWays;
        for (size_t w = set; w < set + kWays; ++w) {
            if (tags[w] == line + 1) {
                stamp[w] = ++clock;
                return static_cast<int64_t>(w);
            }
        }
        return -1;
    }

    // The least recently used way of the set takes the line (a miss); `now` is the GM write clock.
    void Fill(uint64_t address, uint64_t now) {
        const uint64_t line = address / kGmLine;
        const size_t set = static_cast<size_t>(line % sets) * kWays;
        size_t victim = set;
        for (size_t w = set; w < set + kWays; ++w) {
            if (stamp[w] < stamp[victim]) victim = w;
        }
        tags[victim] = line + 1;
        stamp[victim] = ++clock;
        filled[victim] = now;
    }

    // true on a hit; a miss fills the line
    bool Access(uint64_t address, uint64_t now) {
        if (Find(address) >= 0) return true;
        Fill(address, now);
        return false;
    }

    // DataCacheCleanAndInvalid: drop one line, or every line
    void Invalidate(uint64_t address) {
        const int64_t w = Find(address);
        if (w >= 0) tags[static_cast<size_t>(w)] = 0;
    }
    void InvalidateAll() { std::fill(tags.begin(), tags.end(), 0); }
};

// State of the core a thread is currently emulating.
struct CoreCtx {
    int64_t idx = -1;
    uint8_t* arena = nullptr;
    uint32_t ubUsed = 0;   // end of the highest live allocation
    uint32_t dirtyEnd = 0; // arena bytes that may differ from the poison pattern
    std::vector<UbAlloc> allocs;
    uint64_t nextAllocId = 1;
    CoreCounters c;
    const GmAlloc* lastGm = nullptr;  // cache of the last allocation matched
    uint32_t syncCount = 0;           // SyncAll calls made by this core
    bool inSimt = false;
    bool vfKernel = false;  // this core launched a VF_CALL: its TPipe budget is VfUbBudget()
    bool inRegVf = false;   // a SIMD vector function (asc_vf_call) is running
    uint32_t pendingUnalignStores = 0;  // UnalignRegForStore registers holding bytes no StoreUnAlignPost wrote
    uint32_t simtLinear = 0;
    uint32_t simtTotal = 0;
    DcacheModel dcache;
    HbCore hb;  // the pipe model's clocks, flags and UB shadow (hb.h)
    // SIMT reads of the running VF_CALL, replayed through the cache in lockstep order when it ends
    struct SimtRead {
        uint32_t step;    // the thread's n-th read
        uint32_t thread;  // linear thread index
        uint64_t line;    // GM line device address / 128
        uint32_t access;  // the thread's n-th GM access, reads and writes (the L2 order, SimtL2)
    };
    std::vector<SimtRead> simtReads;
    std::vector<uint32_t> simtSteps;
    std::vector<uint32_t> simtAccesses;  // GM accesses per thread so far
    // L2 accesses of the running VF_CALL (its data-cache fills and GM stores), logged in lockstep order when
    // it ends: the n-th access of every thread before the (n+1)-th of any
    struct SimtL2 {
        uint32_t access;
        uint32_t thread;
        uint64_t device;
        uint64_t n;
        bool write;
    };
    std::vector<SimtL2> simtL2;
    L2Log l2;                 // this core's L2 accesses, replayed after the launch (l2.h)
    uint64_t l2Unflushed = 0; // records not yet added to GlobalState::l2Records
};

inline uint64_t WriteClockNow();
inline void HbGm(CoreCtx* c, const GmAlloc* g, uint64_t off, uint64_t n, bool write);
inline void HbReset(CoreCtx* c);
inline void HbCoreEnd(CoreCtx* c);
inline void HbBarrierAll(CoreCtx* c);
inline void HbReadEnv();
inline void HbUb(CoreCtx* c, uint64_t off, uint64_t n, bool write);
inline void HbLaunchGm();
inline void L2Record(CoreCtx* c, uint64_t device, uint64_t n, bool write);

// The device address of host address p inside allocation a: every path into the data-cache model
// (scalar reads, SIMT reads, invalidation) translates through here.
inline uint64_t DeviceAddress(const GmAlloc* a, const void* p) {
    return a->device + (reinterpret_cast<uintptr_t>(p) - a->base);
}

// A scalar or SIMT GM read of n bytes at p (inside allocation a) through this core's data cache. SIMT
// threads run one after the other here, but on the device the lanes of a VF advance together, so their
// reads are logged and replayed in (n-th read, thread) order when the VF ends (ReplaySimtReads).
inline void DcacheRead(CoreCtx* c, const GmAlloc* a, const void* p, uint64_t n) {
    const uint64_t first = DeviceAddress(a, p) / kGmLine;
    const uint64_t last = (DeviceAddress(a, p) + (n ? n - 1 : 0)) / kGmLine;
    for (uint64_t line = first; line <= last; ++line) {
        if (c->inSimt) {
            const uint32_t t = c->simtLinear;
            c->simtReads.push_back({c->simtSteps[t]++, t, line, c->simtAccesses[t]++});
        } else if (!c->dcache.Access(line * kGmLine, WriteClockNow())) {
            ++c->c.dcacheMiss;
            L2Record(c, line * kGmLine, kGmLine, false);  // the fill reads the line from L2
        }
    }
}

inline void ReplaySimtReads(CoreCtx* c) {
    auto& log = c->simtReads;
    std::stable_sort(log.begin(), log.end(), [](const CoreCtx::SimtRead& a, const CoreCtx::SimtRead& b) {
        return a.step != b.step ? a.step < b.step : a.thread < b.thread;
    });
    for (const auto& r : log) {
        if (!c->dcache.Access(r.line * kGmLine, WriteClockNow())) {
            ++c->c.dcacheMiss;
            c->simtL2.push_back({r.access, r.thread, r.line * kGmLine, kGmLine, false});  // the fill reads L2
        }
    }
    log.clear();
    log.shrink_to_fit();
    auto& l2 = c->simtL2;
    std::stable_sort(l2.begin(), l2.end(), [](const CoreCtx::SimtL2& a, const CoreCtx::SimtL2& b) {
        return a.access != b.access ? a.access < b.access : a.thread < b.thread;
    });
    for (const auto& e : l2) L2Record(c, e.device, e.n, e.write);
    l2.clear();
    l2.shrink_to_fit();
}

struct GlobalState {
    uint32_t ubSize = 253952;
    uint32_t dcacheReserve = 32768;
    int64_t tilingKey = 0;
    std::vector<std::unique_ptr<GmAlloc>> gm;  // sorted by base
    uint64_t nextDevice = kDeviceBase;         // device address of the next registered allocation
    std::atomic<bool> launching{false};
    uint32_t blockDim = 0;
    uint32_t workers = 0;
    Counters last;
    // SyncAll barrier
    std::mutex barrierMutex;
    std::condition_variable barrierCv;
    uint32_t arrived = 0;
    uint32_t finished = 0;
    uint64_t generation = 0;
    uint64_t completed = 0;
    int64_t firstFinished = -1;
    // GM writes of the launch, in order (the stamps of GmAlloc::writeStamp)
    std::atomic<uint64_t> writeClock{0};
    // failure
    std::atomic<bool> failing{false};
    // stage marks: how many cores entered each stage of a multi-stage kernel
    std::atomic<uint32_t> stageCores[kMaxStages] = {};
    std::atomic<uint32_t> stagesSeen{0};
    // sync probes of a kernel instrumented for mutation testing: which probes ran, the highest id + 1
    std::atomic<uint64_t> probeHits[kMaxProbes / 64] = {};
    std::atomic<uint64_t> moveUncovered[kMaxProbes / 64] = {};  // MoveCovers found the moved flag weaker
    std::atomic<uint32_t> probesSeen{0};
    // the shared L2 (l2.h): its parameters, the logs of the launch's cores (by core index) and their records
    L2Params l2;
    std::vector<L2Log> l2Logs;
    std::atomic<uint64_t> l2Records{0};
    // set once the launch's log passes kL2MaxRecords: the cores stop logging and the launch reports no replay
    std::atomic<bool> l2Overflow{false};
};

inline GlobalState gState;
inline thread_local CoreCtx* tCore = nullptr;

inline uint64_t WriteClockNow() { return gState.writeClock.load(std::memory_order_relaxed); }

// ---------------------------------------------------------------------------
// Failure: one line on stderr, exit status 86.
[[noreturn]] inline void Fail(const char* kind, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

[[noreturn]] inline void Fail(const char* kind, const char* fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char* p = msg; *p; ++p) {
        if (*p == '\n' || *p == '\r') *p = ' ';
    }
    const long long core = tCore ? static_cast<long long>(tCore->idx) : -1LL;
    bool expected = false;
    if (!gState.failing.compare_exchange_strong(expected, true)) {
        // Another core is already reporting; it will end the process.
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    std::fflush(stdout);
    std::fprintf(stderr, "AF_TWIN_ERROR kind=%s core=%lld: %s\n", kind, core, msg);
    std::fflush(stderr);
    std::_Exit(86);
}

inline CoreCtx* RequireCore(const char* api) {
    CoreCtx* c = tCore;
    if (!c) Fail("launch", "%s called outside AfTwin::Launch (no core is running on this thread)", api);
    return c;
}

// ---------------------------------------------------------------------------
// Configuration.
inline void Configure(uint32_t ubSize, uint32_t dcacheReserve) {
    if (gState.launching.load()) Fail("launch", "Configure called during a Launch");
    if (ubSize == 0 || ubSize > kPhysicalUb || ubSize % kUbAlign != 0)
        Fail("launch", "Configure: usable UB size %u must be a multiple of 32 in [32, %u]", ubSize, kPhysicalUb);
    if (dcacheReserve > kPhysicalUb)
        Fail("launch", "Configure: SIMT data-cache reserve %u exceeds the physical UB of %u bytes", dcacheReserve,
             kPhysicalUb);
    gState.ubSize = ubSize;
    gState.dcacheReserve = dcacheReserve;
}

// The shared L2 the launches replay their GM accesses through (l2.h); without a call, the documented defaults.
inline void ConfigureL2(uint64_t size, uint32_t line, uint32_t ways) {
    if (gState.launching.load()) Fail("launch", "ConfigureL2 called during a Launch");
    if (line == 0 || (line & (line - 1)) != 0 || line > kL2MaxLine)
        Fail("launch", "ConfigureL2: L2 line size %u must be a power of two in [1, %llu]", line,
             static_cast<unsigned long long>(kL2MaxLine));
    if (ways == 0) Fail("launch", "ConfigureL2: L2 associativity must be at least 1 way, got 0");
    const uint64_t setBytes = uint64_t{line} * ways;
    if (size < setBytes || size % setBytes != 0)
        Fail("launch",
             "ConfigureL2: L2 size %llu must be a positive multiple of line size x ways = %u x %u = %llu bytes "
             "(one set)",
             static_cast<unsigned long long>(size), line, ways, static_cast<unsigned long long>(setBytes));
    gState.l2 = L2Params{size, line, ways};
}

inline const L2Params& L2Config() { return gState.l2; }

inline uint32_t UbSize() { return gState.ubSize; }
inline uint32_t DcacheReserve() { return gState.dcacheReserve; }

// TPipe bytes a kernel that launches VF_CALL may use: the physical UB minus the 8 KiB system reserve minus
// the SIMT data cache (official SIMT programming model), and never more than the configured usable UB.
inline uint32_t VfUbBudget() {
    const uint32_t cap = std::min(gState.ubSize, kPhysicalUb - kSystemReserve);
    return cap > gState.dcacheReserve ? cap - gState.dcacheReserve : 0u;
}

inline void SetTilingKey(int64_t key) { gState.tilingKey = key; }
inline int64_t CurrentTilingKey() { return gState.tilingKey; }

// ---------------------------------------------------------------------------
// GM registry.
// Each new allocation also gets a device address: the next multiple of kDeviceAlign after the previous
// allocation's end, from kDeviceBase on, in registration order. The data-cache model only sees these
// addresses, so its counters depend on the registered sizes and their order, not on the host heap
// (ASLR, the allocator's alignment), as on the device, where GM buffers sit at fixed aligned offsets.
inline void RegisterGm(const void* base, uint64_t bytes, const char* name) {
    if (gState.launching.load()) Fail("launch", "RegisterGm('%s') called during a Launch", name ? name : "");
    if (!base) Fail("launch", "RegisterGm('%s'): null base address", name ? name : "");
    const uintptr_t b = reinterpret_cast<uintptr_t>(base);
    auto& v = gState.gm;
    for (auto& a : v) {
        if (a->base == b && a->bytes == bytes) {  // registering the same buffer again renames it
            a->name = name ? name : "";
            return;
        }
        const bool overlap = b < a->base + a->bytes && a->base < b + bytes;
        if (overlap)
            Fail("launch", "RegisterGm('%s', %llu bytes) overlaps the registered allocation '%s' (%llu bytes)",
                 name ? name : "", static_cast<unsigned long long>(bytes), a->name.c_str(),
                 static_cast<unsigned long long>(a->bytes));
    }
    auto a = std::make_unique<GmAlloc>();
    a->base = b;
    a->device = gState.nextDevice;
    a->bytes = bytes;
    const uint64_t span = std::max<uint64_t>(bytes, 1);
    if (span > ~uint64_t{0} - a->device - kDeviceAlign)
        Fail("launch", "RegisterGm('%s', %llu bytes): the registered allocations exceed the device address space",
             name ? name : "", static_cast<unsigned long long>(bytes));
    gState.nextDevice = (a->device + span + kDeviceAlign - 1) / kDeviceAlign * kDeviceAlign;
    a->name = name ? name : "";
    a->hb = std::make_unique<HbGmShadow>();
    a->lines = (bytes + kGmLine - 1) / kGmLine;
    a->readLines.reset(new std::atomic<uint8_t>[a->lines ? a->lines : 1]);
    a->writeLines.reset(new std::atomic<uint8_t>[a->lines ? a->lines : 1]);
    a->writeStamp.reset(new std::atomic<uint64_t>[a->lines ? a->lines : 1]);
    a->writer.reset(new std::atomic<int64_t>[a->lines ? a->lines : 1]);
    for (uint64_t i = 0; i < (a->lines ? a->lines : 1); ++i) {
        a->readLines[i].store(0, std::memory_order_relaxed);
        a->writeLines[i].store(0, std::memory_order_relaxed);
        a->writeStamp[i].store(0, std::memory_order_relaxed);
        a->writer[i].store(-1, std::memory_order_relaxed);
    }
    auto pos = std::lower_bound(v.begin(), v.end(), b,
                                [](const std::unique_ptr<GmAlloc>& x, uintptr_t key) { return x->base < key; });
    v.insert(pos, std::move(a));
}

// Forgets every registered allocation (the harness calls it between test cases).
inline void ClearGm() {
    if (gState.launching.load()) Fail("launch", "ClearGm called during a Launch");
    gState.gm.clear();
    gState.nextDevice = kDeviceBase;
}

// The allocation holding address p (p may equal its end), or nullptr.
inline const GmAlloc* GmAllocAt(uintptr_t p) {
    const auto& v = gState.gm;
    auto it = std::upper_bound(v.begin(), v.end(), p,
                               [](uintptr_t key, const std::unique_ptr<GmAlloc>& x) { return key < x->base; });
    if (it == v.begin()) return nullptr;
    --it;
    const GmAlloc* a = it->get();
    if (p <= a->base + a->bytes) return a;
    return nullptr;
}

inline bool GmContains(const GmAlloc* a, uintptr_t p, uint64_t n) {
    return p >= a->base && p - a->base <= a->bytes && n <= a->bytes - (p - a->base);
}

// Checks that [p, p + n) lies inside one registered allocation; returns it.
inline const GmAlloc* CheckGm(const void* ptr, uint64_t n, const char* api, const char* verb) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    CoreCtx* c = tCore;
    if (c && c->lastGm && GmContains(c->lastGm, p, n)) return c->lastGm;
    const GmAlloc* a = GmAllocAt(p);
    if (a && GmContains(a, p, n)) {
        if (c) c->lastGm = a;
        return a;
    }
    if (a) {
        Fail("gm-out-of-bounds", "%s %s bytes [%llu, %llu) of '%s' (size %llu)", api, verb,
             static_cast<unsigned long long>(p - a->base), static_cast<unsigned long long>(p - a->base + n),
             a->name.c_str(), static_cast<unsigned long long>(a->bytes));
    }
    Fail("gm-out-of-bounds", "%s %s %llu bytes at address %p, which is not inside any registered GM allocation",
         api, verb, static_cast<unsigned long long>(n), ptr);
}

inline void MarkLines(const GmAlloc* a, uint64_t byteOffset, uint64_t n, bool write) {
    if (n == 0) return;
    std::atomic<uint8_t>* map = write ? a->writeLines.get() : a->readLines.get();
    const uint64_t first = byteOffset / kGmLine;
    const uint64_t last = (byteOffset + n - 1) / kGmLine;
    const int64_t core = tCore ? tCore->idx : -1;
    if (tCore) HbGm(tCore, a, byteOffset, n, write);
    for (uint64_t l = first; l <= last; ++l) {
        if (map[l].load(std::memory_order_relaxed) == 0) map[l].store(1, std::memory_order_relaxed);
        if (write) {
            a->writeStamp[l].store(gState.writeClock.fetch_add(1) + 1, std::memory_order_relaxed);
            a->writer[l].store(core, std::memory_order_relaxed);
        }
    }
}

// Adds this core's batch of L2 records to the launch's count. The log of a launch is bounded (kL2MaxRecords):
// past the bound every core stops logging and drops what it logged, and the launch runs on without the L2
// replay (the report says l2_modelled 0 and leaves out the counters only the replay gives). The kernel's
// results and every other counter are the same either way.
inline void FlushL2Records(CoreCtx* c) {
    const uint64_t total = gState.l2Records.fetch_add(c->l2Unflushed, std::memory_order_relaxed) + c->l2Unflushed;
    c->l2Unflushed = 0;
    if (total > kL2MaxRecords) gState.l2Overflow.store(true, std::memory_order_relaxed);
}

// Drops core c's log once the launch's log has passed its bound.
inline void DropL2Log(CoreCtx* c) {
    if (c->l2.records.empty() && c->l2.stageStart.empty()) return;
    std::vector<uint64_t>().swap(c->l2.records);
    std::vector<uint64_t>().swap(c->l2.stageStart);
    c->l2.open = false;
}

// Logs an L2 access of core c: n bytes at device address `device`, a read or a write. An access that
// continues the previous one (the next byte, the same direction, no SyncAll between) extends its record, so a
// line both touch counts once (l2.h).
inline void L2Record(CoreCtx* c, uint64_t device, uint64_t n, bool write) {
    if (c == nullptr || n == 0) return;
    if (gState.l2Overflow.load(std::memory_order_relaxed)) {
        DropL2Log(c);
        return;
    }
    L2Log& log = c->l2;
    const uint64_t line = gState.l2.line;
    uint64_t first = device / line;
    const uint64_t last = (device + n - 1) / line;
    if (last > kL2MaxRecordLine)
        Fail("launch", "device address %llu is beyond the %u-bit line numbers of the shared L2 model's log",
             static_cast<unsigned long long>(device + n - 1), kL2LineBits);
    if (log.open && write == log.endWrite && device == log.end) {
        uint64_t& r = log.records.back();
        const uint64_t rLast = L2First(r) + L2Count(r) - 1;  // first is rLast or rLast + 1
        const uint64_t count = L2Count(r) + (last - rLast);
        if (count <= kL2MaxRecordCount) {
            r = L2Pack(L2First(r), count, write);
            log.end = device + n;
            return;
        }
        first = rLast + 1;
    }
    while (first <= last) {
        const uint64_t count = std::min(last - first + 1, kL2MaxRecordCount);
        log.records.push_back(L2Pack(first, count, write));
        first += count;
        if (++c->l2Unflushed == kL2FlushRecords) FlushL2Records(c);
    }
    log.end = device + n;
    log.endWrite = write;
    log.open = true;
}

// A scalar or SIMT GM store of n bytes at device address `device`: logged now, or, inside a VF_CALL, when the
// VF ends, in lockstep order with its threads' other GM accesses (ReplaySimtReads).
inline void L2Store(CoreCtx* c, uint64_t device, uint64_t n) {
    if (c == nullptr) return;
    if (c->inSimt) {
        c->simtL2.push_back({c->simtAccesses[c->simtLinear]++, c->simtLinear, device, n, true});
    } else {
        L2Record(c, device, n, true);
    }
}

// A DataCopy burst between UB and GM: the line counters and the L2 log.
inline void CopyLines(const GmAlloc* a, uint64_t byteOffset, uint64_t n, bool write) {
    MarkLines(a, byteOffset, n, write);
    L2Record(tCore, a->device + byteOffset, n, write);
}

// A scalar GM read (GlobalTensor::GetValue) of n bytes at p, in allocation a, through this core's data cache.
// A hit on a line that another core wrote after this core filled it returns stale data on the device (the
// scalar data cache is not coherent with other cores' writes): reported as dcache-stale.
inline void DcacheScalarRead(CoreCtx* c, const GmAlloc* a, const void* p, uint64_t n, const char* api) {
    const uint64_t begin = DeviceAddress(a, p);
    for (uint64_t line = begin / kGmLine; line <= (begin + (n ? n - 1 : 0)) / kGmLine; ++line) {
        const int64_t way = c->dcache.Find(line * kGmLine);
        if (way < 0) {
            c->dcache.Fill(line * kGmLine, WriteClockNow());
            ++c->c.dcacheMiss;
            L2Record(c, line * kGmLine, kGmLine, false);
            continue;
        }
        const uint64_t filled = c->dcache.filled[static_cast<size_t>(way)];
        // the allocation's lines (relative to its base) that share this cache line
        const uint64_t lo = std::max<uint64_t>(line * kGmLine, a->device) - a->device;
        const uint64_t hi = std::min<uint64_t>(line * kGmLine + kGmLine, a->device + a->bytes) - a->device;
        for (uint64_t l = lo / kGmLine; hi > lo && l <= (hi - 1) / kGmLine; ++l) {
            const int64_t writer = a->writer[l].load(std::memory_order_relaxed);
            if (a->writeStamp[l].load(std::memory_order_relaxed) > filled && writer != c->idx && writer >= 0)
                Fail("dcache-stale",
                     "%s reads bytes [%llu, %llu) of '%s' through the data cache, but core %lld wrote that line "
                     "after this core cached it: the device returns the stale copy; invalidate the line first "
                     "(DataCacheCleanAndInvalid<T, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>)",
                     api, static_cast<unsigned long long>(begin - a->device),
                     static_cast<unsigned long long>(begin - a->device + n), a->name.c_str(),
                     static_cast<long long>(writer));
        }
    }
}

// ---------------------------------------------------------------------------
// Stage marks: a generated kernel calls MarkStage(i) once per core that does work in stage i,
// so a test can compare the cores each stage used with the tiling data.
inline void MarkStage(uint32_t stage) {
    RequireCore("MarkStage");
    if (stage >= kMaxStages) Fail("api-params", "MarkStage(%u): at most %u stages can be marked", stage, kMaxStages);
    gState.stageCores[stage].fetch_add(1, std::memory_order_relaxed);
    uint32_t seen = gState.stagesSeen.load(std::memory_order_relaxed);
    while (seen < stage + 1 && !gState.stagesSeen.compare_exchange_weak(seen, stage + 1)) {
    }
}

// ---------------------------------------------------------------------------
// Mutation testing of a kernel's synchronisation (tools/sync_mutants.py): the tool wraps each sync statement
// of a generated kernel as `AfTwin::Probe(k); if (!AfTwin::Mutant(k)) { statement }`, builds it once, and
// runs it with AF_TWIN_MUTANT=k to leave sync k out (or, with no mutant, to learn which syncs run).
inline void Probe(uint32_t id) {
    if (id >= kMaxProbes) Fail("api-params", "Probe(%u): at most %u probes", id, kMaxProbes);
    gState.probeHits[id / 64].fetch_or(uint64_t{1} << (id % 64), std::memory_order_relaxed);
    uint32_t seen = gState.probesSeen.load(std::memory_order_relaxed);
    while (seen < id + 1 && !gState.probesSeen.compare_exchange_weak(seen, id + 1)) {
    }
}

inline bool Mutant(uint32_t id) {
    static const long selected = [] {
        const char* v = std::getenv("AF_TWIN_MUTANT");
        return v && *v ? std::strtol(v, nullptr, 10) : -1L;
    }();
    return static_cast<long>(id) == selected;
}

// ---------------------------------------------------------------------------
// Counters and report.
inline const Counters& LastCounters() { return gState.last; }

inline void WriteReportJson(FILE* f) {
    const Counters& k = gState.last;
    std::fprintf(f,
                 "{\"gm_read_bytes\": %llu, \"gm_write_bytes\": %llu, \"scalar_gm_reads\": %llu, "
                 "\"scalar_gm_writes\": %llu, \"cachelines_read\": %llu, \"cachelines_written\": %llu, "
                 "\"ub_high_water\": %llu, \"gather_elements\": %llu, \"vector_calls\": %llu, "
                 "\"datacopy_calls\": %llu, \"simt_threads\": %llu, \"sync_all\": %llu, \"block_dim\": %llu, "
                 "\"dcache_misses\": %llu, \"vf_calls\": %llu, \"reg_loads\": %llu, \"reg_stores\": %llu, "
                 "\"reg_load_bytes\": %llu, \"reg_store_bytes\": %llu, \"reg_compute\": %llu, "
                 "\"reg_masks\": %llu, \"vector_ub_bytes\": %llu, \"reg_cycles\": %llu, "
                 "\"l2_read_bytes\": %llu, \"l2_write_bytes\": %llu, \"l2_modelled\": %llu, ",
                 static_cast<unsigned long long>(k.gm_read_bytes), static_cast<unsigned long long>(k.gm_write_bytes),
                 static_cast<unsigned long long>(k.scalar_gm_reads),
                 static_cast<unsigned long long>(k.scalar_gm_writes),
                 static_cast<unsigned long long>(k.cachelines_read),
                 static_cast<unsigned long long>(k.cachelines_written),
                 static_cast<unsigned long long>(k.ub_high_water), static_cast<unsigned long long>(k.gather_elements),
                 static_cast<unsigned long long>(k.vector_calls), static_cast<unsigned long long>(k.datacopy_calls),
                 static_cast<unsigned long long>(k.simt_threads), static_cast<unsigned long long>(k.sync_all),
                 static_cast<unsigned long long>(k.block_dim), static_cast<unsigned long long>(k.dcache_misses),
                 static_cast<unsigned long long>(k.vf_calls), static_cast<unsigned long long>(k.reg_loads),
                 static_cast<unsigned long long>(k.reg_stores), static_cast<unsigned long long>(k.reg_load_bytes),
                 static_cast<unsigned long long>(k.reg_store_bytes), static_cast<unsigned long long>(k.reg_compute),
                 static_cast<unsigned long long>(k.reg_masks), static_cast<unsigned long long>(k.vector_ub_bytes),
                 static_cast<unsigned long long>(k.reg_cycles), static_cast<unsigned long long>(k.l2_read_bytes),
                 static_cast<unsigned long long>(k.l2_write_bytes), static_cast<unsigned long long>(k.l2_modelled));
    if (k.l2_modelled) {
        std::fprintf(f, "\"hbm_read_bytes\": %llu, \"hbm_write_bytes\": %llu, \"l2_hits\": %llu, \"l2_misses\": %llu, ",
                     static_cast<unsigned long long>(k.hbm_read_bytes),
                     static_cast<unsigned long long>(k.hbm_write_bytes), static_cast<unsigned long long>(k.l2_hits),
                     static_cast<unsigned long long>(k.l2_misses));
    }
    std::fprintf(f, "\"stage_cores\": [");
    const uint32_t stages = gState.stagesSeen.load();
    for (uint32_t i = 0; i < stages; ++i) {
        std::fprintf(f, "%s%u", i ? ", " : "", gState.stageCores[i].load());
    }
    std::fprintf(f, "]");
    const uint32_t probes = gState.probesSeen.load();
    for (uint32_t w = 0; w * 64 < probes; ++w) {
        std::fprintf(f, ", \"probes%u\": %llu", w, static_cast<unsigned long long>(gState.probeHits[w].load()));
    }
    for (uint32_t w = 0; w < kMaxProbes / 64; ++w) {
        const uint64_t bits = gState.moveUncovered[w].load();
        if (bits) std::fprintf(f, ", \"uncovered%u\": %llu", w, static_cast<unsigned long long>(bits));
    }
    std::fprintf(f, "}\n");
    std::fflush(f);
}

// ---------------------------------------------------------------------------
// SyncAll barrier across the cores of the running launch.
inline void SyncAllBarrier() {
    CoreCtx* c = RequireCore("SyncAll");
    GlobalState& g = gState;
    if (g.blockDim > g.workers)
        Fail("syncall-deadlock",
             "SyncAll with blockDim %u: only %u cores can be resident at once, the others would never arrive",
             g.blockDim, g.workers);
    HbBarrierAll(c);  // SyncAll's default config waits for every pipe before and after the barrier
    c->l2.stageStart.push_back(c->l2.records.size());  // later accesses replay after every core's earlier ones
    c->l2.open = false;
    std::unique_lock<std::mutex> lock(g.barrierMutex);
    ++c->syncCount;
    if (g.finished > 0)
        Fail("syncall-deadlock",
             "SyncAll #%u: core %lld already returned from the kernel and will never arrive (on hardware this hangs)",
             c->syncCount, static_cast<long long>(g.firstFinished));
    if (++g.arrived == g.blockDim) {
        g.arrived = 0;
        ++g.generation;
        ++g.completed;
        g.barrierCv.notify_all();
        ++c->hb.gen;
        return;
    }
    const uint64_t gen = g.generation;
    g.barrierCv.wait(lock, [&] { return g.generation != gen; });
    ++c->hb.gen;
}

inline void CoreFinished(CoreCtx* c) {
    GlobalState& g = gState;
    std::lock_guard<std::mutex> lock(g.barrierMutex);
    if (g.finished == 0) g.firstFinished = c->idx;
    ++g.finished;
    if (g.arrived > 0)
        Fail("syncall-deadlock",
             "core %lld returned from the kernel after %u SyncAll call(s) while %u core(s) wait in SyncAll "
             "(on hardware this hangs)",
             static_cast<long long>(c->idx), c->syncCount, g.arrived);
}

// ---------------------------------------------------------------------------
// Launch.
inline void Launch(uint32_t blockDim, const std::function<void()>& body) {
    GlobalState& g = gState;
    if (blockDim < 1 || blockDim > kMaxBlockDim)
        Fail("launch", "Launch: blockDim %u must be in [1, %u]", blockDim, kMaxBlockDim);
    if (tCore || g.launching.exchange(true)) Fail("launch", "Launch called while another Launch is running");
    for (auto& a : g.gm) {
        for (uint64_t i = 0; i < a->lines; ++i) {
            a->readLines[i].store(0, std::memory_order_relaxed);
            a->writeLines[i].store(0, std::memory_order_relaxed);
            a->writeStamp[i].store(0, std::memory_order_relaxed);
            a->writer[i].store(-1, std::memory_order_relaxed);
        }
    }
    g.writeClock.store(0);
    HbReadEnv();
    HbLaunchGm();
    g.blockDim = blockDim;
    g.workers = std::min(blockDim, kMaxResidentCores);
    g.arrived = 0;
    g.finished = 0;
    g.generation = 0;
    g.completed = 0;
    g.firstFinished = -1;
    for (auto& sc : g.stageCores) sc.store(0);
    g.stagesSeen.store(0);
    g.l2Logs.clear();
    g.l2Logs.resize(blockDim);
    g.l2Records.store(0);
    g.l2Overflow.store(false);

    std::atomic<uint32_t> next{0};
    std::vector<CoreCounters> perWorker(g.workers);
    auto worker = [&](uint32_t w) {
        void* mem = ::operator new(kPhysicalUb, std::align_val_t(4096));
        uint8_t* arena = static_cast<uint8_t*>(mem);
        std::memset(arena, kPoison, kPhysicalUb);
        CoreCtx ctx;
        ctx.arena = arena;
        for (;;) {
            const uint32_t idx = next.fetch_add(1);
            if (idx >= blockDim) break;
            if (ctx.dirtyEnd) std::memset(arena, kPoison, std::min<uint32_t>(ctx.dirtyEnd, kPhysicalUb));
            ctx.idx = idx;
            ctx.ubUsed = 0;
            ctx.dirtyEnd = 0;
            ctx.allocs.clear();
            ctx.c = CoreCounters{};
            ctx.lastGm = nullptr;
            ctx.syncCount = 0;
            ctx.inSimt = false;
            ctx.vfKernel = false;
            ctx.inRegVf = false;
            ctx.dcache.Reset(g.dcacheReserve);
            ctx.l2 = L2Log{};
            ctx.l2Unflushed = 0;
            tCore = &ctx;
            HbReset(&ctx);
            body();
            HbCoreEnd(&ctx);
            FlushL2Records(&ctx);
            g.l2Logs[idx] = std::move(ctx.l2);
            CoreFinished(&ctx);
            ctx.dirtyEnd = std::max<uint32_t>(ctx.dirtyEnd, static_cast<uint32_t>(ctx.c.ubHigh));
            tCore = nullptr;
            perWorker[w].Merge(ctx.c);
        }
        ::operator delete(mem, std::align_val_t(4096));
    };
    std::vector<std::thread> threads;
    threads.reserve(g.workers);
    for (uint32_t w = 0; w < g.workers; ++w) threads.emplace_back(worker, w);
    for (auto& t : threads) t.join();

    CoreCounters total;
    for (auto& pc : perWorker) total.Merge(pc);
    Counters k;
    k.gm_read_bytes = total.gmRead;
    k.gm_write_bytes = total.gmWrite;
    k.scalar_gm_reads = total.scalarRead;
    k.scalar_gm_writes = total.scalarWrite;
    k.ub_high_water = total.ubHigh;
    k.gather_elements = total.gather;
    k.vector_calls = total.vector;
    k.datacopy_calls = total.datacopy;
    k.simt_threads = total.simt;
    k.dcache_misses = total.dcacheMiss;
    k.vf_calls = total.vfCalls;
    k.reg_loads = total.regLoads;
    k.reg_stores = total.regStores;
    k.reg_load_bytes = total.regLoadBytes;
    k.reg_store_bytes = total.regStoreBytes;
    k.reg_compute = total.regCompute;
    k.reg_masks = total.regMasks;
    k.vector_ub_bytes = total.vectorUbBytes;
    k.reg_cycles = total.regCycles;
    k.sync_all = g.completed;
    k.block_dim = blockDim;
    k.l2_modelled = g.l2Overflow.load() ? 0 : 1;
    const L2Counts l2 = k.l2_modelled ? ReplayL2(g.l2Logs, g.l2) : L2Counts{};
    g.l2Logs.clear();
    g.l2Logs.shrink_to_fit();
    k.hbm_read_bytes = l2.readMisses * g.l2.line;
    k.hbm_write_bytes = (l2.writeBacks + l2.dirtyLeft) * g.l2.line;
    k.l2_read_bytes = total.gmRead + total.dcacheMiss * kGmLine;
    k.l2_write_bytes = total.gmWrite + total.scalarWriteBytes;
    k.l2_hits = l2.hits;
    k.l2_misses = l2.misses;
    for (auto& a : g.gm) {
        for (uint64_t i = 0; i < a->lines; ++i) {
            k.cachelines_read += a->readLines[i].load(std::memory_order_relaxed);
            k.cachelines_written += a->writeLines[i].load(std::memory_order_relaxed);
        }
    }
    g.last = k;
    g.launching.store(false);
}

// ---------------------------------------------------------------------------
// SIMT raw-pointer access hooks (generated SIMT code calls these under AF_CPU_TWIN).
template <typename T>
inline T SimtGmLoad(const T* p) {
    CoreCtx* c = RequireCore("SimtGmLoad");
    const GmAlloc* a = CheckGm(p, sizeof(T), "SIMT GM load", "reads");
    ++c->c.scalarRead;
    DcacheRead(c, a, p, sizeof(T));
    const uint64_t off = reinterpret_cast<uintptr_t>(p) - a->base;
    MarkLines(a, off, sizeof(T), false);
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

template <typename T>
inline void SimtGmStore(T* p, T v) {
    CoreCtx* c = RequireCore("SimtGmStore");
    const GmAlloc* a = CheckGm(p, sizeof(T), "SIMT GM store", "writes");
    ++c->c.scalarWrite;
    c->c.scalarWriteBytes += sizeof(T);
    const uint64_t off = reinterpret_cast<uintptr_t>(p) - a->base;
    MarkLines(a, off, sizeof(T), true);
    L2Store(c, a->device + off, sizeof(T));
    std::memcpy(p, &v, sizeof(T));
}

inline uint32_t CheckSimtUb(const CoreCtx* c, const void* p, uint32_t n, const char* api) {
    const uintptr_t q = reinterpret_cast<uintptr_t>(p);
    const uintptr_t base = reinterpret_cast<uintptr_t>(c->arena);
    if (q < base || q - base > kPhysicalUb - n)
        Fail("ub-out-of-bounds", "%s of %u bytes at address %p is outside this core's UB [%p, +%u)", api, n, p,
             static_cast<const void*>(c->arena), kPhysicalUb);
    return static_cast<uint32_t>(q - base);
}

template <typename T>
inline T SimtUbLoad(const T* p) {
    CoreCtx* c = RequireCore("SimtUbLoad");
    HbUb(c, CheckSimtUb(c, p, sizeof(T), "SIMT UB load"), sizeof(T), false);
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

template <typename T>
inline void SimtUbStore(T* p, T v) {
    CoreCtx* c = RequireCore("SimtUbStore");
    const uint32_t off = CheckSimtUb(c, p, sizeof(T), "SIMT UB store");
    HbUb(c, off, sizeof(T), true);
    if (off + sizeof(T) > c->dirtyEnd) c->dirtyEnd = off + static_cast<uint32_t>(sizeof(T));
    std::memcpy(p, &v, sizeof(T));
}

}  // namespace AfTwin

#include "hb.h"  // the pipe model, which needs everything above

#endif  // AF_TWIN_RUNTIME_H
