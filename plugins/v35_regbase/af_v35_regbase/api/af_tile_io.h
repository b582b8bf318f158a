// Row tiles of strided global-memory views in UB.
//
// A view (AfRowView) numbers its rows with the "outer" dims and lays each row
// out with the "inner" dims; strides are in elements and may be 0
// (broadcast). AfLoadRows copies rows [firstRow, firstRow + rows) into a UB
// tile whose rows start every `pitch` elements (pitch * sizeof(T) is a
// multiple of 32, so every row starts on a UB block):
//
// - dense rows (the inner dims form one unit-stride block) move with
//   DataCopyPad, padded with `padValue` up to the pitch; consecutive
//   rows along the last outer dim share one DataCopyPad (blockCount rows,
//   srcStride = the gap between them) when their spacing allows it;
// - any other row (broadcast or strided inside the row) is copied element by
//   element with scalar GM reads: exact for every layout, slow on the device,
//   and visible in the twin's scalar counters.
#ifndef AF_TILE_IO_H
#define AF_TILE_IO_H

constexpr int32_t AF_MAX_DIMS = 8;

struct AfRowView {
    int32_t outerRank;
    int64_t outerSizes[AF_MAX_DIMS];
    int64_t outerStrides[AF_MAX_DIMS];
    int32_t innerRank;
    int64_t innerSizes[AF_MAX_DIMS];
    int64_t innerStrides[AF_MAX_DIMS];
};

__aicore__ inline int64_t AfAlign32(int64_t bytes) { return (bytes + 31) / 32 * 32; }

// Element offset of the i-th element (row-major over sizes) of a strided view.
__aicore__ inline int64_t AfStridedOffset(const int64_t* sizes, const int64_t* strides, int32_t rank, int64_t i)
{
    int64_t offset = 0;
    for (int32_t d = rank - 1; d >= 0; --d) {
        offset += (i % sizes[d]) * strides[d];
        i /= sizes[d];
    }
    return offset;
}

__aicore__ inline int64_t AfRowOffset(const AfRowView& v, int64_t row)
{
    return AfStridedOffset(v.outerSizes, v.outerStrides, v.outerRank, row);
}

__aicore__ inline int64_t AfRowWidth(const AfRowView& v)
{
    int64_t width = 1;
    for (int32_t d = 0; d < v.innerRank; ++d) {
        width *= v.innerSizes[d];
    }
    return width;
}

__aicore__ inline bool AfRowIsDense(const AfRowView& v)
{
    int64_t expected = 1;
    for (int32_t d = v.innerRank - 1; d >= 0; --d) {
        if (v.innerSizes[d] == 1) {
            continue;
        }
        if (v.innerStrides[d] != expected) {
            return false;
        }
        expected *= v.innerSizes[d];
    }
    return true;
}

__aicore__ inline int64_t AfInnerOffset(const AfRowView& v, int64_t j)
{
    return AfStridedOffset(v.innerSizes, v.innerStrides, v.innerRank, j);
}

template <typename T>
__aicore__ inline void AfLoadRows(const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& src,
                                  const AfRowView& v, int64_t firstRow, int64_t rows, int64_t pitch, T padValue)
{
    const int64_t width = AfRowWidth(v);
    const int64_t size = static_cast<int64_t>(sizeof(T));
    if (AfRowIsDense(v)) {
        const int64_t bytes = width * size;
        const uint8_t right = static_cast<uint8_t>((AfAlign32(bytes) - bytes) / size);
        const AscendC::DataCopyPadExtParams<T> pad(true, 0, right, padValue);
        const uint32_t dstGap = static_cast<uint32_t>((pitch * size - AfAlign32(bytes)) / 32);
        const int64_t lastSize = v.outerRank > 0 ? v.outerSizes[v.outerRank - 1] : 1;
        const int64_t lastStride = v.outerRank > 0 ? v.outerStrides[v.outerRank - 1] : 0;
        int64_t r = 0;
        while (r < rows) {
            const int64_t row = firstRow + r;
            int64_t run = 1;
            if (lastStride >= width && lastSize > 1) {
                run = lastSize - row % lastSize;
                run = run < rows - r ? run : rows - r;
                run = run < 4095 ? run : 4095;
            }
            const uint32_t srcGap = run > 1 ? static_cast<uint32_t>((lastStride - width) * size) : 0;
            const AscendC::DataCopyExtParams params(static_cast<uint16_t>(run), static_cast<uint32_t>(bytes), srcGap,
                                                    dstGap, 0);
            AscendC::DataCopyPad(dst[static_cast<uint32_t>(r * pitch)], src[AfRowOffset(v, row)], params, pad);
            r += run;
        }
        const int64_t filled = AfAlign32(bytes) / size;
        if (pitch > filled) {
            // the rest of each row (beyond the 32-byte padded data) holds the pad value too; the copies above
            // end where these bytes start, so the two pipes write disjoint bytes and need no flag
            for (int64_t k = 0; k < rows; ++k) {
                AscendC::Duplicate(dst[static_cast<uint32_t>(k * pitch + filled)], padValue,
                                   static_cast<int32_t>(pitch - filled));
            }
        }
        return;
    }
    // the scalar writes below wait for the vector reads of what dst held before
    AscendC::SetFlag<AscendC::HardEvent::V_S>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_S));
    AscendC::WaitFlag<AscendC::HardEvent::V_S>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_S));
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t base = AfRowOffset(v, firstRow + r);
        for (int64_t j = 0; j < width; ++j) {
            dst.SetValue(static_cast<uint32_t>(r * pitch + j), src.GetValue(base + AfInnerOffset(v, j)));
        }
        for (int64_t j = width; j < pitch; ++j) {
            dst.SetValue(static_cast<uint32_t>(r * pitch + j), padValue);
        }
    }
    AscendC::SetFlag<AscendC::HardEvent::S_V>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::S_V));
    AscendC::WaitFlag<AscendC::HardEvent::S_V>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::S_V));
}

#endif  // AF_TILE_IO_H
