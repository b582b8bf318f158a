// af_twin/pipe.h
// Emulates: AscendC::TPipe (a bump allocator over the running core's UB),
// AscendC::TQue (a FIFO over `num` equal UB buffers) and AscendC::TBuf (one
// UB buffer).
// Checks: the live allocations of a core fit in the configured usable UB
// (ub-overflow), and after a VF_CALL of the core the smaller budget of a SIMT
// kernel (simt-dcache, see VfUbBudget); queue protocol AllocTensor -> EnQue -> DeQue -> FreeTensor
// (que-misuse: allocating with every buffer taken, dequeuing an empty queue,
// enqueuing / freeing a tensor that is not an allocated buffer of the queue,
// using a queue whose memory was released by TPipe::Reset / Destroy);
// InitBuffer with num or len 0 (api-params).
// Counts: the UB high-water mark per core (ub_high_water, max over cores).
// Not emulated: the depth template argument and the queue positions have no
// effect; memory is handed out in InitBuffer order and only comes back when
// TPipe::Reset / Destroy (or the TPipe's destructor) frees all of the pipe's
// buffers, so holes are never refilled. EnQue / DeQue / FreeTensor /
// AllocTensor set and wait the flags of hb.h with event ids from the TPipe.
#ifndef AF_TWIN_PIPE_H
#define AF_TWIN_PIPE_H

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "core.h"
#include "runtime.h"
#include "tensor.h"

namespace AfTwin {

inline uint32_t RoundUp32(uint64_t n) { return static_cast<uint32_t>((n + 31u) / 32u * 32u); }

inline bool UbAllocAlive(const CoreCtx* c, uint64_t id) {
    for (const UbAlloc& a : c->allocs) {
        if (a.id == id) return true;
    }
    return false;
}

}  // namespace AfTwin

namespace AscendC {

template <TPosition src, TPosition dst, int32_t depth>
class TQueBind;
// A queue of one position is the queue bound from that position to itself (kernel_tque.h: TQue derives from
// TQueBind<pos, pos, depth>); its flags are the position's (AfQueEnqEvent).
template <TPosition pos, int32_t depth>
using TQue = TQueBind<pos, pos, depth>;
template <TPosition pos>
class TBuf;

class TPipe;
inline thread_local TPipe* afCurrentPipe = nullptr;

class TPipe {
public:
    TPipe() { afCurrentPipe = this; }
    ~TPipe() {
        AfRelease();
        if (afCurrentPipe == this) afCurrentPipe = nullptr;
    }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;

    void Init() {}

    // `num` buffers of `len` bytes each (each rounded up to 32 bytes).
    template <class Q>
    void InitBuffer(Q& que, uint8_t num, uint32_t len) {
        if (num == 0 || len == 0)
            AfTwin::Fail("api-params", "TPipe::InitBuffer(que, num=%u, len=%u): num and len must be positive",
                         static_cast<unsigned>(num), len);
        const uint32_t slot = AfTwin::RoundUp32(len);
        char what[96];
        std::snprintf(what, sizeof what, "TPipe::InitBuffer(que, num=%u, len=%u)", static_cast<unsigned>(num), len);
        const AfTwin::UbAlloc a = AfAllocate(uint64_t{slot} * num, what, slot);
        que.AfInit(AfTwin::tCore->arena, a.offset, slot, num, a.id);
    }

    template <TPosition p>
    void InitBuffer(TBuf<p>& buf, uint32_t len) {
        if (len == 0) AfTwin::Fail("api-params", "TPipe::InitBuffer(buf, len=0): len must be positive");
        char what[96];
        std::snprintf(what, sizeof what, "TPipe::InitBuffer(buf, len=%u)", len);
        const AfTwin::UbAlloc a = AfAllocate(AfTwin::RoundUp32(len), what, AfTwin::RoundUp32(len));
        buf.AfInit(AfTwin::tCore->arena, a.offset, a.bytes, a.id);
    }

    // Frees every UB allocation of this pipe.
    void Reset() { AfRelease(); }
    void Destroy() { AfRelease(); }

    // Event ids, per HardEvent: AllocEventID takes the lowest free one, ReleaseEventID gives it back,
    // FetchEventID only looks (kernel_tpipe_impl.h). The queues take theirs from the same pool, so an id a
    // kernel takes here never collides with a flag a queue holds.
    template <HardEvent e>
    event_t AllocEventID() {
        return AfTwin::HbAllocId(AfTwin::RequireCore("TPipe::AllocEventID"), static_cast<uint32_t>(e),
                                 AfTwin::kHbEventNames[static_cast<uint32_t>(e)]);
    }
    template <HardEvent e>
    void ReleaseEventID(event_t id) {
        AfTwin::HbReleaseId(AfTwin::RequireCore("TPipe::ReleaseEventID"), static_cast<uint32_t>(e), id,
                            AfTwin::kHbEventNames[static_cast<uint32_t>(e)]);
    }
    event_t FetchEventID(HardEvent e) {
        return AfTwin::HbFetchId(AfTwin::RequireCore("TPipe::FetchEventID"), static_cast<uint32_t>(e),
                                 AfTwin::kHbEventNames[static_cast<uint32_t>(e)]);
    }
    template <HardEvent e>
    event_t FetchEventID() {
        return FetchEventID(e);
    }

private:
    AfTwin::UbAlloc AfAllocate(uint64_t bytes, const char* what, uint32_t slot) {
        AfTwin::CoreCtx* c = AfTwin::RequireCore(what);
        if (ctx_ && ctx_ != c) AfTwin::Fail("launch", "%s: this TPipe belongs to another core", what);
        ctx_ = c;
        const uint32_t usable = AfTwin::UbSize();
        const uint32_t offset = c->ubUsed;
        if (bytes > usable || offset + bytes > usable)
            AfTwin::Fail("ub-overflow",
                         "%s requests %llu bytes of UB but only %u of the %u usable bytes are free (%u already "
                         "allocated)",
                         what, static_cast<unsigned long long>(bytes), usable - offset, usable, offset);
        if (c->vfKernel && offset + bytes > AfTwin::VfUbBudget())
            AfTwin::Fail("simt-dcache",
                         "%s requests %llu bytes of UB at offset %u in a kernel that launches VF_CALL, whose TPipe "
                         "budget is %u bytes (min(UB %u - %u reserved, usable %u) - %u data cache)",
                         what, static_cast<unsigned long long>(bytes), offset, AfTwin::VfUbBudget(),
                         AfTwin::kPhysicalUb, AfTwin::kSystemReserve, usable, AfTwin::DcacheReserve());
        AfTwin::UbAlloc a;
        a.offset = offset;
        a.bytes = static_cast<uint32_t>(bytes);
        a.slot = slot;
        a.owner = this;
        a.id = c->nextAllocId++;
        c->allocs.push_back(a);
        c->ubUsed = offset + a.bytes;
        if (c->ubUsed > c->c.ubHigh) c->c.ubHigh = c->ubUsed;
        return a;
    }

    void AfRelease() {
        AfTwin::CoreCtx* c = AfTwin::tCore;
        if (!ctx_ || c != ctx_) return;  // nothing allocated, or the core is gone
        uint32_t end = 0;
        std::vector<AfTwin::UbAlloc> keep;
        for (const AfTwin::UbAlloc& a : c->allocs) {
            if (a.owner == this) continue;
            keep.push_back(a);
            end = std::max(end, a.offset + a.bytes);
        }
        c->allocs.swap(keep);
        c->ubUsed = end;
    }

    AfTwin::CoreCtx* ctx_ = nullptr;
};


// The flags a queue's calls carry (资源管理/TQue EnQue.md / DeQue.md, kernel_tquebind_impl.h): a VECIN
// queue is filled by MTE2 and read by V (EnQue sets MTE2_V, DeQue waits it; FreeTensor sets V_MTE2, the
// AllocTensor reusing the buffer waits it); a VECOUT queue is filled by V and read by MTE3 (V_MTE3 /
// MTE3_V). Queues of other positions carry no flags here.
constexpr HardEvent AfQueEnqEvent(TPosition pos) {
    return pos == TPosition::VECIN ? HardEvent::MTE2_V : pos == TPosition::VECOUT ? HardEvent::V_MTE3 : HardEvent::MAX;
}
constexpr HardEvent AfQueFreeEvent(TPosition pos) {
    return pos == TPosition::VECIN ? HardEvent::V_MTE2 : pos == TPosition::VECOUT ? HardEvent::MTE3_V : HardEvent::MAX;
}
// A queue bound from VECIN to VECOUT (TQueBind<VECIN, VECOUT, depth>) hands a tile MTE2 filled straight to
// MTE3: UB to UB, so EnQue sets MTE2_MTE3 and FreeTensor MTE3_MTE2 (kernel_event.h GetQueEvt, UB -> UB). Other
// bindings of two different positions carry no flags here.
constexpr HardEvent AfQueBindEnqEvent(TPosition src, TPosition dst) {
    return src == dst                                                ? AfQueEnqEvent(src)
           : src == TPosition::VECIN && dst == TPosition::VECOUT ? HardEvent::MTE2_MTE3
                                                                   : HardEvent::MAX;
}
constexpr HardEvent AfQueBindFreeEvent(TPosition src, TPosition dst) {
    return src == dst                                                ? AfQueFreeEvent(src)
           : src == TPosition::VECIN && dst == TPosition::VECOUT ? HardEvent::MTE3_MTE2
                                                                   : HardEvent::MAX;
}

inline int32_t AfQueSet(HardEvent e) {
    AfTwin::CoreCtx* c = AfTwin::RequireCore("TQue");
    const uint32_t ev = static_cast<uint32_t>(e);
    const int32_t id = AfTwin::HbAllocId(c, ev, AfTwin::kHbEventNames[ev]);
    AfTwin::HbSetFlag(c, static_cast<uint32_t>(AfPipesOf(e).src), ev, id, AfTwin::kHbEventNames[ev]);
    return id;
}

inline void AfQueWait(HardEvent e, int32_t id) {
    AfTwin::CoreCtx* c = AfTwin::RequireCore("TQue");
    const uint32_t ev = static_cast<uint32_t>(e);
    AfTwin::HbWaitFlag(c, static_cast<uint32_t>(AfPipesOf(e).dst), ev, id, AfTwin::kHbEventNames[ev]);
    AfTwin::HbReleaseId(c, ev, id, AfTwin::kHbEventNames[ev]);
}

template <TPosition src, TPosition dst, int32_t depth>
class TQueBind {
public:
    static constexpr HardEvent kEnqEvent = AfQueBindEnqEvent(src, dst);
    static constexpr HardEvent kFreeEvent = AfQueBindFreeEvent(src, dst);

    TQueBind() = default;
    TQueBind(const TQueBind&) = delete;
    TQueBind& operator=(const TQueBind&) = delete;
    // As TPipe::Destroy does: wait for the flags of buffers freed and never allocated again.
    ~TQueBind() {
        if (!AfTwin::tCore || !arena_ || arena_ != AfTwin::tCore->arena) return;
        for (uint32_t s = 0; s < num_; ++s) {
            if (freeId_[s] >= 0) AfQueWait(kFreeEvent, freeId_[s]);
            freeId_[s] = -1;
        }
    }

    template <typename T>
    LocalTensor<T> AllocTensor() {
        AfAlive("TQue::AllocTensor");
        for (uint32_t k = 0; k < num_; ++k) {
            const uint32_t s = (cursor_ + k) % num_;
            if (state_[s] == kFree) {
                if constexpr (kFreeEvent != HardEvent::MAX) {
                    if (freeId_[s] >= 0) AfQueWait(kFreeEvent, freeId_[s]);
                }
                freeId_[s] = -1;
                state_[s] = kHeld;
                bytes_[s] = slot_;
                cursor_ = (s + 1) % num_;
                return LocalTensor<T>::AfMake(arena_, base_ + s * slot_, slot_, base_ + (s + 1) * slot_);
            }
        }
        AfTwin::Fail("que-misuse",
                     "TQue::AllocTensor: all %u buffers of the queue are taken (%u enqueued, %u allocated or "
                     "dequeued); FreeTensor one first",
                     num_, queued_, num_ - queued_);
    }

    template <typename T>
    bool EnQue(const LocalTensor<T>& t) {
        AfAlive("TQue::EnQue");
        const uint32_t s = AfSlotOf(t.afArena, t.afOffset, "TQue::EnQue");
        if (state_[s] == kQueued)
            AfTwin::Fail("que-misuse", "TQue::EnQue: buffer %u (UB offset %u) is already enqueued", s, t.afOffset);
        if (state_[s] == kFree)
            AfTwin::Fail("que-misuse",
                         "TQue::EnQue: buffer %u (UB offset %u) is not allocated (AllocTensor it first, or it was "
                         "already freed)",
                         s, t.afOffset);
        state_[s] = kQueued;
        if constexpr (kEnqEvent != HardEvent::MAX) enqId_[s] = AfQueSet(kEnqEvent);
        bytes_[s] = t.afBytes;
        fifo_[(head_ + queued_) % num_] = s;
        ++queued_;
        return true;
    }

    template <typename T>
    LocalTensor<T> DeQue() {
        AfAlive("TQue::DeQue");
        if (queued_ == 0) AfTwin::Fail("que-misuse", "TQue::DeQue: the queue is empty (nothing was enqueued)");
        const uint32_t s = fifo_[head_];
        head_ = (head_ + 1) % num_;
        --queued_;
        state_[s] = kHeld;
        if constexpr (kEnqEvent != HardEvent::MAX) AfQueWait(kEnqEvent, enqId_[s]);
        enqId_[s] = -1;
        return LocalTensor<T>::AfMake(arena_, base_ + s * slot_, bytes_[s], base_ + (s + 1) * slot_);
    }

    template <typename T>
    void FreeTensor(LocalTensor<T>& t) {
        AfAlive("TQue::FreeTensor");
        const uint32_t s = AfSlotOf(t.afArena, t.afOffset, "TQue::FreeTensor");
        if (state_[s] == kQueued)
            AfTwin::Fail("que-misuse", "TQue::FreeTensor: buffer %u (UB offset %u) is still enqueued (DeQue it first)",
                         s, t.afOffset);
        if (state_[s] == kFree)
            AfTwin::Fail("que-misuse", "TQue::FreeTensor: buffer %u (UB offset %u) is not allocated (double free?)", s,
                         t.afOffset);
        state_[s] = kFree;
        if constexpr (kFreeEvent != HardEvent::MAX) freeId_[s] = AfQueSet(kFreeEvent);
    }

    bool VacantInQue() const { return queued_ < num_; }
    bool HasTensorInQue() const { return queued_ > 0; }
    int32_t GetTensorCountInQue() const { return static_cast<int32_t>(queued_); }

    // --- twin internals -------------------------------------------------
    void AfInit(uint8_t* arena, uint32_t base, uint32_t slot, uint32_t num, uint64_t id) {
        arena_ = arena;
        base_ = base;
        slot_ = slot;
        num_ = num;
        allocId_ = id;
        state_.assign(num, kFree);
        bytes_.assign(num, slot);
        fifo_.assign(num, 0);
        enqId_.assign(num, -1);
        freeId_.assign(num, -1);
        head_ = 0;
        queued_ = 0;
        cursor_ = 0;
    }

private:
    enum : uint8_t { kFree = 0, kHeld = 1, kQueued = 2 };

    void AfAlive(const char* api) const {
        AfTwin::CoreCtx* c = AfTwin::RequireCore(api);
        if (!arena_) AfTwin::Fail("que-misuse", "%s on a queue that TPipe::InitBuffer never initialised", api);
        if (arena_ != c->arena || !AfTwin::UbAllocAlive(c, allocId_))
            AfTwin::Fail("que-misuse", "%s on a queue whose UB was released (TPipe::Reset / Destroy)", api);
    }

    uint32_t AfSlotOf(const uint8_t* arena, uint32_t offset, const char* api) const {
        if (arena == arena_ && offset >= base_ && offset < base_ + num_ * slot_ && (offset - base_) % slot_ == 0)
            return (offset - base_) / slot_;
        AfTwin::Fail("que-misuse",
                     "%s: the tensor at UB offset %u is not a buffer of this queue (its %u buffers start at UB "
                     "offset %u, %u bytes apart)",
                     api, offset, num_, base_, slot_);
    }

    uint8_t* arena_ = nullptr;
    uint32_t base_ = 0;
    uint32_t slot_ = 0;
    uint32_t num_ = 0;
    uint64_t allocId_ = 0;
    std::vector<uint8_t> state_;
    std::vector<uint32_t> bytes_;
    std::vector<uint32_t> fifo_;
    std::vector<int32_t> enqId_;   // per buffer: the event id its EnQue set (-1: none)
    std::vector<int32_t> freeId_;  // per buffer: the event id its FreeTensor set (-1: none)
    uint32_t head_ = 0;
    uint32_t queued_ = 0;
    uint32_t cursor_ = 0;
};

template <TPosition pos = TPosition::VECCALC>
class TBuf {
public:
    TBuf() = default;

    template <typename T>
    LocalTensor<T> Get() {
        AfAlive("TBuf::Get");
        return LocalTensor<T>::AfMake(arena_, base_, bytes_, base_ + bytes_);
    }

    template <typename T>
    LocalTensor<T> Get(uint32_t len) {
        AfAlive("TBuf::Get");
        const uint64_t want = uint64_t{len} * sizeof(T);
        if (want > bytes_)
            AfTwin::Fail("ub-out-of-bounds", "TBuf::Get<%s>(%u) asks for %llu bytes but the buffer holds %u",
                         AfTwin::TypeName<T>(), len, static_cast<unsigned long long>(want), bytes_);
        return LocalTensor<T>::AfMake(arena_, base_, static_cast<uint32_t>(want), base_ + bytes_);
    }

    // `size` elements starting `bufOffset` bytes into the buffer.
    template <typename T>
    LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset) {
        AfAlive("TBuf::GetWithOffset");
        const uint64_t want = uint64_t{size} * sizeof(T);
        if (uint64_t{bufOffset} + want > bytes_)
            AfTwin::Fail("ub-out-of-bounds",
                         "TBuf::GetWithOffset<%s>(%u, %u) asks for bytes [%u, %llu) but the buffer holds %u",
                         AfTwin::TypeName<T>(), size, bufOffset, bufOffset,
                         static_cast<unsigned long long>(bufOffset + want), bytes_);
        return LocalTensor<T>::AfMake(arena_, base_ + bufOffset, static_cast<uint32_t>(want), base_ + bytes_);
    }

    // --- twin internals -------------------------------------------------
    void AfInit(uint8_t* arena, uint32_t base, uint32_t bytes, uint64_t id) {
        arena_ = arena;
        base_ = base;
        bytes_ = bytes;
        allocId_ = id;
    }

private:
    void AfAlive(const char* api) const {
        AfTwin::CoreCtx* c = AfTwin::RequireCore(api);
        if (!arena_) AfTwin::Fail("que-misuse", "%s on a TBuf that TPipe::InitBuffer never initialised", api);
        if (arena_ != c->arena || !AfTwin::UbAllocAlive(c, allocId_))
            AfTwin::Fail("que-misuse", "%s on a TBuf whose UB was released (TPipe::Reset / Destroy)", api);
    }

    uint8_t* arena_ = nullptr;
    uint32_t base_ = 0;
    uint32_t bytes_ = 0;
    uint64_t allocId_ = 0;
};

}  // namespace AscendC

// As in the official kernel_common.h, outside namespace AscendC: the pipe the running core constructed last.
inline AscendC::TPipe* GetTPipePtr() {
    if (!AscendC::afCurrentPipe) AfTwin::Fail("api-params", "GetTPipePtr(): no TPipe was constructed on this core");
    return AscendC::afCurrentPipe;
}

#endif  // AF_TWIN_PIPE_H
