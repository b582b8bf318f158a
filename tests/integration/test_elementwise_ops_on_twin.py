"""Rounding, math, bitwise, shift and logical ops in generated kernels, on the CPU twin.

Every run compares the twin's output with the reference interpreter. Each
graph combines several ops (their results summed, or chained where the op
keeps a bit pattern), so one g++ build covers many ops and every shape it
runs. SIMT computes every op; SIMD only the ops with a legal vector form on
3510; SIMD and SK-like reject the others with a reason that names the op.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.builders import GraphBuilder, gather
from af_core.errors import ScheduleError
from af_core.registry import get_registry
from af_core.testing import chain_graph, random_runs
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin

SIMT = AutofuserOptions(force_template="simt")
SIMD = AutofuserOptions(force_template="simd")
TEMPLATES = {"simt": SIMT, "simd": SIMD}

#: ops with a vector form on the v35 path, and the ones computed only by SIMT lanes
VECTOR_OPS = {
    "Floor",
    "Ceil",
    "Round",
    "FloorToInt",
    "Ceil2Int",
    "Reciprocal",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "BitwiseNot",
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
SIMT_ONLY_OPS = {"Log2", "Tanh", "Erf", "Sign", "Pow", "LShift", "RShift"}


def float_graph(dtype: str, *, vector_only: bool):
    """sum of Floor, Ceil, Round, Reciprocal(|y| + 1) and, for SIMT, Log2 Tanh Erf Sign Pow of the gather."""
    g = GraphBuilder(f"float_ops_{dtype}_{'v' if vector_only else 's'}")
    x = g.data("x", ["a0", "a1", "a2"], dtype)
    y = gather(x, 1, g.data("index", ["b0", "b1", "b2"], "int32"))
    pos = g.op("Adds", g.op("Abs", y), value=1.0)
    twice = g.op("Muls", y, value=2.0)  # many x.5 values: Round's ties
    terms = [g.op("Floor", y), g.op("Ceil", y), g.op("Round", twice), g.op("Reciprocal", pos)]
    if not vector_only:
        tanh = g.op("Tanh", y)
        terms += [g.op("Log2", pos), tanh, g.op("Erf", y), g.op("Sign", y), g.op("Pow", pos, tanh)]
    total = terms[0]
    for t in terms[1:]:
        total = g.op("Add", total, t)
    g.output(total, "y")
    return g.build()


def int_graph(dtype: str):
    """FloorToInt(2y) xor Ceil2Int(y): int32 results, compared exactly."""
    g = GraphBuilder(f"to_int_{dtype}")
    x = g.data("x", ["a0", "a1"], dtype)
    y = gather(x, 0, g.data("index", ["b0", "b1"], "int64"))
    floor = g.op("FloorToInt", g.op("Muls", y, value=2.0))
    g.output(g.op("BitwiseXor", floor, g.op("Ceil2Int", y)), "y")
    return g.build()


def logical_graph(dtype: str):
    """Where(((y > s1) and not (y < s2)) xor (y == y) or (s1 <= s2), y, s2)."""
    g = GraphBuilder(f"logical_{dtype}")
    x = g.data("x", ["a0", "a1"], dtype)
    y = gather(x, 1, g.data("index", ["b0", "b1"], "int32"))
    s1 = g.data("s1", ["b0", "b1"], dtype)
    s2 = g.data("s2", ["b0", "b1"], dtype)
    both = g.op("LogicalAnd", g.op("Gt", y, s1), g.op("LogicalNot", g.op("Lt", y, s2)))
    mask = g.op("LogicalOr", g.op("LogicalXor", both, g.op("Eq", y, y)), g.op("Le", s1, s2))
    g.output(g.op("Where", mask, y, s2), "y")
    return g.build()


@functools.cache
def session(kind: str, template: str, dtype: str) -> TwinSession:
    if kind == "float":
        graph = float_graph(dtype, vector_only=template == "simd")
    elif kind == "int":
        graph = int_graph(dtype)
    elif kind == "logical":
        graph = logical_graph(dtype)
    else:  # bitwise chain on integer data, side inputs of the same dtype
        graph = chain_graph(
            rank=2,
            dim=1,
            dtype=dtype,
            post=("BitwiseXor(side)", "BitwiseNot", "BitwiseOr(side)", "BitwiseAnd(side)"),
            name=f"bitwise_{dtype}",
        )
    return TwinSession(graph, TEMPLATES[template])


def check_runs(s: TwinSession, rank: int, dim: int, seed: int, template: str, runs: int = 3) -> None:
    for run_seed, sizes, cores in random_runs(seed, rank, dim, runs, max_elements=6000):
        run = s.check(sizes, seed=run_seed, core_num=cores)
        assert run.ok, f"sizes {sizes} on {cores} cores:\n{run.describe()}"
        assert run.template.startswith(template)


@pytest.mark.parametrize("template", ["simt", "simd"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_float_ops(template, dtype):
    s = session("float", template, dtype)
    check_runs(s, 3, 1, seed=11, template=template)
    # x.25 and x.75 values: 2x is a tie for Round (half to even), and Floor / Ceil of negatives
    sizes = {"a0": 1, "a1": 2, "a2": 8, "b0": 1, "b1": 3, "b2": 8}
    x = np.array(
        [[[0.25, 0.75, 1.25, 1.75, -0.25, -0.75, -1.25, -2.75], [-3.5, 3.5, 0, 2, -2, 5.5, -5.5, 6]]],
        dtype=np.float16 if dtype == "float16" else np.float32,
    )
    arrays = {"x": x, "index": np.array([[[1] * 8, [0] * 8, [1, 0] * 4]])}
    run = s.check(sizes, inputs=s.inputs(sizes, arrays=arrays))
    assert run.ok, run.describe()


@pytest.mark.parametrize("template", ["simt", "simd"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_float_to_int32_ops_are_exact(template, dtype):
    s = session("int", template, dtype)
    check_runs(s, 2, 0, seed=13, template=template)
    # ties and negative values, given explicitly: floor(2 * -1.25) = -3, ceil(-1.25) = -1
    x = np.array([[-1.25, 0.5, 2.75, -0.5]] * 2, dtype=np.float32)
    arrays = {"x": x.astype(np.float16) if dtype == "float16" else x, "index": np.array([[1, 0, 1, 0]] * 3)}
    run = s.check(
        sizes={"a0": 2, "a1": 4, "b0": 3, "b1": 4},
        inputs=s.inputs({"a0": 2, "a1": 4, "b0": 3, "b1": 4}, arrays=arrays),
    )
    assert run.ok, run.describe()
    assert run.twin.outputs["y"][0].tolist() == [(-3) ^ (-1), 1 ^ 1, 5 ^ 3, (-1) ^ 0]


@pytest.mark.parametrize("template", ["simt", "simd"])
@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32"])
def test_bitwise_ops(template, dtype):
    check_runs(session("bitwise", template, dtype), 2, 1, seed=17, template=template)


def test_bitwise_ops_on_64_bit_data_in_simt_lanes():
    check_runs(session("bitwise", "simt", "int64"), 2, 1, seed=19, template="simt")


@pytest.mark.parametrize("template", ["simt", "simd"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_logical_ops_on_compare_results(template, dtype):
    check_runs(session("logical", template, dtype), 2, 1, seed=23, template=template)


@pytest.mark.parametrize("dtype,count_dtype", [("int16", "int16"), ("uint32", "int32")])
def test_shifts_in_simt_lanes(dtype, count_dtype):
    g = GraphBuilder(f"shift_{dtype}")
    x = g.data("x", ["a0", "a1"], dtype)
    y = gather(x, 1, g.data("index", ["b0", "b1"], "int32"))
    count = g.data("count", ["b0", "b1"], count_dtype)
    g.output(g.op("RShift", g.op("LShift", y, count), count), "y")
    s = TwinSession(g.build(), SIMT)
    rng = np.random.default_rng(29)
    sizes = {"a0": 5, "a1": 7, "b0": 5, "b1": 6}
    bits = np.dtype(dtype).itemsize * 8
    arrays = {
        "x": rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (5, 7), endpoint=True).astype(dtype),
        "index": rng.integers(0, 7, (5, 6)),
        "count": rng.integers(-2, bits + 3, (5, 6)).astype(count_dtype),
    }
    run = s.check(sizes, inputs=s.inputs(sizes, arrays=arrays))
    assert run.ok, run.describe()
    assert run.template.startswith("simt")


@pytest.mark.parametrize("template", ["simt", "simd"])
@pytest.mark.parametrize("index_pre", [("Muls(0.5)", "FloorToInt"), ("Muls(0.5)", "Ceil2Int")])
def test_index_chain_rounds_float_positions_to_int32_indices(template, index_pre):
    s = TwinSession(
        chain_graph(rank=2, dim=1, index_dtype="float32", index_pre=index_pre, name="float_positions"),
        TEMPLATES[template],
    )
    check_runs(s, 2, 1, seed=31, template=template)


@pytest.mark.parametrize("template", ["simt", "simd"])
def test_index_chain_masks_indices_with_bitwise_and(template):
    # the index and both masks draw from [0, extent): index & mask <= index stays in range
    s = TwinSession(
        chain_graph(rank=3, dim=2, index_pre=("BitwiseAnd(side)", "BitwiseAnd(side)"), name="masked_index"),
        TEMPLATES[template],
    )
    check_runs(s, 3, 2, seed=37, template=template)


def test_vector_forms_are_declared_per_op():
    api = get_registry().get("api_call", "VecElementwiseRegApiCall")
    for op in VECTOR_OPS:
        assert api.supports(op), op
    for op in SIMT_ONLY_OPS:
        assert not api.supports(op), op


@pytest.mark.parametrize("op", sorted(SIMT_ONLY_OPS - {"LShift", "RShift", "Pow"}))
def test_simd_rejects_ops_without_vector_form_and_names_them(op):
    g = GraphBuilder(f"no_vector_{op}")
    x = g.data("x", ["a0", "a1"], "float32")
    y = gather(x, 1, g.data("index", ["b0", "b1"], "int32"))
    g.output(g.op(op, y, name="the_op"), "y")
    for template in ("simd", "sklike"):
        with pytest.raises(ScheduleError) as info:
            Autofuser(AutofuserOptions(force_template=template)).schedule(g.build())
        assert f"op {op} ('the_op') has no vector form" in str(info.value)
    labels = [c.label for c in Autofuser(AutofuserOptions()).schedule(g.build()).cases]
    assert "simt" in labels and not any(label.startswith(("simd", "sklike")) for label in labels)


def compare_scalar_graph(dtype: str):
    """Where((y > -0.1 and y <= 0.7) or y == 1 or (y != 2 and y >= 3) or y < -2, y, 2y)."""
    g = GraphBuilder(f"compare_scalar_{dtype}")
    x = g.data("x", ["a0", "a1"], dtype)
    y = gather(x, 1, g.data("index", ["b0", "b1"], "int32"))
    low, high = (-0.1, 0.7) if dtype.startswith(("float", "bfloat")) else (-1, 7)
    inside = g.op("LogicalAnd", g.op("Gts", y, value=low), g.op("Les", y, value=high))
    tail = g.op("LogicalAnd", g.op("Nes", y, value=2), g.op("Ges", y, value=3))
    mask = g.op("LogicalOr", g.op("LogicalOr", inside, g.op("Eqs", y, value=1)), tail)
    mask = g.op("LogicalOr", mask, g.op("Lts", y, value=-2))
    g.output(g.op("Where", mask, y, g.op("Muls", y, value=2)), "y")
    return g.build()


@pytest.mark.parametrize("template", ["simt", "simd"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int32"])
def test_comparisons_with_a_scalar(template, dtype):
    s = TwinSession(compare_scalar_graph(dtype), TEMPLATES[template])
    check_runs(s, 2, 1, seed=41, template=template)
    if dtype.startswith(("float", "bfloat")):
        # values next to the scalars, which float16 / bfloat16 cannot hold exactly
        sizes = {"a0": 2, "a1": 8, "b0": 2, "b1": 8}
        x = np.array(
            [
                [-0.1, 0.7, 0.69921875, 0.7001953125, -0.10009765625, -0.0999755859375, 1.0, 2.0],
                [3.0, -2.0, -2.0009765625, 2.9990234375, 0.099609375, 0.10009765625, 0, -0.0],
            ],
            dtype=np.float16 if dtype == "float16" else np.float32,
        )
        arrays = {"x": x, "index": np.array([list(range(8)), list(range(8))[::-1]])}
        run = s.check(sizes, inputs=s.inputs(sizes, arrays=arrays))
        assert run.ok, run.describe()


@pytest.mark.parametrize("template", ["simt", "simd"])
def test_index_chain_wraps_negative_indices_with_a_scalar_comparison(template):
    g = GraphBuilder("wrap_negative")
    x = g.data("x", ["a0", 7], "float32")
    index = g.data("index", ["b0", "b1"], "int32")
    index = g.op("Where", g.op("Lts", index, value=0), g.op("Adds", index, value=7), index)
    g.output(gather(x, 1, index), "y")
    s = TwinSession(g.build(), TEMPLATES[template])
    rng = np.random.default_rng(43)
    for k in range(3):
        sizes = {"a0": int(rng.integers(1, 9)), "b1": int(rng.integers(1, 12))}
        sizes["b0"] = int(rng.integers(1, sizes["a0"] + 1))
        run = s.check(sizes, seed=k, negative_indices=True)
        assert run.ok, run.describe()
        assert (run.inputs.logical["index"] < 0).any() or sizes["b0"] * sizes["b1"] < 4
        assert run.template.startswith(template)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_sklike_pre_and_post_stages_use_the_same_vector_forms(dtype):
    graph = chain_graph(
        rank=2,
        dim=1,
        dtype=dtype,
        pre=("Ceil",),
        post=("Reciprocal", "Muls(8.0)", "Round", "FloorToInt", "BitwiseNot"),
        name="sklike_ops",
    )
    s = TwinSession(graph, AutofuserOptions(force_template="sklike"))
    check_runs(s, 2, 1, seed=47, template="sklike")
