// af_twin/datacopy.h
// Emulates: DataCopy (GM->UB, UB->GM, UB->UB; contiguous "count" form and the
// strided DataCopyParams form) and DataCopyPad (GM->UB with left / right
// padding and 32-byte dummy fill, UB->GM) with DataCopyExtParams.
// Checks: every UB operand starts 32-byte aligned (ub-misaligned) and every UB
// byte moved lies in its LocalTensor (ub-out-of-bounds; DataCopyPad's dummy
// bytes may extend to the end of the UB buffer the tensor came from); every GM
// byte moved lies in the GlobalTensor, hence in a registered allocation
// (gm-out-of-bounds); DataCopyPad parameters are in range (datacopy-params);
// the count form moves whole 32-byte blocks (datacopy-count).
// DataCopyParams: blockCount in [1, 4095] and blockLen >= 1 (datacopy-params).
// Counts: datacopy_calls, gm_read_bytes / gm_write_bytes (data bytes only, no
// padding or dummy bytes) and the distinct 128-byte GM lines touched.
// Not emulated: the MTE pipes run synchronously (a copy is complete when the
// call returns); GM addresses are not checked for alignment; with isPad false
// the padding elements are poison (0xCD), hardware leaves them undefined;
// DataCopyPad UB->UB and the DataCopyPadParams (non-Ext) overloads are absent.
#ifndef AF_TWIN_DATACOPY_H
#define AF_TWIN_DATACOPY_H

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "pipe.h"
#include "runtime.h"
#include "tensor.h"

namespace AfTwin {

// Bytes of a contiguous DataCopy of `count` elements; reports a count whose bytes are not whole 32-byte blocks.
template <typename T>
inline uint64_t CopyCountBytes(const char* api, uint32_t count) {
    const uint64_t bytes = uint64_t{count} * sizeof(T);
    if (bytes % kUbAlign != 0)
        Fail("datacopy-count",
             "%s: count %u * sizeof(%s) = %llu bytes is not a multiple of 32 (the CPU-debug build asserts, the NPU "
             "rounds down to %llu bytes and drops the tail); copy a tail with DataCopyPad",
             api, count, TypeName<T>(), static_cast<unsigned long long>(bytes),
             static_cast<unsigned long long>(bytes / kUbAlign * kUbAlign));
    return bytes;
}

inline void CheckPadParams(const char* api, uint32_t blockCount, uint32_t blockLen, uint32_t elem, const char* type,
                           uint32_t left, uint32_t right) {
    if (blockCount < 1 || blockCount > 4095)
        Fail("datacopy-params", "%s: blockCount %u must be in [1, 4095]", api, blockCount);
    if (blockLen < 1 || blockLen > (1u << 21) - 1u)
        Fail("datacopy-params", "%s: blockLen %u bytes must be in [1, 2097151]", api, blockLen);
    if (blockLen % elem != 0)
        Fail("datacopy-params", "%s: blockLen %u bytes is not a multiple of sizeof(%s) = %u", api, blockLen, type,
             elem);
    if (left * elem > 32 || right * elem > 32)
        Fail("datacopy-params", "%s: leftPadding %u / rightPadding %u elements of %u bytes exceed 32 bytes", api, left,
             right, elem);
}

inline void CheckBlockParams(const char* api, uint32_t blockCount, uint32_t blockLen) {
    if (blockCount < 1 || blockCount > 4095)
        Fail("datacopy-params", "%s: blockCount %u must be in [1, 4095]", api, blockCount);
    if (blockLen < 1) Fail("datacopy-params", "%s: blockLen must be at least one 32-byte block", api);
}

}  // namespace AfTwin

namespace AscendC {

// Strided copy parameters; blockLen and both strides are in 32-byte blocks.
struct DataCopyParams {
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;

    DataCopyParams() = default;
    DataCopyParams(uint16_t count, uint16_t len, uint16_t srcStrideIn, uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
};

// DataCopyPad parameters: blockLen in bytes; the GM-side stride in bytes, the
// UB-side stride in 32-byte blocks.
struct DataCopyExtParams {
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;

    DataCopyExtParams() = default;
    DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcStrideIn, uint32_t dstStrideIn, uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
};

template <typename T>
struct DataCopyPadExtParams {
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue{};

    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(bool isPadIn, uint8_t left, uint8_t right, T value)
        : isPad(isPadIn), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

// Declared for completeness (the twin implements DataCopyPad with the Ext types only).
struct DataCopyPadParams {
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;

    DataCopyPadParams() = default;
    DataCopyPadParams(bool isPadIn, uint8_t left, uint8_t right, uint64_t value)
        : isPad(isPadIn), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

// ---------------------------------------------------------------------------
// Contiguous DataCopy: count * sizeof(T) must be a multiple of 32 bytes. The
// official CPU-debug build asserts it and the NPU silently rounds down (the tail
// is not copied), so the twin reports any other count (datacopy-count); a tail
// needs DataCopyPad.

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
    const char* api = "DataCopy GM->UB";
    const uint64_t bytes = AfTwin::CopyCountBytes<T>(api, count);
    uint8_t* d = reinterpret_cast<uint8_t*>(AfTwin::UbStart(dst, api, "dst"));
    AfTwin::UbBytes(dst, 0, bytes, api, "dst");
    src.AfCheckBytes(0, bytes, api, "reads");
    AfTwin::CoreCtx* c = AfTwin::tCore;
    ++c->c.datacopy;
    c->c.gmRead += bytes;
    if (bytes != 0) {
        AfTwin::CopyLines(src.AfAlloc(), src.AfByteOffset(), bytes, false);
        std::memcpy(d, src.GetPhyAddr(), bytes);
    }
    AfTwin::HbCommit(c, AfTwin::kPipeMte2, api);
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    const char* api = "DataCopy UB->GM";
    const uint64_t bytes = AfTwin::CopyCountBytes<T>(api, count);
    const uint8_t* s = reinterpret_cast<const uint8_t*>(AfTwin::UbStart(src, api, "src"));
    AfTwin::UbBytes(src, 0, bytes, api, "src");
    dst.AfCheckBytes(0, bytes, api, "writes");
    AfTwin::CoreCtx* c = AfTwin::tCore;
    ++c->c.datacopy;
    c->c.gmWrite += bytes;
    if (bytes != 0) AfTwin::CopyLines(dst.AfAlloc(), dst.AfByteOffset(), bytes, true);
    AfTwin::HbCommit(c, AfTwin::kPipeMte3, api, true);  // then the copy reads UB (lag mode: maybe stale)
    if (bytes != 0) std::memcpy(dst.GetPhyAddr(0), s, bytes);
}

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
    const char* api = "DataCopy UB->UB";
    const uint64_t bytes = AfTwin::CopyCountBytes<T>(api, count);
    uint8_t* d = reinterpret_cast<uint8_t*>(AfTwin::UbStart(dst, api, "dst"));
    const uint8_t* s = reinterpret_cast<const uint8_t*>(AfTwin::UbStart(src, api, "src"));
    AfTwin::UbBytes(dst, 0, bytes, api, "dst");
    AfTwin::UbBytes(src, 0, bytes, api, "src");
    ++AfTwin::tCore->c.datacopy;
    if (bytes) std::memmove(d, s, bytes);
    AfTwin::HbCommit(AfTwin::tCore, AfTwin::kPipeV, api);  // a UB -> UB copy runs on the vector pipe
}

// ---------------------------------------------------------------------------
// Strided DataCopy: blockCount blocks of blockLen 32-byte blocks; the gap after
// each block is srcStride / dstStride 32-byte blocks on either side.

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
    const char* api = "DataCopy(DataCopyParams) GM->UB";
    AfTwin::CheckBlockParams(api, p.blockCount, p.blockLen);
    uint8_t* d = reinterpret_cast<uint8_t*>(AfTwin::UbStart(dst, api, "dst"));
    const uint64_t len = uint64_t{p.blockLen} * 32u;
    AfTwin::CoreCtx* c = AfTwin::tCore;
    ++c->c.datacopy;
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        const uint64_t so = i * (len + uint64_t{p.srcStride} * 32u);
        const uint64_t dof = i * (len + uint64_t{p.dstStride} * 32u);
        AfTwin::UbBytes(dst, dof, dof + len, api, "dst");
        src.AfCheckBytes(so, so + len, api, "reads");
        c->c.gmRead += len;
        if (len == 0) continue;
        AfTwin::CopyLines(src.AfAlloc(), src.AfByteOffset() + so, len, false);
        std::memcpy(d + dof, reinterpret_cast<const uint8_t*>(src.GetPhyAddr()) + so, len);
    }
    AfTwin::HbCommit(c, AfTwin::kPipeMte2, api);
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    const char* api = "DataCopy(DataCopyParams) UB->GM";
    AfTwin::CheckBlockParams(api, p.blockCount, p.blockLen);
    const uint8_t* s = reinterpret_cast<const uint8_t*>(AfTwin::UbStart(src, api, "src"));
    const uint64_t len = uint64_t{p.blockLen} * 32u;
    AfTwin::CoreCtx* c = AfTwin::tCore;
    ++c->c.datacopy;
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        const uint64_t so = i * (len + uint64_t{p.srcStride} * 32u);
        const uint64_t dof = i * (len + uint64_t{p.dstStride} * 32u);
        AfTwin::UbBytes(src, so, so + len, api, "src");
        dst.AfCheckBytes(dof, dof + len, api, "writes");
        c->c.gmWrite += len;
        if (len != 0) AfTwin::CopyLines(dst.AfAlloc(), dst.AfByteOffset() + dof, len, true);
    }
    AfTwin::HbCommit(c, AfTwin::kPipeMte3, api, true);  // then the copies read UB (lag mode: maybe stale)
    for (uint32_t i = 0; i < p.blockCount && len != 0; ++i) {
        const uint64_t so = i * (len + uint64_t{p.srcStride} * 32u);
        const uint64_t dof = i * (len + uint64_t{p.dstStride} * 32u);
        std::memcpy(reinterpret_cast<uint8_t*>(dst.GetPhyAddr(0)) + dof, s + so, len);
    }
}

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
    const char* api = "DataCopy(DataCopyParams) UB->UB";
    AfTwin::CheckBlockParams(api, p.blockCount, p.blockLen);
    uint8_t* d = reinterpret_cast<uint8_t*>(AfTwin::UbStart(dst, api, "dst"));
    const uint8_t* s = reinterpret_cast<const uint8_t*>(AfTwin::UbStart(src, api, "src"));
    const uint64_t len = uint64_t{p.blockLen} * 32u;
    ++AfTwin::tCore->c.datacopy;
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        const uint64_t so = i * (len + uint64_t{p.srcStride} * 32u);
        const uint64_t dof = i * (len + uint64_t{p.dstStride} * 32u);
        AfTwin::UbBytes(src, so, so + len, api, "src");
        AfTwin::UbBytes(dst, dof, dof + len, api, "dst");
        if (len) std::memmove(d + dof, s + so, len);
    }
    AfTwin::HbCommit(AfTwin::tCore, AfTwin::kPipeV, api);
}

// ---------------------------------------------------------------------------
// DataCopyPad.

// GM -> UB. Block i reads blockLen bytes at GM byte offset i * (blockLen +
// srcStride) and lands at UB byte offset i * (ceil32(left + blockLen + right) +
// dstStride * 32) as [left padding][data][right padding][dummy up to 32 B].
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>& pad) {
    const char* api = "DataCopyPad GM->UB";
    const uint32_t es = static_cast<uint32_t>(sizeof(T));
    AfTwin::CheckPadParams(api, p.blockCount, p.blockLen, es, AfTwin::TypeName<T>(), pad.leftPadding, pad.rightPadding);
    uint8_t* d = reinterpret_cast<uint8_t*>(AfTwin::UbStart(dst, api, "dst"));
    const uint64_t leftBytes = uint64_t{pad.leftPadding} * es;
    const uint64_t rightBytes = uint64_t{pad.rightPadding} * es;
    const uint64_t used = leftBytes + p.blockLen + rightBytes;
    const uint64_t blockUb = AfTwin::RoundUp32(used);
    const uint64_t ubStep = blockUb + uint64_t{p.dstStride} * 32u;
    const uint64_t gmStep = uint64_t{p.blockLen} + p.srcStride;
    // The dummy bytes may run past the view up to the end of its UB buffer.
    const uint64_t padLimit = std::max<uint64_t>(dst.afBytes, dst.afBufEnd > dst.afOffset ? dst.afBufEnd - dst.afOffset : 0);
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        const uint64_t u = i * ubStep;
        AfTwin::UbBytes(dst, u, u + used, api, "dst");
        if (u + blockUb > padLimit) AfTwin::UbBytes(dst, u, u + blockUb, api, "dst (32-byte dummy fill)");
        const uint64_t g = i * gmStep;
        src.AfCheckBytes(g, g + p.blockLen, api, "reads");
    }
    AfTwin::CoreCtx* c = AfTwin::tCore;
    ++c->c.datacopy;
    c->c.gmRead += uint64_t{p.blockCount} * p.blockLen;
    const uint8_t* gsrc = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        uint8_t* out = d + i * ubStep;
        const uint64_t g = i * gmStep;
        AfTwin::CopyLines(src.AfAlloc(), src.AfByteOffset() + g, p.blockLen, false);
        for (uint32_t k = 0; k < pad.leftPadding; ++k) {
            if (pad.isPad) {
                std::memcpy(out + uint64_t{k} * es, &pad.paddingValue, es);
            } else {
                std::memset(out + uint64_t{k} * es, AfTwin::kPoison, es);
            }
        }
        std::memcpy(out + leftBytes, gsrc + g, p.blockLen);
        uint8_t* right = out + leftBytes + p.blockLen;
        for (uint32_t k = 0; k < pad.rightPadding; ++k) {
            if (pad.isPad) {
                std::memcpy(right + uint64_t{k} * es, &pad.paddingValue, es);
            } else {
                std::memset(right + uint64_t{k} * es, AfTwin::kPoison, es);
            }
        }
        std::memset(out + used, AfTwin::kPoison, blockUb - used);
        AfTwin::HbUb(c, dst.afOffset + i * ubStep + used, blockUb - used, true);  // the dummy bytes
    }
    AfTwin::HbCommit(c, AfTwin::kPipeMte2, api);
}

// UB -> GM. Block i reads blockLen bytes at UB byte offset i * (ceil32(blockLen)
// + srcStride * 32) and writes them at GM byte offset i * (blockLen + dstStride).
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
    const char* api = "DataCopyPad UB->GM";
    const uint32_t es = static_cast<uint32_t>(sizeof(T));
    AfTwin::CheckPadParams(api, p.blockCount, p.blockLen, es, AfTwin::TypeName<T>(), 0, 0);
    const uint8_t* s = reinterpret_cast<const uint8_t*>(AfTwin::UbStart(src, api, "src"));
    const uint64_t ubStep = uint64_t{AfTwin::RoundUp32(p.blockLen)} + uint64_t{p.srcStride} * 32u;
    const uint64_t gmStep = uint64_t{p.blockLen} + p.dstStride;
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        const uint64_t u = i * ubStep;
        AfTwin::UbBytes(src, u, u + p.blockLen, api, "src");
        const uint64_t g = i * gmStep;
        dst.AfCheckBytes(g, g + p.blockLen, api, "writes");
    }
    AfTwin::CoreCtx* c = AfTwin::tCore;
    ++c->c.datacopy;
    c->c.gmWrite += uint64_t{p.blockCount} * p.blockLen;
    uint8_t* gdst = reinterpret_cast<uint8_t*>(dst.GetPhyAddr(0));
    for (uint32_t i = 0; i < p.blockCount; ++i) {
        AfTwin::CopyLines(dst.AfAlloc(), dst.AfByteOffset() + i * gmStep, p.blockLen, true);
    }
    AfTwin::HbCommit(c, AfTwin::kPipeMte3, api, true);  // then the copies read UB (lag mode: maybe stale)
    for (uint32_t i = 0; i < p.blockCount; ++i) std::memcpy(gdst + i * gmStep, s + i * ubStep, p.blockLen);
}

}  // namespace AscendC

#endif  // AF_TWIN_DATACOPY_H
