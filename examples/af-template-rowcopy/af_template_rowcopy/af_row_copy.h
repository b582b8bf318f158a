// Row copies of an index-selected table (API source `af_row_copy` of af-template-rowcopy).
//
// Output row r (r numbers the output axes up to and including the gathered
// one, row-major) is the table row its index value selects: `width`
// contiguous table elements. AfRowCopy reads one index value per row with a
// scalar GM read and copies rows [firstRow, firstRow + rows) into a UB tile
// whose rows start every `pitch` elements (pitch * sizeof(T) is a multiple
// of 32):
//
// - a row is one DataCopyPad (blockLen = width * sizeof(T)), padded with
//   zeros up to the pitch;
// - rows whose table rows follow each other at the gathered axis' stride
//   (index values k, k+1, k+2, ... of one outer block) share one DataCopyPad
//   (blockCount rows, srcStride = the gap between two table rows), up to
//   4095 rows;
// - a negative index is wrapped when checkNegative is set; an index outside
//   [0, extent) gives a row of zeros when checkBound is set and is an error
//   otherwise (on the CPU twin: AF_TWIN_ERROR kind=gather-out-of-range; on
//   the device the row is zeroed, never read out of bounds).
#ifndef AF_ROW_COPY_H
#define AF_ROW_COPY_H

// AfRowSelectView, AfRowSelectSource and AfRowSelectAlign32 come from the API source `af_row_select` (af-v35-regbase).

template <typename T, typename I>
__aicore__ inline void AfRowCopy(const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& table,
                                 const AscendC::GlobalTensor<I>& index, const AfRowSelectView& v, int64_t firstRow,
                                 int64_t rows, int64_t pitch)
{
    const int64_t size = static_cast<int64_t>(sizeof(T));
    const int64_t bytes = v.width * size;
    const uint8_t right = static_cast<uint8_t>((AfRowSelectAlign32(bytes) - bytes) / size);
    const AscendC::DataCopyPadExtParams<T> pad(true, 0, right, static_cast<T>(0));
    const uint32_t dstGap = static_cast<uint32_t>((pitch * size - AfRowSelectAlign32(bytes)) / 32);
    const int64_t step = v.tableStrides[v.rank - 1];
    const bool mergeable = step >= v.width && step > 0;
    bool zeroRows = false;
    int64_t src = rows > 0 ? AfRowSelectSource(index, v, firstRow) : 0;
    int64_t r = 0;
    while (r < rows) {
        int64_t run = 1;
        int64_t next = 0;
        while (r + run < rows) {
            next = AfRowSelectSource(index, v, firstRow + r + run);
            if (src < 0 || !mergeable || run >= 4095 || next != src + run * step) {
                break;
            }
            ++run;
        }
        if (src < 0) {
            zeroRows = true;
        } else {
            const uint32_t srcGap = run > 1 ? static_cast<uint32_t>((step - v.width) * size) : 0;
            const AscendC::DataCopyExtParams params(static_cast<uint16_t>(run), static_cast<uint32_t>(bytes), srcGap,
                                                    dstGap, 0);
            AscendC::DataCopyPad(dst[static_cast<uint32_t>(r * pitch)], table[static_cast<uint64_t>(src)], params, pad);
        }
        r += run;
        src = next;
    }
    const int64_t filled = AfRowSelectAlign32(bytes) / size;
    if (!zeroRows && pitch <= filled) {
        return;
    }
    // zero the rest of each row beyond the padded data, and whole rows of out-of-range indices
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::MTE2_V));
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::MTE2_V));
    for (int64_t k = 0; k < rows; ++k) {
        if (zeroRows && AfRowSelectSource(index, v, firstRow + k) < 0) {
            AscendC::Duplicate(dst[static_cast<uint32_t>(k * pitch)], static_cast<T>(0), static_cast<int32_t>(pitch));
        } else if (pitch > filled) {
            AscendC::Duplicate(dst[static_cast<uint32_t>(k * pitch + filled)], static_cast<T>(0),
                               static_cast<int32_t>(pitch - filled));
        }
    }
}

#endif  // AF_ROW_COPY_H
