// af_twin/reg_unaligned_load.h
// One family of the register API that af_twin/reg.h includes (reg.h says what the twin emulates, checks and
// counts): LoadUnAlignPre / LoadUnAlign.
#ifndef AF_TWIN_REG_UNALIGNED_LOAD_H
#define AF_TWIN_REG_UNALIGNED_LOAD_H

#include "reg_gather.h"

// ---------------------------------------------------------------------------
// Unaligned register load section (vldas / vldus): LoadUnAlignPre(ureg, srcAddr) then
// LoadUnAlign(dstReg, ureg, srcAddr), the plain interface of include/basic_api/reg_compute/
// kernel_reg_compute_datacopy_intf.h (DataCopyUnAlignPreImpl / DataCopyUnAlignImpl in the dav_3510
// kernel_reg_compute_datacopy_load_impl.h). What the official page (连续非对齐搬入（LoadUnAlign）, 关键特性说明)
// documents, and the twin does: LoadUnAlignPre puts the 32-byte aligned UB block holding srcAddr into the
// UnalignRegForLoad (a 32-byte register); LoadUnAlign reads the 256 aligned bytes that follow that block,
// writes dstReg = the ureg's bytes from srcAddr to the block end, then the read bytes up to srcAddr + 256,
// and keeps the last 32-byte block it read in the ureg -- the block holding srcAddr + 256, so a next
// LoadUnAlign at srcAddr + 256 bytes needs no new LoadUnAlignPre. The page's figure shows an unaligned
// srcAddr; for an aligned one the twin takes the same rule (the 256 bytes after srcAddr's own block),
// which reads one block more than the data: a kernel the twin passes reads nothing past its buffers
// under either reading. The register lanes are all written (no mask).
// Checks, at compile time (the 3510 static_asserts): b8 / b16 / b32 / b64 pointer and register types, the
// pointer's element type the register's (or DefaultType); RegTraitNumOne. At run time: outside a VF
// (reg-outside-vf); srcAddr outside UB or not aligned to its element size (ub-out-of-bounds /
// ub-misaligned); the block LoadUnAlignPre reads, or the 256 bytes LoadUnAlign reads, not inside one live
// TPipe buffer (ub-out-of-bounds, naming the bytes); LoadUnAlign with an UnalignRegForLoad that no
// LoadUnAlignPre set, or that holds another block than srcAddr's (reg-unalign: the hardware would splice
// stale bytes). Counts: one register load each, 32 (Pre) / 256 bytes in reg_load_bytes, and reg_cycles
// from table 1's 连续非对齐搬入 row: LoadUnAlign 256 / 128 / 64 b8 / b16 / b32 elements per cycle (one
// vector: 1 cycle), LoadUnAlignPre 32 / 16 / 8 (one 32-byte block: 1 cycle); b64 has no row (1 cycle).
// Not emulated: the post-update and AddrReg forms, RegTraitNumTwo, and the compiler's limit of four
// UnalignRegForLoad registers (generated functions declare at most four).

namespace AscendC {
namespace Reg {

struct UnalignRegForLoad {
    // --- twin internals: the block the register holds (its UB byte offset) and its bytes
    uint8_t afBytes[32]{};
    uint32_t afBlock = 0;
    bool afSet = false;
};

}  // namespace Reg
}  // namespace AscendC

namespace AfTwin {

// The UB byte offset of an unaligned register load's address: inside this core's UB, aligned to its
// element size.
inline uint32_t RegUnalignOffset(const CoreCtx* c, const void* p, uint32_t size, const char* api) {
    const uintptr_t q = reinterpret_cast<uintptr_t>(p);
    const uintptr_t base = reinterpret_cast<uintptr_t>(c->arena);
    if (q < base || q - base >= kPhysicalUb)
        Fail("ub-out-of-bounds", "Reg::%s: srcAddr %p is outside this core's UB", api, p);
    const uint32_t off = static_cast<uint32_t>(q - base);
    if (off % size != 0)
        Fail("ub-misaligned", "Reg::%s: srcAddr at UB byte offset %u is not aligned to its %u-byte elements", api,
             off, size);
    return off;
}

}  // namespace AfTwin

namespace AscendC {
namespace Reg {

template <typename T>
inline void LoadUnAlignPre(UnalignRegForLoad& ureg, __ubuf__ T* srcAddr) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "Reg::LoadUnAlignPre: the 3510 implementation takes b8 / b16 / b32 / b64 only");
    const char* api = "LoadUnAlignPre";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    const uint32_t off = AfTwin::RegUnalignOffset(c, srcAddr, sizeof(T), api);
    const uint32_t block = off - off % AfTwin::kUbAlign;
    AfTwin::RegUbRange(c, c->arena + block, 32, api, "the 32-byte block holding srcAddr");
    std::memcpy(ureg.afBytes, c->arena + block, 32);
    ureg.afBlock = block;
    ureg.afSet = true;
    constexpr uint32_t size = static_cast<uint32_t>(sizeof(T));
    AfTwin::RegCount(c, AfTwin::RegMove::kLoad, 32, api, 32 / size,
                     AfTwin::RegRate(api, size, AfTwin::IsFloatLike<T>::value));
}

template <typename T = DefaultType, typename U>
inline void LoadUnAlign(U& dstReg, UnalignRegForLoad& ureg, __ubuf__ T* srcAddr) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::LoadUnAlign: the pointer's element type differs from the register's");
    static_assert(sizeof(ActualT) == 1 || sizeof(ActualT) == 2 || sizeof(ActualT) == 4 || sizeof(ActualT) == 8,
                  "Reg::LoadUnAlign: the 3510 implementation takes b8 / b16 / b32 / b64 only");
    const char* api = "LoadUnAlign";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    constexpr uint32_t size = static_cast<uint32_t>(sizeof(ActualT));
    const uint32_t off = AfTwin::RegUnalignOffset(c, srcAddr, size, api);
    const uint32_t block = off - off % AfTwin::kUbAlign;
    if (!ureg.afSet)
        AfTwin::Fail("reg-unalign", "Reg::LoadUnAlign: the UnalignRegForLoad was never set (call LoadUnAlignPre "
                     "with the address first)");
    if (ureg.afBlock != block)
        AfTwin::Fail("reg-unalign", "Reg::LoadUnAlign: srcAddr at UB byte offset %u lies in block [%u, %u) but the "
                     "UnalignRegForLoad holds block [%u, %u) (LoadUnAlignPre for this address, or load the "
                     "address 256 bytes after the previous LoadUnAlign's)", off, block, block + 32,
                     ureg.afBlock, ureg.afBlock + 32);
    AfTwin::RegUbRange(c, c->arena + block + 32, kVecBytes, api, "the 256 bytes after srcAddr's block");
    const uint32_t lead = block + 32 - off;  // bytes taken from the ureg
    uint8_t bytes[kVecBytes];
    std::memcpy(bytes, ureg.afBytes + (off - block), lead);
    std::memcpy(bytes + lead, c->arena + block + 32, kVecBytes - lead);
    std::memcpy(ureg.afBytes, c->arena + block + kVecBytes, 32);
    ureg.afBlock = block + kVecBytes;
    AfTwin::RegCount(c, AfTwin::RegMove::kLoad, kVecBytes, api, LanesOf<ActualT>(),
                     AfTwin::RegRate(api, size, AfTwin::IsFloatLike<ActualT>::value));
    std::memcpy(dstReg.afLane, bytes, kVecBytes);
    for (uint32_t i = 0; i < LanesOf<ActualT>(); ++i) dstReg.afWritten[i] = true;
}

}  // namespace Reg
}  // namespace AscendC

#endif  // AF_TWIN_REG_UNALIGNED_LOAD_H
