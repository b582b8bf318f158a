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


def test_innermost_groups_that_do_not_start_aligned_stay_a_reduce_call_with_the_reason():
    """SIMD tile rows of 29 groups of 70 float32 values: group 1 starts 280 bytes in, not on a 32-byte
    block, so the register form has none; the memory reduce keeps it and the note says why."""
    session = TwinSession(reduce_graph("float32", "Sum", 1, d=70), AutofuserOptions(force_template="simd"))
    notes = _notes(session)
    assert any(
        n.startswith(
            "Sum ('sum') stays a reduce call: a reduce over the innermost axis of 29 groups per tile row"
        )
        for n in notes
    ), notes
    run = session.check({}, seed=6, core_num=4)
    assert run.ok, run.describe()


def test_an_inner_width_of_unknown_alignment_stays_a_reduce_call_with_the_reason():
    """Dynamic sizes: the kept inner width b1 may not fill whole 32-byte blocks, so the group rows may not
    start aligned; the memory path (which checks at run time) keeps the reduce."""
    graph = chain_graph(rank=2, dim=0, post=("Abs",), reduce=("Sum", (0,)), name="vfred_dynamic")
    session = TwinSession(graph, AutofuserOptions(force_template="simd"))
    notes = _notes(session)
    assert any("is not known to fill whole 32-byte blocks of float32" in n for n in notes), notes
    run = session.check({"a0": 9, "a1": 20, "b0": 11, "b1": 20}, seed=2, core_num=2)
    assert run.ok, run.describe()


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
