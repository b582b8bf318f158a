// af_twin/reg_reduce.h
// One family of the register API that af_twin/reg.h includes (reg.h says what the twin emulates, checks and
// counts): the register reduce (the block-strided load, Reduce, its first-element store).
#ifndef AF_TWIN_REG_REDUCE_H
#define AF_TWIN_REG_REDUCE_H

#include "reg_compute.h"

namespace AscendC {
namespace Reg {

// ---------------------------------------------------------------------------
// Register reduce section: the block-strided load a register reduce reads its group rows with.

enum class DataCopyMode { DATA_BLOCK_COPY };

// LoadAlign<T, DATA_BLOCK_COPY>(dst, src, dataBlockStride, mask): eight 32-byte data blocks, block k from
// src + k * dataBlockStride blocks, to register bytes [32k, 32k + 32). As the official page says, a block with
// no masked-on element is not read (its lanes are zero, and the twin marks them unwritten), so a tail needs no
// bytes past its data; a block with one masked-on element is read whole. Checks: b8 / b16 / b32 elements
// (the 3510 DataCopyImpl's static_assert), a mask of the element width, src 32-byte aligned, every block read
// inside one live TPipe buffer. Counts one register load with the bytes of the blocks read; its cycles use the
// documented rate of 非连续对齐搬入 (half the contiguous rate: 32 b32 elements per cycle).
template <typename T = DefaultType, DataCopyMode dataMode, typename U>
inline void LoadAlign(U& dstReg, __ubuf__ T* srcAddr, uint32_t dataBlockStride, MaskReg& mask) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::LoadAlign: the pointer's element type differs from the register's");
    static_assert(sizeof(ActualT) == 1 || sizeof(ActualT) == 2 || sizeof(ActualT) == 4,
                  "Reg::LoadAlign (DATA_BLOCK_COPY): the 3510 implementation takes b8 / b16 / b32 only");
    static_assert(dataMode == DataCopyMode::DATA_BLOCK_COPY, "Reg::LoadAlign: DATA_BLOCK_COPY only");
    AfTwin::CoreCtx* c = AfTwin::RegCore("LoadAlign");
    AfTwin::RegCheckMask<ActualT>(mask, "LoadAlign", "mask");
    constexpr uint32_t perBlock = 32 / sizeof(ActualT);
    U out;
    uint32_t read = 0;
    for (uint32_t k = 0; k < kVecBytes / 32; ++k) {
        bool any = false;
        for (uint32_t j = 0; j < perBlock; ++j) any = any || mask.afOn[k * perBlock + j];
        if (!any) continue;
        __ubuf__ T* block = srcAddr + static_cast<uint64_t>(k) * dataBlockStride * perBlock;
        AfTwin::RegUbRange(c, block, 32, "LoadAlign", "srcAddr block");
        std::memcpy(&out.afLane[k * perBlock], block, 32);
        for (uint32_t j = 0; j < perBlock; ++j) out.afWritten[k * perBlock + j] = true;
        ++read;
    }
    if (read == 0) AfTwin::RegUbRange(c, srcAddr, 0, "LoadAlign", "srcAddr");  // still an aligned UB address
    AfTwin::RegCount(c, AfTwin::RegMove::kLoad, uint64_t{read} * 32, "LoadAlign", LanesOf<ActualT>(),
                     128 / sizeof(ActualT));
    dstReg = out;
}

// Reg::Reduce<type>(dst, src, mask): the masked-on lanes of src reduced to lane 0 of dst (ZEROING, the one
// mode the 3510 ReduceSumImpl / ReduceMaxImpl / ReduceMinImpl take). What the official Reduce page documents:
// SUM adds in a binary tree -- lanes (0, 1), (2, 3), ... first, then the pair sums pairwise, up to one value --
// with masked-off lanes taken as 0; MAX / MIN take masked-off lanes as the type's lowest / highest value, give
// NaN when any masked-on lane is NaN, max(-0, +0) = +0 and min(-0, +0) = -0, and put the index of the first
// extreme (or of the first NaN) in lane 1, as a value of the element type's bits. The twin emulates the
// same-type forms of the 3510 table (SUM: half, float, int32_t, uint32_t; MAX / MIN: int16_t, uint16_t, half,
// float, int32_t, uint32_t; not the widening int16_t -> int32_t sum nor 64-bit registers) and marks lane 0
// (and lane 1 for MAX / MIN) written: the other lanes are zero and count as unwritten. Each lane is read only
// when the mask reaches it. Counts one computing instruction at the documented rate (one vector per cycle).
template <ReduceType type = ReduceType::SUM, typename T = DefaultType, typename U = DefaultType,
          MaskMergeMode mode = MaskMergeMode::ZEROING, typename S, typename V>
inline void Reduce(S& dstReg, V srcReg, MaskReg mask) {
    using D = typename S::ActualT;
    using E = typename V::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, D>::value, "Reg::Reduce: T type is not correct");
    static_assert(std::is_same<U, DefaultType>::value || std::is_same<U, E>::value, "Reg::Reduce: U type is not correct");
    static_assert(mode == MaskMergeMode::ZEROING, "Reg::Reduce: the 3510 implementation takes ZEROING only");
    static_assert(type == ReduceType::SUM || type == ReduceType::MAX || type == ReduceType::MIN,
                  "Reg::Reduce: SUM, MAX or MIN");
    // SUM: the (dst, src) pairs of ReduceSumImpl's static_assert
    static_assert(type != ReduceType::SUM ||
                  (std::is_same<D, int32_t>::value && std::is_same<E, int16_t>::value) ||
                  (std::is_same<D, uint32_t>::value && std::is_same<E, uint16_t>::value) ||
                  (std::is_same<D, E>::value && AfTwin::OneOf<E, int32_t, uint32_t, half, float, int64_t,
                                                               uint64_t>::value),
                  "Reg::Reduce: SUM does not accept this (dst, src) type pair on 3510");
    static_assert(type == ReduceType::SUM || std::is_same<D, E>::value,
                  "Reg::Reduce: MAX / MIN give the source's type");
    static_assert(type == ReduceType::SUM || AfTwin::OneOf<E, int16_t, uint16_t, int32_t, uint32_t, half, float,
                  int64_t, uint64_t>::value, "Reg::Reduce: MAX / MIN do not accept this type on 3510");
    static_assert(std::is_same<D, E>::value && sizeof(E) != 8,
                  "Reg::Reduce: the twin emulates the same-type forms of b16 / b32 registers only");
    AfTwin::CoreCtx* c = AfTwin::RegCore("Reduce");
    AfTwin::RegCheckMask<E>(mask, "Reduce", "mask");
    ++c->c.regCompute;
    AfTwin::RegCyclesOf<E>(c, "Reduce");
    constexpr uint32_t lanes = LanesOf<E>();
    S out;
    if constexpr (type == ReduceType::SUM) {
        E level[lanes];
        for (uint32_t i = 0; i < lanes; ++i) {
            if (mask.afOn[i]) AfTwin::RegCheckRead(srcReg, i, "Reduce", "srcReg");
            level[i] = mask.afOn[i] ? srcReg.afLane[i] : E(0);
        }
        for (uint32_t n = lanes; n > 1; n /= 2) {
            for (uint32_t k = 0; k < n / 2; ++k) level[k] = AfTwin::AddOf(level[2 * k], level[2 * k + 1]);
        }
        out.afLane[0] = level[0];
        out.afWritten[0] = true;
    } else {
        using C = typename AfTwin::CalcType<E>::type;
        bool found = false;
        E best{};
        uint32_t where = 0;
        for (uint32_t i = 0; i < lanes; ++i) {
            if (!mask.afOn[i]) continue;
            AfTwin::RegCheckRead(srcReg, i, "Reduce", "srcReg");
            const E v = srcReg.afLane[i];
            if (found && AfTwin::IsNan(best)) continue;
            bool take = !found || AfTwin::IsNan(v);
            if (!take) {
                const C a = static_cast<C>(v);
                const C b = static_cast<C>(best);
                if (type == ReduceType::MAX) {
                    take = a > b || (a == b && a == C(0) && std::signbit(static_cast<double>(b)) &&
                                     !std::signbit(static_cast<double>(a)));
                } else {
                    take = a < b || (a == b && a == C(0) && !std::signbit(static_cast<double>(b)) &&
                                     std::signbit(static_cast<double>(a)));
                }
            }
            if (take) {
                best = v;
                where = i;
                found = true;
            }
        }
        if (!found) {
            // no lane on: the type's lowest (MAX) / highest (MIN) finite value, the "MIN" / "MAX" of the
            // documented boundary table (-65504 / 65504 for half, -+3.4028235e38 for float)
            if constexpr (AfTwin::IsFloatLike<E>::value) {
                const float big = std::is_same<E, half>::value ? 65504.0f : std::numeric_limits<float>::max();
                best = E(type == ReduceType::MAX ? -big : big);
            } else {
                best = type == ReduceType::MAX ? std::numeric_limits<E>::lowest() : std::numeric_limits<E>::max();
            }
        } else if (AfTwin::IsNan(best)) {
            best = E(std::numeric_limits<float>::quiet_NaN());
        }
        out.afLane[0] = best;
        E index;
        if constexpr (sizeof(E) == 2) {
            const uint16_t bits = static_cast<uint16_t>(where);
            std::memcpy(&index, &bits, 2);
        } else {
            const uint32_t bits = where;
            std::memcpy(&index, &bits, 4);
        }
        out.afLane[1] = index;
        out.afWritten[0] = out.afWritten[1] = true;
    }
    dstReg = out;
}

}  // namespace Reg
}  // namespace AscendC

#endif  // AF_TWIN_REG_REDUCE_H
