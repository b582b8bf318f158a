// Byte offsets for AscendC::Gather on an IndirectLoad tile (SIMD and SK-like). Instantiated with a
// 1-byte T (uint8_t) they are element indices, the unit of the register Gather (Reg::Gather) that the tile
// gather uses for 2- and 4-byte data; every formula below then reads sizeof(T) = 1.
//
// A tile holds `rows` output rows; a row is the output dims from `dim` on
// (AfGatherGeom::sizes, row-major, rows `outPitch` elements apart). The input
// slice holds the matching input rows, `inPitch` elements apart, followed by
// a zero slot (one 32-byte block of zeros). For each output position the
// offset is
//
//     (row * inPitch + index * inStrides[0] + sum_k>=1 coord_k * inStrides[k]) * sizeof(T)
//
// where the index value comes from the (compact) index tile; an index that is
// out of range with need_check_bound points at the zero slot, so the Gather
// yields 0 without touching the input ("output 0, no read"). Padding
// positions get in-range offsets; their values are never stored. Three
// paths, chosen at run time:
//
// - full index: the index row is not broadcast (idxStrides is the row-major
//   layout) -> a generated register vector function (AfGatherIndexVf_*, see
//   indirect_load.py) over the whole tile, or, with the register offsets
//   off, Compares/Select/Muls/Add on whole tiles (AfGatherOffsetsVector);
// - compact index -> a generated register vector function (AfGatherCompactVf_*)
//   that gathers each position's index value from the compact index tile by
//   the select tile (AfGatherSelect), then computes as the full-index one; with
//   the register offsets off:
//   - broadcast suffix: only the gather axis carries index values and every
//     value covers `suffix` (a multiple of 8) consecutive positions ->
//     one Adds per index value;
//   - scalar: anything else, element by element.
//
// Without need_check_bound an index outside [0, extent) is undefined on the
// device; the CPU twin reports it (kind gather-out-of-range).
#ifndef AF_GATHER_H
#define AF_GATHER_H

// Compares on 3510 asserts count * sizeof(T) % 256 == 0: the count rounded up to whole 256-byte repeats
// (the tiles are sized in whole repeats, so the extra elements are padding that no store reads).
template <typename T>
__aicore__ inline uint32_t AfCompareCount(int64_t count)
{
    constexpr int64_t repeat = 256 / static_cast<int64_t>(sizeof(T));
    return static_cast<uint32_t>((count + repeat - 1) / repeat * repeat);
}

struct AfGatherGeom {
    int32_t rank;
    int64_t sizes[AF_MAX_DIMS];
    int64_t idxStrides[AF_MAX_DIMS];
    int64_t inStrides[AF_MAX_DIMS];
    int64_t extent;
    int64_t inPitch;
    int64_t idxPitch;
    int64_t outPitch;
    int64_t zeroSlot;
    int64_t suffix;
    bool fullIndex;
    bool needNegative;
    bool needBound;
};

__aicore__ inline int64_t AfGatherWidth(const AfGatherGeom& g)
{
    int64_t width = 1;
    for (int32_t k = 0; k < g.rank; ++k) {
        width *= g.sizes[k];
    }
    return width;
}

__aicore__ inline void AfGatherCheck(int64_t value, const AfGatherGeom& g, const char* what)
{
#if defined(AF_CPU_TWIN)
    if (!g.needBound && (value < 0 || value >= g.extent)) {
        AfTwin::Fail("gather-out-of-range", "%s: index %lld is outside [0, %lld) and need_check_bound is off", what,
                     static_cast<long long>(value), static_cast<long long>(g.extent));
    }
#else
    (void)value;
    (void)g;
    (void)what;
#endif
}

// Positions past the row the pattern (and the select tile) holds: one vector of int32 (the register offsets
// functions load them at any 8-element boundary of a row, 64 lanes at a time).
#define AF_GATHER_PATTERN_OVERHANG 64

// Row-invariant part of the offsets: the inner coordinates' bytes (0 on padding positions). The pattern runs
// on for AF_GATHER_PATTERN_OVERHANG positions into the following rows, each with its row's base (rows after
// the first: + inPitch elements each), so that a vector of 64 positions starting at any position of a row
// reads its inner bytes and its rows' bases in one load. Written by the scalar unit: the caller places one
// S_V flag pair after it (and AfGatherSelect) before a vector call reads the tiles.
template <typename T>
__aicore__ inline void AfGatherPattern(const AscendC::LocalTensor<int32_t>& pattern, const AfGatherGeom& g)
{
    const int64_t width = AfGatherWidth(g);
    const int64_t size = static_cast<int64_t>(sizeof(T));
    const int64_t total = g.outPitch + AF_GATHER_PATTERN_OVERHANG;
    for (int64_t q = 0; q < total; ++q) {
        const int64_t p = q % g.outPitch;
        int64_t inner = (q / g.outPitch) * g.inPitch;
        if (p < width) {
            int64_t rest = p;
            for (int32_t k = g.rank - 1; k >= 1; --k) {
                inner += (rest % g.sizes[k]) * g.inStrides[k];
                rest /= g.sizes[k];
            }
        }
        pattern.SetValue(static_cast<uint32_t>(q), static_cast<int32_t>(inner * size));
    }
}

// The element of its row of the compact index tile that row position p (< AfGatherWidth) reads.
__aicore__ inline int64_t AfGatherCompactElement(const AfGatherGeom& g, int64_t p)
{
    int64_t element = 0;
    for (int32_t k = g.rank - 1; k >= 0; --k) {
        element += (p % g.sizes[k]) * g.idxStrides[k];
        p /= g.sizes[k];
    }
    return element;
}

// The select tile of a compact index: for each position of a row, the element of the compact index tile whose
// value it gathers (relative to its row's first element), over the row and AF_GATHER_PATTERN_OVERHANG
// positions into the following rows (each + idxPitch elements), as the pattern runs on. A padding position
// reads its row's first index value: in range whenever the index contract holds (without need_check_bound
// every value is; with it an out-of-range one selects the zero slot), so its offset stays inside the tile.
__aicore__ inline void AfGatherSelect(const AscendC::LocalTensor<int32_t>& select, const AfGatherGeom& g)
{
    const int64_t width = AfGatherWidth(g);
    const int64_t total = g.outPitch + AF_GATHER_PATTERN_OVERHANG;
    for (int64_t q = 0; q < total; ++q) {
        const int64_t p = q % g.outPitch;
        const int64_t element = (q / g.outPitch) * g.idxPitch + (p < width ? AfGatherCompactElement(g, p) : 0);
        select.SetValue(static_cast<uint32_t>(q), static_cast<int32_t>(element));
    }
}

template <typename TIdx, typename T>
__aicore__ inline void AfGatherOffsetsScalar(const AscendC::LocalTensor<int32_t>& off,
                                             const AscendC::LocalTensor<TIdx>& idx, int64_t rows,
                                             const AfGatherGeom& g, const char* what)
{
    const int64_t size = static_cast<int64_t>(sizeof(T));
    const int64_t width = AfGatherWidth(g);
    AscendC::SetFlag<AscendC::HardEvent::V_S>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_S));
    AscendC::WaitFlag<AscendC::HardEvent::V_S>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_S));
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t p = 0; p < g.outPitch; ++p) {
            int64_t elem = g.zeroSlot;
            if (p < width) {
                int64_t rest = p;
                int64_t compact = 0;
                int64_t inner = 0;
                for (int32_t k = g.rank - 1; k >= 0; --k) {
                    const int64_t c = rest % g.sizes[k];
                    rest /= g.sizes[k];
                    compact += c * g.idxStrides[k];
                    if (k >= 1) {
                        inner += c * g.inStrides[k];
                    }
                }
                int64_t value = static_cast<int64_t>(idx.GetValue(static_cast<uint32_t>(r * g.idxPitch + compact)));
                if (g.needNegative && value < 0) {
                    value += g.extent;
                }
                AfGatherCheck(value, g, what);
                if (value >= 0 && value < g.extent) {
                    elem = r * g.inPitch + value * g.inStrides[0] + inner;
                }
            }
            off.SetValue(static_cast<uint32_t>(r * g.outPitch + p), static_cast<int32_t>(elem * size));
        }
    }
    AscendC::SetFlag<AscendC::HardEvent::S_V>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::S_V));
    AscendC::WaitFlag<AscendC::HardEvent::S_V>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::S_V));
}

template <typename TIdx, typename T>
__aicore__ inline void AfGatherOffsetsSuffix(const AscendC::LocalTensor<int32_t>& off,
                                             const AscendC::LocalTensor<TIdx>& idx,
                                             const AscendC::LocalTensor<int32_t>& pattern, int64_t rows,
                                             const AfGatherGeom& g, const char* what)
{
    const int64_t size = static_cast<int64_t>(sizeof(T));
    const int64_t width = AfGatherWidth(g);
    const int64_t values = width / g.suffix;
    const int32_t zero = static_cast<int32_t>(g.zeroSlot * size);
    AscendC::SetFlag<AscendC::HardEvent::V_S>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_S));
    AscendC::WaitFlag<AscendC::HardEvent::V_S>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_S));
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < values; ++c) {
            int64_t value = static_cast<int64_t>(idx.GetValue(static_cast<uint32_t>(r * g.idxPitch + c)));
            if (g.needNegative && value < 0) {
                value += g.extent;
            }
            AfGatherCheck(value, g, what);
            const AscendC::LocalTensor<int32_t> run = off[static_cast<uint32_t>(r * g.outPitch + c * g.suffix)];
            if (value >= 0 && value < g.extent) {
                const int32_t base = static_cast<int32_t>((r * g.inPitch + value * g.inStrides[0]) * size);
                AscendC::Adds(run, pattern, base, static_cast<int32_t>(g.suffix));
            } else {
                AscendC::Duplicate(run, zero, static_cast<int32_t>(g.suffix));
            }
        }
        if (g.outPitch > width) {
            AscendC::Duplicate(off[static_cast<uint32_t>(r * g.outPitch + width)], zero,
                               static_cast<int32_t>(g.outPitch - width));
        }
    }
}

// Vector path: idx32 is the full index tile as int32 (outPitch apart); it is normalized in place.
template <typename T>
__aicore__ inline void AfGatherOffsetsVector(const AscendC::LocalTensor<int32_t>& off,
                                             const AscendC::LocalTensor<int32_t>& idx32,
                                             const AscendC::LocalTensor<int32_t>& pattern,
                                             const AscendC::LocalTensor<int32_t>& tmp,
                                             const AscendC::LocalTensor<uint8_t>& mask,
                                             const AscendC::LocalTensor<uint8_t>& mask2, int64_t rows,
                                             const AfGatherGeom& g, const char* what)
{
    const int64_t size = static_cast<int64_t>(sizeof(T));
    const int32_t count = static_cast<int32_t>(rows * g.outPitch);
    const int32_t extent = static_cast<int32_t>(g.extent);
    if (g.needNegative) {
        AscendC::Compares(mask, idx32, static_cast<int32_t>(0), AscendC::CMPMODE::LT, AfCompareCount<int32_t>(count));
        AscendC::Adds(tmp, idx32, extent, count);
        AscendC::Select(idx32, mask, tmp, idx32, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE,
                        static_cast<uint32_t>(count));
    }
    if (g.needBound) {
        AscendC::Compares(mask, idx32, static_cast<int32_t>(0), AscendC::CMPMODE::GE, AfCompareCount<int32_t>(count));
        AscendC::Compares(mask2, idx32, extent, AscendC::CMPMODE::LT, AfCompareCount<int32_t>(count));
        const int32_t words = (count + 15) / 16;
        AscendC::And(mask.ReinterpretCast<uint16_t>(), mask.ReinterpretCast<uint16_t>(),
                     mask2.ReinterpretCast<uint16_t>(), words);
        AscendC::Select(idx32, mask, idx32, static_cast<int32_t>(0), AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE,
                        static_cast<uint32_t>(count));
    } else {
#if defined(AF_CPU_TWIN)
        const int64_t width = AfGatherWidth(g);
        for (int64_t r = 0; r < rows; ++r) {
            for (int64_t p = 0; p < width; ++p) {
                AfGatherCheck(idx32.AfPeek(static_cast<uint32_t>(r * g.outPitch + p)), g, what);
            }
        }
#endif
    }
    AscendC::Muls(off, idx32, static_cast<int32_t>(g.inStrides[0] * size), count);
    for (int64_t r = 0; r < rows; ++r) {
        const AscendC::LocalTensor<int32_t> row = off[static_cast<uint32_t>(r * g.outPitch)];
        AscendC::Add(row, row, pattern, static_cast<int32_t>(g.outPitch));
        AscendC::Adds(row, row, static_cast<int32_t>(r * g.inPitch * size), static_cast<int32_t>(g.outPitch));
    }
    if (g.needBound) {
        AscendC::Select(off, mask, off, static_cast<int32_t>(g.zeroSlot * size),
                        AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, static_cast<uint32_t>(count));
    }
    // padding positions keep in-range offsets (index pad value 0); their values are never stored
}

// The twin-only checks below look at tiles with LocalTensor::AfPeek, which is no instruction of any pipe (the
// device never runs them), so they need no flags. The register offsets functions (AfGatherIndexVf_* /
// AfGatherCompactVf_*, generated) have no scalar view of the indices: without need_check_bound the twin checks the (normalized) index every row position reads
// here, before they run, as the scalar and suffix paths do element by element. AfGatherCheckIndices: idx is
// the full index tile (int32, or the int64 one the function narrows itself), outPitch apart;
// AfGatherCheckCompact: the compact index tile, idxPitch apart, each position reading its compact element.
template <typename I>
__aicore__ inline void AfGatherCheckRows(const AscendC::LocalTensor<I>& idx, int64_t rows, const AfGatherGeom& g,
                                         const char* what, bool compact)
{
#if defined(AF_CPU_TWIN)
    if (g.needBound) {
        return;
    }
    const int64_t width = AfGatherWidth(g);
    const int64_t pitch = compact ? g.idxPitch : g.outPitch;
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t p = 0; p < width; ++p) {
            const int64_t element = compact ? AfGatherCompactElement(g, p) : p;
            int64_t value = static_cast<int64_t>(idx.AfPeek(static_cast<uint32_t>(r * pitch + element)));
            if (g.needNegative && value < 0) {
                value += g.extent;
            }
            AfGatherCheck(value, g, what);
        }
    }
#else
    (void)idx;
    (void)rows;
    (void)g;
    (void)what;
    (void)compact;
#endif
}

template <typename I>
__aicore__ inline void AfGatherCheckIndices(const AscendC::LocalTensor<I>& idx, int64_t rows, const AfGatherGeom& g,
                                            const char* what)
{
    AfGatherCheckRows(idx, rows, g, what, false);
}

template <typename I>
__aicore__ inline void AfGatherCheckCompact(const AscendC::LocalTensor<I>& idx, int64_t rows, const AfGatherGeom& g,
                                            const char* what)
{
    AfGatherCheckRows(idx, rows, g, what, true);
}

// The register Gather of 2-byte data reads each uint32 index of the tile as its uint16 low half (the tile's
// source holds fewer than 65536 elements, see gather_span_limit): on the twin an index of 65536 or more is
// reported (gather-offset-packing) instead of reading another element, as for the memory-based Gather.
__aicore__ inline void AfGatherIndexFits16(const AscendC::LocalTensor<int32_t>& idx, int32_t count, const char* what)
{
#if defined(AF_CPU_TWIN)
    for (int32_t i = 0; i < count; ++i) {
        const uint32_t value = static_cast<uint32_t>(idx.AfPeek(static_cast<uint32_t>(i)));
        if (value > 0xFFFFu) {
            AfTwin::Fail("gather-offset-packing", "%s: element %d of the tile gathers source element %u; the "
                         "register Gather of 2-byte data takes uint16 indices", what, i, value);
        }
    }
#else
    (void)idx;
    (void)count;
    (void)what;
#endif
}

#endif  // AF_GATHER_H
