"""The register offsets function of a compact index tile (AfGatherCompactVf_*) on the twin and the official headers.

A compact index tile holds only the index's non-broadcast axes (index_select, embedding): each position of
an output row reads the value of one element of its row of the compact tile. The function loads, for 64
positions a step, the element each reads from the select tile (``AfGatherSelect``, filled once per kernel,
with a vector of overhang into the following rows as the pattern has), gathers those values with the
register ``Gather`` (an int64 index as its two int32 words, narrowed as the full-index function narrows the
dual load's words) and computes the offsets as the full-index function does.

A harness builds one tile's geometry (a rank-3 row, any subset of the axes after the gathered one
broadcast), runs the function and the memory-based scalar path (``AfGatherOffsetsScalar``, which any
compact layout takes with the register form off) on the same tile and prints both: every real position
has the same offset bits in both and in numpy's formula; a padding position reads its row's first value,
so its offset stays inside the source. The twin's counters are the cost model's, the functions pass the
official type check, and without the bound check an out-of-range value a position reads is reported
(``AfGatherCheckCompact``).
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
FORMS = [(neg, bound, wide) for neg, bound in VARIANTS for wide in (False, True)]
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
HEAD = twin_build.KERNEL_HEAD + "#define AF_MAX_DIMS 8\n"


FUNCTIONS = "".join(index_vf_source(neg, bound, wide, compact=True) for neg, bound, wide in FORMS)


def _dispatch() -> str:
    """The harness's launch of the variant its input names (one ``if`` per form)."""
    lines = []
    for neg, bound, wide in FORMS:
        cond = f"neg == {int(neg)} && bound == {int(bound)} && wide == {int(wide)}"
        lines.append(
            f"        if ({cond}) asc_vf_call<{index_vf_name(neg, bound, wide, compact=True)}>"
            "(o, x, q, s, count, pitch, idxPitch, scale, rowBytes, ext, zero);"
        )
    return "\n".join(lines) + "\n"


HARNESS = (
    r"""
#include <cstdio>
#include <string>

namespace {
using Buf = TBuf<TPosition::VECCALC>;

uint32_t Up(uint32_t n, uint32_t to) { return (n + to - 1) / to * to; }

// stdin: rows s0 s1 s2 b1 b2 extent neg bound check wide, then rows * idxPitch compact index values.
// A row is s0 gathered positions by s1 by s2 (row-major); b1 / b2 say whether axis 1 / 2 is broadcast in the
// index (stride 0 in the compact tile); the compact row is the other axes, row-major, padded to 8 elements.
void Run() {
    int rows = 0, s0 = 0, s1 = 0, s2 = 0, b1 = 0, b2 = 0, extent = 0, neg = 0, bound = 0, check = 0, wide = 0;
    if (std::scanf("%d %d %d %d %d %d %d %d %d %d %d", &rows, &s0, &s1, &s2, &b1, &b2, &extent, &neg, &bound,
                   &check, &wide) != 11)
        std::exit(3);
    AfGatherGeom g{};
    g.rank = 3;
    g.sizes[0] = s0;
    g.sizes[1] = s1;
    g.sizes[2] = s2;
    g.idxStrides[2] = b2 ? 0 : 1;
    g.idxStrides[1] = b1 ? 0 : (b2 ? 1 : s2);
    g.idxStrides[0] = (b1 ? 1 : s1) * (b2 ? 1 : s2);
    const uint32_t compact = static_cast<uint32_t>(s0 * (b1 ? 1 : s1) * (b2 ? 1 : s2));
    g.inStrides[0] = s1 * s2;
    g.inStrides[1] = s2;
    g.inStrides[2] = 1;
    g.extent = extent;
    g.outPitch = Up(static_cast<uint32_t>(s0 * s1 * s2), 8);
    g.idxPitch = Up(compact, 8);
    g.inPitch = Up(static_cast<uint32_t>(extent * s1 * s2), 8);
    g.zeroSlot = rows * g.inPitch;
    g.suffix = s1 * s2;
    g.fullIndex = false;
    g.needNegative = neg != 0;
    g.needBound = bound != 0;
    const uint32_t count = static_cast<uint32_t>(rows * g.outPitch);
    const uint32_t values = static_cast<uint32_t>(rows * g.idxPitch);
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf bi, bw, bo, bm, bp, bs;
        pipe.InitBuffer(bi, Up(values * 4, 256));
        pipe.InitBuffer(bw, Up(values * 8, 256));
        pipe.InitBuffer(bo, Up(count * 4, 256));
        pipe.InitBuffer(bm, Up(count * 4, 256));
        const uint32_t fixed = Up(static_cast<uint32_t>((g.outPitch + AF_GATHER_PATTERN_OVERHANG) * 4), 32);
        pipe.InitBuffer(bp, fixed);
        pipe.InitBuffer(bs, fixed);
        LocalTensor<int32_t> idx = bi.Get<int32_t>();
        LocalTensor<int64_t> idx64 = bw.Get<int64_t>();
        LocalTensor<int32_t> off = bo.Get<int32_t>();
        LocalTensor<int32_t> mem = bm.Get<int32_t>();
        LocalTensor<int32_t> pattern = bp.Get<int32_t>();
        LocalTensor<int32_t> select = bs.Get<int32_t>();
        for (uint32_t i = 0; i < values; ++i) {
            long long v = 0;
            if (std::scanf("%lld", &v) != 1) std::exit(3);
            if (wide) idx64.SetValue(i, static_cast<int64_t>(v));
            else idx.SetValue(i, static_cast<int32_t>(v));
        }
        AfGatherPattern<uint8_t>(pattern, g);
        AfGatherSelect(select, g);
        SetFlag<HardEvent::S_V>(EVENT_ID0);
        WaitFlag<HardEvent::S_V>(EVENT_ID0);
        if (check && wide) AfGatherCheckCompact(idx64, rows, g, "harness");
        if (check && !wide) AfGatherCheckCompact(idx, rows, g, "harness");
        auto* o = (__ubuf__ int32_t*)off.GetPhyAddr();
        auto* x = wide ? (__ubuf__ int32_t*)idx64.GetPhyAddr() : (__ubuf__ int32_t*)idx.GetPhyAddr();
        auto* q = (__ubuf__ int32_t*)pattern.GetPhyAddr();
        auto* s = (__ubuf__ uint32_t*)select.GetPhyAddr();
        const uint32_t pitch = static_cast<uint32_t>(g.outPitch);
        const uint32_t idxPitch = static_cast<uint32_t>(g.idxPitch);
        const int32_t scale = static_cast<int32_t>(g.inStrides[0]);
        const int32_t rowBytes = static_cast<int32_t>(g.inPitch);
        const int32_t ext = static_cast<int32_t>(g.extent);
        const int32_t zero = static_cast<int32_t>(g.zeroSlot);
"""
    + _dispatch()
    + r"""        PipeBarrier<PIPE_V>();
        if (!check && wide) AfGatherOffsetsScalar<int64_t, uint8_t>(mem, idx64, rows, g, "harness");
        if (!check && !wide) AfGatherOffsetsScalar<int32_t, uint8_t>(mem, idx, rows, g, "harness");
        SetFlag<HardEvent::V_S>(EVENT_ID0);
        WaitFlag<HardEvent::V_S>(EVENT_ID0);
        std::printf("reg");
        for (uint32_t i = 0; i < count; ++i) std::printf(" %d", off.GetValue(i));
        std::printf("\nmem");
        for (uint32_t i = 0; i < count && !check; ++i) std::printf(" %d", mem.GetValue(i));
        std::printf("\n");
    });
    AfTwin::WriteReportJson(stdout);  // the scalar path issues no register instructions
}
"""
    + twin_build.RUN_MAIN
)


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(HEAD + twin_build.api_header("af_gather.h") + FUNCTIONS + HARNESS)


class Tile:
    """One tile's geometry as the harness builds it."""

    def __init__(self, rows: int, sizes: tuple[int, int, int], broadcast: tuple[bool, bool], extent: int):
        self.rows, self.sizes, self.broadcast, self.extent = rows, sizes, broadcast, extent
        s0, s1, s2 = sizes
        self.kept = (s0, 1 if broadcast[0] else s1, 1 if broadcast[1] else s2)
        self.width = s0 * s1 * s2
        self.pitch = -(-self.width // 8) * 8
        self.idx_pitch = -(-int(np.prod(self.kept)) // 8) * 8
        self.in_pitch = -(-extent * s1 * s2 // 8) * 8

    @property
    def count(self) -> int:
        return self.rows * self.pitch

    def stdin(self, idx: np.ndarray, neg: bool, bound: bool, check: bool, wide: bool) -> str:
        head = [self.rows, *self.sizes, *map(int, self.broadcast), self.extent, neg, bound, check, wide]
        return " ".join(str(int(v)) for v in head) + "\n" + " ".join(str(int(v)) for v in idx) + "\n"

    def element(self) -> np.ndarray:
        """The compact element each real position of a row reads."""
        c0, c1, c2 = np.unravel_index(np.arange(self.width), self.sizes)
        c1 = np.zeros_like(c1) if self.broadcast[0] else c1
        c2 = np.zeros_like(c2) if self.broadcast[1] else c2
        return np.ravel_multi_index((c0, c1, c2), self.kept)

    def expected(self, idx: np.ndarray, neg: bool, bound: bool) -> np.ndarray:
        """rows x width offsets of the real positions (element indices of the source, int32 bits)."""
        s0, s1, s2 = self.sizes
        v = np.array([int(x) for x in idx], dtype=object).reshape(self.rows, self.idx_pitch)[
            :, self.element()
        ]
        if neg:
            v = np.where(v < 0, v + self.extent, v)
        inner = np.arange(self.width) % (s1 * s2)
        rows = np.arange(self.rows)[:, None]
        off = rows * self.in_pitch + v * (s1 * s2) + inner[None, :]
        if bound:
            off = np.where((v >= 0) & (v < self.extent), off, self.rows * self.in_pitch)
        return np.array([int(x) for x in off.reshape(-1)], dtype=np.int64).reshape(self.rows, self.width)

    def indices(self, rng: np.random.Generator, neg: bool, bound: bool, wide: bool = False) -> np.ndarray:
        low = -self.extent if neg else 0
        idx = rng.integers(low, self.extent, (self.rows, self.idx_pitch)).astype(object)
        if bound:  # out of range both ways, beyond what the wrap brings back; int64 ones beyond int32
            far = rng.random((self.rows, self.idx_pitch)) < 0.3
            edges = [INT64_MIN, INT64_MAX, 2**31, -(2**31) - 1, 2**32 + 1] if wide else [2**31 - 1, -(2**31)]
            wild = rng.integers(
                -3 * self.extent - 5, 3 * self.extent + 5, (self.rows, self.idx_pitch)
            ).astype(object)
            pick = rng.random((self.rows, self.idx_pitch)) < 0.3
            wild = np.where(
                pick, rng.choice(np.array(edges, dtype=object), (self.rows, self.idx_pitch)), wild
            )
            idx = np.where(far, wild, idx)
        return idx.reshape(-1)


def _run(program, tile: Tile, idx, neg, bound, *, check=False, wide=False):
    return program(stdin=tile.stdin(idx, neg, bound, check, wide))


def _parse(out: str):
    report, rows = twin_build.report_and_rows(out, "reg", "mem")
    return report, np.array(rows["reg"], dtype=np.int64), np.array(rows["mem"], dtype=np.int64)


def _same_offsets(program, tile: Tile, idx, neg, bound, wide=False) -> dict:
    """Run one tile through the register function and the scalar path: no twin error, the same offsets of
    every real position in both and numpy's, padding positions inside the source; returns the twin's
    report of the launch."""
    rc, out, err = _run(program, tile, idx, neg, bound, wide=wide)
    assert rc == 0 and "AF_TWIN_ERROR" not in err, err
    report, reg, mem = _parse(out)
    reg, mem = reg.reshape(tile.rows, tile.pitch), mem.reshape(tile.rows, tile.pitch)
    np.testing.assert_array_equal(reg[:, : tile.width], mem[:, : tile.width])
    np.testing.assert_array_equal(reg[:, : tile.width], tile.expected(idx, neg, bound))
    padding = reg[:, tile.width :]
    assert ((padding >= 0) & (padding <= tile.rows * tile.in_pitch)).all(), padding
    return report


def _predicted(count: int, neg: bool, bound: bool, wide: bool) -> dict[str, int]:
    steps = -(-count // GATHER_VF_STEP)
    per_step = reg_cost.mix(i for i, _ in index_vf_step(neg, bound, wide, compact=True))
    once = reg_cost.mix(i for i, _ in index_vf_once(bound, wide))
    return reg_cost.launch_counters(per_step, steps, once)


TILES = [
    Tile(3, (5, 1, 1), (False, False), 11),  # index_select on the last axis: one value per position
    Tile(2, (3, 4, 8), (True, True), 9),  # embedding: one value per 32 positions
    Tile(4, (2, 3, 5), (True, False), 7),  # broadcast over the middle axis only
    Tile(2, (3, 5, 3), (False, True), 13),  # broadcast over the last axis (runs of 3: the scalar path)
    Tile(1, (70, 1, 1), (False, False), 17),  # a row longer than a vector
    Tile(5, (1, 3, 1), (True, False), 4),  # one gathered position per row, rows shorter than the step
]


@pytest.mark.parametrize("neg,bound,wide", FORMS)
@pytest.mark.parametrize("tile", TILES, ids=lambda t: f"{t.rows}x{t.sizes}b{t.broadcast}")
def test_compact_register_offsets_are_the_scalar_offsets(program, tile, neg, bound, wide):
    rng = np.random.default_rng(tile.count * 7 + 4 * neg + 2 * bound + wide)
    idx = tile.indices(rng, neg, bound, wide)
    report = _same_offsets(program, tile, idx, neg, bound, wide)
    predicted = _predicted(tile.count, neg, bound, wide)
    measured = sum(report[k] for k in ("reg_loads", "reg_stores", "reg_compute", "reg_masks"))
    assert (measured, report["reg_cycles"]) == (predicted["reg_instructions"], predicted["reg_cycles"])
    assert report["vf_calls"] == 1


@settings(max_examples=14, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    form=st.sampled_from(FORMS),
    rows=st.integers(1, 6),
    sizes=st.tuples(st.integers(1, 12), st.integers(1, 6), st.integers(1, 9)),
    broadcast=st.tuples(st.booleans(), st.booleans()),
    extent=st.integers(1, 40),
    seed=st.integers(0, 2**16),
)
def test_any_compact_tile_gives_the_scalar_offsets(program, form, rows, sizes, broadcast, extent, seed):
    neg, bound, wide = form
    tile = Tile(rows, sizes, broadcast, extent)
    _same_offsets(
        program, tile, tile.indices(np.random.default_rng(seed), neg, bound, wide), neg, bound, wide
    )


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("neg", [False, True])
def test_an_out_of_range_value_without_the_bound_check_is_reported(program, neg, wide):
    tile = Tile(2, (3, 2, 4), (True, True), 5)  # compact rows of 3 values, padded to 8
    idx = np.zeros(tile.rows * tile.idx_pitch, dtype=np.int64)
    idx[tile.idx_pitch + 2] = -6 if neg else 5  # row 1, value 2: outside [0, 5) (after the wrap: -1)
    rc, _out, err = _run(program, tile, idx, neg, False, check=True, wide=wide)
    error = twin_build.twin_abort(rc, err)
    assert error["kind"] == "gather-out-of-range", err
    assert f"harness: index {-1 if neg else 5} is outside [0, 5)" in error["message"], err
    idx[tile.idx_pitch + 2] = 0
    idx[tile.idx_pitch + 5] = 99  # past the compact row of 3: no position reads it, never checked
    rc, _out, err = _run(program, tile, idx, neg, False, check=True, wide=wide)
    assert rc == 0 and "AF_TWIN_ERROR" not in err, err


OFFICIAL_KERNEL = twin_build.kernel_source(
    FUNCTIONS,
    r"""
LocalTensor<int32_t> s = buf.Get<int32_t>();
__ubuf__ int32_t* off = (__ubuf__ int32_t*)s.GetPhyAddr();
__ubuf__ int32_t* idx = (__ubuf__ int32_t*)s[1024].GetPhyAddr();
__ubuf__ int32_t* pat = (__ubuf__ int32_t*)s[2048].GetPhyAddr();
__ubuf__ uint32_t* sel = (__ubuf__ uint32_t*)s[3072].GetPhyAddr();
"""
    + "".join(
        f"asc_vf_call<{index_vf_name(neg, bound, wide, compact=True)}>"
        "(off, idx, pat, sel, 200u, 72u, 16u, 4, 3200, 100, 6400);\n"
        for neg, bound, wide in FORMS
    ),
    ub_bytes=16 * 1024,
    name="reg_compact_kernel",
)


def test_compact_offsets_functions_pass_the_official_check(checker):
    twin_build.official_acceptance(checker, OFFICIAL_KERNEL)
