// af_twin/reg_mask_moves.h
// One family of the register API that af_twin/reg.h includes (reg.h says what the twin emulates, checks and
// counts): the moves of a mask register to and from UB, and the unaligned store.
#ifndef AF_TWIN_REG_MASK_MOVES_H
#define AF_TWIN_REG_MASK_MOVES_H

#include "reg_unaligned_load.h"

// ---------------------------------------------------------------------------
// Mask register moves section (plds / psts / pstu / movvp / punpack): a predicate between a mask register and
// UB, in the layout the memory-based Compare writes and Select reads -- one bit per element, element k at bit
// k % 8 of byte k / 8 -- as the 3510 memory Compare / Select implementations move it
// (impl/basic_api/dav_3510/kernel_operator_vec_cmp_impl.h, kernel_operator_vec_sel_impl.h). The official pages
// (MaskReg搬入（LoadAlign）, MaskReg搬出（StoreAlign）, MaskReg非对齐搬出（StoreUnAlign）, MaskGenWithRegTensor,
// MaskReg计算 UnPack) document a mask register as 256 bits, 8 / sizeof(T) bits per element of which only the
// lowest counts; the twin keeps one predicate per element and the element width (MaskReg::afWidth), so it
// reads each move at one width:
//   LoadAlign<T, MaskDist::DIST_NORM>(mask, src): 32 bytes (32-byte aligned) -> a mask of 1-byte elements, one
//     bit each; LoadAlign<T, MaskDist::DIST_US>(mask, src): 16 bytes (16-byte aligned), each bit doubled -> a
//     mask of 2-byte elements, element k = bit k (the memory Select's load for 2-byte data).
//   StoreAlign<T, MaskDist::DIST_NORM>(dst, mask): a mask of 1-byte elements -> 32 bytes (32-byte aligned);
//     StoreAlign<T, MaskDist::DIST_PACK>(dst, mask): every other bit -> 16 bytes (16-byte aligned), a mask of
//     2-byte elements one bit each.
//   StoreUnAlign<T>(dst, mask, ureg), T b16 / b32: the lowest bit of each element of a mask of sizeof(T)-byte
//     elements -> 16 (b16, 16-byte aligned) / 8 (b32, 8-byte aligned) bytes at dst, buffered in the
//     UnalignRegForStore; dst advances by those bytes. The twin writes a buffered 32-byte block when a
//     StoreUnAlign moves on to the next block, and the rest at StoreUnAlignPost<T, postMode>(dst, ureg,
//     stride) (POST_MODE_UPDATE then advances dst by stride elements).
//   MaskGenWithRegTensor<T, offset>(mask, src), T b16 / b32: data block `offset` of the register (16 / 8
//     bytes) -> a mask of sizeof(T)-byte elements, element k = bit k (the memory Select's load for 4-byte
//     data, after LoadUnAlign).
//   UnPack<part>(dst, src): a mask of w-byte elements (w 1, 2, 4) -> one of 2w-byte elements, from its lower
//     (HighLowPart::LOWEST) or upper half of elements.
// Checks: the compile-time rules of the 3510 implementation (DataCopyImpl / DataCopyUnAlignImpl /
// MaskGenWithRegTensorImpl: b8 / b16 / b32 / b64 pointers for LoadAlign / StoreAlign, NORM / US / DS loads,
// NORM / PACK stores, b16 / b32 for StoreUnAlign and MaskGenWithRegTensor, offset 0-15 / 0-31); at run time
// the address inside one live TPipe buffer and aligned as above (ub-out-of-bounds / ub-misaligned); a mask
// never set, or of another element width than the move takes (reg-mask); the register lanes
// MaskGenWithRegTensor reads written (reg-mask); a StoreUnAlign or StoreUnAlignPost whose dst does not
// continue the bytes the UnalignRegForStore holds, and a vector function returning while one holds bytes
// (reg-unalign: the hardware would write them elsewhere or never).
// Counts: mask loads in reg_loads (reg_load_bytes 32 / 16), mask stores, StoreUnAlign and StoreUnAlignPost in
// reg_stores (reg_store_bytes the bytes written to UB), MaskGenWithRegTensor and UnPack in reg_masks;
// reg_cycles from tables 3-5 of the appendix: LoadAlign, StoreAlign and StoreUnAlign of a mask 1 cycle,
// MaskGenWithRegTensor 4, UnPack 1, StoreUnAlignPost 1 (table 2: one 32-byte block a cycle).
// Not emulated: DIST_DS loads, a NORM / US load read or a NORM / PACK store made at another element width,
// the AddrReg and post-update forms of the mask LoadAlign / StoreAlign, Pack and the other mask moves.

namespace AscendC {
namespace Reg {

enum class MaskDist { DIST_NORM, DIST_US = 1, DIST_DS = 2, DIST_PACK = 1 };
enum class HighLowPart { LOWEST, HIGHEST };
enum class PostLiteral { POST_MODE_NORMAL, POST_MODE_UPDATE };

struct UnalignRegForStore {
    // --- twin internals: the 32-byte UB block whose bytes the register buffers, which of them, and the UB
    // byte offset the next StoreUnAlign must write at
    uint8_t afBytes[32]{};
    bool afHeld[32]{};
    uint32_t afBlock = 0;
    uint32_t afNext = 0;
    bool afPending = false;
};

}  // namespace Reg
}  // namespace AscendC

namespace AfTwin {

constexpr uint32_t kMaskGenCycles = 4;  // table 3: MaskReg搬入（MaskGenWithRegTensor） 4 cycles

inline void RegMaskWidth(const AscendC::Reg::MaskReg& m, uint32_t width, const char* api) {
    if (m.afWidth == 0) Fail("reg-mask", "Reg::%s: the mask was never set", api);
    if (m.afWidth != width)
        Fail("reg-mask", "Reg::%s: the mask was made for %u-byte elements; this form moves a mask of %u-byte "
             "elements", api, m.afWidth, width);
}

// Byte j of a mask in the one-bit-per-element layout: element 8j + b at bit b.
inline uint8_t RegMaskByte(const AscendC::Reg::MaskReg& m, uint32_t j) {
    uint8_t byte = 0;
    for (uint32_t b = 0; b < 8; ++b) byte |= static_cast<uint8_t>(m.afOn[8 * j + b] ? 1u << b : 0u);
    return byte;
}

// A mask of `width`-byte elements read from `n` bytes of that layout (element k = bit k % 8 of byte k / 8).
inline AscendC::Reg::MaskReg RegMaskOfBits(const uint8_t* bytes, uint32_t n, uint32_t width) {
    AscendC::Reg::MaskReg m;
    m.afWidth = width;
    for (uint32_t k = 0; k < 8 * n; ++k) m.afOn[k] = (bytes[k / 8] >> (k % 8)) & 1u;
    return m;
}

// Writes the bytes an UnalignRegForStore holds to UB and empties it.
inline void RegFlushUnalign(CoreCtx* c, AscendC::Reg::UnalignRegForStore& ureg, const char* api) {
    if (!ureg.afPending) return;
    uint32_t first = 32, last = 0;
    for (uint32_t j = 0; j < 32; ++j) {
        if (!ureg.afHeld[j]) continue;
        first = j < first ? j : first;
        last = j + 1;
    }
    RegUbRange(c, c->arena + ureg.afBlock + first, last - first, api, "the buffered bytes", 1);
    for (uint32_t j = first; j < last; ++j) {
        if (!ureg.afHeld[j]) continue;
        c->arena[ureg.afBlock + j] = ureg.afBytes[j];
        ++c->c.regStoreBytes;
        ureg.afHeld[j] = false;
    }
    if (ureg.afBlock + last > c->dirtyEnd) c->dirtyEnd = ureg.afBlock + last;
    ureg.afPending = false;
    --c->pendingUnalignStores;
}

}  // namespace AfTwin

namespace AscendC {
namespace Reg {

template <typename T, MaskDist dist = MaskDist::DIST_NORM>
inline void LoadAlign(MaskReg& mask, __ubuf__ T* srcAddr) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "LoadAlign only support type b8/b16/b32/b64 on current device");
    static_assert(dist != MaskDist::DIST_DS, "Reg::LoadAlign of a mask: the twin does not emulate DIST_DS");
    const char* api = "LoadAlign";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    const uint32_t n = dist == MaskDist::DIST_NORM ? 32u : 16u;
    const uint32_t off = AfTwin::RegUbRange(c, srcAddr, n, api, "srcAddr", n);
    // NORM: 1-byte elements, one bit each; US: 2-byte elements, each bit doubled
    mask = AfTwin::RegMaskOfBits(c->arena + off, n, 32u / n);
    AfTwin::RegCountCycles(c, AfTwin::RegMove::kLoad, n, 1);  // table 3
}

template <typename T, MaskDist dist = MaskDist::DIST_NORM>
inline void StoreAlign(__ubuf__ T* dstAddr, MaskReg& mask) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "StoreAlign only support type b8/b16/b32/b64 on current device");
    static_assert(dist == MaskDist::DIST_NORM || dist == MaskDist::DIST_PACK,
                  "StoreAlign not support this dist on current device");
    const char* api = "StoreAlign";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    const uint32_t n = dist == MaskDist::DIST_NORM ? 32u : 16u;  // DIST_PACK drops every other bit
    AfTwin::RegMaskWidth(mask, 32u / n, api);
    const uint32_t off = AfTwin::RegUbRange(c, dstAddr, n, api, "dstAddr", n);
    for (uint32_t j = 0; j < n; ++j) c->arena[off + j] = AfTwin::RegMaskByte(mask, j);
    if (off + n > c->dirtyEnd) c->dirtyEnd = off + n;
    AfTwin::RegCountCycles(c, AfTwin::RegMove::kStore, n, 1);  // table 4
}

template <typename T>
inline void StoreUnAlign(__ubuf__ T*& dstAddr, MaskReg& mask, UnalignRegForStore& ureg) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "StoreUnAlign only support type b16/b32 on current device");
    const char* api = "StoreUnAlign";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    constexpr uint32_t n = 32u / sizeof(T);  // b16: 16 bytes, b32: 8 bytes (the lowest bit of each element)
    AfTwin::RegMaskWidth(mask, sizeof(T), api);
    const uint32_t off = AfTwin::RegUbRange(c, dstAddr, n, api, "dstAddr", n);
    if (ureg.afPending && off != ureg.afNext)
        AfTwin::Fail("reg-unalign", "Reg::StoreUnAlign: dstAddr at UB byte offset %u does not continue the bytes "
                     "the UnalignRegForStore holds (they end at %u); StoreUnAlignPost them first", off,
                     ureg.afNext);
    const uint32_t block = off - off % AfTwin::kUbAlign;
    if (ureg.afPending && ureg.afBlock != block) AfTwin::RegFlushUnalign(c, ureg, api);
    if (!ureg.afPending) {
        ureg.afPending = true;
        ureg.afBlock = block;
        ++c->pendingUnalignStores;
    }
    for (uint32_t j = 0; j < n; ++j) {
        ureg.afBytes[off - block + j] = AfTwin::RegMaskByte(mask, j);
        ureg.afHeld[off - block + j] = true;
    }
    ureg.afNext = off + n;
    dstAddr += n / sizeof(T);
    AfTwin::RegCountCycles(c, AfTwin::RegMove::kStore, 0, 1);  // table 4; the bytes count when flushed
}

template <typename T, PostLiteral postMode = PostLiteral::POST_MODE_UPDATE>
inline void StoreUnAlignPost(__ubuf__ T*& dstAddr, UnalignRegForStore& ureg, int32_t postUpdateStride) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "StoreUnAlignPost only support type b8/b16/b32/b64 on current device");
    const char* api = "StoreUnAlignPost";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    if (ureg.afPending) {
        const uint32_t off = AfTwin::RegUbRange(c, dstAddr, 0, api, "dstAddr", 1);
        if (off != ureg.afNext)
            AfTwin::Fail("reg-unalign", "Reg::StoreUnAlignPost: dstAddr at UB byte offset %u is not where the "
                         "bytes the UnalignRegForStore holds end (%u)", off, ureg.afNext);
        AfTwin::RegFlushUnalign(c, ureg, api);
    }
    if constexpr (postMode == PostLiteral::POST_MODE_UPDATE) dstAddr += postUpdateStride;
    AfTwin::RegCountCycles(c, AfTwin::RegMove::kStore, 0, 1);  // table 2: one 32-byte block a cycle
}

template <typename T = DefaultType, int16_t offset, typename U>
inline void MaskGenWithRegTensor(MaskReg& dst, U& srcReg) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value, "T type is not correct!");
    static_assert(sizeof(ActualT) == 2 || sizeof(ActualT) == 4,
                  "MaskGenWithRegTensor only support type b16/b32 on current device");
    // a data block is 32 / sizeof(T) bytes: 16 blocks of a register for b16, 32 for b32
    static_assert(offset >= 0 && offset < static_cast<int16_t>(8 * sizeof(ActualT)),
                  "MaskGenWithRegTensor offset must be in 0~15 when T is b16, 0~31 when T is b32");
    const char* api = "MaskGenWithRegTensor";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    constexpr uint32_t n = 32u / sizeof(ActualT);  // bytes of the data block
    constexpr uint32_t first = offset * n;
    for (uint32_t lane = first / sizeof(ActualT); lane < (first + n) / sizeof(ActualT); ++lane)
        AfTwin::RegCheckRead(srcReg, lane, api, "srcReg");
    dst = AfTwin::RegMaskOfBits(reinterpret_cast<const uint8_t*>(srcReg.afLane) + first, n, sizeof(ActualT));
    ++c->c.regMasks;
    c->c.regCycles += AfTwin::kMaskGenCycles;
}

template <HighLowPart part = HighLowPart::LOWEST>
inline void UnPack(MaskReg& dst, MaskReg& src) {
    const char* api = "UnPack";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    if (src.afWidth == 0) AfTwin::Fail("reg-mask", "Reg::UnPack: the mask was never set");
    if (src.afWidth > 4)
        AfTwin::Fail("reg-mask", "Reg::UnPack: the mask was made for %u-byte elements; no wider mask exists",
                     src.afWidth);
    const uint32_t lanes = kVecBytes / (2 * src.afWidth);
    const uint32_t from = part == HighLowPart::LOWEST ? 0u : lanes;
    MaskReg m;
    m.afWidth = 2 * src.afWidth;
    for (uint32_t k = 0; k < lanes; ++k) m.afOn[k] = src.afOn[from + k];
    dst = m;
    ++c->c.regMasks;
    c->c.regCycles += 1;  // table 5
}

}  // namespace Reg
}  // namespace AscendC

#endif  // AF_TWIN_REG_MASK_MOVES_H
