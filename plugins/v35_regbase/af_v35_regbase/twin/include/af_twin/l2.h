// af_twin/l2.h
// Emulates: the L2 cache the A5 cores share between HBM (GM) and the cores, as a counter model only (the
// data itself always lives in the GM buffers).
//
// Sources (asc-devkit docs, docs/zh/):
// - guide/编程指南/高级编程/内存模型/缓存一致性.md, section "Cache、Cache Line与缓存副本", table
//   "NPU架构版本3510Cache单元信息": L2 Cache, shared by the cores, Cache Line 128B/512B, size 128MB. The
//   table for NPU 2201 (A2/A3) gives 512B and 192MB; the 192MB of
//   guide/算子实践参考/SIMD算子性能优化/内存访问/L2-Cache切分.md (section 【描述】) is stated there as an
//   assumption ("假设") of the example, with about 7 TB/s of mixed L2 read/write bandwidth against about
//   1.6 TB/s for GM. The 3510 table is the figure for this SoC.
// - guide/算子实践参考/SIMT算子性能优化/内存访问/短向量类型提升效率.md, section 【描述】: the processor
//   accesses L2 in 128-byte cache lines (the smaller of the table's two line sizes; the default here).
// - api/SIMD-API/基础API/缓存控制/系统缓存概述.md, 表1: MTE2 reads of GM go through L2 (a miss loads the line
//   from GM into L2); a scalar read that misses the DCache reads L2, and a miss there loads GM into L2 and the
//   DCache; the same page describes the write-back policy (a dirty line reaches GM when it is replaced).
// - No document gives the associativity: 16 ways is a plain choice (kL2DefaultWays).
//
// Model: set-associative, set = line % sets with sets = size / (line * ways), LRU within a set, write-back
// and write-allocate. A write that misses allocates the line without reading it from HBM (as if the core
// wrote the whole line); a read of a line a write allocated hits. A dirty line reaches HBM when it is
// evicted or, at the end of the launch, because it is still dirty. Each launch starts with an empty L2.
// Lines are numbered globally: line = device address / line size (RegisterGm gives every allocation a device
// address aligned to 2 MiB, so no line holds bytes of two allocations while line size <= 2 MiB).
//
// Replay order: the cores of a launch run on worker threads at the same time, so an L2 updated as they go
// would count hits and misses that depend on thread timing. Instead each core logs its L2 accesses in program
// order (L2Log) and, when the launch ends, ReplayL2 runs them through the cache in a fixed order that assumes
// the cores progress at equal rates: round-robin over the cores, one line access each (core 0's first line,
// core 1's first line, ..., then every core's second line, ...), a core with no lines left dropping out. The
// accesses a core makes after its k-th SyncAll replay after every core's accesses before its k-th SyncAll.
// A core's accesses to contiguous bytes in one direction (a DataCopy burst, the next burst continuing it,
// adjacent data-cache fills) form one run of lines: a line such a run touches twice in a row (a burst ending
// mid-line and the next one starting there) counts as one access.
#ifndef AF_TWIN_L2_H
#define AF_TWIN_L2_H

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

namespace AfTwin {

constexpr uint64_t kL2DefaultSize = uint64_t{128} << 20;  // 128 MiB: 缓存一致性.md, NPU 3510 table
constexpr uint32_t kL2DefaultLine = 128;                  // 128 B: the same table, and 短向量类型提升效率.md
constexpr uint32_t kL2DefaultWays = 16;                   // no document gives it: a plain value
constexpr uint64_t kL2MaxLine = uint64_t{1} << 21;        // lines up to the device alignment of allocations

// One record of a core's log: a run of consecutive lines in one direction, packed in 64 bits (the log of a
// launch with scattered accesses holds millions): bits 0-39 the first line, 40-62 the line count, 63 write.
constexpr uint32_t kL2LineBits = 40;
constexpr uint64_t kL2MaxRecordLine = (uint64_t{1} << kL2LineBits) - 1;
constexpr uint64_t kL2MaxRecordCount = (uint64_t{1} << 23) - 1;
// Records a launch may log, over all its cores: 4M (32 MiB). A core adds its records to the launch's count
// every kL2FlushRecords records and when it ends; once the count exceeds the bound the cores stop logging and
// the launch reports no replay (runtime.h, FlushL2Records).
// The host-memory estimate of a run (af_core/twin/budget.py, L2_MAX_RECORDS and L2_FLUSH) uses both figures.
constexpr uint64_t kL2MaxRecords = uint64_t{1} << 22;
constexpr uint64_t kL2FlushRecords = 4096;

inline uint64_t L2Pack(uint64_t first, uint64_t count, bool write) {
    return first | (count << kL2LineBits) | (uint64_t{write} << 63);
}
inline uint64_t L2First(uint64_t r) { return r & kL2MaxRecordLine; }
inline uint64_t L2Count(uint64_t r) { return (r >> kL2LineBits) & kL2MaxRecordCount; }
inline bool L2Write(uint64_t r) { return (r >> 63) != 0; }

// The L2 accesses of one core, in program order.
struct L2Log {
    std::vector<uint64_t> records;
    std::vector<uint64_t> stageStart;  // the index of the first record after each SyncAll
    uint64_t end = 0;                  // device address after the last access (a continuing access extends it)
    bool endWrite = false;
    bool open = false;                 // the last record may be extended
};

// The L2 parameters a launch replays with (ConfigureL2).
struct L2Params {
    uint64_t size = kL2DefaultSize;
    uint32_t line = kL2DefaultLine;
    uint32_t ways = kL2DefaultWays;
};

// The counts of one replay.
struct L2Counts {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t readMisses = 0;  // misses that read the line from HBM
    uint64_t writeBacks = 0;  // dirty lines evicted to HBM
    uint64_t dirtyLeft = 0;   // dirty lines at the end of the replay
};

// The cache: a tag, a last-use stamp and a dirty flag per way. The arrays come zeroed from calloc, which for
// sizes like the default (1M ways) maps fresh pages: only the sets a launch touches take memory.
class L2Cache {
public:
    explicit L2Cache(const L2Params& p)
        : sets_(p.size / (uint64_t{p.line} * p.ways)), ways_(p.ways), slots_(sets_ * p.ways) {
        tags_ = static_cast<uint64_t*>(std::calloc(slots_, sizeof(uint64_t)));
        stamps_ = static_cast<uint64_t*>(std::calloc(slots_, sizeof(uint64_t)));
        dirty_ = static_cast<uint8_t*>(std::calloc(slots_, 1));
        if (!tags_ || !stamps_ || !dirty_) {
            Free();
            throw std::bad_alloc();
        }
    }
    ~L2Cache() { Free(); }
    L2Cache(const L2Cache&) = delete;
    L2Cache& operator=(const L2Cache&) = delete;

    // One access to `line`: a hit refreshes its LRU stamp; a miss takes the set's empty or least recently used
    // way, writing that way's line back to HBM first if it is dirty. A write leaves the line dirty.
    void Access(uint64_t line, bool write, L2Counts& k) {
        const uint64_t base = (line % sets_) * ways_;
        uint64_t victim = base;
        for (uint64_t w = base; w < base + ways_; ++w) {
            if (tags_[w] == line + 1) {
                ++k.hits;
                stamps_[w] = ++clock_;
                if (write && !dirty_[w]) {
                    dirty_[w] = 1;
                    ++dirtyCount_;
                }
                return;
            }
            if (stamps_[w] < stamps_[victim]) victim = w;  // empty ways have stamp 0
        }
        ++k.misses;
        if (tags_[victim] != 0 && dirty_[victim]) {
            ++k.writeBacks;
            --dirtyCount_;
        }
        tags_[victim] = line + 1;
        stamps_[victim] = ++clock_;
        dirty_[victim] = write ? 1 : 0;
        if (write) {
            ++dirtyCount_;
        } else {
            ++k.readMisses;
        }
    }

    uint64_t DirtyLines() const { return dirtyCount_; }

private:
    void Free() {
        std::free(tags_);
        std::free(stamps_);
        std::free(dirty_);
    }

    uint64_t sets_;
    uint64_t ways_;
    uint64_t slots_;
    uint64_t* tags_ = nullptr;    // line + 1 per way (0: empty)
    uint64_t* stamps_ = nullptr;  // last use per way (0: never)
    uint8_t* dirty_ = nullptr;
    uint64_t clock_ = 0;
    uint64_t dirtyCount_ = 0;
};

// Runs the logs of a launch's cores (index = core) through an empty L2 in the order the header describes.
inline L2Counts ReplayL2(const std::vector<L2Log>& logs, const L2Params& p) {
    L2Cache cache(p);
    L2Counts k;
    size_t stages = 1;
    for (const L2Log& log : logs) stages = std::max(stages, log.stageStart.size() + 1);
    struct Cursor {
        const uint64_t* next;  // the record after the current one
        const uint64_t* end;   // the end of the core's records of this stage
        uint64_t line;         // the current record's next line
        uint64_t left;         // its lines not replayed yet
        bool write;
    };
    std::vector<Cursor> active;
    active.reserve(logs.size());
    for (size_t s = 0; s < stages; ++s) {
        active.clear();
        for (const L2Log& log : logs) {
            const size_t n = log.records.size();
            const size_t from = s == 0 ? 0 : (s - 1 < log.stageStart.size() ? log.stageStart[s - 1] : n);
            const size_t to = s < log.stageStart.size() ? log.stageStart[s] : n;
            if (from >= to) continue;
            const uint64_t r = log.records[from];
            active.push_back({log.records.data() + from + 1, log.records.data() + to, L2First(r), L2Count(r),
                              L2Write(r)});
        }
        while (!active.empty()) {
            size_t kept = 0;
            for (size_t i = 0; i < active.size(); ++i) {
                Cursor c = active[i];
                cache.Access(c.line, c.write, k);
                ++c.line;
                if (--c.left == 0) {
                    if (c.next == c.end) continue;  // the core is done with this stage
                    const uint64_t r = *c.next++;
                    c.line = L2First(r);
                    c.left = L2Count(r);
                    c.write = L2Write(r);
                }
                active[kept++] = c;
            }
            active.resize(kept);
        }
    }
    k.dirtyLeft = cache.DirtyLines();
    return k;
}

}  // namespace AfTwin

#endif  // AF_TWIN_L2_H
