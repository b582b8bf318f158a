// af_twin/reg_gather.h
// One family of the register API that af_twin/reg.h includes (reg.h says what the twin emulates, checks and
// counts): the register Gather.
#ifndef AF_TWIN_REG_GATHER_H
#define AF_TWIN_REG_GATHER_H

#include "reg_mask_logic.h"

// ---------------------------------------------------------------------------
// Register Gather (vgather2): Reg::Gather(dstReg, __ubuf__ T1* baseAddr, indexReg, mask).
// Official: include/basic_api/reg_compute/kernel_reg_compute_datacopy_intf.h, its dav_3510 form
// DataCopyGatherImpl in impl/basic_api/reg_compute/dav_3510/kernel_reg_compute_datacopy_impl.h. Each
// masked-on lane i of dstReg gets baseAddr[indexReg lane i]: the index counts ELEMENTS of T1 (not bytes),
// baseAddr starts 32-byte aligned, and every element read must lie in UB. The 3510 static_assert takes a
// 1-byte source into 2-byte lanes (the byte zero-extended) and 2-byte sources with uint16_t indices, 4-byte
// sources with uint32_t indices, and 8-byte sources with uint32_t / uint64_t indices; the twin asserts the
// same combinations and emulates every one but the 8-byte source (a RegTraitNumTwo / pairing sequence on
// 3510: static_assert here). The mask is one of dstReg's element width.
// Checks at run time: outside a VF (reg-outside-vf); baseAddr misaligned (ub-misaligned); the mask unset or
// of another width, an index lane under the mask that no instruction wrote (reg-mask); an element read that
// leaves the live TPipe buffer holding baseAddr (gather-out-of-range).
// Counts: one register load (reg_loads), the gathered bytes (masked-on lanes * sizeof(T1)) in
// reg_load_bytes and the masked-on lanes in gather_elements (as the memory-based Gather counts its
// elements), and reg_cycles ceil(lanes / rate) with the table-1 rate of 离散搬入（Gather）: b8 -> b16 64,
// b16 64, b32 32 elements per cycle.

namespace AfTwin {

// The live TPipe buffer of the running core that holds UB byte offset `off`: [first, second).
inline std::pair<uint32_t, uint32_t> RegBufferAt(const CoreCtx* c, uint32_t off, const char* api,
                                                 const char* operand) {
    for (const UbAlloc& a : c->allocs) {
        if (off < a.offset || off >= a.offset + a.bytes) continue;
        const uint32_t first = a.offset + (off - a.offset) / a.slot * a.slot;
        return {first, first + a.slot};
    }
    Fail("ub-out-of-bounds", "Reg::%s: %s at UB byte offset %u lies in no live TPipe buffer", api, operand, off);
}

}  // namespace AfTwin

namespace AscendC {
namespace Reg {

template <typename T0 = DefaultType, typename T1, typename T2 = DefaultType, typename T3, typename T4>
inline void Gather(T3& dstReg, __ubuf__ T1* baseAddr, T4& index, MaskReg& mask) {
    using Dst = typename T3::ActualT;
    using Idx = typename T4::ActualT;
    static_assert(std::is_same<T0, DefaultType>::value || std::is_same<T0, Dst>::value,
                  "Reg::Gather: T0 is not the destination register's element type");
    static_assert(std::is_same<T2, DefaultType>::value || std::is_same<T2, Idx>::value,
                  "Reg::Gather: T2 is not the index register's element type");
    static_assert((sizeof(T1) == 1 && sizeof(Dst) == 2 && std::is_same<Idx, uint16_t>::value) ||
                      (sizeof(T1) == 2 && sizeof(Dst) == 2 && std::is_same<Idx, uint16_t>::value) ||
                      (sizeof(T1) == 4 && sizeof(Dst) == 4 && std::is_same<Idx, uint32_t>::value) ||
                      (sizeof(T1) == 8 && sizeof(Dst) == 8 &&
                       (std::is_same<Idx, uint32_t>::value || std::is_same<Idx, uint64_t>::value)),
                  "Reg::Gather: the 3510 implementation takes b8 -> b16, b16 -> b16 with uint16_t indices, "
                  "b32 -> b32 with uint32_t indices, b64 -> b64 with uint32_t / uint64_t indices");
    static_assert(sizeof(T1) != 8, "Reg::Gather: the twin does not emulate the 8-byte source form");
    const char* api = "Gather";
    AfTwin::CoreCtx* c = AfTwin::RegCore(api);
    AfTwin::RegCheckMask<Dst>(mask, api, "mask");
    const uintptr_t q = reinterpret_cast<uintptr_t>(baseAddr);
    const uintptr_t arena = reinterpret_cast<uintptr_t>(c->arena);
    if (q < arena || q - arena >= AfTwin::kPhysicalUb)
        AfTwin::Fail("ub-out-of-bounds", "Reg::Gather: baseAddr %p is outside this core's UB",
                     static_cast<const void*>(baseAddr));
    const uint32_t base = static_cast<uint32_t>(q - arena);
    if (base % AfTwin::kUbAlign != 0)
        AfTwin::Fail("ub-misaligned", "Reg::Gather: baseAddr starts at UB byte offset %u, which is not 32-byte "
                     "aligned", base);
    const std::pair<uint32_t, uint32_t> buffer = AfTwin::RegBufferAt(c, base, api, "baseAddr");
    T3 out;
    uint32_t on = 0;
    for (uint32_t i = 0; i < LanesOf<Dst>(); ++i) {
        if (!mask.afOn[i]) continue;
        AfTwin::RegCheckRead(index, i, api, "index");
        const uint64_t elem = static_cast<uint64_t>(index.afLane[i]);
        const uint64_t at = uint64_t{base} + elem * sizeof(T1);
        if (at + sizeof(T1) > buffer.second)
            AfTwin::Fail("gather-out-of-range", "Reg::Gather<%s>: lane %u reads element %llu of baseAddr (UB bytes "
                         "[%llu, %llu)) but the buffer holding baseAddr is [%u, %u)", AfTwin::TypeName<T1>(), i,
                         static_cast<unsigned long long>(elem), static_cast<unsigned long long>(at),
                         static_cast<unsigned long long>(at + sizeof(T1)), buffer.first, buffer.second);
        if constexpr (sizeof(T1) == 1) {
            // the byte in the low half, the high half zero (also for int8_t: -40 -> 216)
            uint8_t byte;
            std::memcpy(&byte, baseAddr + elem, 1);
            const uint16_t wide = byte;
            std::memcpy(&out.afLane[i], &wide, sizeof(Dst));
        } else {
            std::memcpy(&out.afLane[i], baseAddr + elem, sizeof(Dst));
        }
        AfTwin::HbUb(c, at, sizeof(T1), false);
        out.afWritten[i] = true;
        ++on;
    }
    c->c.gather += on;
    AfTwin::RegCount(c, AfTwin::RegMove::kLoad, uint64_t{on} * sizeof(T1), api, LanesOf<Dst>(),
                     AfTwin::RegRate(api, sizeof(T1), false));
    dstReg = out;
}

}  // namespace Reg
}  // namespace AscendC

#endif  // AF_TWIN_REG_GATHER_H
