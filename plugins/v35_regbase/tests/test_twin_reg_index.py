"""The register offsets function of a full index tile (AfGatherIndexVf_*) on the twin and the official headers.

The four variants (negative-index wrap on / off, bound check on / off) are the text the tile gather
generates (``index_vf_source``). A harness builds one tile's geometry, the pattern with its overhang
(``AfGatherPattern``), runs the register function and then the memory-based ``AfGatherOffsetsVector`` on
the same index tile and prints both offset tiles: they must be the same bits, and the same as numpy's
int32 formula, over tails, pitches shorter and longer than a vector, negative and out-of-range indices.
The twin's counters of one launch are the cost model's figures (``reg_cost``), the functions pass the
official type check, and without the bound check an index outside ``[0, extent)`` is reported
(``AfGatherCheckIndices``) before the function runs.
"""

from __future__ import annotations

import af_v35_twin_build as twin_build  # loaded by conftest.py
import numpy as np
import pytest
from af_v35_regbase import reg_cost
from af_v35_regbase.api_calls.indirect_load import (
    GATHER_VF_STEP,
    index_vf_name,
    index_vf_once,
    index_vf_source,
    index_vf_step,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.twin

VARIANTS = [(neg, bound) for neg in (False, True) for bound in (False, True)]
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
HEAD = twin_build.KERNEL_HEAD + "#define AF_MAX_DIMS 8\n"


FUNCTIONS = "".join(index_vf_source(neg, bound, wide) for neg, bound in VARIANTS for wide in (False, True))

HARNESS = (
    r"""
#include <cstdio>
#include <string>

namespace {
using Buf = TBuf<TPosition::VECCALC>;

uint32_t Up(uint32_t n, uint32_t to) { return (n + to - 1) / to * to; }

// stdin: rows n0 n1 extent neg bound check wide, then rows * pitch indices (pitch = n0 * n1 rounded up to 8);
// geometry of a rank-2 row (n0 gathered positions of n1 elements), input rows inPitch apart. wide: the
// indices are int64, narrowed by the register function itself, and by the memory path's Maxs / Mins / Cast
// (as the tile gather issues them) before AfGatherOffsetsVector.
void Run() {
    int rows = 0, n0 = 0, n1 = 0, extent = 0, neg = 0, bound = 0, check = 0, wide = 0;
    if (std::scanf("%d %d %d %d %d %d %d %d", &rows, &n0, &n1, &extent, &neg, &bound, &check, &wide) != 8)
        std::exit(3);
    AfGatherGeom g{};
    g.rank = 2;
    g.sizes[0] = n0;
    g.sizes[1] = n1;
    g.idxStrides[0] = n1;
    g.idxStrides[1] = 1;
    g.inStrides[0] = n1;
    g.inStrides[1] = 1;
    g.extent = extent;
    g.outPitch = Up(static_cast<uint32_t>(n0 * n1), 8);
    g.idxPitch = g.outPitch;
    g.inPitch = Up(static_cast<uint32_t>(extent * n1), 8);
    g.zeroSlot = rows * g.inPitch;
    g.suffix = n1;
    g.fullIndex = true;
    g.needNegative = neg != 0;
    g.needBound = bound != 0;
    const uint32_t count = static_cast<uint32_t>(rows * g.outPitch);
    const uint32_t bytes = Up(count * 4, 256);
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf bi, bw, bo, bm, bp, bt, bk, bk2;
        pipe.InitBuffer(bi, bytes);
        pipe.InitBuffer(bw, Up(count * 8, 256) + 256);  // the dual load's vector past the tile
        pipe.InitBuffer(bo, bytes);
        pipe.InitBuffer(bm, bytes);
        pipe.InitBuffer(bt, bytes);
        pipe.InitBuffer(bp, Up(static_cast<uint32_t>((g.outPitch + AF_GATHER_PATTERN_OVERHANG) * 4), 32));
        pipe.InitBuffer(bk, Up(static_cast<uint32_t>(rows * ((g.outPitch + 7) / 8)), 32));
        pipe.InitBuffer(bk2, Up(static_cast<uint32_t>(rows * ((g.outPitch + 7) / 8)), 32));
        LocalTensor<int32_t> idx = bi.Get<int32_t>();
        LocalTensor<int32_t> off = bo.Get<int32_t>();
        LocalTensor<int32_t> mem = bm.Get<int32_t>();
        LocalTensor<int32_t> pattern = bp.Get<int32_t>();
        LocalTensor<int64_t> idx64 = bw.Get<int64_t>();
        for (uint32_t i = 0; i < count; ++i) {
            long long v = 0;
            if (std::scanf("%lld", &v) != 1) std::exit(3);
            if (wide) idx64.SetValue(i, static_cast<int64_t>(v));
            else idx.SetValue(i, static_cast<int32_t>(v));
        }
        AfGatherPattern<uint8_t>(pattern, g);
        SetFlag<HardEvent::S_V>(EVENT_ID0);
        WaitFlag<HardEvent::S_V>(EVENT_ID0);
        if (check && wide) AfGatherCheckIndices(idx64, rows, g, "harness");
        if (check && !wide) AfGatherCheckIndices(idx, rows, g, "harness");
        const int32_t size = 1;
        const uint32_t pitch = static_cast<uint32_t>(g.outPitch);
        auto* o = (__ubuf__ int32_t*)off.GetPhyAddr();
        auto* x = wide ? (__ubuf__ int32_t*)idx64.GetPhyAddr() : (__ubuf__ int32_t*)idx.GetPhyAddr();
        auto* q = (__ubuf__ int32_t*)pattern.GetPhyAddr();
        const int32_t scale = static_cast<int32_t>(g.inStrides[0] * size);
        const int32_t rowBytes = static_cast<int32_t>(g.inPitch * size);
        const int32_t ext = static_cast<int32_t>(g.extent);
        const int32_t zero = static_cast<int32_t>(g.zeroSlot * size);
        if (wide && neg && bound)
            asc_vf_call<AfGatherIndexVf_i64_neg_bound>(o, x, q, count, pitch, scale, rowBytes, ext, zero);
        else if (wide && neg) asc_vf_call<AfGatherIndexVf_i64_neg>(o, x, q, count, pitch, scale, rowBytes, ext, zero);
        else if (wide && bound)
            asc_vf_call<AfGatherIndexVf_i64_bound>(o, x, q, count, pitch, scale, rowBytes, ext, zero);
        else if (wide) asc_vf_call<AfGatherIndexVf_i64>(o, x, q, count, pitch, scale, rowBytes, ext, zero);
        else if (neg && bound)
            asc_vf_call<AfGatherIndexVf_neg_bound>(o, x, q, count, pitch, scale, rowBytes, ext, zero);
        else if (neg) asc_vf_call<AfGatherIndexVf_neg>(o, x, q, count, pitch, scale, rowBytes, ext, zero);
        else if (bound) asc_vf_call<AfGatherIndexVf_bound>(o, x, q, count, pitch, scale, rowBytes, ext, zero);
        else asc_vf_call<AfGatherIndexVf>(o, x, q, count, pitch, scale, rowBytes, ext, zero);
        PipeBarrier<PIPE_V>();
        if (!check && wide) {  // the memory path's clamp and narrowing, as the tile gather issues them
            Maxs(idx64, idx64, static_cast<int64_t>(-g.extent - 1), static_cast<int32_t>(count));
            PipeBarrier<PIPE_V>();
            Mins(idx64, idx64, static_cast<int64_t>(g.extent), static_cast<int32_t>(count));
            PipeBarrier<PIPE_V>();
            Cast<int32_t, int64_t>(idx, idx64, RoundMode::CAST_NONE, count);
            PipeBarrier<PIPE_V>();
        }
        if (!check) {
            AfGatherOffsetsVector<uint8_t>(mem, idx, pattern, bt.Get<int32_t>(), bk.Get<uint8_t>(),
                                           bk2.Get<uint8_t>(), rows, g, "harness");
        }
        SetFlag<HardEvent::V_S>(EVENT_ID0);
        WaitFlag<HardEvent::V_S>(EVENT_ID0);
        std::printf("reg");
        for (uint32_t i = 0; i < count; ++i) std::printf(" %d", off.GetValue(i));
        std::printf("\nmem");
        for (uint32_t i = 0; i < count && !check; ++i) std::printf(" %d", mem.GetValue(i));
        std::printf("\n");
    });
    AfTwin::WriteReportJson(stdout);  // the memory-based path issues no register instructions
}
"""
    + twin_build.RUN_MAIN
)


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(HEAD + twin_build.api_header("af_gather.h") + FUNCTIONS + HARNESS)


def _expected(
    idx: np.ndarray, rows: int, n0: int, n1: int, extent: int, neg: bool, bound: bool, wide: bool = False
) -> np.ndarray:
    """The offsets the memory path computes, in int64 and then wrapped to int32 as its int32 calls wrap; an
    int64 index (``wide``) clamped to ``[-extent - 1, extent]`` first, as its ``Maxs`` / ``Mins`` clamp it."""
    pitch = -(-n0 * n1 // 8) * 8
    in_pitch = -(-extent * n1 // 8) * 8
    v = np.array([int(x) for x in idx], dtype=object) if wide else idx.astype(np.int64)
    if wide:
        v = np.clip(v, -extent - 1, extent).astype(np.int64)
    v = v.reshape(rows, pitch)
    if neg:
        v = np.where(v < 0, v + extent, v)
    p = np.arange(pitch)
    inner = np.where(p < n0 * n1, p % n1, 0)
    off = np.arange(rows)[:, None] * in_pitch + v * n1 + inner[None, :]
    if bound:
        off = np.where((v >= 0) & (v < extent), off, rows * in_pitch)
    return off.astype(np.int64).astype(np.uint64).astype(np.uint32).view(np.int32).reshape(-1)


def _run(program, idx, rows, n0, n1, extent, neg, bound, check=False, wide=False):
    stdin = (
        f"{rows} {n0} {n1} {extent} {int(neg)} {int(bound)} {int(check)} {int(wide)}\n"
        + " ".join(map(str, idx))
        + "\n"
    )
    return program(stdin=stdin)


def _parse(out: str):
    report, rows = twin_build.report_and_rows(out, "reg", "mem")
    return report, np.array(rows["reg"], dtype=np.int32), np.array(rows["mem"], dtype=np.int32)


def _indices(rng, rows, n0, n1, extent, neg, bound) -> np.ndarray:
    pitch = -(-n0 * n1 // 8) * 8
    low = -extent if neg else 0
    idx = rng.integers(low, extent, (rows, pitch))
    if bound:  # out of range both ways, beyond what the wrap brings back
        far = rng.random((rows, pitch)) < 0.3
        idx = np.where(far, rng.integers(-3 * extent - 5, 3 * extent + 5, (rows, pitch)), idx)
    return idx.reshape(-1)


def _predicted(count: int, neg: bool, bound: bool, wide: bool = False) -> dict[str, int]:
    steps = -(-count // GATHER_VF_STEP)
    per_step = reg_cost.mix(i for i, _ in index_vf_step(neg, bound, wide))
    once = reg_cost.mix(i for i, _ in index_vf_once(bound, wide))
    return reg_cost.launch_counters(per_step, steps, once)


def _same_offsets(program, idx, rows, n0, n1, extent, neg, bound, wide=False) -> dict:
    """Run one tile through the register function and the memory path: no twin error, the same offsets in
    both and numpy's; returns the twin's report of the launch."""
    rc, out, err = _run(program, idx, rows, n0, n1, extent, neg, bound, wide=wide)
    assert rc == 0 and "AF_TWIN_ERROR" not in err, err
    report, reg, mem = _parse(out)
    np.testing.assert_array_equal(reg, mem)
    np.testing.assert_array_equal(reg, _expected(idx, rows, n0, n1, extent, neg, bound, wide=wide))
    return report


def _assert_predicted(report: dict, count: int, neg: bool, bound: bool, wide: bool = False) -> None:
    """The twin's register instructions and cycles of the launch are the cost model's."""
    predicted = _predicted(count, neg, bound, wide)
    measured = sum(report[k] for k in ("reg_loads", "reg_stores", "reg_compute", "reg_masks"))
    assert (measured, report["reg_cycles"]) == (predicted["reg_instructions"], predicted["reg_cycles"])


@pytest.mark.parametrize("neg,bound", VARIANTS)
@pytest.mark.parametrize("rows,n0,n1", [(3, 5, 1), (2, 9, 8), (5, 3, 40), (1, 70, 1), (4, 2, 3)])
def test_register_offsets_are_the_memory_offsets(program, neg, bound, rows, n0, n1):
    extent = 11
    rng = np.random.default_rng(rows * 100 + n0 * 10 + n1 + 7 * neg + 3 * bound)
    idx = _indices(rng, rows, n0, n1, extent, neg, bound)
    report = _same_offsets(program, idx, rows, n0, n1, extent, neg, bound)
    _assert_predicted(report, len(idx), neg, bound)
    assert report["vf_calls"] == 1


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    variant=st.sampled_from(VARIANTS),
    rows=st.integers(1, 6),
    n0=st.integers(1, 40),
    n1=st.integers(1, 20),
    extent=st.integers(1, 50),
    seed=st.integers(0, 2**16),
)
def test_any_tile_gives_the_memory_offsets(program, variant, rows, n0, n1, extent, seed):
    neg, bound = variant
    idx = _indices(np.random.default_rng(seed), rows, n0, n1, extent, neg, bound)
    _same_offsets(program, idx, rows, n0, n1, extent, neg, bound)


def test_offsets_wrap_like_int32(program):
    """Large scales and row bases overflow int32 the same way in registers and in the memory calls."""
    rows, n0, n1, extent = 3, 1, 64, 40_000_000
    idx = np.random.default_rng(1).integers(0, extent, (rows, -(-n0 * n1 // 8) * 8)).reshape(-1)
    _same_offsets(program, idx, rows, n0, n1, extent, False, True)


@pytest.mark.parametrize("neg", [False, True])
def test_an_index_out_of_range_without_the_bound_check_is_reported(program, neg):
    rows, n0, n1, extent = 2, 6, 1, 5
    idx = np.zeros(rows * 8, dtype=np.int64)
    idx[8 + 3] = -6 if neg else 5  # row 1, position 3: outside [0, 5) (after the wrap: -1)
    rc, _out, err = _run(program, idx, rows, n0, n1, extent, neg, False, check=True)
    error = twin_build.twin_abort(rc, err)
    assert error["kind"] == "gather-out-of-range", err
    assert f"harness: index {-1 if neg else 5} is outside [0, 5)" in error["message"], err
    idx[8 + 3] = 0
    idx[7] = 99  # a padding position (6 and 7 of a row of 6): never checked
    rc, _out, err = _run(program, idx, rows, n0, n1, extent, neg, False, check=True)
    assert rc == 0 and "AF_TWIN_ERROR" not in err, err


OFFICIAL_KERNEL = twin_build.kernel_source(
    FUNCTIONS,
    r"""
LocalTensor<int32_t> s = buf.Get<int32_t>();
__ubuf__ int32_t* off = (__ubuf__ int32_t*)s.GetPhyAddr();
__ubuf__ int32_t* idx = (__ubuf__ int32_t*)s[1024].GetPhyAddr();
__ubuf__ int32_t* pat = (__ubuf__ int32_t*)s[2048].GetPhyAddr();
"""
    + "".join(
        f"asc_vf_call<{index_vf_name(neg, bound, wide)}>(off, idx, pat, 200u, 72u, 4, 3200, 100, 6400);\n"
        for neg, bound in VARIANTS
        for wide in (False, True)
    ),
    ub_bytes=16 * 1024,
    name="reg_index_kernel",
)


def test_offsets_functions_pass_the_official_check(checker):
    twin_build.official_acceptance(checker, OFFICIAL_KERNEL)


# The scale is an int32 Muls: the 3510 MulsImpl takes no 1-byte registers, so the offsets are never scaled in
# a narrower type; the twin rejects that form as the official headers do.
ILLEGAL_INT8_MULS = twin_build.vf_kernel(
    """
    uint32_t n = 256;
    Reg::MaskReg mask = Reg::UpdateMask<int8_t>(n);
    Reg::RegTensor<int8_t> v;
    Reg::LoadAlign(v, src);
    Reg::Muls(v, v, static_cast<int8_t>(3), mask);
    Reg::StoreAlign(src, v, mask);
    """,
    "int8_t",
)


def test_twin_rejects_an_int8_scale(twin_compile):
    text = twin_build.twin_rejection(twin_compile, ILLEGAL_INT8_MULS)
    assert "Reg::Muls" in text, text


def test_official_headers_reject_an_int8_scale(checker):
    twin_build.official_rejection(checker, ILLEGAL_INT8_MULS)


def _wide_indices(rng, rows, n0, n1, extent, neg, bound) -> list[int]:
    """int64 indices: in range (negative ones when ``neg``), with the bound check mixed with values outside
    int32 whose low words alone would land in range (2**32 + k, -2**32 + k), the int32 edges and the int64
    extremes (without it an index out of range is an error the twin reports, tested below)."""
    pitch = -(-n0 * n1 // 8) * 8
    low = -extent if neg else 0
    far = [2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**32, 2**32 + 1, -(2**32) + 2, 2**40 + 3, -(2**40)]
    far += [INT64_MIN, INT64_MAX, INT64_MIN + 1, 2**63 - 2**32]
    out = []
    for _ in range(rows * pitch):
        if bound and rng.random() < 0.4:
            out.append(far[int(rng.integers(0, len(far)))])
        else:
            out.append(int(rng.integers(low, extent)))
    return out


@pytest.mark.parametrize("neg,bound", VARIANTS)
@pytest.mark.parametrize("rows,n0,n1", [(3, 5, 1), (2, 9, 8), (5, 3, 40), (1, 70, 1), (4, 2, 3)])
def test_int64_offsets_narrowed_in_registers_are_the_memory_offsets(program, neg, bound, rows, n0, n1):
    """The int64 variants narrow the index in the function: the same bits as the memory path's Maxs / Mins /
    Cast and AfGatherOffsetsVector, for indices beyond int32 whose low words would fall in range, at the
    int32 and int64 edges; the twin's counters of the launch are the cost model's."""
    extent = 11
    rng = np.random.default_rng(rows * 100 + n0 * 10 + n1 + 7 * neg + 3 * bound)
    idx = _wide_indices(rng, rows, n0, n1, extent, neg, bound)
    report = _same_offsets(program, idx, rows, n0, n1, extent, neg, bound, wide=True)
    _assert_predicted(report, len(idx), neg, bound, wide=True)
    # a step's loads: the dual load of both words of 64 indices (512 bytes) and a vector of the pattern
    assert report["reg_load_bytes"] == (512 + 256) * -(-len(idx) // GATHER_VF_STEP)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    variant=st.sampled_from(VARIANTS),
    rows=st.integers(1, 6),
    n0=st.integers(1, 40),
    n1=st.integers(1, 20),
    extent=st.integers(1, 2**31 - 1),
    seed=st.integers(0, 2**16),
)
def test_any_int64_tile_gives_the_memory_offsets(program, variant, rows, n0, n1, extent, seed):
    neg, bound = variant
    idx = _wide_indices(np.random.default_rng(seed), rows, n0, n1, extent, neg, bound)
    _same_offsets(program, idx, rows, n0, n1, extent, neg, bound, wide=True)


def test_an_int64_index_whose_low_word_is_in_range_is_reported_without_the_bound_check(program):
    """2**32 + 3 narrowed by its low word alone would gather row 3; the twin reports the index itself."""
    rows, n0, n1, extent = 2, 6, 1, 5
    idx = [0] * (rows * 8)
    idx[8 + 2] = 2**32 + 3
    rc, _out, err = _run(program, idx, rows, n0, n1, extent, False, False, check=True, wide=True)
    error = twin_build.twin_abort(rc, err)
    assert "harness: index 4294967299 is outside [0, 5)" in error["message"], err


# The dual load takes the de-interleaving modes only (CheckLoadDist<2, dist>): a DIST_NORM dual load is
# rejected by the official headers and by the twin alike.
ILLEGAL_DUAL_NORM = twin_build.vf_kernel(
    """
    Reg::RegTensor<int32_t> a;
    Reg::RegTensor<int32_t> b;
    Reg::LoadAlign<int32_t, Reg::LoadDist::DIST_NORM>(a, b, src);
    """,
    "int32_t",
)


def test_twin_rejects_a_dual_load_without_deinterleaving(twin_compile):
    text = twin_build.twin_rejection(twin_compile, ILLEGAL_DUAL_NORM)
    assert "DIST_DINTLV" in text, text


def test_official_headers_reject_a_dual_load_without_deinterleaving(checker):
    described = twin_build.official_rejection(checker, ILLEGAL_DUAL_NORM, in_file=None)
    assert "LoadAlign not support this dist" in described, described
