"""The twin's mask register moves (the "Mask register moves section" of af_twin/reg.h) against numpy, the
memory-based Compare / Select and the official headers.

A predicate crosses a vector function's edge as the bit-mask tile the memory-based Compare writes and Select
reads: one bit per element, element k at bit k % 8 of byte k / 8 (``np.packbits(bits, bitorder="little")``).
The vector functions below move it as generated kernels do, by the element size of a step: 1-byte elements
32 bytes a step (``StoreAlign`` / ``LoadAlign`` DIST_NORM), 2-byte ones 16 bytes (DIST_PACK / DIST_US),
4-byte ones 8 bytes (``StoreUnAlign`` + ``StoreUnAlignPost``; ``LoadUnAlignPre`` + ``LoadUnAlign`` +
``MaskGenWithRegTensor``), 8-byte ones 4 bytes (the 4-byte load and ``UnPack``; no store exists). One
function compares ``count`` values with a scalar and stores the predicate, another loads it and Selects:
numpy checks the bytes (and that no byte past the steps is written), the Select, a tile of random bits,
and that the memory Compare writes the same bytes and the memory Select picks the same values. The counters
follow the section's figures (af_v35_regbase.reg_cost.MASK_MOVE_CYCLES), run-time misuse aborts with a named
error, and the forms pass the official type check.

The twin must never accept what the real API rejects: a generated kernel the device compiler refuses, or
whose moves write the bits elsewhere, must not pass on the twin. So the illegal forms are rejected by the
official headers and by the twin alike, at compile time (the bound of MaskGenWithRegTensor's offset, 0-15
for b16 and 0-31 for b32; a mask StoreAlign takes DIST_NORM / DIST_PACK only), and the legal ones accepted by
both.
"""

from __future__ import annotations

import re

import af_v35_twin_build as twin_build  # loaded by conftest.py
import numpy as np
import pytest
from af_v35_regbase import reg_cost
from af_v35_regbase.reg_cost import LOAD, MASK, STORE, RegInstr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.twin

MAX_COUNT = 1024  # elements of a data buffer (whole steps of every width)
BITS_BYTES = 512  # the bit-mask buffer: 128 bytes of bits and the 288 bytes LoadUnAlign reads after them
SENTINEL = 0xEE  # the bit-mask buffer's bytes before a store

VF_SRC = r"""
// x < scalar over the first `count` elements, the predicate stored to the bit-mask tile at dst a step at a
// time as generated kernels store it: 1-byte elements 32 bytes (StoreAlign DIST_NORM), 2-byte ones 16 bytes
// (DIST_PACK), 4-byte ones 8 bytes through an UnalignRegForStore (StoreUnAlign, then StoreUnAlignPost)
template <typename T>
__simd_vf__ inline void StoreBits(__ubuf__ uint8_t* dst, __ubuf__ T* x, T scalar, uint32_t count)
{
    constexpr uint32_t lanes = 256u / sizeof(T);
    Reg::RegTensor<T> r0;
    Reg::MaskReg mask;
    Reg::MaskReg m0;
    __ubuf__ uint32_t* bits0 = (__ubuf__ uint32_t*)dst;
    Reg::UnalignRegForStore ustore0;
    const uint32_t repeats = (count + lanes - 1u) / lanes;
    for (uint32_t i = 0; i < repeats; ++i) {
        mask = Reg::UpdateMask<T>(count);
        Reg::LoadAlign(r0, x + i * lanes);
        Reg::Compares<T, CMPMODE::LT>(m0, r0, scalar, mask);
        if constexpr (sizeof(T) == 1) {
            Reg::StoreAlign<uint8_t, Reg::MaskDist::DIST_NORM>(dst + i * 32, m0);
        } else if constexpr (sizeof(T) == 2) {
            Reg::StoreAlign<uint8_t, Reg::MaskDist::DIST_PACK>(dst + i * 16, m0);
        } else {
            Reg::StoreUnAlign(bits0, m0, ustore0);
        }
    }
    if constexpr (sizeof(T) == 4) {
        Reg::StoreUnAlignPost<uint32_t, Reg::PostLiteral::POST_MODE_NORMAL>(bits0, ustore0, 0);
    }
}

// out = (bit k of the tile at src) ? x : y over the first `count` elements, the predicate loaded a step at a
// time as generated kernels load it: 1-byte elements 32 bytes (LoadAlign DIST_NORM), 2-byte ones 16 bytes
// (DIST_US), 4-byte ones 8 bytes through a register (LoadUnAlignPre, LoadUnAlign, MaskGenWithRegTensor of
// its first data block), 8-byte ones 4 bytes so, the lower half of the mask unpacked (UnPack)
template <typename T>
__simd_vf__ inline void SelectBits(__ubuf__ T* out, __ubuf__ uint8_t* src, __ubuf__ T* x, __ubuf__ T* y,
                                   uint32_t count)
{
    constexpr uint32_t lanes = 256u / sizeof(T);
    Reg::RegTensor<T> r0;
    Reg::RegTensor<T> r1;
    Reg::RegTensor<T> r2;
    Reg::RegTensor<uint32_t> w0;
    Reg::UnalignRegForLoad uload;
    Reg::MaskReg mask;
    Reg::MaskReg m0;
    Reg::MaskReg m0b;
    const uint32_t repeats = (count + lanes - 1u) / lanes;
    for (uint32_t i = 0; i < repeats; ++i) {
        mask = Reg::UpdateMask<T>(count);
        Reg::LoadAlign(r0, x + i * lanes);
        Reg::LoadAlign(r1, y + i * lanes);
        if constexpr (sizeof(T) == 1) {
            Reg::LoadAlign<uint8_t, Reg::MaskDist::DIST_NORM>(m0, src + i * 32);
        } else if constexpr (sizeof(T) == 2) {
            Reg::LoadAlign<uint8_t, Reg::MaskDist::DIST_US>(m0, src + i * 16);
        } else if constexpr (sizeof(T) == 4) {
            Reg::LoadUnAlignPre(uload, (__ubuf__ uint32_t*)src + i * 2);
            Reg::LoadUnAlign(w0, uload, (__ubuf__ uint32_t*)src + i * 2);
            Reg::MaskGenWithRegTensor<uint32_t, 0>(m0, w0);
        } else {
            Reg::LoadUnAlignPre(uload, (__ubuf__ uint32_t*)src + i);
            Reg::LoadUnAlign(w0, uload, (__ubuf__ uint32_t*)src + i);
            Reg::MaskGenWithRegTensor<uint32_t, 0>(m0b, w0);
            Reg::UnPack(m0, m0b);
        }
        Reg::Select(r2, r0, r1, m0);
        Reg::StoreAlign(out + i * lanes, r2, mask);
    }
}
"""

# Misuse, launched with dst a 256-byte buffer and src a 32-byte one allocated after it (nothing follows src).
BAD_VF_SRC = r"""
__simd_vf__ inline void NoPost(__ubuf__ uint8_t* dst, __ubuf__ uint8_t* src)
{
    (void)src;
    uint32_t n = 64;
    Reg::MaskReg m = Reg::UpdateMask<float>(n);
    __ubuf__ uint32_t* bits0 = (__ubuf__ uint32_t*)dst;
    Reg::UnalignRegForStore ustore0;
    Reg::StoreUnAlign(bits0, m, ustore0);
}

__simd_vf__ inline void PostElsewhere(__ubuf__ uint8_t* dst, __ubuf__ uint8_t* src)
{
    (void)src;
    uint32_t n = 64;
    Reg::MaskReg m = Reg::UpdateMask<float>(n);
    __ubuf__ uint32_t* bits0 = (__ubuf__ uint32_t*)dst;
    Reg::UnalignRegForStore ustore0;
    Reg::StoreUnAlign(bits0, m, ustore0);
    Reg::StoreUnAlign(bits0, m, ustore0);              // bytes [0, 16) held
    __ubuf__ uint32_t* back = (__ubuf__ uint32_t*)dst + 2;  // byte 8
    Reg::StoreUnAlignPost<uint32_t, Reg::PostLiteral::POST_MODE_NORMAL>(back, ustore0, 0);
}

__simd_vf__ inline void SkipAhead(__ubuf__ uint8_t* dst, __ubuf__ uint8_t* src)
{
    (void)src;
    uint32_t n = 64;
    Reg::MaskReg m = Reg::UpdateMask<float>(n);
    __ubuf__ uint32_t* bits0 = (__ubuf__ uint32_t*)dst;
    Reg::UnalignRegForStore ustore0;
    Reg::StoreUnAlign(bits0, m, ustore0);              // bytes [0, 8) held
    __ubuf__ uint32_t* ahead = (__ubuf__ uint32_t*)dst + 4;  // byte 16
    Reg::StoreUnAlign(ahead, m, ustore0);
    Reg::StoreUnAlignPost<uint32_t, Reg::PostLiteral::POST_MODE_NORMAL>(ahead, ustore0, 0);
}

__simd_vf__ inline void UsAt8(__ubuf__ uint8_t* dst, __ubuf__ uint8_t* src)
{
    (void)dst;
    Reg::MaskReg m;
    Reg::LoadAlign<uint8_t, Reg::MaskDist::DIST_US>(m, src + 8);
}

__simd_vf__ inline void UsAt16(__ubuf__ uint8_t* dst, __ubuf__ uint8_t* src)
{
    (void)dst;
    Reg::MaskReg m;
    Reg::LoadAlign<uint8_t, Reg::MaskDist::DIST_US>(m, src + 16);
}

__simd_vf__ inline void NormOfB32Mask(__ubuf__ uint8_t* dst, __ubuf__ uint8_t* src)
{
    (void)src;
    uint32_t n = 64;
    Reg::MaskReg m = Reg::UpdateMask<float>(n);
    Reg::StoreAlign<uint8_t, Reg::MaskDist::DIST_NORM>(dst, m);
}

__simd_vf__ inline void UnwrittenLane(__ubuf__ uint8_t* dst, __ubuf__ uint8_t* src)
{
    (void)dst;
    (void)src;
    uint32_t n = 2;
    Reg::MaskReg m = Reg::UpdateMask<uint32_t>(n);
    Reg::RegTensor<uint32_t> w;
    Reg::MaskReg g;
    Reg::Duplicate(w, 0x5Au, m);                      // lanes 0 and 1 only
    Reg::MaskGenWithRegTensor<uint32_t, 0>(g, w);     // bytes [0, 8): lanes 0, 1
    Reg::MaskGenWithRegTensor<uint32_t, 1>(g, w);     // bytes [8, 16): lanes 2, 3
}

__simd_vf__ inline void NormAtEnd(__ubuf__ uint8_t* dst, __ubuf__ uint8_t* src)
{
    (void)dst;
    Reg::MaskReg m;
    Reg::LoadAlign<uint8_t, Reg::MaskDist::DIST_NORM>(m, src);
}

__simd_vf__ inline void NormPastEnd(__ubuf__ uint8_t* dst, __ubuf__ uint8_t* src)
{
    (void)dst;
    Reg::MaskReg m;
    Reg::LoadAlign<uint8_t, Reg::MaskDist::DIST_NORM>(m, src + 32);
}
"""

HARNESS = r"""
#include <cstdio>
#include <cstring>
#include <string>

namespace {

constexpr uint32_t kMaxCount = 1024;
constexpr uint32_t kBitsBytes = 512;

template <class T>
T ReadValue() {
    unsigned long long bits = 0;
    if (std::scanf("%llx", &bits) != 1) std::exit(3);
    T v;
    std::memcpy(&v, &bits, sizeof(T));
    return v;
}

template <class T>
void Print(const char* tag, const LocalTensor<T>& t, uint32_t n) {
    std::printf("%s", tag);
    for (uint32_t i = 0; i < n; ++i) {
        T v = t.GetValue(i);
        unsigned long long bits = 0;
        std::memcpy(&bits, &v, sizeof(T));
        std::printf(" %llu", bits);
    }
    std::printf("\n");
}

// stdin: count, the scalar, count x values, count y values (hex bits), then the kBitsBytes bytes the bit-mask
// buffer starts with. phase: "store" (the register store of x < scalar), "load" (the register load and
// Select of the given bits), "both" (store, then load), "mem" (the memory Compares writes the bits, the
// register load and the memory Select each select by them). Prints the bit-mask buffer, the selected values
// ("out": register, "mem": memory Select) and the twin's report.
template <class T>
void Run(const std::string& phase) {
    unsigned count = 0;
    if (std::scanf("%u", &count) != 1 || count > kMaxCount) std::exit(3);
    const T scalar = ReadValue<T>();
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> bx, by, bo, bm, bb;
        pipe.InitBuffer(bx, kMaxCount * sizeof(T));
        pipe.InitBuffer(by, kMaxCount * sizeof(T));
        pipe.InitBuffer(bo, kMaxCount * sizeof(T));
        pipe.InitBuffer(bm, kMaxCount * sizeof(T));
        pipe.InitBuffer(bb, kBitsBytes);
        LocalTensor<T> x = bx.Get<T>();
        LocalTensor<T> y = by.Get<T>();
        LocalTensor<T> o = bo.Get<T>();
        LocalTensor<T> om = bm.Get<T>();
        LocalTensor<uint8_t> bits = bb.Get<uint8_t>();
        for (uint32_t i = 0; i < count; ++i) x.SetValue(i, ReadValue<T>());
        for (uint32_t i = 0; i < count; ++i) y.SetValue(i, ReadValue<T>());
        for (uint32_t i = 0; i < kBitsBytes; ++i) bits.SetValue(i, ReadValue<uint8_t>());
        auto* ub = (__ubuf__ uint8_t*)bits.GetPhyAddr();
        auto* xp = (__ubuf__ T*)x.GetPhyAddr();
        auto* yp = (__ubuf__ T*)y.GetPhyAddr();
        if (phase == "store" || phase == "both") {
            if constexpr (sizeof(T) < 8) asc_vf_call<StoreBits<T>>(ub, xp, scalar, static_cast<uint32_t>(count));
            else std::exit(2);
        }
        if (phase == "mem") Compares(bits, x, scalar, CMPMODE::LT, count);
        Print("bits", bits, kBitsBytes);
        if (phase != "store") {
            asc_vf_call<SelectBits<T>>((__ubuf__ T*)o.GetPhyAddr(), ub, xp, yp, static_cast<uint32_t>(count));
            Print("out", o, count);
        }
        if (phase == "mem") {
            Select(om, bits, x, y, SELMODE::VSEL_TENSOR_TENSOR_MODE, count);
            Print("mem", om, count);
        }
    });
    AfTwin::WriteReportJson(stdout);
}

template <auto vf>
void RunBad() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> bd, bs;
        pipe.InitBuffer(bd, 256);
        pipe.InitBuffer(bs, 32);  // last: no buffer follows it
        asc_vf_call<vf>((__ubuf__ uint8_t*)bd.Get<uint8_t>().GetPhyAddr(),
                        (__ubuf__ uint8_t*)bs.Get<uint8_t>().GetPhyAddr());
    });
}

}  // namespace

int main(int argc, char** argv) {
    const std::string c = argc > 1 ? argv[1] : "";
    const std::string phase = argc > 2 ? argv[2] : "";
    if (c == "int8") Run<int8_t>(phase);
    else if (c == "int16") Run<int16_t>(phase);
    else if (c == "float16") Run<half>(phase);
    else if (c == "int32") Run<int32_t>(phase);
    else if (c == "float32") Run<float>(phase);
    else if (c == "int64") Run<int64_t>(phase);
    else if (c == "no_post") RunBad<NoPost>();
    else if (c == "post_elsewhere") RunBad<PostElsewhere>();
    else if (c == "skip_ahead") RunBad<SkipAhead>();
    else if (c == "us_at_8") RunBad<UsAt8>();
    else if (c == "us_at_16") RunBad<UsAt16>();
    else if (c == "norm_of_b32_mask") RunBad<NormOfB32Mask>();
    else if (c == "unwritten_lane") RunBad<UnwrittenLane>();
    else if (c == "norm_at_end") RunBad<NormAtEnd>();
    else if (c == "norm_past_end") RunBad<NormPastEnd>();
    else return 2;
    return 0;
}
"""

PROGRAM = twin_build.KERNEL_HEAD + VF_SRC + BAD_VF_SRC + HARNESS

CTYPES = {
    "int8": "int8_t",
    "int16": "int16_t",
    "float16": "half",
    "int32": "int32_t",
    "float32": "float",
    "int64": "int64_t",
}
STORED = ["int8", "int16", "float16", "int32", "float32"]  # a mask of 8-byte elements has no store
BAD_CASES = [
    "NoPost",
    "PostElsewhere",
    "SkipAhead",
    "UsAt8",
    "UsAt16",
    "NormOfB32Mask",
    "UnwrittenLane",
    "NormAtEnd",
    "NormPastEnd",
]


def _official_launches() -> str:
    """Every instantiation the twin program runs, over one 16 KB buffer: bits at 0, x / y / out after."""
    lines = [
        "LocalTensor<uint8_t> b = buf.Get<uint8_t>();",
        "__ubuf__ uint8_t* bits = (__ubuf__ uint8_t*)b.GetPhyAddr();",
    ]
    for name, ctype in CTYPES.items():
        x, y, o = (f"(__ubuf__ {ctype}*)b[{off}].GetPhyAddr()" for off in (1024, 6144, 11264))
        if name in STORED:
            lines.append(f"asc_vf_call<StoreBits<{ctype}>>(bits, {x}, static_cast<{ctype}>(0), 300u);")
        lines.append(f"asc_vf_call<SelectBits<{ctype}>>({o}, bits, {x}, {y}, 300u);")
    lines += [f"asc_vf_call<{vf}>(bits, (__ubuf__ uint8_t*)b[512].GetPhyAddr());" for vf in BAD_CASES]
    return "\n".join(lines)


OFFICIAL_KERNEL = twin_build.kernel_source(
    VF_SRC + BAD_VF_SRC, _official_launches(), ub_bytes=16 * 1024, name="mask_moves_kernel"
)

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(PROGRAM)


def _lanes(dtype: str) -> int:
    return 256 // np.dtype(dtype).itemsize


def _values(dtype: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """n values of dtype around 0 (about half of them below it); floats with NaN, -0.0 and infinities."""
    dt_ = np.dtype(dtype)
    if dt_.kind == "f":
        v = rng.uniform(-100, 100, n).astype(dt_)
        edges = np.array([np.nan, -0.0, 0.0, -np.inf, np.inf, 0.5], dtype=dt_)
        k = min(n, len(edges))
        v[rng.choice(n, k, replace=False)] = edges[:k]
        return v
    info = np.iinfo(dt_)
    v = rng.integers(info.min, info.max, n, endpoint=True).astype(dt_)
    v[: min(n, 3)] = np.array([0, -1, info.min], dtype=dt_)[: min(n, 3)]
    return v


def _hex(a: np.ndarray) -> str:
    return " ".join(f"{int(v):x}" for v in a.view(UINT[a.itemsize]))


def _run(program, dtype: str, phase: str, x: np.ndarray, y: np.ndarray, bits: np.ndarray | None = None):
    """One run comparing x with 0 (``bits``: the bit-mask buffer's first bytes, default SENTINEL): the
    buffer's bytes after it, the selected values as unsigned bits by tag ("out", "mem": those printed), the
    twin's report."""
    if bits is None:
        bits = np.full(BITS_BYTES, SENTINEL, dtype=np.uint8)
    scalar = np.zeros(1, dtype=dtype)
    stdin = f"{len(x)} {_hex(scalar)}\n{_hex(x)}\n{_hex(y)}\n{_hex(bits)}\n"
    rc, out, err = program(dtype, phase, stdin=stdin)
    assert rc == 0 and "AF_TWIN_ERROR" not in err, err
    tags = [t for t in ("bits", "out", "mem") if any(line.startswith(t) for line in out.splitlines())]
    report, rows = twin_build.report_and_rows(out, *tags)
    unsigned = UINT[np.dtype(dtype).itemsize]
    picked = {t: np.array(rows[t], dtype=np.uint64).astype(unsigned) for t in ("out", "mem") if t in rows}
    return np.array(rows["bits"], dtype=np.uint8), picked, report


def _tile(pred: np.ndarray, lanes: int) -> np.ndarray:
    """The bit-mask bytes of whole steps of `lanes` elements: `pred`, then zeros to the step's end."""
    steps = -(-len(pred) // lanes)
    padded = np.zeros(steps * lanes, dtype=bool)
    padded[: len(pred)] = pred
    return np.packbits(padded, bitorder="little")


def _where(pred: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(pred, x.view(UINT[x.itemsize]), y.view(UINT[y.itemsize]))


def _check_round_trip(program, dtype: str, count: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, y = _values(dtype, count, rng), _values(dtype, count, rng)
    pred = x < np.zeros(1, dtype=dtype)[0]
    bits, picked, _report = _run(program, dtype, "both", x, y)
    want = _tile(pred, _lanes(dtype))
    np.testing.assert_array_equal(bits[: len(want)], want)  # the steps' bytes, zero bits past count
    assert (bits[len(want) :] == SENTINEL).all(), "a byte past the last step was written"
    np.testing.assert_array_equal(picked["out"], _where(pred, x, y))


def _counts(dtype: str) -> list[int]:
    """One element, a tail, a whole step, 2.5 steps, and 4 to 16 steps ending in a tail (the 4-byte store's
    bytes span four 32-byte blocks)."""
    lanes = _lanes(dtype)
    return [1, 37, lanes, lanes * 5 // 2, MAX_COUNT - 3]


@pytest.mark.parametrize(
    ("dtype", "count"), [(d, n) for d in STORED for n in _counts(d)], ids=lambda v: str(v)
)
def test_a_stored_predicate_is_the_little_endian_tile_and_loads_back(program, dtype, count):
    """x < 0 stored a step at a time: the bytes are np.packbits(x < 0, bitorder="little") over the written
    steps, the bits past `count` in the last step zero and no byte after it written; loaded back by the same
    width's load, it Selects np.where(x < 0, x, y) (NaN is never below 0)."""
    _check_round_trip(program, dtype, count, seed=count)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    dtype=st.sampled_from(["float32", "int32", "float16", "int16", "int8"]),
    count=st.integers(1, MAX_COUNT),
    seed=st.integers(0, 2**16),
)
def test_any_count_round_trips(program, dtype, count, seed):
    _check_round_trip(program, dtype, count, seed)


@pytest.mark.parametrize("dtype", list(CTYPES))
@pytest.mark.parametrize("count", [37, 200, 1000])
def test_a_load_reads_bit_k_of_the_tile_for_element_k(program, dtype, count):
    """A tile of random bits (not one a store wrote): element k is selected by bit k % 8 of byte k / 8 --
    also for int64, whose mask is the 4-byte load's lower half unpacked -- and the bits past `count` change
    nothing."""
    rng = np.random.default_rng(count)
    x, y = _values(dtype, count, rng), _values(dtype, count, rng)
    tile = rng.integers(0, 256, BITS_BYTES, dtype=np.uint8)
    _bits, picked, _report = _run(program, dtype, "load", x, y, tile)
    pred = np.unpackbits(tile, bitorder="little")[:count].astype(bool)
    np.testing.assert_array_equal(picked["out"], _where(pred, x, y))


@pytest.mark.parametrize(("dtype", "repeats"), [(d, r) for d in CTYPES for r in (1, 3)])
def test_the_memory_compare_writes_the_same_bytes_and_both_selects_agree(program, dtype, repeats):
    """The memory Compares (whole 256-byte repeats, as its 3510 interface asserts) writes the bytes the
    register store writes for the same values; loaded by the register load they Select what the memory
    Select selects by them. int64 has no register store: its bytes are checked against numpy alone."""
    count = repeats * _lanes(dtype)
    rng = np.random.default_rng(repeats)
    x, y = _values(dtype, count, rng), _values(dtype, count, rng)
    pred = x < np.zeros(1, dtype=dtype)[0]
    mem_bits, picked, _report = _run(program, dtype, "mem", x, y)
    want = np.packbits(pred, bitorder="little")
    np.testing.assert_array_equal(mem_bits[: len(want)], want)
    assert (mem_bits[len(want) :] == SENTINEL).all()
    if dtype in STORED:
        reg_bits, _picked, _report = _run(program, dtype, "store", x, y)
        np.testing.assert_array_equal(reg_bits, mem_bits)
    np.testing.assert_array_equal(picked["out"], picked["mem"])
    np.testing.assert_array_equal(picked["out"], _where(pred, x, y))


# The mask moves of one step by element size (names of reg_cost.MASK_MOVE_CYCLES) and the counter each counts
# in; the data instructions around them are RegInstr rows for reg_cost.
STORE_MOVES = {1: ["MaskStoreAlign"], 2: ["MaskStoreAlign"], 4: ["MaskStoreUnAlign"]}
LOAD_MOVES = {
    1: ["MaskLoadAlign"],
    2: ["MaskLoadAlign"],
    4: ["MaskGenWithRegTensor"],
    8: ["MaskGenWithRegTensor", "UnPack"],
}
MOVE_COUNTER = {
    "MaskLoadAlign": "reg_loads",
    "MaskStoreAlign": "reg_stores",
    "MaskStoreUnAlign": "reg_stores",
    "MaskStoreUnAlignPost": "reg_stores",
    "MaskGenWithRegTensor": "reg_masks",
    "UnPack": "reg_masks",
}
MIX_COUNTER = {"loads": "reg_loads", "stores": "reg_stores", "compute": "reg_compute", "masks": "reg_masks"}


def _expected(data: list[RegInstr], moves: list[str], once: list[str], steps: int) -> dict[str, int]:
    """Counters of `steps` steps of `data` and `moves` plus the `once` moves after the loop."""
    mix = reg_cost.mix(data)
    want = {counter: steps * getattr(mix, field) for field, counter in MIX_COUNTER.items()}
    for move in steps * moves + once:
        want[MOVE_COUNTER[move]] += 1
    want["reg_cycles"] = steps * mix.cycles + sum(reg_cost.MASK_MOVE_CYCLES[m] for m in steps * moves + once)
    return want


@pytest.mark.parametrize("dtype", STORED)
def test_the_store_counters_follow_the_section(program, dtype):
    """1021 elements (4 to 16 steps): per step UpdateMask, LoadAlign, Compares and the mask store (1 cycle;
    the StoreUnAlign bytes counted when written, block by block), the 4-byte form's StoreUnAlignPost once (1
    cycle)."""
    size = np.dtype(dtype).itemsize
    count = MAX_COUNT - 3
    steps = -(-count // _lanes(dtype))
    x = _values(dtype, count, np.random.default_rng(5))
    _bits, _picked, report = _run(program, dtype, "store", x, x)
    data = [
        RegInstr("UpdateMask", dtype, MASK),
        RegInstr("LoadAlign", dtype, LOAD),
        RegInstr("Compares", dtype),
    ]
    once = ["MaskStoreUnAlignPost"] if size == 4 else []
    want = _expected(data, STORE_MOVES[size], once, steps)
    want["reg_load_bytes"] = 256 * steps
    want["reg_store_bytes"] = steps * 32 // size  # one bit an element, a whole step's
    assert {k: report[k] for k in want} == want


@pytest.mark.parametrize("dtype", list(CTYPES))
def test_the_load_counters_follow_the_section(program, dtype):
    """1021 elements (4 to 32 steps): per step UpdateMask, two LoadAligns, the mask load (LoadAlign 1 cycle,
    or LoadUnAlignPre + LoadUnAlign and MaskGenWithRegTensor 4 cycles, int64 also UnPack 1), Select (int64:
    the pair sequence) and StoreAlign."""
    size = np.dtype(dtype).itemsize
    count = MAX_COUNT - 3
    steps = -(-count // _lanes(dtype))
    x = _values(dtype, count, np.random.default_rng(6))
    _bits, _picked, report = _run(program, dtype, "load", x, x, np.zeros(BITS_BYTES, dtype=np.uint8))
    data = [
        RegInstr("UpdateMask", dtype, MASK),
        RegInstr("LoadAlign", dtype, LOAD),
        RegInstr("LoadAlign", dtype, LOAD),
    ]
    data += [RegInstr("Select", dtype), RegInstr("StoreAlign", dtype, STORE)]
    if size >= 4:
        data += [
            RegInstr("LoadUnAlignPre", "uint32", LOAD, elements=8),
            RegInstr("LoadUnAlign", "uint32", LOAD),
        ]
    want = _expected(data, LOAD_MOVES[size], [], steps)
    want["reg_load_bytes"] = steps * (2 * 256 + {1: 32, 2: 16}.get(size, 32 + 256))
    want["reg_store_bytes"] = count * size
    assert {k: report[k] for k in want} == want


BAD = {
    "no_post": ("reg-unalign", "returned with 1 UnalignRegForStore register(s) holding bytes"),
    "post_elsewhere": ("reg-unalign", "is not where the bytes the UnalignRegForStore holds end"),
    "skip_ahead": ("reg-unalign", "does not continue the bytes the UnalignRegForStore holds"),
    "us_at_8": ("ub-misaligned", "is not 16-byte aligned"),
    "norm_of_b32_mask": ("reg-mask", "made for 4-byte elements; this form moves a mask of 1-byte elements"),
    "unwritten_lane": ("reg-mask", "lane 2 of operand srcReg was not written"),
    "norm_past_end": ("ub-out-of-bounds", "LoadAlign: srcAddr"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_misuse_aborts_with_a_named_error(program, case):
    twin_build.assert_misuse_aborts(program, case, *BAD[case])


def test_a_misplaced_post_names_where_the_held_bytes_end(program):
    """Two StoreUnAligns hold bytes [0, 16) of dst; the StoreUnAlignPost at byte 8 is named with both."""
    _rc, _out, err = program("post_elsewhere")
    match = re.search(
        r"UB byte offset (\d+) is not where the bytes the UnalignRegForStore holds end \((\d+)\)", err
    )
    assert match is not None, err
    at, end = (int(v) for v in match.groups())
    assert (end - at, end % 32) == (8, 16), err


@pytest.mark.parametrize("case", ["us_at_16", "norm_at_end"])
def test_the_same_moves_in_place_run_clean(program, case):
    """The controls of us_at_8 and norm_past_end: a DIST_US load 16-byte aligned, a DIST_NORM load of the
    buffer's whole 32 bytes."""
    rc, _out, err = program(case)
    assert rc == 0 and "AF_TWIN_ERROR" not in err, err


# Forms made in a vector function (src: float*) after these lines.
SKELETON = """
uint32_t n = 64;
Reg::MaskReg m = Reg::UpdateMask<float>(n);
Reg::MaskReg h = Reg::UpdateMask<half>(n);
Reg::MaskReg g;
Reg::UnalignRegForStore u;
Reg::RegTensor<uint32_t> w;
Reg::RegTensor<uint16_t> v;
Reg::Duplicate(w, 0u, m);
Reg::Duplicate(v, (uint16_t)0, h);
"""
LEGAL = {
    "store_unalign_b32": "__ubuf__ uint32_t* p = (__ubuf__ uint32_t*)src;\nReg::StoreUnAlign(p, m, u);\n"
    "Reg::StoreUnAlignPost<uint32_t, Reg::PostLiteral::POST_MODE_NORMAL>(p, u, 0);",
    "store_unalign_b16": "__ubuf__ uint16_t* p = (__ubuf__ uint16_t*)src;\nReg::StoreUnAlign(p, h, u);\n"
    "Reg::StoreUnAlignPost<uint16_t, Reg::PostLiteral::POST_MODE_UPDATE>(p, u, 8);",
    "mask_gen_b32_block_0": "Reg::MaskGenWithRegTensor<uint32_t, 0>(g, w);",
    "mask_gen_b16_block_15": "Reg::MaskGenWithRegTensor<uint16_t, 15>(g, v);",
    "mask_gen_b32_block_31": "Reg::MaskGenWithRegTensor<uint32_t, 31>(g, w);",
    "unpack_highest": "Reg::UnPack<Reg::HighLowPart::HIGHEST>(g, h);",
    "load_us_store_pack": "Reg::LoadAlign<uint8_t, Reg::MaskDist::DIST_US>(g, (__ubuf__ uint8_t*)src);\n"
    "Reg::StoreAlign<uint8_t, Reg::MaskDist::DIST_PACK>((__ubuf__ uint8_t*)src, g);",
}
# name -> (the form, what the twin's error says)
ILLEGAL = {
    "store_unalign_b8": (
        "__ubuf__ uint8_t* p = (__ubuf__ uint8_t*)src;\nReg::StoreUnAlign(p, m, u);",
        "StoreUnAlign only support type b16/b32",
    ),
    "mask_gen_b32_block_32": ("Reg::MaskGenWithRegTensor<uint32_t, 32>(g, w);", "offset must be in"),
    "mask_gen_b16_block_16": ("Reg::MaskGenWithRegTensor<uint16_t, 16>(g, v);", "offset must be in"),
    "mask_gen_b8": (
        "Reg::RegTensor<uint8_t> b;\nReg::MaskGenWithRegTensor<uint8_t, 0>(g, b);",
        "MaskGenWithRegTensor only support type b16/b32",
    ),
    "store_dist_ds": (
        "Reg::StoreAlign<uint8_t, Reg::MaskDist::DIST_DS>((__ubuf__ uint8_t*)src, h);",
        "StoreAlign",
    ),
}


def _skeleton(form: str) -> str:
    return twin_build.vf_kernel(SKELETON + form + "\n(void)src;")


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_twin_accepts_the_legal_form(twin_compile, name):
    twin_build.twin_acceptance(twin_compile, _skeleton(LEGAL[name]))


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_twin_rejects_what_the_official_implementation_rejects(twin_compile, name):
    form, text = ILLEGAL[name]
    out = twin_build.twin_rejection(twin_compile, _skeleton(form))
    assert twin_build.is_static_assertion(out) and text in out, out


def test_mask_move_functions_pass_the_official_check(checker):
    twin_build.official_acceptance(checker, OFFICIAL_KERNEL)


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_official_headers_accept_the_legal_form(checker, name):
    twin_build.official_acceptance(checker, _skeleton(LEGAL[name]))


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_official_headers_reject_the_illegal_form(checker, name):
    described = twin_build.official_rejection(checker, _skeleton(ILLEGAL[name][0]))
    assert "static assertion failed" in described, described


def test_mask_moves_are_clean_under_the_sanitizers(twin_compile, program):
    """ASan / UBSan build of the same program: the same output of a 4-byte and an int64 run, no report."""
    sanitized = twin_compile(PROGRAM, sanitize=True)
    rng = np.random.default_rng(8)
    for dtype, phase in (("float32", "both"), ("int64", "load")):
        x, y = _values(dtype, 300, rng), _values(dtype, 300, rng)
        bits = rng.integers(0, 256, BITS_BYTES, dtype=np.uint8)
        stdin = f"300 0\n{_hex(x)}\n{_hex(y)}\n{_hex(bits)}\n"
        rc, out, err = sanitized(dtype, phase, stdin=stdin)
        assert rc == 0, err
        assert out == program(dtype, phase, stdin=stdin)[1]
