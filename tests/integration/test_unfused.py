"""Fused against unfused (af_core.unfused): the split into single-op kernels, their traffic, fused <= unfused.

The split is checked three ways: each piece is one op; chaining the pieces
(streaming ops with the reference interpreter, the gather on the twin)
reproduces the fused kernel's output; the exact traffic of the streaming
pieces equals figures computed here by hand from shapes and dtypes.
"""

from __future__ import annotations

import numpy as np
import pytest

from af_core.builders import GraphBuilder, embedding, gather, index_select
from af_core.inputs import make_inputs
from af_core.options import AutofuserOptions
from af_core.reference.interpreter import evaluate
from af_core.schedule.analysis import FusionError
from af_core.twin import TwinSession, compare
from af_core.unfused import OUTPUT, fused_vs_unfused, piece_inputs, run_reference, split, stream_bytes
from af_core.workloads import apply_op

CORES = 8


def side_chain_graph():
    """x * side[8, 1] -> gather(dim 1, index[8, 4]) -> * 2 -> float16 -> sum over axis 1."""
    g = GraphBuilder("side_chain")
    x = g.data("x", [8, 32], "float32")
    x = apply_op(g, "Mul(side:side[8,1])", x)
    idx = g.data("index", [8, 4], "int32")
    y = gather(x, 1, idx)
    y = apply_op(g, "Mul(2.0)", y)
    y = g.cast(y, "float16")
    y = g.reduce("Sum", y, [1])
    g.output(y, "y")
    return g.build()


def clamped_embedding_graph():
    """embedding(w[10, 16], max(ids[6], 0)): the index chain runs on a stride-0 view of ids."""
    g = GraphBuilder("clamped_embedding")
    w = g.data("weight", [10, 16], "float32")
    ids = g.data("ids", [6], "int64")
    g.output(embedding(w, g.op("Maxs", ids, value=0.0)), "y")
    return g.build()


def embedding_post_graph():
    g = GraphBuilder("embedding_post")
    w = g.data("weight", [500, 64], "float32")
    ids = g.data("ids", [4, 32], "int64")
    y = embedding(w, ids)
    for op in ("Mul(1.5)", "Exp", "Add(side:bias[4,32,64])"):
        y = apply_op(g, op, y)
    g.output(y, "y")
    return g.build()


def index_select_reduce_graph():
    g = GraphBuilder("index_select_sum")
    x = g.data("x", [300, 48], "float32")
    idx = g.data("idx", [64], "int32")
    g.output(g.reduce("Sum", index_select(x, 0, idx), [1]), "y")
    return g.build()


def test_each_piece_is_one_op_and_the_gather_is_the_only_twin_piece():
    plan = split(side_chain_graph())
    assert [(p.node, p.kind) for p in plan.pieces] == [
        ("mul", "stream"),
        ("indirect_load", "gather"),
        ("muls", "stream"),
        ("cast", "stream"),
        ("sum", "stream"),
    ]
    for piece in plan.pieces:
        ops = [n for n in piece.graph.nodes() if n.op.compute_type not in ("data", "load", "store", "output")]
        assert [n.name for n in ops] == ["op"], piece.node
        assert piece.graph.node(OUTPUT).op.compute_type == "output"


def test_streaming_traffic_is_computed_by_hand():
    plan = split(side_chain_graph())
    by_node = {p.node: stream_bytes(p) for p in plan.streams}
    # mul: x 8x32 f32 read (1024) + side 8x1 f32 read once (32), 8x32 f32 written (1024)
    # muls: 8x4 f32 in and out (128 + 128); cast: 128 in, 8x4 f16 out (64); sum: 64 in, 8x1 f16 out (16)
    assert by_node == {"mul": 1024 + 32 + 1024, "muls": 256, "cast": 128 + 64, "sum": 64 + 16}
    gather_piece = plan.gather
    assert [o.source for o in gather_piece.operands] == ["mul", "index"]
    assert [o.from_input for o in gather_piece.operands] == [False, True]


def test_an_operand_used_twice_is_read_once():
    g = GraphBuilder("square_after_gather")
    x = g.data("x", [8, 32], "float32")
    y = gather(x, 1, g.data("index", [8, 4], "int32"))
    g.output(g.op("Mul", y, y), "y")
    (mul,) = split(g.build()).streams
    assert len(mul.operands) == 2 and stream_bytes(mul) == 8 * 4 * 4 * 2


def test_an_op_constant_along_an_axis_writes_it_once():
    plan = split(clamped_embedding_graph())
    maxs = next(p for p in plan.streams if p.node == "maxs")
    # ids is viewed as [6, 16] with strides (1, 0): Maxs reads 6 int64 and writes 6, not 96
    assert maxs.shape == (6, 16) and maxs.stored == (6, 1)
    assert stream_bytes(maxs) == 6 * 8 + 6 * 8
    index = plan.gather.operands[1]
    assert (index.source, index.shape, index.strides) == ("maxs", (6, 16), (1, 0))


@pytest.mark.parametrize("build", [side_chain_graph, clamped_embedding_graph, embedding_post_graph])
def test_the_reference_chain_of_pieces_equals_the_fused_reference(build):
    graph = build()
    inputs = make_inputs(graph, {}, seed=4)
    plan = split(graph)
    chained = run_reference(plan, inputs)[plan.pieces[-1].node]
    expected = evaluate(graph, inputs.logical)["y"]
    assert chained.shape == expected.shape
    assert np.array_equal(chained, expected, equal_nan=True)


@pytest.mark.twin
@pytest.mark.parametrize(
    "build", [side_chain_graph, embedding_post_graph, index_select_reduce_graph, clamped_embedding_graph]
)
def test_unfused_chain_matches_fused_kernel(build):
    session = TwinSession(build())
    m = fused_vs_unfused(session, session.inputs({}, seed=2), core_num=CORES)
    assert sorted(m.agreements) == ["cost", "default"]
    assert m.agree, [c.describe() for c in m.agreements.values()]
    for run in m.unfused.values():
        # the unfused figure: the lone gather as measured plus every streaming op read once, written once
        assert run.total == run.gather_bytes + sum(stream_bytes(p) for p in run.plan.streams)
        assert run.gather_bytes > 0


@pytest.mark.twin
@pytest.mark.parametrize("build", [side_chain_graph, embedding_post_graph, index_select_reduce_graph])
def test_fused_moves_no_more_than_unfused(build):
    session = TwinSession(build())
    m = fused_vs_unfused(session, session.inputs({}, seed=2), core_num=CORES, policies=("default",))
    assert m.ratio("default") <= 1.0, (m.fused, m.unfused["default"].total)


@pytest.mark.twin
def test_default_policy_on_a_tiny_index_chain_moves_no_more_than_unfused():
    """The seed rule's known loss below, under the default (cost) policy: fused <= unfused."""
    graph = clamped_embedding_graph()
    session = TwinSession(graph)
    gather_session = TwinSession(split(graph).gather.graph)
    m = fused_vs_unfused(
        session,
        session.inputs({}, seed=2),
        core_num=CORES,
        policies=("default",),
        gather_session=gather_session,
    )
    assert m.agree
    assert m.ratio("default") <= 1.0, (m.fused, m.unfused["default"].total)


@pytest.mark.twin
@pytest.mark.xfail(
    strict=True,
    reason="known: under the seed policy SK-like wins this tiny index-chain embedding by its score and stages "
    "it through a GM workspace on 6 cores (3328 B); the unfused pair moves 1168 B (the default policy does "
    "not: test above)",
)
def test_seed_policy_sklike_on_a_tiny_index_chain_moves_no_more_than_unfused():
    options = AutofuserOptions(selection="seed")
    graph = clamped_embedding_graph()
    session = TwinSession(graph, options)
    gather_session = TwinSession(split(graph).gather.graph, options)
    m = fused_vs_unfused(
        session,
        session.inputs({}, seed=2),
        core_num=CORES,
        policies=("default",),
        gather_session=gather_session,
    )
    assert m.agree
    assert m.ratio("default") <= 1.0, (m.fused, m.unfused["default"].total)


@pytest.mark.twin
def test_the_lone_gather_reads_the_fused_runs_own_buffers():
    graph = embedding_post_graph()
    session = TwinSession(graph)
    inputs = session.inputs({}, seed=5)
    plan = split(graph, inputs.sizes, session.scheduled.info)
    gather_session = TwinSession(plan.gather.graph)
    pin = piece_inputs(plan.gather, inputs, {})
    assert pin.storage["in0"] is inputs.storage["weight"] and pin.storage["in1"] is inputs.storage["ids"]
    run = gather_session.check(inputs=pin, core_num=CORES)
    assert run.ok, run.describe()
    lone = run.twin.outputs[OUTPUT]
    expected = np.take(inputs.logical["weight"][0], inputs.logical["ids"][..., 0], axis=0)
    assert compare("y", lone, expected, session.scheduled.info["weight"].dtype, True).ok


def test_a_graph_that_is_not_one_fusion_is_refused_by_name():
    g = GraphBuilder("two_gathers")
    x = g.data("x", [8, 32], "float32")
    first = gather(x, 1, g.data("i1", [8, 4], "int32"))
    second = gather(g.data("x2", [8, 32], "float32"), 1, g.data("i2", [8, 4], "int32"))
    g.output(g.op("Add", first, second), "y")
    with pytest.raises(FusionError, match="2 IndirectLoad nodes"):
        split(g.build())
