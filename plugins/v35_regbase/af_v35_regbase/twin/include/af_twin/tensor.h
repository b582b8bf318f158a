// af_twin/tensor.h
// Emulates: AscendC::GlobalTensor (a typed view of a registered GM allocation)
// and AscendC::LocalTensor (a typed view of the running core's UB arena).
// Checks: SetGlobalBuffer ranges lie inside one registered GM allocation;
// scalar GM accesses (GetValue / SetValue) stay inside the GlobalTensor;
// scalar UB accesses stay inside the LocalTensor and the running core's UB.
// Also provides the operand checks (alignment, bounds, owning core) the
// data-movement and vector APIs share.
// Counts: GlobalTensor::GetValue / SetValue as scalar GM reads / writes and the
// 128-byte GM lines they touch.
// Also: DataCacheCleanAndInvalid (GM form) and the scalar data-cache check: a
// GetValue that hits a cached line another core wrote since it was cached is
// reported (dcache-stale).
// Not emulated: accesses through the raw pointers of GetPhyAddr() are neither
// checked nor counted; every UB position (VECIN, VECOUT, VECCALC, ...) is the
// same per-core arena; a LocalTensor kept after FreeTensor or TPipe::Reset
// still works (use after free of UB is not detected).
#ifndef AF_TWIN_TENSOR_H
#define AF_TWIN_TENSOR_H

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core.h"
#include "runtime.h"

namespace AscendC {

template <typename T>
class GlobalTensor {
public:
    GlobalTensor() = default;

    void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
        const uintptr_t p = reinterpret_cast<uintptr_t>(buffer);
        const AfTwin::GmAlloc* a = AfTwin::GmAllocAt(p);
        if (!a)
            AfTwin::Fail("gm-out-of-bounds",
                         "GlobalTensor<%s>::SetGlobalBuffer(%p, %llu): the address is not inside any registered GM "
                         "allocation",
                         AfTwin::TypeName<T>(), static_cast<void*>(buffer),
                         static_cast<unsigned long long>(bufferSize));
        const uint64_t off = p - a->base;
        if (bufferSize > (~uint64_t{0}) / sizeof(T) || !AfTwin::GmContains(a, p, bufferSize * sizeof(T)))
            AfTwin::Fail("gm-out-of-bounds",
                         "GlobalTensor<%s>::SetGlobalBuffer covers bytes [%llu, %llu) of '%s' (size %llu)",
                         AfTwin::TypeName<T>(), static_cast<unsigned long long>(off),
                         static_cast<unsigned long long>(off + bufferSize * sizeof(T)), a->name.c_str(),
                         static_cast<unsigned long long>(a->bytes));
        addr_ = buffer;
        size_ = bufferSize;
        alloc_ = a;
    }

    // Size = the rest of the registered allocation from `buffer` on.
    void SetGlobalBuffer(__gm__ T* buffer) {
        const uintptr_t p = reinterpret_cast<uintptr_t>(buffer);
        const AfTwin::GmAlloc* a = AfTwin::GmAllocAt(p);
        if (!a)
            AfTwin::Fail("gm-out-of-bounds",
                         "GlobalTensor<%s>::SetGlobalBuffer(%p): the address is not inside any registered GM "
                         "allocation",
                         AfTwin::TypeName<T>(), static_cast<void*>(buffer));
        addr_ = buffer;
        size_ = (a->bytes - (p - a->base)) / sizeof(T);
        alloc_ = a;
    }

    // As in the official header: the plain form hands out a read-only pointer, the offset form a
    // writable one (GetPhyAddr(0) is the official way to a writable pointer to the view's start).
    const __gm__ T* GetPhyAddr() const { return addr_; }
    __gm__ T* GetPhyAddr(uint64_t offset) const { return addr_ + offset; }
    uint64_t GetSize() const { return size_; }

    // Sub-view from `offset` to the end; a view past the end is empty (an
    // access through it is reported, building it is not).
    GlobalTensor operator[](uint64_t offset) const {
        GlobalTensor r = *this;
        r.addr_ = addr_ ? addr_ + offset : addr_;  // no arithmetic on a null pointer
        r.size_ = offset <= size_ ? size_ - offset : 0;
        return r;
    }

    // A scalar read through the core's data cache, which other cores' GM writes do not update: a line
    // written by another core since this core cached it is reported (dcache-stale) unless it was
    // invalidated first (DataCacheCleanAndInvalid). As in the official header, only a build with
    // __ASCENDC_SUPER_KERNEL_ENABLE_GM_GET_SET_VALUE_DCCI__ invalidates the line inside GetValue.
    T GetValue(uint64_t offset) const {
        AfCheck(offset, "GlobalTensor::GetValue", "reads");
        AfTwin::CoreCtx* c = AfTwin::tCore;
        if (c) {
            ++c->c.scalarRead;
#ifdef __ASCENDC_SUPER_KERNEL_ENABLE_GM_GET_SET_VALUE_DCCI__
            c->dcache.Invalidate(AfTwin::DeviceAddress(alloc_, addr_ + offset));
#endif
            if (c->inSimt) {
                AfTwin::DcacheRead(c, alloc_, addr_ + offset, sizeof(T));
            } else {
                AfTwin::DcacheScalarRead(c, alloc_, addr_ + offset, sizeof(T), "GlobalTensor::GetValue");
            }
        }
        AfTwin::MarkLines(alloc_, AfByteOffset() + offset * sizeof(T), sizeof(T), false);
        AfTwin::HbScalar(c, "GlobalTensor::GetValue");
        T v;
        std::memcpy(&v, addr_ + offset, sizeof(T));
        return v;
    }

    void SetValue(uint64_t offset, T value) {
        AfCheck(offset, "GlobalTensor::SetValue", "writes");
        AfTwin::CoreCtx* c = AfTwin::tCore;
        if (c) {
            ++c->c.scalarWrite;
            c->c.scalarWriteBytes += sizeof(T);
        }
        AfTwin::MarkLines(alloc_, AfByteOffset() + offset * sizeof(T), sizeof(T), true);
        AfTwin::L2Store(c, alloc_->device + AfByteOffset() + offset * sizeof(T), sizeof(T));
        AfTwin::HbScalar(c, "GlobalTensor::SetValue");
        std::memcpy(addr_ + offset, &value, sizeof(T));
    }

    // --- twin internals -------------------------------------------------
    const AfTwin::GmAlloc* AfAlloc() const { return alloc_; }
    // Byte offset of the view's start from the allocation's base.
    uint64_t AfByteOffset() const { return reinterpret_cast<uintptr_t>(addr_) - alloc_->base; }

    // Checks that bytes [begin, end) relative to the view's start are inside the view.
    void AfCheckBytes(uint64_t begin, uint64_t end, const char* api, const char* verb) const {
        if (!alloc_)
            AfTwin::Fail("gm-out-of-bounds", "%s %s a GlobalTensor<%s> that was never given a buffer (SetGlobalBuffer)",
                         api, verb, AfTwin::TypeName<T>());
        const uint64_t viewBytes = size_ * sizeof(T);
        if (end <= viewBytes && begin <= end) return;
        const uint64_t o = reinterpret_cast<uintptr_t>(addr_) - alloc_->base;
        const bool whole = o == 0 && viewBytes == alloc_->bytes;
        if (whole) {
            AfTwin::Fail("gm-out-of-bounds", "%s %s bytes [%llu, %llu) of '%s' (size %llu)", api, verb,
                         static_cast<unsigned long long>(o + begin), static_cast<unsigned long long>(o + end),
                         alloc_->name.c_str(), static_cast<unsigned long long>(alloc_->bytes));
        }
        AfTwin::Fail("gm-out-of-bounds",
                     "%s %s bytes [%llu, %llu) of '%s' (size %llu) but the GlobalTensor covers bytes [%llu, %llu)", api,
                     verb, static_cast<unsigned long long>(o + begin), static_cast<unsigned long long>(o + end),
                     alloc_->name.c_str(), static_cast<unsigned long long>(alloc_->bytes),
                     static_cast<unsigned long long>(o), static_cast<unsigned long long>(o + viewBytes));
    }

private:
    void AfCheck(uint64_t offset, const char* api, const char* verb) const {
        if (offset >= size_ || !alloc_) {
            const uint64_t b = offset * sizeof(T);
            AfCheckBytes(b, b + sizeof(T), api, verb);
        }
    }

    __gm__ T* addr_ = nullptr;
    uint64_t size_ = 0;
    const AfTwin::GmAlloc* alloc_ = nullptr;
};

template <typename T>
class LocalTensor {
public:
    LocalTensor() = default;

    LocalTensor operator[](uint32_t offset) const {
        LocalTensor r = *this;
        const uint64_t skip = uint64_t{offset} * sizeof(T);
        r.afOffset = static_cast<uint32_t>(afOffset + skip);
        r.afBytes = skip <= afBytes ? static_cast<uint32_t>(afBytes - skip) : 0u;
        return r;
    }

    T GetValue(uint32_t i) const {
        AfCheckIndex(i, "LocalTensor::GetValue");
        AfScalarAccess(i, false, "LocalTensor::GetValue");
        T v;
        std::memcpy(&v, afArena + afOffset + uint64_t{i} * sizeof(T), sizeof(T));
        return v;
    }

    // Twin-only: element i as it is now, read by no pipe (no race check), for checks a kernel makes under
    // #if defined(AF_CPU_TWIN) that the device never runs.
    T AfPeek(uint32_t i) const {
        AfCheckIndex(i, "LocalTensor::AfPeek");
        T v;
        std::memcpy(&v, afArena + afOffset + uint64_t{i} * sizeof(T), sizeof(T));
        return v;
    }

    void SetValue(uint32_t i, T v) const {
        AfCheckIndex(i, "LocalTensor::SetValue");
        AfScalarAccess(i, true, "LocalTensor::SetValue");
        std::memcpy(afArena + afOffset + uint64_t{i} * sizeof(T), &v, sizeof(T));
    }

    T& operator()(uint32_t i) const {
        AfCheckIndex(i, "LocalTensor::operator()");
        AfScalarAccess(i, true, "LocalTensor::operator()");  // a reference: may be written
        if ((afOffset % alignof(T)) != 0)
            AfTwin::Fail("ub-misaligned", "LocalTensor<%s>::operator(): view starts at UB byte offset %u",
                         AfTwin::TypeName<T>(), afOffset);
        return reinterpret_cast<T*>(afArena + afOffset)[i];
    }

    __ubuf__ T* GetPhyAddr() const { return afArena ? reinterpret_cast<T*>(afArena + afOffset) : nullptr; }
    __ubuf__ T* GetPhyAddr(uint32_t offset) const {
        return afArena ? reinterpret_cast<T*>(afArena + afOffset) + offset : nullptr;
    }

    uint32_t GetSize() const { return static_cast<uint32_t>(afBytes / sizeof(T)); }
    uint32_t GetLength() const { return afBytes; }

    // Resizes the view; it may grow up to the end of the UB buffer it came from.
    void SetSize(uint32_t size) {
        const uint64_t want = uint64_t{size} * sizeof(T);
        if (!afArena || afOffset + want > afBufEnd)
            AfTwin::Fail("ub-out-of-bounds",
                         "LocalTensor<%s>::SetSize(%u) needs UB bytes [%u, %llu) but its buffer ends at %u",
                         AfTwin::TypeName<T>(), size, afOffset, static_cast<unsigned long long>(afOffset + want),
                         afBufEnd);
        afBytes = static_cast<uint32_t>(want);
    }

    template <typename U>
    LocalTensor<U> ReinterpretCast() const {
        LocalTensor<U> r;
        r.afArena = afArena;
        r.afOffset = afOffset;
        r.afBytes = afBytes;
        r.afBufEnd = afBufEnd;
        return r;
    }

    // --- twin internals: the view is bytes [afOffset, afOffset + afBytes) of
    // the arena; afBufEnd is the end of the UB buffer the view was cut from.
    uint8_t* afArena = nullptr;
    uint32_t afOffset = 0;
    uint32_t afBytes = 0;
    uint32_t afBufEnd = 0;

    static LocalTensor AfMake(uint8_t* arena, uint32_t offset, uint32_t bytes, uint32_t bufEnd) {
        LocalTensor r;
        r.afArena = arena;
        r.afOffset = offset;
        r.afBytes = bytes;
        r.afBufEnd = bufEnd;
        return r;
    }

private:
    // A scalar access of element i: one PIPE_S instruction, or part of the running SIMT / register function.
    void AfScalarAccess(uint32_t i, bool write, const char* api) const {
        AfTwin::CoreCtx* c = AfTwin::tCore;
        AfTwin::HbUb(c, afOffset + uint64_t{i} * sizeof(T), sizeof(T), write);
        AfTwin::HbScalar(c, api);
    }

    void AfCheckIndex(uint32_t i, const char* api) const {
        if (!afArena)
            AfTwin::Fail("ub-out-of-bounds", "%s(%u) on an empty LocalTensor<%s> (never allocated)", api, i,
                         AfTwin::TypeName<T>());
        if (AfTwin::RequireCore(api)->arena != afArena)
            AfTwin::Fail("ub-out-of-bounds", "%s(%u) on a LocalTensor of another core's UB", api, i);
        if (i >= GetSize())
            AfTwin::Fail("ub-out-of-bounds", "%s(%u) on a LocalTensor<%s> of %u elements (UB bytes [%u, %u))", api, i,
                         AfTwin::TypeName<T>(), GetSize(), afOffset, afOffset + afBytes);
    }
};

enum class CacheLine : uint64_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint64_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };

// Cleans and invalidates the data-cache line holding dst's first element (SINGLE_CACHE_LINE) or the whole
// data cache of the core (ENTIRE_DATA_CACHE): the next scalar read of such a line fetches it from GM.
template <typename T, CacheLine entireType, DcciDst dcciDst>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
    AfTwin::CoreCtx* c = AfTwin::RequireCore("DataCacheCleanAndInvalid");
    if (entireType == CacheLine::ENTIRE_DATA_CACHE) {
        c->dcache.InvalidateAll();
        return;
    }
    if (dst.AfAlloc() == nullptr)
        AfTwin::Fail("gm-out-of-bounds", "DataCacheCleanAndInvalid on a GlobalTensor<%s> that was never given a "
                     "buffer (SetGlobalBuffer)", AfTwin::TypeName<T>());
    c->dcache.Invalidate(AfTwin::DeviceAddress(dst.AfAlloc(), dst.GetPhyAddr()));
}

template <typename T, CacheLine entireType>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>& dst) {
    DataCacheCleanAndInvalid<T, entireType, DcciDst::CACHELINE_OUT>(dst);
}

}  // namespace AscendC

namespace AfTwin {

// Checks one UB operand of a data-movement or vector API: a real tensor of the
// running core, starting 32-byte aligned; returns its first element.
template <typename T>
inline T* UbStart(const AscendC::LocalTensor<T>& t, const char* api, const char* operand) {
    CoreCtx* c = RequireCore(api);
    if (!t.afArena)
        Fail("ub-out-of-bounds", "%s: operand %s is an empty LocalTensor<%s> (never allocated)", api, operand,
             TypeName<T>());
    if (t.afArena != c->arena)
        Fail("ub-out-of-bounds", "%s: operand %s is a LocalTensor of another core's UB", api, operand);
    if (t.afOffset % kUbAlign != 0)
        Fail("ub-misaligned", "%s: operand %s starts at UB byte offset %u, which is not 32-byte aligned", api, operand,
             t.afOffset);
    return reinterpret_cast<T*>(t.afArena + t.afOffset);
}

// Checks that bytes [begin, end) relative to the operand's start lie in its view.
template <typename T>
inline void UbBytes(const AscendC::LocalTensor<T>& t, uint64_t begin, uint64_t end, const char* api,
                    const char* operand) {
    if (begin <= end && end <= t.afBytes) {
        HbUb(RequireCore(api), t.afOffset + begin, end - begin, HbWritesOperand(operand));
        return;
    }
    Fail("ub-out-of-bounds",
         "%s: operand %s accesses UB bytes [%llu, %llu) but its LocalTensor<%s> covers [%u, %u) (%u elements)", api,
         operand, static_cast<unsigned long long>(t.afOffset + begin),
         static_cast<unsigned long long>(t.afOffset + end), TypeName<T>(), t.afOffset, t.afOffset + t.afBytes,
         t.GetSize());
}

// UbStart + the first `elems` elements must lie in the view; counts their bytes (vector_ub_bytes).
template <typename T>
inline T* UbOperand(const AscendC::LocalTensor<T>& t, uint64_t elems, const char* api, const char* operand) {
    T* p = UbStart(t, api, operand);
    if (elems > t.GetSize())
        Fail("ub-out-of-bounds",
             "%s: operand %s needs %llu elements (UB bytes [%u, %llu)) but its LocalTensor<%s> holds %u elements "
             "(UB bytes [%u, %u))",
             api, operand, static_cast<unsigned long long>(elems), t.afOffset,
             static_cast<unsigned long long>(t.afOffset + elems * sizeof(T)), TypeName<T>(), t.GetSize(), t.afOffset,
             t.afOffset + t.afBytes);
    CoreCtx* c = RequireCore(api);
    c->c.vectorUbBytes += elems * sizeof(T);
    HbUb(c, t.afOffset, elems * sizeof(T), HbWritesOperand(operand));
    return p;
}

inline void CheckCount(int64_t count, const char* api) {
    if (count < 0) Fail("api-params", "%s: count %lld is negative", api, static_cast<long long>(count));
}

}  // namespace AfTwin

#endif  // AF_TWIN_TENSOR_H
