"""Rounding, math, bitwise, shift and logical ops: registration, dtype rules, reference numerics.

Expected values are hand-computed or come from numpy's own definitions (which
torch shares for these ops: round-half-to-even, floor/ceil, two's-complement
bit operations), never from the reference interpreter itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from af_core.builders import GraphBuilder
from af_core.errors import AscirError
from af_core.reference.bfloat16 import round_to_bf16
from af_core.reference.interpreter import evaluate
from af_core.registry import get_registry

NEW_OPS = {
    "Floor",
    "Ceil",
    "Round",
    "FloorToInt",
    "Ceil2Int",
    "Log2",
    "Reciprocal",
    "Tanh",
    "Erf",
    "Sign",
    "Pow",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "BitwiseNot",
    "LShift",
    "RShift",
    "LogicalAnd",
    "LogicalOr",
    "LogicalXor",
    "LogicalNot",
    "Gts",
    "Ges",
    "Lts",
    "Les",
    "Eqs",
    "Nes",
}
INT32_MAX, INT32_MIN = 2**31 - 1, -(2**31)


def test_registered_with_scalar_forms_and_helpers():
    reg = get_registry()
    for name in NEW_OPS:
        entry = reg.entry("op", name)
        assert entry is not None, name
        assert entry.distribution == "af-elementwise"
        assert entry.value.scalar_cpp and entry.value.reference is not None
    source = reg.get("api_source", "af_scalar_ops").text
    for helper in ("AfSign", "AfFloorToInt", "AfCeilToInt", "AfShiftLeft", "AfShiftRight"):
        assert f"{helper}(" in source


def run(op, *arrays, dtypes, **attrs):
    g = GraphBuilder("t")
    ins = [g.data(f"x{i}", list(a.shape), d) for i, (a, d) in enumerate(zip(arrays, dtypes))]
    g.output(g.op(op, *ins, **attrs), "y")
    return evaluate(g.build(), {f"x{i}": a for i, a in enumerate(arrays)})["y"]


def unary(op, values, dtype):
    arr = np.asarray(values, dtype=np.float32 if dtype == "bfloat16" else dtype)
    if dtype == "bfloat16":
        arr = round_to_bf16(arr)
    return run(op, arr, dtypes=[dtype])


def test_round_is_half_to_even_like_torch_round():
    out = unary("Round", [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999], "float32")
    assert out.tolist() == [0, 2, 2, 0, -2, -2, 2]
    np.testing.assert_array_equal(out, np.round(np.float32([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999])))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_floor_and_ceil_keep_the_float_dtype(dtype):
    values = [1.5, -1.5, -0.25, 3.0, 10.75]
    floor = unary("Floor", values, dtype)
    ceil = unary("Ceil", values, dtype)
    assert floor.tolist() == [1, -2, -1, 3, 10]
    assert ceil.tolist() == [2, -1, 0, 3, 11]
    assert floor.dtype == (np.float16 if dtype == "float16" else np.float32)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_floor_to_int_and_ceil_to_int_give_int32(dtype):
    values = [1.5, -1.5, -0.0, 7.0, -0.5]
    floor = unary("FloorToInt", values, dtype)
    ceil = unary("Ceil2Int", values, dtype)
    assert floor.dtype == np.int32 and ceil.dtype == np.int32
    assert floor.tolist() == [1, -2, 0, 7, -1]
    assert ceil.tolist() == [2, -1, 0, 7, 0]


def test_floor_to_int_saturates_and_maps_nan_to_zero():
    out = unary("FloorToInt", [3e9, -3e9, np.nan, np.inf, -np.inf, 2147483520.0], "float32")
    assert out.tolist() == [INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN, 2147483520]


def test_log2_is_exact_at_powers_of_two():
    out = unary("Log2", [1, 2, 8, 0.25, 1024], "float32")
    assert out.tolist() == [0, 1, 3, -2, 10]


def test_erf_tanh_reciprocal_pow_against_known_values():
    x = [0.0, 1.0, -1.0, 2.0]
    np.testing.assert_allclose(
        unary("Erf", x, "float32"), [0.0, 0.8427007929, -0.8427007929, 0.9953222650], rtol=1e-6
    )
    np.testing.assert_allclose(
        unary("Tanh", x, "float32"), [0.0, math.tanh(1), -math.tanh(1), math.tanh(2)], rtol=1e-6
    )
    assert unary("Reciprocal", [4, -0.5, 8], "float32").tolist() == [0.25, -2, 0.125]
    base = np.float32([2, 4, 9, 10])
    expo = np.float32([10, 0.5, -0.5, 0])
    out = run("Pow", base, expo, dtypes=["float32", "float32"])
    np.testing.assert_allclose(out, [1024, 2, 1 / 3, 1], rtol=1e-6)


def test_half_results_are_rounded_after_the_op():
    x = np.float16([3.0, 7.0, 0.1])
    out = unary("Reciprocal", x, "float16")
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, (np.float32(1) / x.astype(np.float32)).astype(np.float16))


def test_sign_of_floats_and_integers():
    out = unary("Sign", [-2.5, 0.0, 3.0, np.nan], "float32")
    assert out[:3].tolist() == [-1, 0, 1] and np.isnan(out[3])
    assert unary("Sign", [-128, 0, 5], "int8").tolist() == [-1, 0, 1]
    assert unary("Sign", [0, 200], "uint8").tolist() == [0, 1]


def test_bitwise_ops_on_twos_complement_bits():
    a = np.int8([0b0101, -1, -128, 0x7F])
    b = np.int8([0b0011, 0x0F, -1, -128])
    assert run("BitwiseAnd", a, b, dtypes=["int8"] * 2).tolist() == [0b0001, 0x0F, -128, 0]
    assert run("BitwiseOr", a, b, dtypes=["int8"] * 2).tolist() == [0b0111, -1, -1, -1]
    assert run("BitwiseXor", a, b, dtypes=["int8"] * 2).tolist() == [0b0110, -16, 127, -1]
    assert run("BitwiseNot", a, dtypes=["int8"]).tolist() == [-6, 0, 127, -128]
    big = np.uint64([0xFFFF_0000_0000_0001])
    assert run("BitwiseXor", big, np.uint64([1]), dtypes=["uint64"] * 2).tolist() == [0xFFFF_0000_0000_0000]


def test_shifts_wrap_and_shift_everything_out_of_range():
    x = np.int8([1, 64, -128, -3, 5, -7])
    count = np.int8([3, 1, 1, 1, 8, 9])
    assert run("LShift", x, count, dtypes=["int8"] * 2).tolist() == [8, -128, 0, -6, 0, 0]
    assert run("RShift", x, count, dtypes=["int8"] * 2).tolist() == [0, 32, -64, -2, 0, -1]
    u = np.uint16([0x8000, 3])
    assert run("RShift", u, np.int16([15, -1]), dtypes=["uint16", "int16"]).tolist() == [1, 0]


def test_logical_ops_truth_table():
    a = np.array([False, False, True, True])
    b = np.array([False, True, False, True])
    assert run("LogicalAnd", a, b, dtypes=["bool"] * 2).tolist() == [False, False, False, True]
    assert run("LogicalOr", a, b, dtypes=["bool"] * 2).tolist() == [False, True, True, True]
    assert run("LogicalXor", a, b, dtypes=["bool"] * 2).tolist() == [False, True, True, False]
    assert run("LogicalNot", a, dtypes=["bool"]).tolist() == [True, True, False, False]


@pytest.mark.parametrize(
    "op,dtypes,rule,port",
    [
        ("Floor", ["int32"], "floor-dtype", "x"),
        ("FloorToInt", ["int64"], "floortoint-dtype", "x"),
        ("Log2", ["int8"], "log2-dtype", "x"),
        ("Pow", ["int32", "int32"], "pow-dtype", "x1"),
        ("BitwiseAnd", ["float32", "float32"], "bitwiseand-dtype", "x1"),
        ("BitwiseNot", ["bool"], "bitwisenot-dtype", "x"),
        ("LogicalAnd", ["bool", "int32"], "logicaland-dtype", "x2"),
        ("LogicalNot", ["float16"], "logicalnot-dtype", "x"),
        ("LShift", ["uint32", "uint32"], "lshift-count-dtype", "x2"),
        ("RShift", ["float32", "int32"], "rshift-dtype", "x1"),
    ],
)
def test_dtype_rules_name_node_port_and_rule(op, dtypes, rule, port):
    g = GraphBuilder("bad")
    ins = [g.data(f"x{i}", [4], d) for i, d in enumerate(dtypes)]
    with pytest.raises(AscirError) as info:
        g.op(op, *ins, name="node")
    assert info.value.rule == rule and info.value.port == port and info.value.node == "node"


def test_comparisons_with_a_scalar_use_float32_of_the_value():
    x = np.float16([0.0999755859375, 0.10003662109375, -2.0, 3.0])  # half(0.1) is below 0.1
    assert run("Gts", x, dtypes=["float16"], value=0.1).tolist() == [False, True, False, True]
    assert run("Les", x, dtypes=["float16"], value=0.1).tolist() == [True, False, True, False]
    assert run("Eqs", x, dtypes=["float16"], value=0.1).tolist() == [False] * 4
    assert run("Nes", x, dtypes=["float16"], value=3.0).tolist() == [True, True, True, False]
    i = np.int8([-128, -1, 0, 127])
    assert run("Lts", i, dtypes=["int8"], value=0).tolist() == [True, True, False, False]
    assert run("Ges", i, dtypes=["int8"], value=127).tolist() == [False, False, False, True]


@pytest.mark.parametrize("dtype,value", [("int8", 300), ("int32", 0.5), ("uint16", -1)])
def test_integer_comparison_scalars_must_fit_the_dtype(dtype, value):
    g = GraphBuilder("bad")
    x = g.data("x", [4], dtype)
    with pytest.raises(AscirError) as info:
        g.op("Gts", x, value=value, name="cmp")
    assert info.value.rule == "gts-value" and info.value.node == "cmp" and str(value) in str(info.value)


def test_comparison_with_a_scalar_needs_the_value():
    g = GraphBuilder("bad")
    with pytest.raises(AscirError, match="eqs-value"):
        g.op("Eqs", g.data("x", [4], "float32"))
