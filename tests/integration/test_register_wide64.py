"""64-bit integer ops in registers: the 3510 register pair sequences, with the memory path's bits.

A run of int64 / uint64 values (32 elements a step) computes Add / Sub / Mul, Adds / Subs / Muls, the bitwise
ops and, on int64, Neg / Abs / Relu as register instructions, each of which the 3510 implementation issues as a
sequence over a register pair (the twin computes them half by half the same way). Each kernel runs on the twin
against the reference, and against the same graph compiled with those ops kept memory-based calls: both give
the same bits at the edges (INT64_MIN / MAX, wrap-around, values past 2^32, negatives) and on random shapes.
"""

from __future__ import annotations

import numpy as np
import pytest
from af_v35_regbase.testing import memory_session, run_every_case

from af_core.autofuser import AutofuserOptions
from af_core.builders import GraphBuilder, gather
from af_core.testing import random_runs, same_bits
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin

#: the ops the 64-bit runs below hold (the memory-path twin keeps exactly these memory calls)
WIDE_OPS = {
    "Add",
    "Sub",
    "Mul",
    "Adds",
    "Subs",
    "Muls",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "BitwiseNot",
    "Neg",
    "Abs",
    "Relu",
}


def wide_graph(dtype: str):
    """y = Not((((a * s2 - s1) + 5 - 7) * 3 & s2) ^ (a | s1)) of a = int64(gather) + s1; on int64 then
    Relu(Neg(y)) + Abs(a). The gathered int32 values are cast to 64 bits (a function of its own: the sign
    words and a dual store in a run of 4-byte values), so the side inputs bring the values past 2^32."""
    g = GraphBuilder(f"wide64_{dtype}")
    x = g.data("x", ["a0", "a1"], "int32")
    t = g.op("Cast", gather(x, 0, g.data("index", ["b0", "b1"], "int32")), dtype=dtype)
    s1 = g.data("s1", ["b0", "b1"], dtype)
    s2 = g.data("s2", ["b0", "b1"], dtype)
    a = g.op("Add", t, s1)
    b = g.op("Mul", a, s2)
    c = g.op("Muls", g.op("Subs", g.op("Adds", g.op("Sub", b, s1), value=5.0), value=7.0), value=3.0)
    y = g.op("BitwiseNot", g.op("BitwiseXor", g.op("BitwiseAnd", c, s2), g.op("BitwiseOr", a, s1)))
    if dtype == "int64":
        y = g.op("Add", g.op("Relu", g.op("Neg", y)), g.op("Abs", a))
    g.output(y, "y")
    return g.build()


def compare_graph(dtype: str):
    """Every comparison and its scalar form on 64-bit values, the logical ops of their predicates and Where:
    a chain of Wheres over the gathered values (cast to 64 bits) and two side inputs."""
    g = GraphBuilder(f"wide64_compare_{dtype}")
    x = g.data("x", ["a0", "a1"], "int32")
    t = g.op("Cast", gather(x, 0, g.data("index", ["b0", "b1"], "int32")), dtype=dtype)
    s1 = g.data("s1", ["b0", "b1"], dtype)
    s2 = g.data("s2", ["b0", "b1"], dtype)
    y = g.op("Where", g.op("LogicalAnd", g.op("Gt", s1, s2), g.op("LogicalNot", g.op("Lt", s1, t))), s1, s2)
    y = g.op("Where", g.op("LogicalOr", g.op("Ge", y, s1), g.op("Le", s2, t)), y, t)
    y = g.op("Where", g.op("LogicalXor", g.op("Eq", y, s2), g.op("Ne", s1, s2)), y, s1)
    y = g.op("Where", g.op("Gts", y, value=1.0), y, s2)
    y = g.op("Where", g.op("Ges", s1, value=5.0), y, t)
    y = g.op("Where", g.op("Lts", s2, value=7.0), y, s1)
    y = g.op("Where", g.op("Les", y, value=3.0), s2, y)
    y = g.op("Where", g.op("Eqs", s1, value=5.0), t, y)
    y = g.op("Where", g.op("Nes", s2, value=0.0), y, s1)
    g.output(y, "y")
    return g.build()


COMPARE_OPS = {
    "Gt",
    "Ge",
    "Lt",
    "Le",
    "Eq",
    "Ne",
    "Gts",
    "Ges",
    "Lts",
    "Les",
    "Eqs",
    "Nes",
    "Where",
    "LogicalAnd",
    "LogicalOr",
    "LogicalXor",
    "LogicalNot",
}


RUNS = {
    "uint64": "10 op(s) Add ('add'), Mul ('mul'), Sub ('sub'), Adds ('adds'), Subs ('subs'), Muls ('muls'), "
    "BitwiseAnd ('bitwiseand'), BitwiseOr ('bitwiseor'), BitwiseXor ('bitwisexor'), BitwiseNot ('bitwisenot') "
    "in one VfChainRegApiCall",
    "int64": "14 op(s) Add ('add'), Mul ('mul'), Sub ('sub'), Adds ('adds'), Subs ('subs'), Muls ('muls'), "
    "BitwiseAnd ('bitwiseand'), BitwiseOr ('bitwiseor'), BitwiseXor ('bitwisexor'), BitwiseNot ('bitwisenot'), "
    "Neg ('neg'), Relu ('relu'), Abs ('abs'), Add ('add_1') in one VfChainRegApiCall",
}


def edges(dtype: str) -> np.ndarray:
    """The 64-bit edge values: both ends, +-1 around 0 and 2^31 / 2^32 / 2^63, a carry across the halves."""
    info = np.iinfo(dtype)
    values = [0, 1, 2, 3, 5, 7, info.max, info.max - 1, info.min, info.min + 1, 2**31 - 1, 2**31, 2**32 - 1]
    values += [2**32, 2**32 + 1, 0xFFFFFFFF00000000, 0x00000000FFFFFFFF, 0x123456789ABCDEF0, 2**62 + 3]
    if info.min < 0:
        values += [-1, -2, -(2**31), -(2**32), -(2**32) - 1, -0x123456789ABCDEF0]
    else:
        values += [2**63, 2**63 + 1, 2**64 - 2**32]
    return np.array([v & 0xFFFFFFFFFFFFFFFF for v in values], dtype=np.uint64).view(dtype)


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_64bit_ops_run_in_registers_with_the_memory_paths_bits(template, dtype):
    graph = wide_graph(dtype)
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    cpp = f"{dtype}_t"
    assert "UpdateMask<int64_t>(count)" in kernel and f"AscendC::Reg::RegTensor<{cpp}>" in kernel
    for api in ("Add", "Sub", "Mul", "Adds", "Muls", "And", "Or", "Xor", "Not"):
        assert f"AscendC::Reg::{api}(r" in kernel, api
    if dtype == "int64":
        for api in ("Neg", "Abs", "Relu"):
            assert f"AscendC::Reg::{api}(r" in kernel, api
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert RUNS[dtype] in notes, notes
    memory = memory_session(graph, template, WIDE_OPS)
    assert "AscendC::Reg::Mul(" not in memory.result.kernel
    values = edges(dtype)
    n = values.size
    rng = np.random.default_rng(71)
    sizes = {"a0": 2, "a1": n, "b0": 3, "b1": n}
    arrays = {
        "x": np.stack([np.arange(n, dtype=np.int32) - 4, np.full(n, -(2**31), dtype=np.int32)]),
        "index": np.array([[0] * n, [1] * n, [0] * n], dtype=np.int32),
        "s1": np.stack([values, values[::-1], rng.permutation(values)]),
        "s2": np.stack([values[::-1], rng.permutation(values), values]),
    }
    inputs = session.inputs(sizes, arrays=arrays)
    run = session.check(sizes, inputs=inputs)
    assert run.ok, run.describe()
    assert same_bits(run.twin.outputs["y"], memory.check(sizes, inputs=inputs).twin.outputs["y"])
    for run_seed, sizes, cores in random_runs(73, 2, 0, 2, max_elements=3000):
        run = session.check(sizes, seed=run_seed, core_num=cores)
        assert run.ok, run.describe()
        kept = memory.check(sizes, inputs=run.inputs, core_num=cores)
        assert same_bits(run.twin.outputs["y"], kept.twin.outputs["y"]), sizes


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_64bit_comparisons_and_where_run_in_registers_with_the_memory_paths_bits(template, dtype):
    """Compare / Compares of 64-bit values (the 3510 CompareB64Impl over a register pair: the high halves in
    the element's signedness, the low ones unsigned) into mask registers, the logical ops of those masks and
    Select by them: one vector function after the Cast, the memory path's bits where only the low or only
    the high halves differ, at the ends of the type and on random shapes."""
    graph = compare_graph(dtype)
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    cpp = f"{dtype}_t"
    for mode in ("GT", "GE", "LT", "LE", "EQ", "NE"):
        assert f"AscendC::Reg::Compare<{cpp}, AscendC::CMPMODE::{mode}>" in kernel, mode
        assert f"AscendC::Reg::Compares<{cpp}, AscendC::CMPMODE::{mode}>" in kernel, mode
    assert "AscendC::Reg::Select(r" in kernel and "AscendC::Reg::Xor(m" in kernel
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    # the Cast to 64 bits is a run of 4-byte values, the comparisons a run of 64-bit ones
    assert len(notes) == 3 and notes[0] == "1 op(s) Cast ('cast') in one VfChainRegApiCall", notes
    assert notes[2].startswith("25 op(s) Gt ('gt')") and notes[2].endswith("in one VfChainRegApiCall"), notes
    memory = memory_session(graph, template, COMPARE_OPS)
    assert "AscendC::Reg::Compare<" not in memory.result.kernel
    values = edges(dtype)
    n = values.size
    rng = np.random.default_rng(79)
    sizes = {"a0": 2, "a1": n, "b0": 4, "b1": n}
    arrays = {
        "x": np.stack([np.arange(n, dtype=np.int32) - 4, np.full(n, 5, dtype=np.int32)]),
        "index": np.array([[0] * n, [1] * n, [0] * n, [1] * n], dtype=np.int32),
        # equal high halves with other low halves (2^32 vs 2^32 + 1 ...), equal values, both ends
        "s1": np.stack([values, values, rng.permutation(values), values[::-1]]),
        "s2": np.stack([values[::-1], values, values, rng.permutation(values)]),
    }
    inputs = session.inputs(sizes, arrays=arrays)
    run = session.check(sizes, inputs=inputs)
    assert run.ok, run.describe()
    assert same_bits(run.twin.outputs["y"], memory.check(sizes, inputs=inputs).twin.outputs["y"])
    for run_seed, sizes, cores in random_runs(83, 2, 0, 2, max_elements=3000):
        run = session.check(sizes, seed=run_seed, core_num=cores)
        assert run.ok, run.describe()
        kept = memory.check(sizes, inputs=run.inputs, core_num=cores)
        assert same_bits(run.twin.outputs["y"], kept.twin.outputs["y"]), sizes


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize(("src", "dst"), [("int64", "uint64"), ("uint64", "int64")])
def test_a_cast_between_int64_and_uint64_is_a_register_view_in_the_64bit_run(template, src, dst):
    """int64 <-> uint64 copies the bits (the memory Cast's VIEW): in a run of 64-bit ops it reads the register
    as the other type, no instruction, and the run goes on in registers; the memory path's bits at the ends
    of both types."""
    g = GraphBuilder(f"wide64_view_{src}_{dst}")
    x = g.data("x", ["a0", "a1"], "int32")
    t = g.op("Cast", gather(x, 0, g.data("index", ["b0", "b1"], "int32")), dtype=src)
    s1 = g.data("s1", ["b0", "b1"], src)
    s2 = g.data("s2", ["b0", "b1"], dst)
    y = g.op("Add", g.op("Cast", g.op("Mul", t, s1), dtype=dst, name="view"), s2)
    g.output(y, "y")
    graph = g.build()
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert "3 op(s) Mul ('mul'), Cast ('view'), Add ('add') in one VfChainRegApiCall" in notes, notes
    assert f"(AscendC::Reg::RegTensor<{dst}_t>&)" in kernel
    memory = memory_session(graph, template, {"Cast", "Mul", "Add"})
    assert f"(AscendC::Reg::RegTensor<{dst}_t>&)" not in memory.result.kernel
    values = edges(src)
    n = values.size
    sizes = {"a0": 1, "a1": n, "b0": 2, "b1": n}
    arrays = {
        "x": np.arange(n, dtype=np.int32).reshape(1, n) - 4,
        "index": np.zeros((2, n), dtype=np.int32),
        "s1": np.stack([values, values[::-1]]),
        "s2": np.stack([values[::-1].view(dst), values.view(dst)]),
    }
    inputs = session.inputs(sizes, arrays=arrays)
    run = session.check(sizes, inputs=inputs)
    assert run.ok, run.describe()
    assert same_bits(run.twin.outputs["y"], memory.check(sizes, inputs=inputs).twin.outputs["y"])


def check_random_shapes(session: TwinSession, seed: int, runs: int) -> None:
    """Every fitting case of ``session`` on ``runs`` random shapes agrees with the reference, and its
    predicted register instructions and cycles are the twin's."""
    for run_seed, sizes, cores in random_runs(seed, 2, 0, runs):
        run_every_case(session, session.inputs(sizes, seed=run_seed), cores)


def pre_post_inputs(session: TwinSession, where: str, values: np.ndarray, post_x: np.ndarray):
    """The inputs of a graph reading a 64-bit tile before the gather ("pre": ``values`` as x, gathered from row
    0) or beside it ("post": ``values`` as both rows of w, the second reversed, next to the gathered
    ``post_x``), after checking that tile is padded by the vector its dual load reads past it."""
    source = "x" if where == "pre" else "w"
    buffers = {b.name: str(b.bytes) for st in session.scheduled.cases[0].impl.stages for b in st.buffers}
    assert buffers[f"{source}_load_tile"].endswith("+ 256"), buffers
    n = values.size
    arrays = {"index": np.zeros((2, n), dtype=np.int32)}
    if where == "pre":
        arrays["x"] = values.reshape(1, n)
    else:
        arrays.update(x=post_x.reshape(1, n), w=np.stack([values, values[::-1]]))
    return session.inputs({"a0": 1, "a1": n, "b0": 2, "b1": n}, arrays=arrays)


def low_words_graph(where: str):
    """int64 -> int32 (the memory Cast keeps the low 32 bits) of the input before the gather ("pre") or of
    a side input after it, added to the gathered values ("post")."""
    g = GraphBuilder(f"wide64_low_words_{where}")
    index = g.data("index", ["b0", "b1"], "int32")
    if where == "pre":
        x = g.op("Cast", g.data("x", ["a0", "a1"], "int64"), dtype="int32", name="probe")
        y = g.op("Abs", gather(x, 0, index))
    else:
        x = gather(g.data("x", ["a0", "a1"], "int32"), 0, index)
        y = g.op("Add", x, g.op("Cast", g.data("w", ["b0", "b1"], "int64"), dtype="int32", name="probe"))
    g.output(y, "y")
    return g.build()


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("where", ["pre", "post"])
def test_int64_to_int32_is_the_low_words_of_a_dual_load(template, where):
    """int64 -> int32 in a run of 4-byte values: the int64 tile loaded by the dual LoadAlign DIST_DINTLV_B32
    (low words into one register, high words into another, 64 values a step), the low words the result --
    no Cast instruction, no 8-byte register; after the gather it shares a function with the Add. The
    memory path's bits at the int64 edges (values past int32 wrap to their low words), the reference on
    random shapes, the int64 tile padded by the vector the dual load reads past it, and the register
    counters each case predicts are the twin's."""
    graph = low_words_graph(where)
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    want = "1 op(s) Cast ('probe')" if where == "pre" else "2 op(s) Cast ('probe'), Add ('add')"
    assert f"{want} in one VfChainRegApiCall" in notes, notes
    assert "LoadDist::DIST_DINTLV_B32>" in kernel and "Reg::Cast<int32_t, int64_t" not in kernel
    assert "RegTensor<int64_t>" not in kernel.split("#endif  // AF_GATHER_H")[-1]
    memory = memory_session(graph, template, {"Cast"})
    assert "DIST_DINTLV_B32" not in memory.result.kernel.split("#endif  // AF_GATHER_H")[-1]
    values = edges("int64")
    n = values.size
    inputs = pre_post_inputs(session, where, values, np.arange(n, dtype=np.int32) - 4)
    got = session.run(inputs).outputs["y"]
    assert same_bits(got, memory.run(inputs).outputs["y"])
    low = values.astype(np.int32)  # numpy keeps the low 32 bits as the memory Cast does
    want_row = np.abs(low) if where == "pre" else (np.arange(n, dtype=np.int32) - 4) + low
    np.testing.assert_array_equal(got[0], want_row)
    check_random_shapes(session, 9, 3)


#: the integer Casts to 64 bits in registers: the int32 value's sign words beside it, stored as a pair
WIDENINGS = [
    (src, dst) for src in ("int32", "int16", "uint16", "int8", "uint8") for dst in ("int64", "uint64")
]


def widening_graph(src: str, dst: str, before: tuple[str, ...] = ()):
    g = GraphBuilder(f"wide64_widen_{src}_{dst}")
    y = gather(g.data("x", ["a0", "a1"], src), 0, g.data("index", ["b0", "b1"], "int32"))
    for op in before:
        y = g.op(op, y)
    g.output(g.op("Cast", y, dtype=dst, name="probe"), "y")
    return g.build()


def int_edges(dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    picks = {info.min, info.min + 1, info.max - 1, info.max, 0, 1, 2, 100, 127, 128, 255, 256, 32767, 32768}
    picks |= {-1, -2, -128, -129, -32768, -32769, 65535, 65536, 2**31 - 1, -(2**31)}
    return np.array(sorted(v for v in picks if info.min <= v <= info.max), dtype=dtype)


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize(("src", "dst"), WIDENINGS)
def test_an_integer_cast_to_64_bits_is_the_sign_words_and_a_dual_store(template, src, dst):
    """An integer Cast to int64 / uint64 in a run of 4-byte values: widened exactly to int32, the high words
    the int32 value's sign (Mins 0, Maxs -1), the pair stored by the dual StoreAlign DIST_INTLV_B32 (which
    ignores the mask and writes 512 bytes: the 64-bit tile padded by a vector) -- no 8-byte register. The
    memory path's bits at the source's edges (a sign extension, or zero extension of an unsigned source),
    the reference on random shapes, and the predicted register counters."""
    graph = widening_graph(src, dst)
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert "1 op(s) Cast ('probe') in one VfChainRegApiCall" in notes, notes
    body = kernel.split("#endif  // AF_GATHER_H")[-1]
    assert "StoreDist::DIST_INTLV_B32>" in body and "RegTensor<int64_t>" not in body
    buffers = {b.name: str(b.bytes) for st in session.scheduled.cases[0].impl.stages for b in st.buffers}
    assert buffers["probe_tile"].endswith("+ 256"), buffers
    memory = memory_session(graph, template, {"Cast"})
    assert "DIST_INTLV_B32" not in memory.result.kernel
    values = int_edges(src)
    n = values.size
    sizes = {"a0": 1, "a1": n, "b0": 2, "b1": n}
    arrays = {"x": values.reshape(1, n), "index": np.zeros((2, n), dtype=np.int32)}
    inputs = session.inputs(sizes, arrays=arrays)
    got = session.run(inputs).outputs["y"]
    assert same_bits(got, memory.run(inputs).outputs["y"])
    np.testing.assert_array_equal(got[0], values.astype(np.int64).astype(dst))
    check_random_shapes(session, 11, 2)


@pytest.mark.parametrize("template", ["simd", "sklike"])
def test_a_widening_ends_a_run_of_4_byte_ops_and_the_low_words_come_back(template):
    """Abs and Neg on int32, then the Cast to int64, in one function; the int64 result cast back to int32 in
    the next node gives the low words of the pair (the run's own value)."""
    g = GraphBuilder("wide64_roundtrip")
    y = gather(g.data("x", ["a0", "a1"], "int32"), 0, g.data("index", ["b0", "b1"], "int32"))
    wide = g.op("Cast", g.op("Neg", g.op("Abs", y)), dtype="int64", name="probe")
    g.output(g.op("Cast", wide, dtype="int32", name="back"), "y")
    session = TwinSession(g.build(), AutofuserOptions(force_template=template))
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert (
        "4 op(s) Abs ('abs'), Neg ('neg'), Cast ('probe'), Cast ('back') in one VfChainRegApiCall" in notes
    ), notes
    for seed, sizes, cores in random_runs(12, 2, 0, 2):
        run = session.check(sizes, seed=seed, core_num=cores)
        assert run.ok, (sizes, run.describe())


#: float32 values at the edges of int64 truncation: ties, the int32 and int64 bounds and their float
#: neighbours, infinities, NaN
FLOAT_EDGES = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 3.7, -3.7, 2049.0, 32767.5, -32769.0, 65504.0, 1e9, -1e9]
FLOAT_EDGES += [2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 4294967296.0, 4294967040.0]
FLOAT_EDGES += [-4294967296.0, 1.2345e15, -1.2345e15, 9.2233715e18, 9.223372e18, 9.2233725e18, -9.223372e18]
FLOAT_EDGES += [-9.2233725e18, 3e38, -3e38, float("inf"), float("-inf"), float("nan"), 1e-8, -1e-40]


def truncated_int64(values: np.ndarray) -> np.ndarray:
    """The memory Cast's float -> int64 with CAST_TRUNC: truncated, saturated at the int64 range, NaN -> 0."""
    out = []
    for v in values.astype(np.float64):
        if np.isnan(v):
            out.append(0)
        elif v >= 2.0**63:
            out.append(2**63 - 1)
        elif v <= -(2.0**63):
            out.append(-(2**63))
        else:
            out.append(int(np.trunc(v)))
    return np.array(out, dtype=np.int64)


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("src", ["float32", "float16", "bfloat16"])
def test_a_float_to_int64_is_two_words_computed_in_registers(template, src):
    """float32 (float16 / bfloat16 cast up exactly first) -> int64, truncated: the words computed in float32
    and int32 registers (``vf_chain.b64.float_words``: the int32 Cast below 2^31; above, floor(t / 2^32) and the
    exact remainder) and stored by the dual store. The memory path's bits and numpy's at the edges
    (saturation past 2^63, infinities, NaN -> 0), the reference on random shapes, predicted counters."""
    g = GraphBuilder(f"wide64_float_{src}")
    x = gather(g.data("x", ["a0", "a1"], src), 0, g.data("index", ["b0", "b1"], "int32"))
    g.output(g.op("Cast", x, dtype="int64", name="probe"), "y")
    graph = g.build()
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert "1 op(s) Cast ('probe') in one VfChainRegApiCall" in notes, notes
    body = session.result.kernel.split("#endif  // AF_GATHER_H")[-1]
    assert "StoreDist::DIST_INTLV_B32>" in body and "RegTensor<int64_t>" not in body
    memory = memory_session(graph, template, {"Cast"})
    with np.errstate(over="ignore"):
        values = np.array(FLOAT_EDGES, dtype=np.float32)
        if src == "float16":
            values = values.astype(np.float16)
    n = values.size
    arrays = {"x": values.reshape(1, n), "index": np.zeros((2, n), dtype=np.int32)}
    inputs = session.inputs({"a0": 1, "a1": n, "b0": 2, "b1": n}, arrays=arrays)
    got = session.run(inputs).outputs["y"]
    assert same_bits(got, memory.run(inputs).outputs["y"])
    if src != "bfloat16":  # (bfloat16 edges are the float32 values rounded by the session)
        np.testing.assert_array_equal(got[0], truncated_int64(values))
    check_random_shapes(session, 13, 2)


#: int64 values where a float32 / float16 / bfloat16 rounding decides: ties at each type's precision, values
#: one past a tie, the int32 and int64 bounds, and values float16 rounds to infinity
INT64_EDGES = [
    0,
    1,
    -1,
    2**11 + 1,
    2**24 + 1,
    2**24 + 3,
    65519,
    65520,
    -65520,
    2**31 - 1,
    -(2**31),
    2**32 + 2**8,
]
INT64_EDGES += [2**32 + 3 * 2**8, 2**40 + 2**16 + 1, 2**55 + 2**31, -(2**55) - 2**31, 2**63 - 1, -(2**63)]
INT64_EDGES += [-(2**63) + 2**39, 123456789012345678, -98765432109876543]


def int64_to_float_graph(dst: str, where: str):
    """int64 -> ``dst`` of the input before the gather ("pre"), of a side input after it added to the gathered
    values ("post"), or right after a Cast to int64 in the post chain ("after_words")."""
    g = GraphBuilder(f"wide64_to_{dst}_{where}")
    index = g.data("index", ["b0", "b1"], "int32")
    if where == "pre":
        x = g.op("Cast", g.data("x", ["a0", "a1"], "int64"), dtype=dst, name="probe")
        y = g.op("Abs", gather(x, 0, index))
    elif where == "post":
        x = gather(g.data("x", ["a0", "a1"], dst), 0, index)
        y = g.op("Add", x, g.op("Cast", g.data("w", ["b0", "b1"], "int64"), dtype=dst, name="probe"))
    else:
        x = gather(g.data("x", ["a0", "a1"], "int32"), 0, index)
        y = g.op("Cast", g.op("Cast", g.op("Neg", x), dtype="int64", name="wide"), dtype=dst, name="probe")
    g.output(y, "y")
    return g.build()


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("dst", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("where", ["pre", "post"])
def test_int64_to_a_float_is_the_register_pairs_cast(template, dst, where):
    """int64 -> float32 (and on to float16 / bfloat16, CAST_RINT as the memory route) in a run of 4-byte
    values: the int64 tile loaded into a RegTraitNumTwo register (the dual load, 64 values a step) and
    converted by the register Cast of the pair -- the exact value rounded once. The memory path's bits and
    numpy's at ties and the int64 edges, the tile padded by the vector the load reads past it, the reference
    on random shapes and the predicted register counters."""
    graph = int64_to_float_graph(dst, where)
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    want = "1 op(s) Cast ('probe')" if where == "pre" else "2 op(s) Cast ('probe'), Add ('add')"
    assert f"{want} in one VfChainRegApiCall" in notes, notes
    body = session.result.kernel.split("#endif  // AF_GATHER_H")[-1]
    assert "RegTensor<int64_t, AscendC::Reg::RegTraitNumTwo>" in body
    assert "Reg::Cast<float, int64_t, kAfRegCast_ZERO_UNKNOWN_CAST_RINT>" in body
    memory = memory_session(graph, template, {"Cast"})
    assert "RegTraitNumTwo" not in memory.result.kernel
    values = np.array(INT64_EDGES, dtype=np.int64)
    zeros = np.zeros(values.size, dtype="float32" if dst == "bfloat16" else dst)  # the session rounds
    inputs = pre_post_inputs(session, where, values, zeros)
    got = session.run(inputs).outputs["y"]
    assert same_bits(got, memory.run(inputs).outputs["y"])
    if dst != "bfloat16":  # numpy has no bfloat16; the memory path's bits cover it
        with np.errstate(over="ignore"):
            want_row = values.astype(np.float32).astype(dst)
        np.testing.assert_array_equal(got[0], np.abs(want_row) if where == "pre" else want_row)
    check_random_shapes(session, 14, 2)


@pytest.mark.parametrize("template", ["simd", "sklike"])
def test_a_cast_to_a_float_after_a_cast_to_int64_starts_a_new_run(template):
    """The int64 a Cast makes in a run is two int32 registers, which no RegTraitNumTwo register holds: the Cast
    back to a float starts the next function, which loads the stored pair; the reference on random shapes."""
    graph = int64_to_float_graph("float32", "after_words")
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert "2 op(s) Neg ('neg'), Cast ('wide') in one VfChainRegApiCall" in notes, notes
    assert "1 op(s) Cast ('probe') in one VfChainRegApiCall" in notes, notes
    for seed, sizes, cores in random_runs(15, 2, 0, 2):
        run = session.check(sizes, seed=seed, core_num=cores)
        assert run.ok, (sizes, run.describe())


@pytest.mark.parametrize("template", ["simd", "sklike"])
def test_one_register_pair_serves_a_cast_to_int32_and_one_to_float(template):
    """An int64 tile read by a Cast to int32 and a Cast to float32 in one run: one load of its RegTraitNumTwo
    register, whose reg[0] is the low words the Cast to int32 keeps. The memory path's bits at the int64
    edges, numpy's, and the reference on random shapes with the predicted register counters."""
    g = GraphBuilder("wide64_one_pair")
    x = gather(g.data("x", ["a0", "a1"], "float32"), 0, g.data("index", ["b0", "b1"], "int32"))
    w = g.data("w", ["b0", "b1"], "int64")
    low = g.op("Cast", w, dtype="int32", name="low")
    y = g.op("Add", x, g.op("Cast", w, dtype="float32", name="probe"))
    g.output(g.op("Add", y, g.op("Cast", low, dtype="float32", name="back")), "y")
    graph = g.build()
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert (
        "5 op(s) Cast ('low'), Cast ('probe'), Add ('add'), Cast ('back'), Add ('add_1') in one VfChainRegApiCall"
        in notes
    ), notes
    body = session.result.kernel.split("#endif  // AF_GATHER_H")[-1]
    assert body.count("RegTraitNumTwo> ") == 1 and "DIST_DINTLV_B32" not in body
    assert "(AscendC::Reg::RegTensor<int32_t>&)r0.reg[0]" in body, body
    memory = memory_session(graph, template, {"Cast"})
    values = np.array(INT64_EDGES, dtype=np.int64)
    inputs = pre_post_inputs(session, "post", values, np.zeros(values.size, dtype=np.float32))
    got = session.run(inputs).outputs["y"]
    assert same_bits(got, memory.run(inputs).outputs["y"])
    want = values.astype(np.float32) + values.astype(np.int32).astype(np.float32)
    np.testing.assert_array_equal(got[0], want)
    check_random_shapes(session, 18, 2)
