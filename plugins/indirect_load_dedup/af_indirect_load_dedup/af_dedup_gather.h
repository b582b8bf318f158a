// Deduplicating row gather (API source `af_dedup_gather` of af-indirect-load-dedup).
//
// The output is a list of positions (the output axes up to and including the
// gathered one, row-major); position p holds the table row its index value
// selects, `width` contiguous table elements. A work item is a chunk of
// positions [firstRow, firstRow + rows) times a column tile
// [column, column + columns) of the row. For one work item:
//
// 1. AfDedupSlots reads the chunk's index values (scalar GM reads through the
//    data cache), turns each into its table element offset (the source) and
//    numbers the distinct sources in order of first occurrence with an
//    open-addressing hash table held in UB (scalar reads and writes): the
//    slot of each position, the source of each slot. Scalar code because the
//    vector Sort of AscendC orders float or half keys only, which cannot hold
//    int64 table offsets exactly.
// 2. AfDedupLoad copies the column tile of every slot's row into UB row
//    `slot` of the tile with one DataCopyPad (slots whose rows follow each
//    other at the gathered axis' stride share one copy, up to 4095 rows);
//    the slot of out-of-range indices (need_check_bound) is a row of zeros.
// 3. AfDedupStore writes UB row slot(p) to output position p, one
//    DataCopyPad per run of positions whose slots follow each other.
//
// Scratch layout: `keys` (int64, hashSize + rows): hash keys (source + 2, 0 =
// empty) then the source of each slot; `ids` (int32, hashSize + rows): the
// slot of each hash key, then the slot of each position.
#ifndef AF_DEDUP_GATHER_H
#define AF_DEDUP_GATHER_H

// AfRowSelectView, AfRowSelectSource and AfRowSelectAlign32 come from the API source `af_row_select` (af-v35-regbase).

// Numbers the distinct sources of positions [firstRow, firstRow + rows); returns how many there are.
template <typename I>
__aicore__ inline int64_t AfDedupSlots(const AscendC::LocalTensor<int64_t>& keys,
                                       const AscendC::LocalTensor<int32_t>& ids,
                                       const AscendC::GlobalTensor<I>& index, const AfRowSelectView& v, int64_t firstRow,
                                       int64_t rows, int64_t hashSize)
{
    for (int64_t h = 0; h < hashSize; ++h) {
        keys.SetValue(static_cast<uint32_t>(h), static_cast<int64_t>(0));
    }
    int64_t distinct = 0;
    for (int64_t p = 0; p < rows; ++p) {
        const int64_t source = AfRowSelectSource(index, v, firstRow + p);
        const int64_t key = source + 2;
        int64_t h = static_cast<int64_t>(((static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ULL) >> 20) %
                                         static_cast<uint64_t>(hashSize));
        int32_t slot = 0;
        while (true) {
            const int64_t held = keys.GetValue(static_cast<uint32_t>(h));
            if (held == key) {
                slot = ids.GetValue(static_cast<uint32_t>(h));
                break;
            }
            if (held == 0) {
                slot = static_cast<int32_t>(distinct);
                keys.SetValue(static_cast<uint32_t>(h), key);
                ids.SetValue(static_cast<uint32_t>(h), slot);
                keys.SetValue(static_cast<uint32_t>(hashSize + distinct), source);
                ++distinct;
                break;
            }
            h = h + 1 == hashSize ? 0 : h + 1;
        }
        ids.SetValue(static_cast<uint32_t>(hashSize + p), slot);
    }
    return distinct;
}

// Copies the column tile [column, column + columns) of each slot's row into UB row `slot` (rows `pitch` apart).
// With zeroFill the whole tile (tileRows rows) is zeroed first, so that vector ops over it read no stale data.
template <typename T>
__aicore__ inline void AfDedupLoad(const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& table,
                                   const AscendC::LocalTensor<int64_t>& keys, const AfRowSelectView& v, int64_t hashSize,
                                   int64_t distinct, int64_t column, int64_t columns, int64_t pitch, int64_t tileRows,
                                   bool zeroFill)
{
    const int64_t size = static_cast<int64_t>(sizeof(T));
    const int64_t bytes = columns * size;
    const uint8_t right = static_cast<uint8_t>((AfRowSelectAlign32(bytes) - bytes) / size);
    const AscendC::DataCopyPadExtParams<T> pad(true, 0, right, static_cast<T>(0));
    const uint32_t dstGap = static_cast<uint32_t>((pitch * size - AfRowSelectAlign32(bytes)) / 32);
    const int64_t step = v.tableStrides[v.rank - 1];
    const bool mergeable = step >= v.width && step > 0;
    if (zeroFill) {
        AscendC::Duplicate(dst, static_cast<T>(0), static_cast<int32_t>(tileRows * pitch));
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_MTE2));
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_MTE2));
    }
    int64_t zeroSlot = -1;
    int64_t d = 0;
    while (d < distinct) {
        const int64_t source = keys.GetValue(static_cast<uint32_t>(hashSize + d));
        if (source < 0) {
            zeroSlot = d;
            ++d;
            continue;
        }
        int64_t run = 1;
        while (mergeable && d + run < distinct && run < 4095 &&
               keys.GetValue(static_cast<uint32_t>(hashSize + d + run)) == source + run * step) {
            ++run;
        }
        const uint32_t srcGap = run > 1 ? static_cast<uint32_t>(step * size - bytes) : 0;
        const AscendC::DataCopyExtParams params(static_cast<uint16_t>(run), static_cast<uint32_t>(bytes), srcGap,
                                                dstGap, 0);
        AscendC::DataCopyPad(dst[static_cast<uint32_t>(d * pitch)], table[static_cast<uint64_t>(source + column)],
                             params, pad);
        d += run;
    }
    if (zeroSlot >= 0 && !zeroFill) {
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::MTE2_V));
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::MTE2_V));
        AscendC::Duplicate(dst[static_cast<uint32_t>(zeroSlot * pitch)], static_cast<T>(0),
                           static_cast<int32_t>(pitch));
    }
}

// Writes UB row slot(p) (column tile of `columns` elements, rows `pitch` apart) to output position
// firstRow + p of `out` (rows of `width` elements), for p in [0, rows); runs of consecutive slots share a copy.
template <typename T>
__aicore__ inline void AfDedupStore(const AscendC::GlobalTensor<T>& out, const AscendC::LocalTensor<T>& src,
                                    const AscendC::LocalTensor<int32_t>& ids, int64_t hashSize, int64_t firstRow,
                                    int64_t rows, int64_t width, int64_t column, int64_t columns, int64_t pitch)
{
    const int64_t size = static_cast<int64_t>(sizeof(T));
    const int64_t bytes = columns * size;
    const uint32_t srcGap = static_cast<uint32_t>((pitch * size - AfRowSelectAlign32(bytes)) / 32);
    const uint32_t dstGap = static_cast<uint32_t>((width - columns) * size);
    int64_t p = 0;
    while (p < rows) {
        const int64_t slot = ids.GetValue(static_cast<uint32_t>(hashSize + p));
        int64_t run = 1;
        while (p + run < rows && run < 4095 && ids.GetValue(static_cast<uint32_t>(hashSize + p + run)) == slot + run) {
            ++run;
        }
        const AscendC::DataCopyExtParams params(static_cast<uint16_t>(run), static_cast<uint32_t>(bytes), srcGap,
                                                dstGap, 0);
        AscendC::DataCopyPad(out[static_cast<uint64_t>((firstRow + p) * width + column)],
                             src[static_cast<uint32_t>(slot * pitch)], params);
        p += run;
    }
}

#endif  // AF_DEDUP_GATHER_H
