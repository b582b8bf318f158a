// Row views of an index-selected table (API source `af_row_select` of af-v35-regbase).
//
// Templates that copy whole table rows (one DataCopyPad per selected row)
// need the same arithmetic: output row r numbers the output axes up to and
// including the gathered one, row-major; its index value is read at the
// index tensor's strides, wrapped when negative (checkNegative), and selects
// `width` contiguous table elements at the table's strides. AfRowSelectSource gives
// that row's table element offset, or -1 for an index outside [0, extent)
// when checkBound is set (the caller writes zeros); with checkBound off such
// an index is an error (on the CPU twin: AF_TWIN_ERROR
// kind=gather-out-of-range; on the device the caller never reads it).
// `af_v35_regbase.row_select.render_row_select` (Python) fills an AfRowSelectView in the kernel.
#ifndef AF_ROW_SELECT_H
#define AF_ROW_SELECT_H

constexpr int32_t AF_ROW_SELECT_MAX_DIMS = 8;

#if defined(AF_CPU_TWIN)
#define AF_ROW_SELECT_INDEX_ERROR(i, n)                                                                        \
    AfTwin::Fail("gather-out-of-range", "row gather: index %lld is outside [0, %lld) and need_check_bound " \
                 "is off", static_cast<long long>(i), static_cast<long long>(n))
#else
#define AF_ROW_SELECT_INDEX_ERROR(i, n) ((void)0)
#endif

struct AfRowSelectView {
    int32_t rank;                                // output axes up to and including the gathered one
    int64_t sizes[AF_ROW_SELECT_MAX_DIMS];         // their output sizes
    int64_t indexStrides[AF_ROW_SELECT_MAX_DIMS];  // element strides of the index tensor on them
    int64_t tableStrides[AF_ROW_SELECT_MAX_DIMS];  // element strides of the table on them
    int64_t extent;                              // table size of the gathered axis
    int64_t width;                               // elements per row, contiguous in the table
    bool checkNegative;
    bool checkBound;
};

// Bytes rounded up to the 32-byte UB block.
__aicore__ inline int64_t AfRowSelectAlign32(int64_t bytes) { return (bytes + 31) / 32 * 32; }

// Element offset of the i-th (row-major) coordinate of `sizes` under `strides`.
__aicore__ inline int64_t AfRowSelectOffset(const int64_t* sizes, const int64_t* strides, int32_t rank, int64_t i)
{
    int64_t offset = 0;
    for (int32_t d = rank - 1; d >= 0; --d) {
        offset += (i % sizes[d]) * strides[d];
        i /= sizes[d];
    }
    return offset;
}

// Table element offset of output row `row`; -1 when its index is out of range.
template <typename I>
__aicore__ inline int64_t AfRowSelectSource(const AscendC::GlobalTensor<I>& index, const AfRowSelectView& v, int64_t row)
{
    const int64_t at = AfRowSelectOffset(v.sizes, v.indexStrides, v.rank, row);
    int64_t idx = static_cast<int64_t>(index.GetValue(static_cast<uint64_t>(at)));
    if (v.checkNegative && idx < 0) {
        idx += v.extent;
    }
    if (idx < 0 || idx >= v.extent) {
        if (!v.checkBound) {
            AF_ROW_SELECT_INDEX_ERROR(idx, v.extent);
        }
        return -1;
    }
    const int64_t outer = row / v.sizes[v.rank - 1];
    return AfRowSelectOffset(v.sizes, v.tableStrides, v.rank - 1, outer) + idx * v.tableStrides[v.rank - 1];
}

#endif  // AF_ROW_SELECT_H
