"""One test per validation rule: the rule fires and its message locates the problem."""

from __future__ import annotations

import pytest
import sympy

from af_core import ascir
from af_core.builders import GraphBuilder, gather, index_select
from af_core.errors import AscirError
from af_core.ir.validate import validate
from af_core.ops.core_ops import loop_axes
from af_core.registry import registry_ops
from af_core.testing import seed_style_gather


def expect(graph, rule: str, node: str, port: str | None = None) -> AscirError:
    with pytest.raises(AscirError) as info:
        validate(graph)
    err = info.value
    assert err.rule == rule, str(err)
    assert err.node == node, str(err)
    text = str(err)
    assert f"node '{node}'" in text and f"rule '{rule}'" in text
    if port is not None:
        assert err.port == port and f"port '{port}'" in text
    return err


def test_valid_graph_passes():
    validate(seed_style_gather())


def test_port_connected():
    graph = seed_style_gather()
    graph.disconnect(graph.node("indirect_load"), "x2")
    expect(graph, "port-connected", "indirect_load", "x2")


def test_producer_of_unconnected_port_names_node_and_port():
    """Passes ask ``producer`` for a port's node; an unwired port is the validation rule's error,
    never a None that fails later with an AttributeError."""
    graph = seed_style_gather()
    il = graph.node("indirect_load")
    assert graph.producer(il, "x2") is graph.producer_or_none(il, "x2") is not None
    graph.disconnect(il, "x2")
    assert graph.producer_or_none(il, "x2") is None and il.input("x2") is None
    with pytest.raises(AscirError) as info:
        graph.producer(il, "x2")
    assert info.value.rule == "port-connected"
    assert (info.value.node, info.value.port) == ("indirect_load", "x2")


def test_graph_acyclic():
    graph = seed_style_gather()
    graph.node("input_load").x = graph.node("store")
    with pytest.raises(AscirError) as info:
        validate(graph)
    assert info.value.rule == "graph-acyclic"
    assert "store" in str(info.value) and "input_load" in str(info.value)


def test_graph_has_output():
    graph = seed_style_gather()
    graph.remove_node(graph.node("y"))
    with pytest.raises(AscirError, match="rule 'graph-has-output'"):
        validate(graph)


def test_io_index_missing():
    graph = seed_style_gather()
    object.__setattr__(graph.node("x").attr.ir_attr, "_values", {})
    expect(graph, "io-index", "x")


def test_io_index_unique():
    graph = seed_style_gather()
    graph.node("index").attr.ir_attr.index = 0
    expect(graph, "io-index-unique", "index")


def test_desc_rank():
    graph = seed_style_gather()
    graph.node("index_load").y.strides = [1, 1]
    expect(graph, "desc-rank", "index_load", "y")


def test_sched_axis_rank():
    graph = seed_style_gather()
    il = graph.node("indirect_load")
    il.attr.sched.axis = il.y.axis[:2]
    expect(graph, "sched-axis-rank", "indirect_load")


@pytest.mark.parametrize("bad", [0, -3])
def test_static_size_positive(bad):
    graph = seed_style_gather(static={"s2": 5})
    x = graph.node("x")
    sizes = list(x.y.size)
    sizes[2] = bad
    x.y.size = sizes
    x.y.axis = None
    err = expect(graph, "size-positive", "x", "y")
    assert err.values["size"] == bad


def test_symbolic_size_must_be_provably_positive():
    graph = seed_style_gather()
    x = graph.node("x")
    s0, s1 = graph.size_symbols()["s0"], graph.size_symbols()["s1"]
    x.y.size = [s0 - s1, *x.y.size[1:]]
    x.y.axis = None
    expect(graph, "size-positive", "x", "y")


def test_stride_nonnegative():
    graph = seed_style_gather()
    x = graph.node("x")
    x.y.strides = [-1, *x.y.strides[1:]]
    expect(graph, "stride-nonnegative", "x", "y")


def test_size_matches_axis():
    graph = seed_style_gather()
    x = graph.node("x")
    x.y.size = [x.y.size[1], *x.y.size[1:]]
    expect(graph, "size-matches-axis", "x", "y")


def test_dtype_declared_mismatch():
    graph = seed_style_gather()
    graph.node("store").y.dtype = ascir.dtypes.float32
    expect(graph, "dtype-declared", "store", "y")


def test_shape_declared_mismatch():
    graph = seed_style_gather()
    il = graph.node("indirect_load")
    il.y.size = [*il.y.size[:3], il.y.size[2]]
    il.y.axis = None
    expect(graph, "shape-declared", "indirect_load", "y")


@pytest.mark.parametrize("dtype", [ascir.dtypes.float32, ascir.dtypes.bool_, ascir.dtypes.int16])
def test_index_dtype(dtype):
    graph = seed_style_gather(index_dtype=dtype)
    err = expect(graph, "index-dtype", "indirect_load", "x2")
    assert dtype.name in str(err)


def test_input_dtype():
    graph = seed_style_gather(dtype=ascir.dtypes.uint64)
    expect(graph, "indirect-load-input-dtype", "indirect_load", "x1")


def test_indirect_load_rank():
    g = GraphBuilder("r")
    x = g.data("x", [4, 5], "float32")
    i = g.data("i", [4, 2, 1], "int32")
    il = g.indirect_load(x, g.data("i2", [4, 2], "int32"), 1)
    g.output(il)
    il.node.x2 = i.node
    expect(g.graph, "indirect-load-rank", il.node.name, "x2")


@pytest.mark.parametrize("dim", [4, -5, 9])
def test_indirect_load_dim(dim):
    graph = seed_style_gather()
    graph.node("indirect_load").attr.ir_attr.dim = dim
    err = expect(graph, "indirect-load-dim", "indirect_load")
    assert str(dim) in str(err)


def test_negative_dim_is_valid():
    graph = seed_style_gather()
    graph.node("indirect_load").attr.ir_attr.dim = -2
    validate(graph)


def test_index_size_le_input():
    graph = seed_style_gather(static={"s0": 4, "s4": 5})
    err = expect(graph, "index-size-le-input", "indirect_load", "x2")
    assert err.values["axis"] == 0


def test_byte_offset_overflow_for_declared_bounds():
    graph = seed_style_gather()
    for i in range(8):
        graph.create_size(f"s{i}", max_value=1 << 20)
    err = expect(graph, "byte-offset-int64", "x", "y")
    assert "bounds" in err.values


def test_bounded_sizes_within_int64_pass():
    graph = seed_style_gather()
    for i in range(8):
        graph.create_size(f"s{i}", max_value=1 << 10)
    validate(graph)


def test_static_overflow():
    g = GraphBuilder("big")
    x = g.data("x", [1 << 31, 1 << 31, 4], "float32")
    i = g.data("i", [1, 1, 4], "int32")
    g.output(gather(x, 2, i))
    expect(g.graph, "byte-offset-int64", "x", "y")


def test_broadcast_from_non_one():
    g = GraphBuilder("b")
    x = g.data("x", [4, 1], "float32")
    out = g.broadcast(x, [4, 6])
    g.output(out)
    validate(g.graph)
    for n in (g.graph.node("x"), x.node):
        n.y.size = [4, 3]
        n.y.strides = [3, 1]
        n.y.axis = None
    err = expect(g.graph, "broadcast-from-one", out.node.name, "x")
    assert err.values["input_size"] == 3


def test_builder_reports_the_same_rule():
    g = GraphBuilder("b")
    x = g.data("x", [4, 3], "float32")
    with pytest.raises(AscirError, match="rule 'broadcast-from-one'"):
        g.broadcast(x, [4, 6])


def test_broadcast_rank():
    g = GraphBuilder("b")
    x = g.data("x", [4, 1], "float32")
    out = g.broadcast(x, [4, 3])
    g.output(out)
    out.node.y.size = [4, 3, 1]
    out.node.y.strides = [3, 1, 1]
    out.node.y.axis = None
    expect(g.graph, "broadcast-rank", out.node.name, "x")


def test_reduce_rank():
    g = GraphBuilder("r")
    x = g.data("x", [4, 3], "float32")
    red = g.reduce("Sum", x, [1])
    g.output(red)
    red.node.y.size = [4, 1, 1]
    red.node.y.strides = [1, 1, 1]
    red.node.y.axis = None
    expect(g.graph, "reduce-rank", red.node.name, "y")


def test_reduce_axis_size():
    g = GraphBuilder("r")
    x = g.data("x", [4, 3], "float32")
    red = g.reduce("Sum", x, [1])
    g.output(red)
    red.node.y.size = [4, 2]
    red.node.y.axis = None
    expect(g.graph, "reduce-axis-size", red.node.name, "y")


def test_reduce_axes_identity_reduce_is_refused():
    """A reduce whose output keeps every axis at its size has nothing to reduce; before the rule every
    template reduced the last axis instead and computed a wrong result."""
    g = GraphBuilder("r")
    x = g.data("x", [4, 3], "float32")
    with pytest.raises(AscirError, match="node 'sum' port 'y': rule 'reduce-axes'"):
        g.reduce("Sum", x, [])
    assert [n.name for n in g.graph.nodes()] == ["x", "x_load"], "a refused op leaves no node behind"
    red = g.reduce("Sum", x, [1])
    g.output(red)
    red.node.y.size = [4, 3]  # as a graph file could declare it
    red.node.y.strides = [3, 1]
    red.node.y.axis = None
    expect(g.graph, "reduce-axes", red.node.name, "y")


@pytest.mark.parametrize("shape", [[4, 3], [4, 1]])
def test_reduce_axes_accepts_a_size_one_axis(shape):
    """A size-1 output axis is enough: a reduced axis, or one of size 1 on both sides (a bag of one row),
    and the axes a kernel loops over are then never empty."""
    g = GraphBuilder("r")
    x = g.data("x", shape, "float32")
    red = g.reduce("Sum", x, [1])
    g.output(red)
    validate(g.graph)
    assert loop_axes(x.node.y.size, red.node.y.size) == (1,)


def test_load_offset():
    graph = seed_style_gather()
    graph.node("input_load").attr.ir_attr.offset = sympy.Integer(8)
    expect(graph, "load-offset", "input_load")


def test_data_needs_dtype():
    graph = seed_style_gather()
    graph.node("x").y.dtype = None
    expect(graph, "data-dtype", "x", "y")


def test_data_needs_strides():
    graph = seed_style_gather()
    graph.node("x").y.strides = None
    expect(graph, "desc-rank", "x", "y")


def test_size_text_is_parsed_not_evaluated():
    graph = seed_style_gather()
    x = graph.node("x")
    for text in ("__import__('os').getcwd()", "s0 - ", "open('f')", "s0; s1"):
        with pytest.raises(AscirError, match="size-expression"):
            x.y.size = [text, *x.y.size[1:]]
    x.y.size = ["s0", "s1*2", "s2", "s3"]
    assert str(x.y.size[1]) == "2*s1"


def test_byte_offset_overflow_names_the_graphs_size_names():
    g = GraphBuilder("odd")
    x = g.data("x", ["class", "E"], "float32")
    idx = g.data("idx", ["core_num"], "int64")
    g.output(index_select(x, 0, idx), "y")
    for name in ("class", "E", "core_num"):
        g.graph.create_size(name, max_value=1 << 31)
    err = expect(g.graph, "byte-offset-int64", "x", "y")
    assert set(err.values["bounds"]) == {"class", "E"}


def _rank_graph(rank: int):
    g = GraphBuilder(f"rank{rank}")
    shape = [f"d{i}" for i in range(rank)]
    x = g.data("x", shape, "float32")
    idx = g.data("idx", shape[:-1] + ["k"], "int32")
    g.output(gather(x, rank - 1, idx), "y")
    return g.graph


def test_rank_above_the_back_end_maximum_is_rejected():
    from af_core.ir.validate import MAX_RANK

    validate(_rank_graph(MAX_RANK))
    err = expect(_rank_graph(MAX_RANK + 1), "rank-max", "x", "y")
    assert err.values == {"rank": MAX_RANK + 1, "max_rank": MAX_RANK}
    expect(_rank_graph(12), "rank-max", "x", "y")


def test_size_declared():
    import json

    from af_core.ir.serialize import graph_from_dict, to_json

    data = json.loads(to_json(seed_style_gather()))
    data["sizes"] = [s for s in data["sizes"] if s["name"] != "s1"]
    err = expect(graph_from_dict(data, registry_ops()), "size-declared", "x", "y")
    assert err.values == {"size": "s1"}


def test_size_env_translates_graph_names_once():
    g = GraphBuilder("env")
    x = g.data("x", ["n", "afxn"], "float32")  # symbol names afxn and afxafxn
    i = g.data("i", ["s0", "afxn"], "int32")
    g.output(gather(x, 0, i))
    graph = g.build()
    assert [v.symbol.name for v in graph.sizes()] == ["afxn", "afxafxn", "s0"]
    by_name = {"n": 1, "afxn": 2, "s0": 3}
    by_symbol = {"afxn": 1, "afxafxn": 2, "s0": 3}
    assert graph.size_env(by_name) == by_symbol
    assert graph.size_env(by_symbol) == by_symbol


def test_a_constant_of_the_byte_span_beyond_int64_is_refused_at_any_size():
    """A stride of 2^62 float32 elements: its bytes are no int64 literal, which codegen used to find
    out (an internal error)."""
    g = GraphBuilder("strided")
    x = g.data("x", ["N", "H"], "float32", strides=[1 << 62, 1])
    i = g.data("i", ["K"], "int64")
    g.output(index_select(x, 0, i))
    err = expect(g.graph, "byte-offset-int64", "x", "y")
    assert "18446744073709551616" in str(err) and "whatever the sizes" in str(err)
    g = GraphBuilder("strided")  # the span's constants cancel out, the stride's bytes do not fit
    x = g.data("x", ["N", "H"], "float16", strides=["H", 1 << 62])
    i = g.data("i", ["K"], "int64")
    g.output(index_select(x, 0, i))
    assert "its stride 4611686018427387904 in bytes" in str(expect(g.graph, "byte-offset-int64", "x", "y"))
    g = GraphBuilder("strided")
    x = g.data("x", ["N", "H"], "float32", strides=[1 << 60, 1])  # 2^62 bytes: still int64
    i = g.data("i", ["K"], "int64")
    g.output(index_select(x, 0, i))
    validate(g.graph)


@pytest.mark.parametrize("bad", [0, -1, 1 << 63, True, 1.5, "8", [], float("inf")])
def test_a_declared_maximum_is_a_positive_int64(bad):
    """A graph file's "max": [] or Infinity used to reach int() deep in validation (an internal error)."""
    from af_core.errors import GraphStructureError
    from af_core.ir.serialize import graph_from_dict, graph_to_dict

    with pytest.raises(ValueError, match="the maximum of size 'N' must be an integer from 1 to 2\\^63-1"):
        GraphBuilder("g").size("N", max_value=bad)
    g = GraphBuilder("g")
    x = g.data("x", ["N", "H"], "float32")
    i = g.data("i", ["K"], "int64")
    g.output(index_select(x, 0, i))
    data = graph_to_dict(g.build())
    data["sizes"][0]["max"] = bad
    with pytest.raises(GraphStructureError, match="size 'N' field 'max': rule 'json-"):
        graph_from_dict(data, registry_ops())  # the graph schema refuses it, naming the field and the rule


def test_the_positive_product_shortcut_agrees_with_sympy():
    """The structural check that spares sympy's assumption system claims positivity only where sympy does."""
    from af_core.ir.validate import _positive_product

    pos, plain, neg = sympy.Symbol("p", positive=True), sympy.Symbol("q"), sympy.Symbol("n", negative=True)
    exprs = [
        pos,
        plain,
        neg,
        pos * 3,
        pos**2 * 5,
        pos**-1,
        pos * plain,
        pos * neg,
        -pos,
        pos + 1,
        sympy.Integer(4),
        sympy.Integer(-4),
        sympy.Rational(1, 2) * pos,
        pos**2 * plain**2,
        sympy.floor(pos),
    ]
    for expr in exprs:
        if _positive_product(expr):
            assert expr.is_positive is True, expr
    assert _positive_product(pos * 3) and _positive_product(pos**2 * 5) and not _positive_product(pos * plain)
