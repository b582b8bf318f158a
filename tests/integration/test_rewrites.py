"""The seed's rewrite diagrams, as tests on the rewritten graphs."""

from __future__ import annotations

import numpy as np

from af_core.builders import GraphBuilder, gather
from af_core.inputs import make_inputs
from af_core.ir.validate import normalized_copy, validate
from af_core.reference.interpreter import evaluate
from af_core.schedule.rewrite import hoist_input_chain, sink_unary_ops


def chain_of(graph, start):
    """Names from ``start`` following single consumers down to the Store."""
    names, node = [], graph.node(start)
    while node.op.compute_type != "store":
        names.append(node.name)
        node = graph.consumers(node)[0][0]
    return names


def same_semantics(before, after, sizes=None):
    inputs = make_inputs(before, sizes or {}, seed=3)
    want = evaluate(before, inputs.logical, inputs.sizes)
    got = evaluate(after, inputs.logical, inputs.sizes)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


def test_simd_does_not_move_relu_before_an_enlarging_gather():
    g = GraphBuilder("enlarge")
    a = g.data("A", [3, 4], "float32")
    r = g.op("Relu", a, name="relu")
    idx = g.data("index", [3, 8], "int32")
    g.output(gather(r, 1, idx), "netoutput")
    graph, _ = normalized_copy(g.build())
    il = graph.nodes_of_type("IndirectLoad")[0]
    assert sink_unary_ops(graph, il) == []
    assert il.x1.name == "relu"


def test_simd_moves_unary_ops_and_stops_at_the_binary_add():
    g = GraphBuilder("sink")
    a = g.data("A", [4, 8], "float32")
    b = g.data("B", [4, 8], "float32")
    t = g.op("Add", a, b, name="add")
    t = g.op("Relu", t, name="relu")
    t = g.op("Abs", t, name="abs")
    idx = g.data("index", [4, 3], "int32")
    g.output(gather(t, 1, idx), "netoutput")
    before, _ = normalized_copy(g.build())
    after = before.copy()
    il = after.nodes_of_type("IndirectLoad")[0]
    assert sink_unary_ops(after, il) == ["relu", "abs"]
    assert il.x1.name == "add"
    assert chain_of(after, il.name) == [il.name, "relu", "abs"]
    assert [str(s) for s in after.node("relu").y.size] == ["4", "3"]
    validate(after)
    same_semantics(before, after)


def test_simd_keeps_non_zero_preserving_ops_when_bound_checked():
    g = GraphBuilder("bound")
    a = g.data("A", [4, 8], "float32")
    t = g.op("Exp", a, name="exp")
    t = g.op("Relu", t, name="relu")
    idx = g.data("index", [4, 3], "int32")
    g.output(gather(t, 1, idx, need_check_bound=True), "y")
    graph, _ = normalized_copy(g.build())
    il = graph.nodes_of_type("IndirectLoad")[0]
    assert sink_unary_ops(graph, il) == ["relu"]  # exp(0) = 1 would survive a zeroed lane
    assert il.x1.name == "exp"


def test_simt_moves_everything_and_duplicates_the_gather_per_input():
    g = GraphBuilder("hoist")
    x = g.data("input", ["a0", "a1", "a2"], "float32")
    side = g.data("side", ["a0", "a1", "a2"], "float32")
    t = g.op("Abs", x, name="abs")
    t = g.op("Add", t, side, name="add")
    idx = g.data("index", ["b0", "b1", "b2"], "int64")
    y = g.op("Relu", gather(t, 2, idx), name="relu")
    g.output(y, "output")
    before, _ = normalized_copy(g.build())
    after = before.copy()
    result = hoist_input_chain(after, after.nodes_of_type("IndirectLoad")[0])
    gathers = sorted(n.name for n in after.nodes_of_type("IndirectLoad"))
    assert gathers == sorted(result["gathers"]) and len(gathers) == 2
    assert {after.node(n).x1.name for n in gathers} == {"input_load", "side_load"}
    assert {after.node(n).x2.name for n in gathers} == {"index_load"}
    assert after.node("abs").x.name in gathers
    assert after.node("add").x1.name == "abs" and after.node("add").x2.name in gathers
    assert after.node("relu").x.name == "add"
    assert result["moved"] == ["abs", "add"] and after.attrs["bound_check_after"] == "add"
    validate(after)
    sizes = {"a0": 3, "a1": 4, "a2": 9, "b0": 2, "b1": 4, "b2": 5}
    same_semantics(before, after, sizes)
