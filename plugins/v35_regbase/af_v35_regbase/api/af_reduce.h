// Reduce of a UB tile viewed as [rows, group, inner] over the group axis.
//
// dst[a * inner + i] = op over k of src[(a * group + k) * inner + i].
// Vector calls are used where their operands start on 32-byte boundaries
// (whole rows of `inner` elements, or whole groups when inner == 1);
// otherwise the tile is reduced with scalar UB accesses, which is slow on the
// device but exact. Accumulation happens in the tile's own type (callers pass
// float32 tiles for float16/bfloat16 data).
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

template <typename C>
__aicore__ inline void AfReduceRows(const AscendC::LocalTensor<C>& dst, const AscendC::LocalTensor<C>& src,
                                    const AscendC::LocalTensor<C>& work, int64_t rows, int64_t group,
                                    int64_t inner, AfReduceKind kind)
{
    const int64_t perBlock = 32 / static_cast<int64_t>(sizeof(C));
    if (inner == 1 && group % perBlock == 0) {
        for (int64_t a = 0; a < rows; ++a) {
            const AscendC::LocalTensor<C> row = src[static_cast<uint32_t>(a * group)];
            const AscendC::LocalTensor<C> tmp = work[static_cast<uint32_t>(perBlock)];
            if (kind == AfReduceKind::SUM) {
                AscendC::ReduceSum(work, row, tmp, static_cast<int32_t>(group));
            } else if (kind == AfReduceKind::MAX) {
                AscendC::ReduceMax(work, row, tmp, static_cast<int32_t>(group));
            } else {
                AscendC::ReduceMin(work, row, tmp, static_cast<int32_t>(group));
            }
            AscendC::SetFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
            AscendC::WaitFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
            dst.SetValue(static_cast<uint32_t>(a), work.GetValue(0));
        }
        AscendC::SetFlag<AscendC::HardEvent::S_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::S_V>(EVENT_ID0);
        return;
    }
    if (inner > 1 && inner % perBlock == 0) {
        for (int64_t a = 0; a < rows; ++a) {
            const AscendC::LocalTensor<C> acc = dst[static_cast<uint32_t>(a * inner)];
            AscendC::DataCopy(acc, src[static_cast<uint32_t>(a * group * inner)], static_cast<uint32_t>(inner));
            AscendC::PipeBarrier<PIPE_V>();
            for (int64_t k = 1; k < group; ++k) {
                const AscendC::LocalTensor<C> next = src[static_cast<uint32_t>((a * group + k) * inner)];
                if (kind == AfReduceKind::SUM) {
                    AscendC::Add(acc, acc, next, static_cast<int32_t>(inner));
                } else if (kind == AfReduceKind::MAX) {
                    AscendC::Max(acc, acc, next, static_cast<int32_t>(inner));
                } else {
                    AscendC::Min(acc, acc, next, static_cast<int32_t>(inner));
                }
                AscendC::PipeBarrier<PIPE_V>();
            }
        }
        return;
    }
    AscendC::SetFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
    for (int64_t a = 0; a < rows; ++a) {
        for (int64_t i = 0; i < inner; ++i) {
            C acc = src.GetValue(static_cast<uint32_t>(a * group * inner + i));
            for (int64_t k = 1; k < group; ++k) {
                acc = AfReduceScalar<C>(acc, src.GetValue(static_cast<uint32_t>((a * group + k) * inner + i)), kind);
            }
            dst.SetValue(static_cast<uint32_t>(a * inner + i), acc);
        }
    }
    AscendC::SetFlag<AscendC::HardEvent::S_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::S_V>(EVENT_ID0);
}

#endif  // AF_REDUCE_H
