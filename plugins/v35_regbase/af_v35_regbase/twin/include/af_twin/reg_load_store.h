// af_twin/reg_load_store.h
// One family of the register API that af_twin/reg.h includes (reg.h says what the twin emulates, checks and
// counts): LoadAlign and StoreAlign (DIST_NORM, the pack / unpack forms, the dual load and store, the first-
// element store).
#ifndef AF_TWIN_REG_LOAD_STORE_H
#define AF_TWIN_REG_LOAD_STORE_H

#include "reg_mask.h"

namespace AscendC {
namespace Reg {

// ---------------------------------------------------------------------------
// Loads and stores (DIST_NORM: one whole vector, the start 32-byte aligned).

template <typename T = DefaultType, LoadDist dist = LoadDist::DIST_NORM, typename U>
inline void LoadAlign(U& dstReg, __ubuf__ T* srcAddr) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::LoadAlign: the pointer's element type differs from the register's");
    static_assert(AfTwin::AcceptsRegLoadAlign<ActualT>, "Reg::LoadAlign: element type not accepted by the 3510 "
                  "register implementation (af_twin/api_dtypes.h)");
    static_assert(dist == LoadDist::DIST_NORM || dist == LoadDist::DIST_UNPACK_B16 ||
                      dist == LoadDist::DIST_UNPACK_B8 || dist == LoadDist::DIST_UNPACK4_B8,
                  "Reg::LoadAlign: the twin emulates DIST_NORM, DIST_UNPACK_B16, DIST_UNPACK_B8 and DIST_UNPACK4_B8 "
                  "only");
    static_assert(dist != LoadDist::DIST_UNPACK_B16 || sizeof(ActualT) == 2,
                  "Reg::LoadAlign: DIST_UNPACK_B16 loads 2-byte elements");
    static_assert((dist != LoadDist::DIST_UNPACK_B8 && dist != LoadDist::DIST_UNPACK4_B8) || sizeof(ActualT) == 1,
                  "Reg::LoadAlign: DIST_UNPACK_B8 / DIST_UNPACK4_B8 load 1-byte elements");
    AfTwin::CoreCtx* c = AfTwin::RegCore("LoadAlign");
    if constexpr (U::REG_NUM == 2) {
        // a RegTraitNumTwo register: the 3510 DataCopyImpl issues the dual load DIST_DINTLV_B32 into reg[0] /
        // reg[1] (its dist argument passes CheckLoadDist<1> and is not used); the twin takes DIST_NORM only
        static_assert(dist == LoadDist::DIST_NORM, "Reg::LoadAlign: the twin loads a RegTraitNumTwo register with "
                      "DIST_NORM only");
        LoadAlign<uint32_t, LoadDist::DIST_DINTLV_B32>(dstReg.reg[0], dstReg.reg[1],
                                                        reinterpret_cast<__ubuf__ uint32_t*>(srcAddr));
    } else if constexpr (dist == LoadDist::DIST_UNPACK4_B8) {
        // a quarter vector: byte j goes to lane 4j, lanes 4j + 1 .. 4j + 3 are zero (the LoadAlign page's
        // DIST_UNPACK4_B8 row: VL / 4 bytes, three zeros after each)
        AfTwin::RegAccount(c, AfTwin::RegMove::kLoad, srcAddr, kVecBytes / 4, kVecBytes / 4, "LoadAlign", "srcAddr",
                           LanesOf<ActualT>() / 4, 256 / sizeof(ActualT));
        for (uint32_t j = 0; j < LanesOf<ActualT>() / 4; ++j) {
            std::memcpy(&dstReg.afLane[4 * j], srcAddr + j, 1);
            std::memset(&dstReg.afLane[4 * j + 1], 0, 3);
        }
    } else if constexpr (dist == LoadDist::DIST_UNPACK_B16 || dist == LoadDist::DIST_UNPACK_B8) {
        // half a vector: element j goes to lane 2j, lane 2j + 1 is zero
        AfTwin::RegAccount(c, AfTwin::RegMove::kLoad, srcAddr, kVecBytes / 2, kVecBytes / 2, "LoadAlign", "srcAddr",
                           LanesOf<ActualT>() / 2, 256 / sizeof(ActualT));
        for (uint32_t j = 0; j < LanesOf<ActualT>() / 2; ++j) {
            std::memcpy(&dstReg.afLane[2 * j], srcAddr + j, sizeof(ActualT));
            std::memset(&dstReg.afLane[2 * j + 1], 0, sizeof(ActualT));
        }
    } else {
        AfTwin::RegAccount(c, AfTwin::RegMove::kLoad, srcAddr, kVecBytes, kVecBytes, "LoadAlign", "srcAddr",
                           LanesOf<ActualT>(), 256 / sizeof(ActualT));
        std::memcpy(dstReg.afLane, srcAddr, kVecBytes);
    }
    if constexpr (U::REG_NUM == 1) {
        for (uint32_t i = 0; i < LanesOf<ActualT>(); ++i) dstReg.afWritten[i] = true;
    }
}

// The dual load LoadAlign<T, DIST_DINTLV_B8 / B16 / B32>(dst0, dst1, src) (CheckLoadDist<2, dist> of the 3510
// DataCopyImpl): two vectors read from src (32-byte aligned, all 512 bytes in one live buffer), the elements
// of even index to dst0, those of odd index to dst1. On 4-byte elements it splits 64-bit values into their low
// and high words (a RegTraitNumTwo register pair, as the 3510 LoadAlign of one does). One load instruction of
// 2 * VL bytes: the throughput table lists no dual-load row, so it counts the contiguous rate over both
// vectors (2 cycles), as reg_cost.py does.
template <typename T = DefaultType, LoadDist dist, typename U>  // no default dist, as the official dual form
inline void LoadAlign(U& dstReg0, U& dstReg1, __ubuf__ T* srcAddr) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::LoadAlign: the pointer's element type differs from the register's");
    static_assert(dist == LoadDist::DIST_DINTLV_B8 || dist == LoadDist::DIST_DINTLV_B16 ||
                  dist == LoadDist::DIST_DINTLV_B32,
                  "Reg::LoadAlign: the two-register load takes DIST_DINTLV_B8 / B16 / B32 only (CheckLoadDist<2>)");
    static_assert((dist == LoadDist::DIST_DINTLV_B8 && sizeof(ActualT) == 1) ||
                  (dist == LoadDist::DIST_DINTLV_B16 && sizeof(ActualT) == 2) ||
                  (dist == LoadDist::DIST_DINTLV_B32 && sizeof(ActualT) == 4),
                  "Reg::LoadAlign: DIST_DINTLV_Bn loads n-bit elements");
    static_assert(AfTwin::AcceptsRegLoadAlign<ActualT>, "Reg::LoadAlign: element type not accepted by the 3510 "
                  "register implementation (af_twin/api_dtypes.h)");
    AfTwin::CoreCtx* c = AfTwin::RegCore("LoadAlign");
    AfTwin::RegAccount(c, AfTwin::RegMove::kLoad, srcAddr, 2 * kVecBytes, 2 * kVecBytes, "LoadAlign", "srcAddr",
                       2 * LanesOf<ActualT>(), 256 / sizeof(ActualT));
    for (uint32_t j = 0; j < LanesOf<ActualT>(); ++j) {
        std::memcpy(&dstReg0.afLane[j], srcAddr + 2 * j, sizeof(ActualT));
        std::memcpy(&dstReg1.afLane[j], srcAddr + 2 * j + 1, sizeof(ActualT));
        dstReg0.afWritten[j] = true;
        dstReg1.afWritten[j] = true;
    }
}

template <typename T = DefaultType, StoreDist dist = StoreDist::DIST_NORM, typename U>
inline void StoreAlign(__ubuf__ T* dstAddr, U& srcReg, MaskReg& mask) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::StoreAlign: the pointer's element type differs from the register's");
    static_assert(AfTwin::AcceptsRegStoreAlign<ActualT>, "Reg::StoreAlign: element type not accepted by the 3510 "
                  "register implementation (af_twin/api_dtypes.h)");
    static_assert(dist == StoreDist::DIST_NORM || dist == StoreDist::DIST_PACK_B32 || dist == StoreDist::DIST_PACK_B16 ||
                  dist == StoreDist::DIST_PACK4_B32 || dist == StoreDist::DIST_FIRST_ELEMENT_B32 ||
                  dist == StoreDist::DIST_FIRST_ELEMENT_B16,
                  "Reg::StoreAlign: the twin emulates DIST_NORM, DIST_PACK_B32 / B16, DIST_PACK4_B32 and "
                  "DIST_FIRST_ELEMENT_B32 / B16 only");
    static_assert(dist != StoreDist::DIST_PACK4_B32 || sizeof(ActualT) == 4,
                  "Reg::StoreAlign: the twin emulates DIST_PACK4_B32 for 4-byte element registers (the low byte of "
                  "each)");
    static_assert(dist != StoreDist::DIST_PACK_B32 || sizeof(ActualT) == 2,
                  "Reg::StoreAlign: the twin emulates DIST_PACK_B32 for 2-byte element registers");
    static_assert(dist != StoreDist::DIST_PACK_B16 || sizeof(ActualT) == 1,
                  "Reg::StoreAlign: the twin emulates DIST_PACK_B16 for 1-byte element registers");
    static_assert(dist != StoreDist::DIST_FIRST_ELEMENT_B32 || sizeof(ActualT) == 4,
                  "Reg::StoreAlign: DIST_FIRST_ELEMENT_B32 stores a b32 element");
    static_assert(dist != StoreDist::DIST_FIRST_ELEMENT_B16 || sizeof(ActualT) == 2,
                  "Reg::StoreAlign: DIST_FIRST_ELEMENT_B16 stores a b16 element");
    AfTwin::CoreCtx* c = AfTwin::RegCore("StoreAlign");
    if constexpr (dist == StoreDist::DIST_FIRST_ELEMENT_B32 || dist == StoreDist::DIST_FIRST_ELEMENT_B16) {
        // lane 0 to dstAddr, the mask ignored (as the StoreDist table says); dstAddr aligned to the element
        // size only (the table's alignment column), the element inside one live TPipe buffer
        (void)mask;
        AfTwin::RegCheckRead(srcReg, 0, "StoreAlign", "srcReg");
        const uintptr_t q = reinterpret_cast<uintptr_t>(dstAddr);
        if (q % sizeof(ActualT) != 0)
            AfTwin::Fail("ub-misaligned", "Reg::StoreAlign: a first-element store to %p, not %u-byte aligned",
                         static_cast<const void*>(dstAddr), static_cast<unsigned>(sizeof(ActualT)));
        const uintptr_t base = q - q % AfTwin::kUbAlign;  // the check below wants a 32-byte start
        const uint32_t lead = static_cast<uint32_t>(q - base);
        const uint32_t off = AfTwin::RegAccount(c, AfTwin::RegMove::kStore, reinterpret_cast<const void*>(base),
                                                lead + sizeof(ActualT), sizeof(ActualT), "StoreAlign", "dstAddr", 1,
                                                256 / sizeof(ActualT));
        std::memcpy(dstAddr, &srcReg.afLane[0], sizeof(ActualT));
        if (off + lead + sizeof(ActualT) > c->dirtyEnd)
            c->dirtyEnd = off + lead + static_cast<uint32_t>(sizeof(ActualT));
        return;
    }
    if constexpr (dist == StoreDist::DIST_PACK4_B32) {
        // the low byte of each masked-on 4-byte lane j to byte j of dstAddr (the StoreAlign page's
        // DIST_PACK4_B32 row: the low 8 bits, a quarter of each element, stored contiguously)
        AfTwin::RegCheckMask<ActualT>(mask, "StoreAlign", "mask");
        const auto [last, on] = AfTwin::RegStoreLanes(mask, srcReg, LanesOf<ActualT>(), 1);
        const uint32_t off = AfTwin::RegAccount(c, AfTwin::RegMove::kStore, dstAddr, last, on, "StoreAlign",
                                                "dstAddr", LanesOf<ActualT>(), 256 / sizeof(ActualT));
        auto* bytes = reinterpret_cast<__ubuf__ uint8_t*>(dstAddr);
        for (uint32_t j = 0; j < LanesOf<ActualT>(); ++j) {
            if (mask.afOn[j]) std::memcpy(&bytes[j], &srcReg.afLane[j], 1);  // the low byte (little-endian)
        }
        if (off + last > c->dirtyEnd) c->dirtyEnd = off + last;
        return;
    }
    if constexpr (dist == StoreDist::DIST_PACK_B32 || dist == StoreDist::DIST_PACK_B16) {
        // the low half of each masked-on 32-bit (16-bit) lane j -- lane 2j of the 2-byte (1-byte) register
        // -- to element j
        using Pair = typename std::conditional<dist == StoreDist::DIST_PACK_B32, uint32_t, uint16_t>::type;
        AfTwin::RegCheckMask<Pair>(mask, "StoreAlign", "mask");
        const auto [last, on] = AfTwin::RegStoreLanes(mask, srcReg, kVecBytes / sizeof(Pair), 2);
        const uint32_t off = AfTwin::RegAccount(c, AfTwin::RegMove::kStore, dstAddr, last * sizeof(ActualT),
                                                uint64_t{on} * sizeof(ActualT), "StoreAlign", "dstAddr",
                                                kVecBytes / sizeof(Pair), 256 / sizeof(ActualT));
        for (uint32_t j = 0; j < kVecBytes / sizeof(Pair); ++j) {
            if (mask.afOn[j]) std::memcpy(dstAddr + j, &srcReg.afLane[2 * j], sizeof(ActualT));
        }
        if (off + last * sizeof(ActualT) > c->dirtyEnd)
            c->dirtyEnd = off + last * static_cast<uint32_t>(sizeof(ActualT));
        return;
    }
    AfTwin::RegCheckMask<ActualT>(mask, "StoreAlign", "mask");
    const auto [last, on] = AfTwin::RegStoreLanes(mask, srcReg, LanesOf<ActualT>(), 1);
    const uint32_t off = AfTwin::RegAccount(c, AfTwin::RegMove::kStore, dstAddr, last * sizeof(ActualT),
                                            uint64_t{on} * sizeof(ActualT), "StoreAlign", "dstAddr",
                                            LanesOf<ActualT>(), 256 / sizeof(ActualT));
    for (uint32_t i = 0; i < LanesOf<ActualT>(); ++i) {
        if (mask.afOn[i]) std::memcpy(dstAddr + i, &srcReg.afLane[i], sizeof(ActualT));
    }
    if (off + last * sizeof(ActualT) > c->dirtyEnd) c->dirtyEnd = off + last * static_cast<uint32_t>(sizeof(ActualT));
}

// The dual store StoreAlign<T, DIST_INTLV_B32>(dst, src0, src1, mask) (CheckStoreDist<2, dist> of the 3510
// DataCopyImpl) for 4-byte elements: src0's and src1's elements interleaved, dst[2j] = src0[j] and
// dst[2j + 1] = src1[j] for every lane -- the StoreDist table: "ignores the mask, dst holds 2 * VL". So all
// 512 bytes are written and must lie in one live buffer (32-byte aligned). A register pair of low / high
// words stored so is 64 int64 values (what the 3510 StoreAlign of a RegTraitNumTwo register issues). The twin
// checks that the lanes under `mask` were written (the elements the function computed: a stricter check than
// the hardware's, which takes any mask); the lanes off it hold whatever the registers hold (tile padding).
// One store of 2 * VL bytes, counted at the contiguous rate over both vectors (2 cycles), as the dual load.
template <typename T = DefaultType, StoreDist dist, typename U>  // no default dist, as the official dual form
inline void StoreAlign(__ubuf__ T* dstAddr, U& srcReg0, U& srcReg1, MaskReg& mask) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::StoreAlign: the pointer's element type differs from the register's");
    static_assert(dist == StoreDist::DIST_INTLV_B8 || dist == StoreDist::DIST_INTLV_B16 ||
                      dist == StoreDist::DIST_INTLV_B32,
                  "Reg::StoreAlign: the two-register store takes DIST_INTLV_B8 / B16 / B32 only (CheckStoreDist<2>)");
    static_assert(dist == StoreDist::DIST_INTLV_B32 && sizeof(ActualT) == 4,
                  "Reg::StoreAlign: the twin emulates the dual store DIST_INTLV_B32 of 4-byte elements only");
    static_assert(AfTwin::AcceptsRegStoreAlign<ActualT>, "Reg::StoreAlign: element type not accepted by the 3510 "
                  "register implementation (af_twin/api_dtypes.h)");
    AfTwin::CoreCtx* c = AfTwin::RegCore("StoreAlign");
    AfTwin::RegCheckMask<ActualT>(mask, "StoreAlign", "mask");
    AfTwin::RegStoreLanes(mask, srcReg0, LanesOf<ActualT>(), 1);
    AfTwin::RegStoreLanes(mask, srcReg1, LanesOf<ActualT>(), 1);
    const uint32_t off = AfTwin::RegAccount(c, AfTwin::RegMove::kStore, dstAddr, 2 * kVecBytes, 2 * kVecBytes,
                                            "StoreAlign", "dstAddr", 2 * LanesOf<ActualT>(), 256 / sizeof(ActualT));
    for (uint32_t j = 0; j < LanesOf<ActualT>(); ++j) {
        std::memcpy(dstAddr + 2 * j, &srcReg0.afLane[j], sizeof(ActualT));
        std::memcpy(dstAddr + 2 * j + 1, &srcReg1.afLane[j], sizeof(ActualT));
    }
    if (off + 2 * kVecBytes > c->dirtyEnd) c->dirtyEnd = off + 2 * kVecBytes;
}

}  // namespace Reg
}  // namespace AscendC

#endif  // AF_TWIN_REG_LOAD_STORE_H
