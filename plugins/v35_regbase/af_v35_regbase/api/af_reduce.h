// Reduce of a UB tile viewed as [rows, group, inner] over the group axis.
//
// dst[a * inner + i] = op over k of src[(a * group + k) * inner + i].
// Vector calls are used where their operands start on 32-byte boundaries
// (whole rows of `inner` elements, or whole groups when inner == 1);
// otherwise the tile is reduced with scalar UB accesses, which is slow on the
// device but exact. Accumulation happens in the tile's own type (callers pass
// float32 tiles for float16/bfloat16 data). kSumApi / kExtremeApi say whether
// the 3510 ReduceSum / ReduceMax and ReduceMin accept C (the generator reads
// them from the dtype table); where they do not (8/16-bit sums, 8-bit max/min)
// whole groups are folded in halves with Add / Max / Min, which accept every
// integer width and wrap like the scalar accumulation, and the last 32 bytes
// are reduced with scalar accesses. `work` holds at least `group` elements.
#ifndef AF_REDUCE_H
#define AF_REDUCE_H

enum class AfReduceKind : int32_t { SUM = 0, MAX = 1, MIN = 2 };

template <typename C>
__aicore__ inline C AfReduceScalar(C acc, C v, AfReduceKind kind)
{
    if (kind == AfReduceKind::SUM) {
        return static_cast<C>(acc + v);
    }
    if (v != v) {
        return v;  // NaN propagates through max/min
    }
    if (kind == AfReduceKind::MAX) {
        return (acc != acc || acc > v) ? acc : v;
    }
    return (acc != acc || acc < v) ? acc : v;
}

// dst = src0 op src1 elementwise (Add for SUM).
template <typename C>
__aicore__ inline void AfReduceStep(const AscendC::LocalTensor<C>& dst, const AscendC::LocalTensor<C>& src0,
                                    const AscendC::LocalTensor<C>& src1, int64_t count, AfReduceKind kind)
{
    if (kind == AfReduceKind::SUM) {
        AscendC::Add(dst, src0, src1, static_cast<int32_t>(count));
    } else if (kind == AfReduceKind::MAX) {
        AscendC::Max(dst, src0, src1, static_cast<int32_t>(count));
    } else {
        AscendC::Min(dst, src0, src1, static_cast<int32_t>(count));
    }
}

// One group of `group` contiguous elements (group a multiple of 32 bytes) reduced to a value.
template <typename C, bool kSumApi, bool kExtremeApi>
__aicore__ inline C AfReduceGroup(const AscendC::LocalTensor<C>& work, const AscendC::LocalTensor<C>& row,
                                  int64_t group, AfReduceKind kind)
{
    const int64_t perBlock = 32 / static_cast<int64_t>(sizeof(C));
    const AscendC::LocalTensor<C> tmp = work[static_cast<uint32_t>(perBlock)];
    bool done = false;
    if (kind == AfReduceKind::SUM) {
        if constexpr (kSumApi) {
            AscendC::ReduceSum(work, row, tmp, static_cast<int32_t>(group));
            done = true;
        }
    } else {
        if constexpr (kExtremeApi) {
            if (kind == AfReduceKind::MAX) {
                AscendC::ReduceMax(work, row, tmp, static_cast<int32_t>(group));
            } else {
                AscendC::ReduceMin(work, row, tmp, static_cast<int32_t>(group));
            }
            done = true;
        }
    }
    int64_t len = 1;
    if (!done) {
        AscendC::DataCopy(work, row, static_cast<uint32_t>(group));
        len = group;
        while (len > perBlock && (len / perBlock) % 2 == 0) {
            len /= 2;
            AfReduceStep<C>(work, work, work[static_cast<uint32_t>(len)], len, kind);
        }
    }
    AscendC::SetFlag<AscendC::HardEvent::V_S>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_S));
    AscendC::WaitFlag<AscendC::HardEvent::V_S>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_S));
    C acc = work.GetValue(0);
    for (int64_t i = 1; i < len; ++i) {
        acc = AfReduceScalar<C>(acc, work.GetValue(static_cast<uint32_t>(i)), kind);
    }
    // the next group's vector calls overwrite `work`: they wait for these scalar reads
    AscendC::SetFlag<AscendC::HardEvent::S_V>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::S_V));
    AscendC::WaitFlag<AscendC::HardEvent::S_V>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::S_V));
    return acc;
}

template <typename C, bool kSumApi, bool kExtremeApi>
__aicore__ inline void AfReduceRows(const AscendC::LocalTensor<C>& dst, const AscendC::LocalTensor<C>& src,
                                    const AscendC::LocalTensor<C>& work, int64_t rows, int64_t group,
                                    int64_t inner, AfReduceKind kind)
{
    const int64_t perBlock = 32 / static_cast<int64_t>(sizeof(C));
    if (inner == 1 && group % perBlock == 0) {
        for (int64_t a = 0; a < rows; ++a) {
            const C value = AfReduceGroup<C, kSumApi, kExtremeApi>(work, src[static_cast<uint32_t>(a * group)],
                                                                  group, kind);
            dst.SetValue(static_cast<uint32_t>(a), value);
        }
        AscendC::SetFlag<AscendC::HardEvent::S_V>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::S_V));
        AscendC::WaitFlag<AscendC::HardEvent::S_V>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::S_V));
        return;
    }
    if (inner > 1 && inner % perBlock == 0) {
        for (int64_t a = 0; a < rows; ++a) {
            const AscendC::LocalTensor<C> acc = dst[static_cast<uint32_t>(a * inner)];
            AscendC::DataCopy(acc, src[static_cast<uint32_t>(a * group * inner)], static_cast<uint32_t>(inner));
            for (int64_t k = 1; k < group; ++k) {
                const AscendC::LocalTensor<C> next = src[static_cast<uint32_t>((a * group + k) * inner)];
                if (kind == AfReduceKind::SUM) {
                    AscendC::Add(acc, acc, next, static_cast<int32_t>(inner));
                } else if (kind == AfReduceKind::MAX) {
                    AscendC::Max(acc, acc, next, static_cast<int32_t>(inner));
                } else {
                    AscendC::Min(acc, acc, next, static_cast<int32_t>(inner));
                }
            }
        }
        return;
    }
    AscendC::SetFlag<AscendC::HardEvent::V_S>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_S));
    AscendC::WaitFlag<AscendC::HardEvent::V_S>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_S));
    for (int64_t a = 0; a < rows; ++a) {
        for (int64_t i = 0; i < inner; ++i) {
            C acc = src.GetValue(static_cast<uint32_t>(a * group * inner + i));
            for (int64_t k = 1; k < group; ++k) {
                acc = AfReduceScalar<C>(acc, src.GetValue(static_cast<uint32_t>((a * group + k) * inner + i)), kind);
            }
            dst.SetValue(static_cast<uint32_t>(a * inner + i), acc);
        }
    }
    AscendC::SetFlag<AscendC::HardEvent::S_V>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::S_V));
    AscendC::WaitFlag<AscendC::HardEvent::S_V>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::S_V));
}

#endif  // AF_REDUCE_H
