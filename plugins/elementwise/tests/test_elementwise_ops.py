"""Elementwise ops: registration, dtype/shape rules and numerics of the reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from af_core.builders import GraphBuilder
from af_core.errors import AscirError
from af_core.reference.bfloat16 import round_to_bf16
from af_core.reference.interpreter import evaluate
from af_core.registry import get_registry
from af_core.template_api import ComputeType

EXPECTED = {
    "Abs",
    "Neg",
    "Relu",
    "Exp",
    "Exp2",
    "Log",
    "Sqrt",
    "Rsqrt",
    "Sigmoid",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Maximum",
    "Minimum",
    "Cast",
    "Where",
    "Adds",
    "Subs",
    "Muls",
    "Maxs",
    "Mins",
    "Gt",
    "Ge",
    "Lt",
    "Le",
    "Eq",
    "Ne",
}


def test_all_ops_registered_by_this_distribution():
    reg = get_registry()
    for name in EXPECTED:
        entry = reg.entry("op", name)
        assert entry is not None, name
        assert entry.distribution == "af-elementwise"
        op = entry.value
        assert op.compute_type == ComputeType.ELEMENTWISE
        assert op.scalar_cpp and op.reference is not None
        assert "af_scalar_ops" in op.cpp_sources
    source = reg.get("api_source", "af_scalar_ops")
    for helper in ("AfAbs", "AfRelu", "AfMax", "AfMin"):
        assert f"{helper}(" in source.text


def unary_graph(op, dtype, shape=(3, 4), **attrs):
    g = GraphBuilder("u")
    x = g.data("x", list(shape), dtype)
    g.output(g.op(op, x, **attrs), "y")
    return g.build()


def test_float_only_op_rejects_ints():
    g = GraphBuilder("u")
    x = g.data("x", [3], "int32")
    with pytest.raises(AscirError) as info:
        g.op("Exp", x, name="e")
    assert info.value.rule == "exp-dtype" and info.value.port == "x" and info.value.node == "e"


def test_binary_shape_mismatch_names_both_ports():
    g = GraphBuilder("b")
    a = g.data("a", [3, 4], "float32")
    b = g.data("b", [3, 1], "float32")
    with pytest.raises(AscirError) as info:
        g.op("Add", a, b, name="add")
    err = info.value
    assert err.rule == "elementwise-shape" and err.port == "x2"
    assert "x1" in str(err) and "Broadcast" in str(err)


def test_binary_dtype_mismatch():
    g = GraphBuilder("b")
    a = g.data("a", [3], "float32")
    b = g.data("b", [3], "float16")
    with pytest.raises(AscirError, match="rule 'elementwise-dtype'"):
        g.op("Mul", a, b)


def test_where_needs_bool_condition():
    g = GraphBuilder("w")
    c = g.data("c", [3], "float32")
    with pytest.raises(AscirError, match="where-cond-dtype"):
        g.op("Where", c, c, c)


def test_tensor_scalar_needs_value():
    g = GraphBuilder("t")
    x = g.data("x", [3], "float32")
    with pytest.raises(AscirError, match="muls-value"):
        g.op("Muls", x)


def test_float16_rounds_after_every_op():
    graph = unary_graph("Muls", "float16", value=3.3)
    x = np.array([[1.1, 2.2, -7.5, 1000.0]] * 3, dtype=np.float16)
    out = evaluate(graph, {"x": x})["y"]
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, (x.astype(np.float32) * np.float32(3.3)).astype(np.float16))


def test_bfloat16_results_are_representable():
    graph = unary_graph("Exp", "bfloat16")
    x = round_to_bf16(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))
    out = evaluate(graph, {"x": x})["y"]
    np.testing.assert_array_equal(out, round_to_bf16(out))
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-2)


def test_cast_truncates_toward_zero():
    g = GraphBuilder("c")
    x = g.data("x", [4], "float32")
    g.output(g.cast(x, "int32"), "y")
    out = evaluate(g.build(), {"x": np.array([1.9, -1.9, 0.5, -0.5], np.float32)})["y"]
    assert out.dtype == np.int32 and out.tolist() == [1, -1, 0, 0]


def test_compare_and_where():
    g = GraphBuilder("cw")
    a = g.data("a", [4], "float32")
    b = g.data("b", [4], "float32")
    g.output(g.op("Where", g.op("Gt", a, b), a, b), "y")
    av = np.array([1, 5, -2, 3], np.float32)
    bv = np.array([2, 4, -3, 3], np.float32)
    out = evaluate(g.build(), {"a": av, "b": bv})["y"]
    np.testing.assert_array_equal(out, np.maximum(av, bv))


def test_int8_wraps_like_the_kernels():
    graph = unary_graph("Adds", "int8", shape=(2,), value=100)
    out = evaluate(graph, {"x": np.array([100, -100], np.int8)})["y"]
    assert out.tolist() == [-56, 0]


def test_relu_maps_nan_to_zero_and_abs_clears_sign():
    out = evaluate(unary_graph("Relu", "float32", shape=(3,)), {"x": np.array([np.nan, -1, 2], np.float32)})[
        "y"
    ]
    assert out.tolist() == [0, 0, 2]
    out = evaluate(unary_graph("Abs", "float32", shape=(2,)), {"x": np.array([-0.0, -3], np.float32)})["y"]
    assert np.signbit(out).tolist() == [False, False]


UNARY = {
    "Abs": np.abs,
    "Neg": np.negative,
    "Relu": lambda v: np.where(v > 0, v, np.float32(0)),
    "Exp": np.exp,
    "Sigmoid": lambda v: np.float32(1) / (np.float32(1) + np.exp(-v)),
}


@settings(max_examples=50, deadline=None)
@given(chain=st.lists(st.sampled_from(sorted(UNARY)), min_size=1, max_size=8), seed=st.integers(0, 99))
def test_unary_chains_compose(chain, seed):
    g = GraphBuilder("chain")
    t = g.data("x", [5], "float32")
    for op in chain:
        t = g.op(op, t)
    g.output(t, "y")
    x = np.random.default_rng(seed).standard_normal(5).astype(np.float32)
    expected = x
    with np.errstate(all="ignore"):
        for op in chain:
            expected = UNARY[op](expected).astype(np.float32)
    np.testing.assert_array_equal(evaluate(g.build(), {"x": x})["y"], expected)
