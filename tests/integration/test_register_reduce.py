"""The reduce of a post chain inside the register vector function (VfChainRegApiCall with ``attrs["reduce"]``).

A reduce over a kept inner width (``out[r, i] = fold over g of x[r, g, i]``) ends the run of the post chain
in the SIMD and SK-like templates: one ``__simd_vf__`` function loads each group row with ``LoadAlign``
(block-masked for a tail), computes the chain in registers and folds the row into an accumulator with Add / Max / Min
-- left to right, as the memory path's ``AfReduceRows`` folds, so the bits are the memory path's. Over the
innermost axis the group is accumulated lane-wise and ``Reg::Reduce`` folds the lanes (the documented
binary tree). Where the register form has none (groups or group rows not known to start on 32-byte
blocks) the notes ``afc explain`` prints say why; a run with unpacked 2-byte values is not joined.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from af_v35_regbase.api_calls.indirect_load import IndirectLoadRegApiCall
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from af_core.autofuser import AutofuserOptions
from af_core.builders import GraphBuilder, gather
from af_core.testing import chain_graph
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin

NPY = {"float32": np.float32, "float16": np.float16, "int32": np.int32}


def reduce_graph(dtype: str, kind: str, axis: int, n: int = 37, d: int = 72, b: int = 29):
    """y = reduce(kind, Abs(gather(x, 0, index)) - side, axis) with fixed sizes (x [n, d], index [b, d])."""
    g = GraphBuilder(f"vfred_{dtype}_{kind}_{axis}_{n}_{d}_{b}")
    x = g.data("x", [n, d], dtype)
    y = gather(x, 0, g.data("index", [b, d], "int32"))
    y = g.op("Sub", g.op("Abs", y), g.data("side", [b, d], dtype))
    g.output(g.reduce(kind, y, [axis]), "y")
    return g.build()


def _notes(session) -> list[str]:
    return [n for case in session.scheduled.cases for n in case.impl.meta.get("vector_chains", ())]


def _fused_functions(kernel: str) -> list[str]:
    return re.findall(r"// register vector function: ([^\n]*)\n__simd_vf__", kernel)


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize(
    ("dtype", "kind"),
    [
        ("float32", "Sum"),
        ("float32", "Mean"),
        ("float32", "Max"),
        ("float32", "Min"),
        ("int32", "Sum"),
        ("int32", "Max"),
        ("int32", "Min"),
    ],
)
def test_post_chain_and_its_reduce_are_one_vector_function(template, dtype, kind):
    """Over the non-innermost axis (group 29, inner 72: one full vector and a tail of 8 lanes) the chain and
    the reduce are one function: no memory reduce, twin == reference."""
    session = TwinSession(reduce_graph(dtype, kind, 0), AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    assert f"Abs; Sub; {kind}" in _fused_functions(kernel), kernel
    assert re.search(r"^\s+AfReduceRows<", kernel, re.M) is None  # the memory reduce is never called
    assert "DataCopyMode::DATA_BLOCK_COPY" in kernel
    note = f"2 op(s) Abs ('abs'), Sub ('sub') and the {kind} ('{kind.lower()}') in one VfChainRegApiCall"
    assert note in _notes(session), _notes(session)
    run = session.check({}, seed=4, core_num=4)
    assert run.ok, run.describe()
    assert run.twin.counter("vf_calls") > 0


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("kind", ["Sum", "Mean", "Max", "Min"])
def test_2byte_reduces_run_alone_in_registers_after_the_chain(template, dtype, kind):
    """2-byte values are reduced in float32: the run holding the Cast up loads unpacked 2-byte rows, which
    have no block-masked form, so the reduce is a function of its own over the float32 tile (the note says
    why) -- still no memory reduce."""
    session = TwinSession(reduce_graph(dtype, kind, 0), AutofuserOptions(force_template=template))
    notes = _notes(session)
    name = kind.lower()
    assert f"the {kind} ('{name}') alone in one VfChainRegApiCall" in notes, notes
    assert any(
        n.startswith(f"{kind} ('{name}') does not end the run before it: the run holds") for n in notes
    )
    assert kind in _fused_functions(session.result.kernel)
    run = session.check({}, seed=5, core_num=3)
    assert run.ok, run.describe()


def _fold(values: np.ndarray, kind: str) -> np.ndarray:
    """The documented order: row 0, then each later row folded in, left to right, in the tile's dtype."""
    acc = values[0].copy()
    for row in values[1:]:
        if kind in ("Sum", "Mean"):
            acc = (acc + row).astype(values.dtype)
        else:
            pick = np.maximum if kind == "Max" else np.minimum  # both propagate NaN, as Reg::Max / Min do
            acc = pick(acc, row)
    if kind == "Mean":
        acc = (acc * np.float32(1.0 / values.shape[0])).astype(np.float32)
    return acc


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("kind", ["Sum", "Mean", "Max", "Min"])
def test_float_reduce_is_the_left_to_right_fold_bit_for_bit_with_nan_and_signed_zeros(template, kind):
    """The register accumulate gives exactly the left-to-right float32 fold (the memory path's order):
    compared bit for bit, with NaN in some columns (one in the tail)."""
    n, d, b = 37, 72, 29
    session = TwinSession(
        reduce_graph("float32", kind, 0, n, d, b), AutofuserOptions(force_template=template)
    )
    rng = np.random.default_rng(7)
    x = rng.uniform(-3, 3, (n, d)).astype(np.float32)
    x[3, 9] = x[4, 70] = np.nan  # column 70 is in the 8-lane tail
    side = rng.uniform(-1, 1, (b, d)).astype(np.float32)
    index = rng.integers(0, n, (b, d)).astype(np.int32)
    index[:, 9] = 3
    index[5, 70] = 4
    inputs = session.inputs({}, arrays={"x": x, "index": index, "side": side})
    run = session.check(inputs=inputs, core_num=4)
    assert run.ok, run.describe()
    values = (np.abs(x[index, np.arange(d)]) - side).astype(np.float32)
    expected = _fold(values, kind)
    got = run.twin.outputs["y"].reshape(expected.shape)
    assert np.isnan(got[[9, 70]]).all() and np.isnan(expected[[9, 70]]).all()
    same = np.where(np.isnan(expected), np.isnan(got), got.view(np.uint32) == expected.view(np.uint32))
    assert same.all(), (np.nonzero(~same), got[~same], expected[~same])


def test_a_sum_of_negative_zeros_stays_negative_zero():
    """Row 0 is copied as x + (-0.0), exact for -0 (x + 0 would give +0): Neg(Abs(x)) of zeros is -0."""
    g = GraphBuilder("vfred_negzero")
    x = g.data("x", [5, 16], "float32")
    y = g.op("Neg", g.op("Abs", gather(x, 0, g.data("index", [6, 16], "int32"))))
    g.output(g.reduce("Sum", y, [0]), "y")
    session = TwinSession(g.build(), AutofuserOptions(force_template="simd"))
    assert "Abs; Neg; Sum" in _fused_functions(session.result.kernel)
    inputs = session.inputs(
        {}, arrays={"x": np.zeros((5, 16), np.float32), "index": np.ones((6, 16), np.int32)}
    )
    run = session.check(inputs=inputs, core_num=2)
    assert run.ok, run.describe()
    got = run.twin.outputs["y"]
    assert np.all(got == 0) and np.all(np.signbit(got))


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize(
    ("dtype", "kind"),
    [("float32", "Sum"), ("float32", "Mean"), ("float32", "Max"), ("int32", "Min"), ("int32", "Sum")],
)
def test_a_reduce_over_the_innermost_axis_is_a_register_reduce_in_the_function(
    template, dtype, kind, monkeypatch
):
    """Over the innermost axis (groups of 72: a full vector and an 8-lane tail) the chain, the lane-wise
    accumulate, Reg::Reduce and a first-element store are one function; twin == reference. (The tile
    gather's own register functions, which store the gathered tile and its offsets, are turned off so that
    the store count is the reduce's alone.)"""
    monkeypatch.setattr(IndirectLoadRegApiCall, "register_gather", False)
    monkeypatch.setattr(IndirectLoadRegApiCall, "register_offsets", False)
    session = TwinSession(reduce_graph(dtype, kind, 1), AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    assert f"Abs; Sub; {kind}" in _fused_functions(kernel), kernel
    assert re.search(r"^\s+AfReduceRows<", kernel, re.M) is None
    assert "AscendC::Reg::Reduce<AscendC::Reg::ReduceType::" in kernel
    assert "StoreDist::DIST_FIRST_ELEMENT_B32" in kernel
    run = session.check({}, seed=9, core_num=4)
    assert run.ok, run.describe()
    assert run.twin.counter("reg_stores") == 29  # one first-element store per group, nothing else stored


def _tree(lanes: np.ndarray) -> np.float32:
    """Reg::Reduce SUM as the official page documents it: lanes (0, 1), (2, 3), ... added, then pairwise."""
    level = lanes.astype(np.float32)
    while level.size > 1:
        level = (level[0::2] + level[1::2]).astype(np.float32)
    return level[0]


@pytest.mark.parametrize("template", ["simd", "sklike"])
def test_an_innermost_float_sum_is_lane_wise_then_the_documented_tree_bit_for_bit(template):
    """The order the twin emulates for a float sum over the innermost axis (groups of 72): lane j holds
    x[j] + x[j + 64] for the 8 tail lanes, x[j] for the others, then Reg::Reduce's binary tree over the 64
    lanes -- compared bit for bit, with a NaN in one group."""
    n, d, b = 37, 72, 29
    session = TwinSession(
        reduce_graph("float32", "Sum", 1, n, d, b), AutofuserOptions(force_template=template)
    )
    rng = np.random.default_rng(11)
    x = rng.uniform(-3, 3, (n, d)).astype(np.float32)
    x[2, 40] = np.nan
    side = rng.uniform(-1, 1, (b, d)).astype(np.float32)
    index = rng.integers(0, n, (b, d)).astype(np.int32)
    index[4, 40] = 2
    inputs = session.inputs({}, arrays={"x": x, "index": index, "side": side})
    run = session.check(inputs=inputs, core_num=4)
    assert run.ok, run.describe()
    values = (np.abs(x[index, np.arange(d)]) - side).astype(np.float32)
    expected = np.empty(b, np.float32)
    for r in range(b):
        acc = values[r, :64].copy()
        acc[:8] = (acc[:8] + values[r, 64:72]).astype(np.float32)
        expected[r] = _tree(acc)
    got = run.twin.outputs["y"].reshape(b)
    assert np.isnan(got[4]) and np.isnan(expected[4])
    same = np.where(np.isnan(expected), np.isnan(got), got.view(np.uint32) == expected.view(np.uint32))
    assert same.all(), (np.nonzero(~same), got[~same], expected[~same])


def test_innermost_groups_that_do_not_start_aligned_are_loaded_unaligned_in_the_function():
    """SIMD tile rows of 29 groups of 70 float32 values: group 1 starts 280 bytes in, not on a 32-byte block,
    so each group's two vectors are loaded with LoadUnAlign after one LoadUnAlignPre per group and input;
    the chain, the lane-wise accumulate and Reg::Reduce stay one function, no memory reduce; the tiles it
    reads are 256 bytes longer than their rows (LoadUnAlign reads whole blocks past the data)."""
    session = TwinSession(reduce_graph("float32", "Sum", 1, d=70), AutofuserOptions(force_template="simd"))
    notes = _notes(session)
    assert "2 op(s) Abs ('abs'), Sub ('sub') and the Sum ('sum') in one VfChainRegApiCall" in notes, notes
    kernel = session.result.kernel
    assert re.search(r"^\s+AfReduceRows<", kernel, re.M) is None
    assert "AscendC::Reg::LoadUnAlignPre(u0, src0 + t * src_pitch + a * group);" in kernel
    assert "AscendC::Reg::LoadUnAlign(r0, u0, src0 + o);" in kernel
    chain = re.search(r"__simd_vf__ inline void AfChainVf_.*?\n}\n", kernel, re.S)
    assert chain is not None and "LoadUnAlign(" in chain[0], kernel
    assert "DATA_BLOCK_COPY" not in kernel and "AscendC::Reg::LoadAlign(" not in chain[0]
    assert re.search(r"InitBuffer\(indirect_load_tile_buf, \d?,? ?\(256 \+ AfAlignUp", kernel), kernel
    run = session.check({}, seed=6, core_num=4)
    assert run.ok, run.describe()


def test_an_inner_width_of_unknown_alignment_is_loaded_unaligned_in_the_function():
    """Dynamic sizes: the kept inner width b1 may not fill whole 32-byte blocks, so each group row is loaded
    with its own LoadUnAlignPre / LoadUnAlign (no tail form needed); twin == reference at widths that are
    and are not whole blocks, and the cases' register counts are the twin's."""
    from af_core.schedule.cost import twin_counters
    from af_core.tiling.solve import CaseRef, solve

    graph = chain_graph(rank=2, dim=0, post=("Abs",), reduce=("Sum", (0,)), name="vfred_dynamic")
    session = TwinSession(graph, AutofuserOptions(force_template="simd"))
    notes = _notes(session)
    assert "1 op(s) Abs ('abs') and the Sum ('sum') in one VfChainRegApiCall" in notes, notes
    kernel = session.result.kernel
    assert "AscendC::Reg::LoadUnAlignPre(u0, src0 + o);" in kernel
    assert re.search(r"^\s+AfReduceRows<", kernel, re.M) is None
    for width in (20, 64, 70, 1):
        inputs = session.inputs({"a0": 9, "a1": width, "b0": 11, "b1": width}, seed=width)
        sch = session.scheduled
        evs = solve(
            [CaseRef.of(c) for c in sch.cases],
            sch.size_names,
            inputs.sizes,
            2,
            sch.platform.ub_size,
            sch.guards,
        ).evaluations
        for case, ev in zip(sch.cases, evs):
            if not ev.fits:
                continue
            run = session.check(inputs=inputs, core_num=2, tiling_key=case.tiling_key)
            assert run.ok, (width, run.describe())
            measured = twin_counters(run.twin.counters)
            for name in ("reg_instructions", "reg_cycles"):
                assert ev.resources[name] == measured[name], (width, case.label, name)


def test_the_fused_reduce_issues_fewer_calls_and_no_ub_round_trip(monkeypatch):
    """Fused, the chain's last value never reaches UB: the twin counts fewer stores and memory calls than a
    kernel where the reduce cannot join (the same chain reduced over the innermost axis stores every value).
    The tile gather's register functions (they store the gathered tile and its offsets) are off, so every
    store counted is the chain's."""
    monkeypatch.setattr(IndirectLoadRegApiCall, "register_gather", False)
    monkeypatch.setattr(IndirectLoadRegApiCall, "register_offsets", False)
    fused = TwinSession(reduce_graph("float32", "Sum", 0), AutofuserOptions(force_template="simd"))
    run = fused.check({}, seed=8, core_num=1)
    assert run.ok, run.describe()
    # one launch per tile for chain + reduce; the tile's 29 x 72 values are never stored, only 72 sums
    assert run.twin.counter("reg_store_bytes") == 72 * 4
    assert run.twin.counter("reg_stores") == 2  # one full vector and the 8-lane tail


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    template=st.sampled_from(["simd", "sklike"]),
    kind=st.sampled_from(["Sum", "Mean", "Max", "Min"]),
    axis=st.sampled_from([0, 1]),
    n=st.integers(1, 40),
    d=st.sampled_from([8, 16, 24, 64, 136]),
    b=st.integers(2, 33),  # b = 1: the reduced axis has one element, the schedule reduces no group
)
def test_register_reduces_match_the_reference_on_random_shapes(template, kind, axis, n, d, b):
    session = TwinSession(
        reduce_graph("float32", kind, axis, n, d, b), AutofuserOptions(force_template=template)
    )
    assert kind in " ".join(_fused_functions(session.result.kernel))
    run = session.check({}, seed=n + d + b, core_num=3)
    assert run.ok, run.describe()


# -- groups not known to start on 32-byte blocks: LoadUnAlignPre / LoadUnAlign ---------------------------------
#
# In the SIMD template a tile row holds every group of an output row: reduce_graph(..., d=20) has, over axis 1,
# 29 groups of 20 values per tile row (group g starts 80 g bytes in), over axis 0 a kept inner width of 20
# (group row g starts 80 g bytes in). Both are register reduces whose loads are unaligned.


def _has_unaligned_reduce(kernel: str, kind: str) -> bool:
    return (
        kind in " ".join(_fused_functions(kernel))
        and "AscendC::Reg::LoadUnAlign(" in kernel
        and re.search(r"^\s+AfReduceRows<", kernel, re.M) is None
    )


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize(
    ("dtype", "kind"),
    [
        ("float32", "Sum"),
        ("float32", "Mean"),
        ("float32", "Max"),
        ("float32", "Min"),
        ("int32", "Sum"),
        ("int32", "Max"),
        ("int32", "Min"),
        ("float16", "Sum"),
        ("float16", "Max"),
        ("bfloat16", "Mean"),
    ],
)
def test_unaligned_groups_and_group_rows_are_register_reduces(dtype, kind, axis):
    """Widths of 20 (not whole 32-byte blocks of float32 / int32; 2-byte data are reduced in float32 after a
    run of their own): the reduce is a register reduce with unaligned loads, twin == reference (the twin
    checks every byte the loads read against the tiles' buffers)."""
    session = TwinSession(reduce_graph(dtype, kind, axis, d=20), AutofuserOptions(force_template="simd"))
    assert _has_unaligned_reduce(session.result.kernel, kind), _notes(session)
    run = session.check({}, seed=3, core_num=3)
    assert run.ok, run.describe()


def test_without_the_tile_padding_the_twin_reports_the_bytes_loadunalign_reads_past_the_tile(monkeypatch):
    """Control for the padding: tile rows of 16 groups of 20 floats fill whole 256-byte repeats, so the
    buffer ends right after the data; without the 256 bytes read_past_tiles asks for, the last groups'
    LoadUnAlign reads past it and the twin stops with the bytes read."""
    from af_v35_regbase.api_calls.vf_chain import VfChainRegApiCall

    from af_core.errors import AfError

    graph = reduce_graph("float32", "Sum", 1, n=9, d=20, b=16)
    padded = TwinSession(graph, AutofuserOptions(force_template="simd"))
    assert padded.check({}, seed=1, core_num=2).ok
    monkeypatch.setattr(VfChainRegApiCall, "read_past_tiles", classmethod(lambda cls, node, impl: 0))
    bare = TwinSession(
        reduce_graph("float32", "Sum", 1, n=9, d=20, b=16), AutofuserOptions(force_template="simd")
    )
    assert "(256 + AfAlignUp" not in bare.result.kernel and "(256 + AfAlignUp" in padded.result.kernel
    with pytest.raises(AfError, match=r"ub-out-of-bounds.*LoadUnAlign: the 256 bytes after srcAddr's block"):
        bare.check({}, seed=1, core_num=2)


@pytest.mark.parametrize("kind", ["Sum", "Mean", "Max", "Min"])
def test_an_unaligned_kept_width_reduce_is_the_left_to_right_fold_bit_for_bit(kind):
    """Kept inner width 20: the group rows are folded left to right as with aligned rows, bit for bit, with
    NaN in one column and signed zeros in another."""
    n, d, b = 37, 20, 29
    session = TwinSession(reduce_graph("float32", kind, 0, n, d, b), AutofuserOptions(force_template="simd"))
    assert _has_unaligned_reduce(session.result.kernel, kind)
    rng = np.random.default_rng(17)
    x = rng.uniform(-3, 3, (n, d)).astype(np.float32)
    x[3, 9] = np.nan
    side = rng.uniform(-1, 1, (b, d)).astype(np.float32)
    index = rng.integers(0, n, (b, d)).astype(np.int32)
    index[7, 9] = 3
    side[:, 19] = np.float32(0.0)
    x[:, 19] = np.float32(0.0)  # |0| - 0 = +0 in every row
    inputs = session.inputs({}, arrays={"x": x, "index": index, "side": side})
    run = session.check(inputs=inputs, core_num=4)
    assert run.ok, run.describe()
    values = (np.abs(x[index, np.arange(d)]) - side).astype(np.float32)
    expected = _fold(values, kind)
    got = run.twin.outputs["y"].reshape(expected.shape)
    assert np.isnan(got[9]) and np.isnan(expected[9])
    same = np.where(np.isnan(expected), np.isnan(got), got.view(np.uint32) == expected.view(np.uint32))
    assert same.all(), (np.nonzero(~same), got[~same], expected[~same])


def _lane_tree_sum(group: np.ndarray) -> np.float32:
    """The documented innermost order: per lane along the group's 64-lane vectors, then Reduce's tree."""
    acc = group[:64].astype(np.float32).copy()
    for start in range(64, group.size, 64):
        tail = group[start : start + 64]
        acc[: tail.size] = (acc[: tail.size] + tail).astype(np.float32)
    return _tree(np.concatenate([acc, np.zeros(64 - acc.size, np.float32)]))


@pytest.mark.parametrize("d", [20, 70, 131])
def test_an_unaligned_innermost_float_sum_is_lane_wise_then_the_tree_bit_for_bit(d):
    """29 groups of d per tile row, each loaded unaligned: lane j sums x[j], x[j + 64], ... then Reg::Reduce's
    binary tree -- bit for bit, with a NaN in one group and -0 sums in another."""
    n, b = 37, 29
    session = TwinSession(reduce_graph("float32", "Sum", 1, n, d, b), AutofuserOptions(force_template="simd"))
    assert _has_unaligned_reduce(session.result.kernel, "Sum")
    rng = np.random.default_rng(d)
    x = rng.uniform(-3, 3, (n, d)).astype(np.float32)
    x[2, d - 1] = np.nan
    side = rng.uniform(-1, 1, (b, d)).astype(np.float32)
    index = rng.integers(3, n, (b, d)).astype(np.int32)
    index[4, d - 1] = 2
    x[0, :] = np.float32(0.0)
    index[6, :] = 0
    side[6, :] = np.float32(0.0)  # row 6: |0| - 0 -> the Adds of -0.0 keeps +0 sums +0
    inputs = session.inputs({}, arrays={"x": x, "index": index, "side": side})
    run = session.check(inputs=inputs, core_num=4)
    assert run.ok, run.describe()
    values = (np.abs(x[index, np.arange(d)]) - side).astype(np.float32)
    expected = np.array([_lane_tree_sum(values[r]) for r in range(b)], np.float32)
    got = run.twin.outputs["y"].reshape(b)
    assert np.isnan(got[4]) and np.isnan(expected[4])
    assert got[6] == 0 and not np.signbit(got[6])
    same = np.where(np.isnan(expected), np.isnan(got), got.view(np.uint32) == expected.view(np.uint32))
    assert same.all(), (np.nonzero(~same), got[~same], expected[~same])


def test_a_negative_zero_sum_over_unaligned_groups_stays_negative_zero():
    """Neg(Abs(0)) = -0 in the 20 lanes of each group: the Adds of -0.0 keeps them -0, and Reduce's tree
    takes the 44 masked-off lanes as +0, so every sum has the sign the documented order gives (+0)."""
    g = GraphBuilder("vfred_negzero_unaligned")
    x = g.data("x", [5, 20], "float32")
    y = g.op("Neg", g.op("Abs", gather(x, 0, g.data("index", [6, 20], "int32"))))
    g.output(g.reduce("Sum", y, [1]), "y")
    session = TwinSession(g.build(), AutofuserOptions(force_template="simd"))
    assert _has_unaligned_reduce(session.result.kernel, "Sum")
    inputs = session.inputs(
        {}, arrays={"x": np.zeros((5, 20), np.float32), "index": np.ones((6, 20), np.int32)}
    )
    run = session.check(inputs=inputs, core_num=2)
    assert run.ok, run.describe()
    got = run.twin.outputs["y"]
    lanes = np.concatenate([np.full(20, -0.0, np.float32), np.zeros(44, np.float32)])
    expected = _tree(lanes)
    assert np.all(got == 0) and np.all(np.signbit(got) == np.signbit(expected))


def test_a_run_with_more_inputs_than_unaligned_registers_loads_each_vector_after_its_own_pre():
    """Five tiles into one function over unaligned groups: at most four UnalignRegForLoad registers exist,
    so every load has its own LoadUnAlignPre into one shared register; twin == reference."""
    g = GraphBuilder("vfred_five_inputs")
    x = g.data("x", [37, 20], "float32")
    y = gather(x, 0, g.data("index", [29, 20], "int32"))
    for i in range(4):
        y = g.op("Add", y, g.data(f"side{i}", [29, 20], "float32"))
    g.output(g.reduce("Max", y, [1]), "y")
    session = TwinSession(g.build(), AutofuserOptions(force_template="simd"))
    kernel = session.result.kernel
    assert _has_unaligned_reduce(kernel, "Max")
    assert "UnalignRegForLoad u1;" not in kernel
    assert kernel.count("AscendC::Reg::LoadUnAlignPre(u0, src") == 5
    run = session.check({}, seed=12, core_num=3)
    assert run.ok, run.describe()


@pytest.mark.parametrize("h", [20, 96, 13])
def test_the_index_select_sum_sample_reduces_in_registers(h):
    """The core sample (a row sum of width H, K groups per tile row): SIMD reduces in registers at every H."""
    from af_core.samples import index_select_sum

    session = TwinSession(index_select_sum(), AutofuserOptions(force_template="simd"))
    assert _has_unaligned_reduce(session.result.kernel, "Sum"), _notes(session)
    run = session.check({"N": 60, "H": h, "K": 50}, seed=h, core_num=4)
    assert run.ok, run.describe()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    template=st.sampled_from(["simd", "sklike"]),
    kind=st.sampled_from(["Sum", "Mean", "Max", "Min"]),
    axis=st.sampled_from([0, 1]),
    n=st.integers(1, 30),
    d=st.integers(1, 70),
    b=st.integers(2, 20),
)
def test_register_reduces_of_any_width_match_the_reference(template, kind, axis, n, d, b):
    """Widths 1..70 whether or not they fill 32-byte blocks: always a register reduce, twin == reference."""
    session = TwinSession(
        reduce_graph("float32", kind, axis, n, d, b), AutofuserOptions(force_template=template)
    )
    assert kind in " ".join(_fused_functions(session.result.kernel))
    run = session.check({}, seed=n + d + b, core_num=3)
    assert run.ok, run.describe()


# -- result rows not known to start on 32-byte blocks: the memory reduce ----------------------------------------


def _kept_rows_graph(d):
    """Sum over axis 2 of Muls(gather(x, 1, idx)), x [A, L, M, d], idx [A, K, M, d]: in SIMD a tile row (one A)
    holds K result rows of d values, stored d values apart."""
    g = GraphBuilder(f"vfred_kept_rows_{d}")
    x = g.data("x", ["A", "L", "M", d], "float32")
    idx = g.data("idx", ["A", "K", "M", d], "int64")
    g.output(g.reduce("Sum", g.op("Muls", gather(x, 1, idx), value=0.5), [2]), "y")
    return g.build()


@pytest.mark.parametrize("d", [7, "D"])
def test_result_rows_that_may_not_start_on_blocks_stay_a_memory_reduce(d):
    """K result rows of 7 floats (28 bytes) a tile row: the register function would StoreAlign row a at byte
    28 a, which the hardware rejects (the twin stopped with ub-misaligned); the reduce stays the memory
    reduce, the note says why, and the host tiling's SIMD pick and every SIMD case match the reference. So
    does an inner width known only at run time (D), at 7 and at 8."""
    session = TwinSession(_kept_rows_graph(d), AutofuserOptions(force_template="simd"))
    sizes = {"A": 48, "L": 40, "K": 6, "M": 5} | ({} if d == 7 else {"D": 7})
    run = session.check(sizes, seed=2)
    assert run.template.startswith("simd") and run.ok, run.describe()
    notes = _notes(session)
    assert any(n.startswith("Sum ('sum') stays a reduce call: its rows of") for n in notes), notes
    assert re.search(r"^\s+AfReduceRows<", session.result.kernel, re.M) is not None
    if d == "D":
        run = session.check({**sizes, "D": 8}, seed=3)
        assert run.ok, run.describe()
    for case in (c for c in session.scheduled.cases if c.template == "simd"):
        run = session.check(sizes, seed=4, tiling_key=case.tiling_key)
        assert run.ok, run.describe()


def test_one_result_row_a_tile_row_or_rows_of_whole_blocks_keep_the_register_store():
    """The register reduce stays where every row's store is aligned: rows of 8 floats (32 bytes) here; one
    row a tile row in the 2-D graphs above."""
    session = TwinSession(_kept_rows_graph(8), AutofuserOptions(force_template="simd"))
    assert "1 op(s) Muls ('muls') and the Sum ('sum') in one VfChainRegApiCall" in _notes(session)
    assert re.search(r"^\s+AfReduceRows<", session.result.kernel, re.M) is None
    run = session.check({"A": 48, "L": 40, "K": 6, "M": 5}, seed=5)
    assert run.ok, run.describe()
