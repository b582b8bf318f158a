// kernel_operator.h of the core's fake back end (tests only).
//
// The smallest C++ environment in which the core's generated kernel (kernel.cpp.j2 and the
// per-case functions of af_core/codegen/kernel.py) and the twin harness (harness.cpp.j2) compile
// and run: the device qualifiers, GM_ADDR and TILING_KEY_IS; in namespace AscendC the handful of
// types the core's skeleton prints (TPipe, TQue, TBuf, LocalTensor, GlobalTensor) with scalar
// element access only; in namespace AfTwin what the harness drives (Configure, ConfigureL2, RegisterGm,
// SetGmReadOnly, SetTilingKey, Launch, MarkStage, WriteReportJson).
//
// Each core runs on its own thread; SyncAll is a barrier of all of them. Every scalar global-memory
// access is bounds-checked against the tensor's declared size and the allocation the harness
// registered; a violation prints the line the twin runner parses
// ("AF_TWIN_ERROR kind=... core=N: ...") and ends the process. It emulates no vector API, no SIMT
// and no cache: it is not an AscendC model.
#ifndef AF_FAKE_KERNEL_OPERATOR_H
#define AF_FAKE_KERNEL_OPERATOR_H

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#define __aicore__
#define __global__
#define __gm__
#define GM_ADDR __gm__ uint8_t*
#define TILING_KEY_IS(key) (::AfTwin::State().tilingKey == static_cast<int64_t>(key))
#define KERNEL_TASK_TYPE_DEFAULT(kind)
#define REGISTER_TILING_DEFAULT(tiling_struct)
#define GET_TILING_DATA_WITH_STRUCT(tiling_struct, var, tiling) \
    tiling_struct var;                                         \
    std::memcpy(&var, (tiling), sizeof(tiling_struct))

namespace AfTwin {

struct Allocation {
    const uint8_t* base;
    uint64_t bytes;
    std::string name;
};

constexpr uint32_t kMaxStages = 8;

struct Run {
    int64_t tilingKey = -1;
    uint32_t blockDim = 0;
    std::atomic<uint64_t> scalarReads{0};
    std::atomic<uint64_t> scalarWrites{0};
    std::array<std::atomic<uint32_t>, kMaxStages> stageCores{};
    std::atomic<uint32_t> stages{0};
    std::vector<Allocation> gm;
    // SyncAll barrier
    std::mutex mutex;
    std::condition_variable arrived;
    uint32_t waiting = 0;
    uint32_t finished = 0;
    uint64_t generation = 0;
};

inline Run& State() {
    static Run run;
    return run;
}

inline int64_t& CurrentCore() {
    thread_local int64_t core = -1;  // the core this thread runs; -1 outside Launch
    return core;
}

[[noreturn]] inline void Fail(const char* kind, const std::string& message) {
    std::fprintf(stderr, "AF_TWIN_ERROR kind=%s core=%lld: %s\n", kind, static_cast<long long>(CurrentCore()),
                 message.c_str());
    std::fflush(stderr);
    std::_Exit(3);  // other cores may still be running: end the process without unwinding them
}

inline void Configure(uint32_t /*ubSize*/, uint32_t /*dcacheReserve*/) {}

// The harness passes the platform's L2 (size, line, ways); this back end models no L2, so it only has to accept it.
inline void ConfigureL2(uint64_t /*size*/, uint32_t /*line*/, uint32_t /*ways*/) {}

inline void RegisterGm(const void* base, uint64_t bytes, const char* name) {
    State().gm.push_back({static_cast<const uint8_t*>(base), bytes, name ? name : ""});
}

// The harness declares the inputs read-only; this back end checks no writes, so it only has to accept it.
inline void SetGmReadOnly(const void* /*base*/) {}

inline void SetTilingKey(int64_t key) { State().tilingKey = key; }

// The registered allocation holding [begin, begin + bytes), or null.
inline const Allocation* Holding(const void* begin, uint64_t bytes) {
    const uint8_t* p = static_cast<const uint8_t*>(begin);
    for (const Allocation& a : State().gm) {
        if (p >= a.base && p + bytes <= a.base + a.bytes) return &a;
    }
    return nullptr;
}

// A core that returns while others wait in SyncAll would hang real hardware: stop instead.
inline void Finished() {
    Run& run = State();
    std::lock_guard<std::mutex> lock(run.mutex);
    ++run.finished;
    if (run.waiting > 0) Fail("syncall", "a core returned from the kernel while others wait in SyncAll");
}

inline void Launch(uint32_t blockDim, const std::function<void()>& body) {
    if (blockDim < 1 || blockDim > 256) Fail("launch", "Launch with blockDim " + std::to_string(blockDim));
    Run& run = State();
    run.blockDim = blockDim;
    std::vector<std::thread> cores;
    for (uint32_t core = 0; core < blockDim; ++core) {
        cores.emplace_back([core, &body] {
            CurrentCore() = core;
            body();
            Finished();
        });
    }
    for (std::thread& core : cores) core.join();
}

inline void MarkStage(uint32_t stage) {
    Run& run = State();
    if (stage >= kMaxStages) Fail("stage", "MarkStage(" + std::to_string(stage) + "): too many stages");
    ++run.stageCores[stage];
    uint32_t seen = run.stages.load();
    while (seen < stage + 1 && !run.stages.compare_exchange_weak(seen, stage + 1)) {
    }
}

// Every core of the launch waits here until all have arrived.
inline void Barrier() {
    Run& run = State();
    std::unique_lock<std::mutex> lock(run.mutex);
    if (run.finished > 0) Fail("syncall", "SyncAll after a core returned from the kernel");
    const uint64_t generation = run.generation;
    if (++run.waiting == run.blockDim) {
        run.waiting = 0;
        ++run.generation;
        run.arrived.notify_all();
        return;
    }
    run.arrived.wait(lock, [&] { return run.generation != generation; });
}

// The counters the twin runner reads: integers, plus the list of cores per stage.
inline void WriteReportJson(FILE* f) {
    const Run& run = State();
    std::fprintf(f, "{\"block_dim\": %u, \"scalar_gm_reads\": %llu, \"scalar_gm_writes\": %llu, \"stage_cores\": [",
                 run.blockDim, static_cast<unsigned long long>(run.scalarReads.load()),
                 static_cast<unsigned long long>(run.scalarWrites.load()));
    for (uint32_t i = 0; i < run.stages.load(); ++i) std::fprintf(f, "%s%u", i ? ", " : "", run.stageCores[i].load());
    std::fprintf(f, "]}");
}

}  // namespace AfTwin

namespace AscendC {

enum class TPosition { VECIN, VECOUT, VECCALC };

inline int64_t GetBlockIdx() {
    if (AfTwin::CurrentCore() < 0) AfTwin::Fail("launch", "GetBlockIdx outside Launch");
    return AfTwin::CurrentCore();
}

inline void SyncAll() { AfTwin::Barrier(); }

template <typename T>
class GlobalTensor {
public:
    void SetGlobalBuffer(__gm__ T* base, uint64_t count) {
        if (AfTwin::Holding(base, count * sizeof(T)) == nullptr)
            AfTwin::Fail("gm-bounds", "SetGlobalBuffer of " + std::to_string(count) +
                                          " elements lies outside every registered allocation");
        base_ = base;
        count_ = count;
    }
    T GetValue(uint64_t i) const {
        Check(i, "read");
        ++AfTwin::State().scalarReads;
        return base_[i];
    }
    void SetValue(uint64_t i, T value) {
        Check(i, "write");
        ++AfTwin::State().scalarWrites;
        base_[i] = value;
    }

private:
    void Check(uint64_t i, const char* what) const {
        if (i >= count_) {
            const AfTwin::Allocation* a = AfTwin::Holding(base_, 1);
            AfTwin::Fail("gm-bounds", std::string(what) + " of element " + std::to_string(static_cast<int64_t>(i)) +
                                          " of a " + std::to_string(count_) + "-element tensor in '" +
                                          (a ? a->name : std::string("?")) + "'");
        }
    }
    __gm__ T* base_ = nullptr;
    uint64_t count_ = 0;
};

template <typename T>
class LocalTensor {
public:
    LocalTensor() = default;
    LocalTensor(uint8_t* bytes, uint64_t size, int slot) : bytes_(bytes), size_(size), slot_(slot) {}
    T GetValue(uint64_t i) const {
        Check(i);
        return reinterpret_cast<const T*>(bytes_)[i];
    }
    void SetValue(uint64_t i, T value) const {
        Check(i);
        reinterpret_cast<T*>(bytes_)[i] = value;
    }
    template <typename U>
    LocalTensor<U> ReinterpretCast() const { return LocalTensor<U>(bytes_, size_, slot_); }
    int Slot() const { return slot_; }

private:
    void Check(uint64_t i) const {
        if ((i + 1) * sizeof(T) > size_)
            AfTwin::Fail("ub-bounds", "element " + std::to_string(i) + " of a " + std::to_string(size_) +
                                          "-byte local tensor");
    }
    uint8_t* bytes_ = nullptr;
    uint64_t size_ = 0;
    int slot_ = -1;
};

// A queue of `depth` equal buffers: AllocTensor takes a free one, EnQue/DeQue pass it in order,
// FreeTensor returns it. Misuse (no free buffer, DeQue of an empty queue) stops the kernel.
template <TPosition Pos, int32_t Depth>
class TQue {
public:
    void Init(int32_t num, int64_t bytes) {
        bytes_ = static_cast<uint64_t>(bytes);
        storage_.assign(static_cast<size_t>(num), std::vector<uint8_t>(bytes_, 0));
        busy_.assign(static_cast<size_t>(num), false);
        queued_.clear();
    }
    template <typename T>
    LocalTensor<T> AllocTensor() {
        for (size_t i = 0; i < busy_.size(); ++i) {
            if (!busy_[i]) {
                busy_[i] = true;
                return LocalTensor<T>(storage_[i].data(), bytes_, static_cast<int>(i));
            }
        }
        AfTwin::Fail("queue", "AllocTensor with every buffer of the queue in use");
    }
    template <typename T>
    void EnQue(const LocalTensor<T>& tensor) { queued_.push_back(tensor.Slot()); }
    template <typename T>
    LocalTensor<T> DeQue() {
        if (queued_.empty()) AfTwin::Fail("queue", "DeQue of an empty queue");
        const int slot = queued_.front();
        queued_.erase(queued_.begin());
        return LocalTensor<T>(storage_[static_cast<size_t>(slot)].data(), bytes_, slot);
    }
    template <typename T>
    void FreeTensor(const LocalTensor<T>& tensor) {
        if (tensor.Slot() < 0 || !busy_[static_cast<size_t>(tensor.Slot())])
            AfTwin::Fail("queue", "FreeTensor of a buffer that is not allocated");
        busy_[static_cast<size_t>(tensor.Slot())] = false;
    }

private:
    uint64_t bytes_ = 0;
    std::vector<std::vector<uint8_t>> storage_;
    std::vector<bool> busy_;
    std::vector<int> queued_;
};

// A queue bound from one position to another (the skeleton's VECIN_VECOUT buffers): the same queue here.
template <TPosition Src, TPosition Dst, int32_t Depth>
class TQueBind : public TQue<Src, Depth> {};

template <TPosition Pos>
class TBuf {
public:
    void Init(int64_t bytes) { storage_.assign(static_cast<size_t>(bytes), 0); }
    template <typename T>
    LocalTensor<T> Get() { return LocalTensor<T>(storage_.data(), storage_.size(), 0); }

private:
    std::vector<uint8_t> storage_;
};

// The flags codegen places for a TBuf standing in for a queue (a sequential back end needs none of them).
enum class HardEvent { MTE2_V, V_MTE2, MTE3_V, V_MTE3, MTE2_MTE3, MTE3_MTE2 };

template <HardEvent E>
inline void SetFlag(int32_t /*id*/) {}

template <HardEvent E>
inline void WaitFlag(int32_t /*id*/) {}

class TPipe {
public:
    TPipe() { Current() = this; }
    ~TPipe() { Current() = nullptr; }
    template <TPosition Pos, int32_t Depth>
    void InitBuffer(TQue<Pos, Depth>& queue, int32_t num, int64_t bytes) { queue.Init(num, bytes); }
    template <TPosition Pos>
    void InitBuffer(TBuf<Pos>& buffer, int64_t bytes) { buffer.Init(bytes); }
    void Reset() {}
    int32_t FetchEventID(HardEvent /*event*/) { return 0; }
    static TPipe*& Current() {
        thread_local TPipe* pipe = nullptr;
        return pipe;
    }
};

}  // namespace AscendC

inline AscendC::TPipe* GetTPipePtr() { return AscendC::TPipe::Current(); }

#endif  // AF_FAKE_KERNEL_OPERATOR_H
