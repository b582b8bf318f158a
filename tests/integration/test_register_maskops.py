"""Logical ops on mask registers and Exp2 in registers, inside the vector functions of SIMD / SK-like chains.

Each kernel runs on the twin against the reference, and against the same graph compiled with the op kept a
memory-based call (``VfChainRegApiCall.rejection`` forced to refuse it): both must give the same bits, the
claim the register forms make (they compute the memory path's steps).
"""

from __future__ import annotations

import numpy as np
import pytest
from af_v35_regbase.testing import memory_session, run_every_case
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from af_core.autofuser import AutofuserOptions
from af_core.builders import GraphBuilder, gather
from af_core.testing import chain_graph, random_runs, same_bits
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin


def same_as_memory(session: TwinSession, memory: TwinSession, seed: int, runs: int, **check) -> tuple:
    """``runs`` random shapes of a rank-2 gather graph: ``session`` matches the reference and ``memory`` (the
    same graph with ops kept memory calls) gives the same bits on the same inputs; returns the last run's
    inputs and core count."""
    for run_seed, sizes, cores in random_runs(seed, 2, 0, runs, max_elements=5000):
        run = session.check(sizes, seed=run_seed, core_num=cores, **check)
        assert run.ok, run.describe()
        kept = memory.check(sizes, inputs=run.inputs, core_num=cores)
        assert kept.ok, kept.describe()
        assert same_bits(run.twin.outputs["y"], kept.twin.outputs["y"]), sizes
    return run.inputs, cores


def logical_graph(dtype: str):
    """Where((y > s1 and not y < s2) xor (y == y) or s1 <= s2, y, s2) of y = |gather|: every logical op."""
    g = GraphBuilder(f"mask_logic_{dtype}")
    x = g.data("x", ["a0", "a1"], dtype)
    y = g.op("Abs", gather(x, 0, g.data("index", ["b0", "b1"], "int32")))
    s1 = g.data("s1", ["b0", "b1"], dtype)
    s2 = g.data("s2", ["b0", "b1"], dtype)
    both = g.op("LogicalAnd", g.op("Gt", y, s1), g.op("LogicalNot", g.op("Lt", y, s2)))
    mask = g.op("LogicalOr", g.op("LogicalXor", both, g.op("Eq", y, y)), g.op("Le", s1, s2))
    g.output(g.op("Where", mask, y, s2), "y")
    return g.build()


LOGIC_RUN = (
    "10 op(s) Abs ('abs'), Gt ('gt'), Lt ('lt'), LogicalNot ('logicalnot'), LogicalAnd ('logicaland'), "
    "Eq ('eq'), LogicalXor ('logicalxor'), Le ('le'), LogicalOr ('logicalor'), Where ('where') in one "
    "VfChainRegApiCall"
)


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int16", "int8"])
def test_logical_ops_are_mask_register_logic(template, dtype):
    """LogicalAnd / Or / Xor / Not of comparisons made in the run: the register And / Or / Xor / Not on
    MaskRegs, one vector function for the whole masked chain; the memory path's bits on random shapes."""
    graph = logical_graph(dtype)
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    for api in ("And", "Or", "Xor", "Not"):
        assert f"AscendC::Reg::{api}(m" in kernel, api
    assert "(VecElementwiseRegApiCall)" not in kernel
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert notes == [LOGIC_RUN], notes
    memory = memory_session(graph, template, {"LogicalAnd", "LogicalOr", "LogicalXor", "LogicalNot"})
    assert "AscendC::Reg::And(m" not in memory.result.kernel
    same_as_memory(session, memory, 41, 3)


def far_bools_graph():
    """A comparison of int32 ids selecting between int64 ones: Lts and LogicalNot in a run of 4-byte values,
    the Where in a run of 64-bit values (a mask register holds one element size), so the predicate crosses
    from one run to the other. A negative id i becomes -i - 1, a valid index of the gathered axis."""
    g = GraphBuilder("far_bools")
    x = g.data("x", ["a0", "a1"], "float32")
    index = g.data("index", ["b0", "b1"], "int32")
    keep = g.op("LogicalNot", g.op("Lts", index, value=0))
    wide = g.op("Cast", index, dtype="int64")
    index = g.op("Where", keep, wide, g.op("Adds", g.op("Neg", wide), value=-1))
    g.output(gather(x, 0, index), "y")
    return g.build()


@pytest.mark.parametrize("template", ["simd", "sklike"])
def test_a_predicate_crosses_from_a_run_of_4_byte_values_to_a_64_bit_run(template):
    """The run of 4-byte values stores the LogicalNot's predicate to its bit-mask tile (StoreUnAlign of the
    b32 mask, StoreUnAlignPost after the loop); the 64-bit run loads it (LoadUnAlign, MaskGenWithRegTensor,
    UnPack to 8-byte elements) for its Select: no op stays a memory call. On random shapes with ids drawn in
    [-a0, a0), the bits equal those of the graph with every mask op a memory call and the reference's, and
    every case predicts its register counters exactly."""
    graph = far_bools_graph()
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert (
        notes[0] == "3 op(s) Lts ('lts'), LogicalNot ('logicalnot'), Cast ('cast') in one VfChainRegApiCall"
    )
    assert "3 op(s) Neg ('neg'), Adds ('adds'), Where ('where') in one VfChainRegApiCall" in notes
    assert not any("stays" in n for n in notes), notes
    kernel = session.result.kernel
    for call in (
        "StoreUnAlign(bits",
        "StoreUnAlignPost<uint32_t",
        "MaskGenWithRegTensor<uint32_t, 0>",
        "UnPack(m",
    ):
        assert call in kernel, call
    memory = memory_session(graph, template, {"Lts", "LogicalNot", "Where"})
    assert "StoreUnAlign(" not in memory.result.kernel
    inputs, cores = same_as_memory(session, memory, 43, 3, negative_indices=True)
    assert run_every_case(session, inputs, cores)


#: Op sets kept memory calls so that predicates cross between the register runs of ``logical_graph`` and
#: memory calls in both directions: a memory LogicalAnd reads the bits two runs store and writes bits a run
#: loads; a memory Where (Select) reads the bits of the run's last LogicalOr; memory comparisons write bits
#: runs load; with every comparison and the Where in memory, the logical ops form runs of predicates alone
#: (masks of 1-byte elements).
CROSSINGS = {
    "and": frozenset({"LogicalAnd"}),
    "where": frozenset({"Where"}),
    "compares": frozenset({"Gt", "Eq"}),
    "logic-only": frozenset({"Gt", "Lt", "Eq", "Le", "Where"}),
}
#: The mask store and load a run stepping by elements of that size issues (store_mask / load_mask).
MASK_MOVES = {
    4: ("StoreUnAlign(bits", "MaskGenWithRegTensor<uint32_t, 0>"),
    2: ("MaskDist::DIST_PACK>", "MaskDist::DIST_US>"),
    1: (
        "StoreAlign<uint8_t, AscendC::Reg::MaskDist::DIST_NORM>",
        "LoadAlign<uint8_t, AscendC::Reg::MaskDist::DIST_NORM>",
    ),
}


#: The mask ops of ``logical_graph``, every one a memory call in the graph the crossings are compared with.
LOGICAL_OPS = ("LogicalAnd", "LogicalOr", "LogicalXor", "LogicalNot")
COMPARE_OPS = ("Gt", "Lt", "Eq", "Le")


@pytest.fixture(scope="module")
def all_memory():
    made = {}

    def get(dtype: str):
        if dtype not in made:
            made[dtype] = memory_session(logical_graph(dtype), "simd", {*LOGICAL_OPS, *COMPARE_OPS, "Where"})
        return made[dtype]

    return get


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("crossing", sorted(CROSSINGS))
@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
def test_predicates_cross_between_runs_and_memory_calls(all_memory, template, crossing, dtype):
    """A predicate outside a run is the bit-mask tile the memory Compare writes and Select reads, so runs
    store and load it at every mask size (4-byte elements: StoreUnAlign / MaskGenWithRegTensor; 2-byte:
    DIST_PACK / DIST_US; 1-byte and predicates alone: DIST_NORM) next to memory calls reading and writing it:
    the bits of the graph with every mask op a memory call, and predicted register counters."""
    graph = logical_graph(dtype)
    session = memory_session(graph, template, CROSSINGS[crossing])
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    stays = [n for n in notes if "stays" in n]
    assert stays and all(n.endswith("kept a memory call by the test") for n in stays), notes
    size = 1 if crossing == "logic-only" else np.dtype(dtype).itemsize
    store, load = MASK_MOVES[size]
    assert store in session.result.kernel
    assert (load in session.result.kernel) == (crossing != "where")  # the memory Where's run loads none
    memory = all_memory(dtype)
    inputs, cores = same_as_memory(session, memory, 47, 2)
    assert run_every_case(session, inputs, cores)


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize(("dtype", "ids_dtype"), [("float16", "int32"), ("float32", "int16")])
def test_a_run_making_masks_at_4_bytes_for_2_byte_values_stores_them(template, dtype, ids_dtype):
    """Where(ids != -1, y, zero) of ``dtype`` data by ``ids_dtype`` ids makes its masks at 4 bytes (a run of 2-
    and 4-byte values); the run's Gts mask, read by a memory LogicalNot, is stored at 4 bytes (StoreUnAlign),
    and the LogicalNot's bits are loaded by the next run at its own size: the bits of the graph with every
    mask op a memory call."""
    g = GraphBuilder(f"wide_store_{dtype}_{ids_dtype}")
    y = gather(g.data("x", ["a0", "a1"], dtype), 0, g.data("index", ["b0", "b1"], "int32"))
    ids = g.data("ids", ["b0", "b1"], ids_dtype)
    y = g.op("Where", g.op("Nes", ids, value=-1), y, g.data("zero", ["b0", "b1"], dtype))
    keep = g.op("LogicalNot", g.op("Gts", y, value=0.5))
    g.output(g.op("Where", keep, y, g.data("side", ["b0", "b1"], dtype)), "y")
    graph = g.build()
    session = memory_session(graph, template, {"LogicalNot"})
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert notes[0] == "3 op(s) Nes ('nes'), Where ('where'), Gts ('gts') in one VfChainRegApiCall", notes
    assert "StoreUnAlign(bits" in session.result.kernel
    memory = memory_session(graph, template, {"LogicalNot", "Nes", "Gts", "Where"})
    inputs, cores = same_as_memory(session, memory, 53, 3)
    assert run_every_case(session, inputs, cores)


EXP2_EDGES = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    3.0,
    127.0,
    127.5,
    128.0,
    -126.0,
    -126.5,
    -127.0,
    -149.0,
    -150.0,
    200.0,
    -200.0,
    0.5,
    -0.5,
    1e-8,
    float("inf"),
    float("-inf"),
    float("nan"),
]


@pytest.fixture(scope="module")
def exp2_sessions():
    made = {}

    def get(dtype: str):
        if dtype not in made:
            graph = chain_graph(rank=2, dim=0, dtype=dtype, post=("Exp2", "Abs"), name=f"vf_exp2_{dtype}")
            made[dtype] = (
                TwinSession(graph, AutofuserOptions(force_template="simd")),
                memory_session(graph, "simd", {"Exp2"}),
            )
        return made[dtype]

    return get


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_exp2_runs_in_registers_with_the_memory_paths_bits(exp2_sessions, dtype):
    """Exp2: the memory path's ten steps as register instructions (Cast FLOOR, Maxs / Mins, Cast back, Sub,
    Muls ln 2, Exp, Adds / Muls in int32 and a Mul by the int32 bits read as float): at the edges (the clamps,
    integers, infinities, NaN, -0) and at integers, where 2^x is exact, the same bits as the memory path."""
    session, memory = exp2_sessions(dtype)
    kernel = session.result.kernel
    assert "(AscendC::Reg::RegTensor<float>&)" in kernel and "(VecElementwiseRegApiCall)" not in kernel
    assert session.scheduled.cases[0].impl.meta["vector_chains"] == [
        "2 op(s) Exp2 ('exp2'), Abs ('abs') in one VfChainRegApiCall"
    ]
    assert "(VecElementwiseRegApiCall)" in memory.result.kernel
    np_dtype = np.float16 if dtype == "float16" else np.float32
    values = np.array(EXP2_EDGES + [float(v) for v in range(-20, 21)], dtype=np.float32)
    sizes = {"a0": 1, "a1": values.size, "b0": 2, "b1": values.size}
    arrays = {
        "x": values.reshape(1, -1).astype(np_dtype),
        "index": np.zeros((2, values.size), dtype=np.int32),
    }
    inputs = session.inputs(sizes, arrays=arrays)
    run = session.check(sizes, inputs=inputs)
    assert run.ok, run.describe()
    kept = memory.check(sizes, inputs=inputs)
    assert same_bits(run.twin.outputs["y"], kept.twin.outputs["y"])
    got = run.twin.outputs["y"][0].astype(np.float32)
    ints = values[len(EXP2_EDGES) :]
    with np.errstate(over="ignore"):
        want = np.exp2(ints).astype(np_dtype).astype(np.float32)
    assert np.array_equal(got[len(EXP2_EDGES) :], want)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    dtype=st.sampled_from(["float32", "float16"]),
    rows=st.integers(1, 4),
    width=st.integers(1, 150),
    scale=st.sampled_from([1.0, 8.0, 200.0]),
    seed=st.integers(0, 2**16),
)
def test_exp2_matches_the_memory_path_on_any_shape(exp2_sessions, dtype, rows, width, scale, seed):
    session, memory = exp2_sessions(dtype)
    sizes = {"a0": rows, "a1": width, "b0": rows + 1, "b1": width}
    rng = np.random.default_rng(seed)
    x = (rng.uniform(-1, 1, (rows, width)) * scale).astype(np.float16 if dtype == "float16" else np.float32)
    index = rng.integers(0, rows, (rows + 1, width)).astype(np.int32)
    inputs = session.inputs(sizes, arrays={"x": x, "index": index})
    run = session.check(sizes, inputs=inputs, core_num=int(rng.integers(1, 5)))
    assert run.ok, run.describe()
    kept = memory.check(sizes, inputs=inputs)
    assert same_bits(run.twin.outputs["y"], kept.twin.outputs["y"])


UNSIGNED_POST = ("Add(40000)", "Sub(7)", "Mul(3)", "Maximum(5)", "Minimum(60000)")


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("dtype", ["uint16", "uint32"])
def test_unsigned_tensor_scalar_ops_run_in_their_own_type(template, dtype):
    """uint16 / uint32 Adds / Subs / Muls (the memory path: on the signed view) and Maxs / Mins (Duplicate +
    Max / Min): the register Adds / Muls / Maxs / Mins in the unsigned type, wrapping as the memory path does
    -- the same bits at 0, the largest value and across the wrap."""
    graph = chain_graph(rank=2, dim=0, dtype=dtype, post=UNSIGNED_POST, name=f"vf_unsigned_{dtype}")
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    assert f"AscendC::Reg::Adds(r1, r0, static_cast<{dtype}_t>(40000), mask);" in kernel
    assert "(VecElementwiseRegApiCall)" not in kernel
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert notes == [
        "5 op(s) Adds ('adds'), Subs ('subs'), Muls ('muls'), Maxs ('maxs'), Mins ('mins') in one "
        "VfChainRegApiCall"
    ], notes
    memory = memory_session(graph, template, {"Adds", "Subs", "Muls", "Maxs", "Mins"})
    top = np.iinfo(dtype).max
    edges = np.array([0, 1, 2, 6, 7, 8, top, top - 1, top - 39999, 25535, 25536, 21845, 21846], dtype=dtype)
    sizes = {"a0": 2, "a1": edges.size, "b0": 3, "b1": edges.size}
    arrays = {
        "x": np.stack([edges, edges[::-1]]),
        "index": np.array([[0] * edges.size, [1] * edges.size] * 2)[:3],
    }
    inputs = session.inputs(sizes, arrays=arrays)
    run = session.check(sizes, inputs=inputs)
    assert run.ok, run.describe()
    assert same_bits(run.twin.outputs["y"], memory.check(sizes, inputs=inputs).twin.outputs["y"])
    same_as_memory(session, memory, 47, 2)


@pytest.mark.parametrize("template", ["simd", "sklike"])
def test_int8_neg_is_the_register_neg_in_int8(template):
    """int8 Neg (the memory path: Muls(-1) in int16, the low byte kept) is the register Neg on int8, 256
    lanes a step: the same wrap-around bits, -128 staying -128."""
    graph = chain_graph(rank=2, dim=0, dtype="int8", post=("Neg", "BitwiseXor(side)", "Neg"), name="vf_neg8")
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    assert "AscendC::Reg::Neg(r2, r0, mask);" in kernel and "UpdateMask<uint8_t>" in kernel
    assert "(VecElementwiseRegApiCall)" not in kernel
    memory = memory_session(graph, template, {"Neg"})
    edges = np.array([-128, -127, -1, 0, 1, 127, 5, -6], dtype=np.int8)
    sizes = {"a0": 1, "a1": edges.size, "b0": 2, "b1": edges.size}
    arrays = {"x": edges.reshape(1, -1), "index": np.zeros((2, edges.size), dtype=np.int32)}
    arrays["side"] = np.stack([edges, edges[::-1]])
    inputs = session.inputs(sizes, arrays=arrays)
    run = session.check(sizes, inputs=inputs)
    assert run.ok, run.describe()
    assert same_bits(run.twin.outputs["y"], memory.check(sizes, inputs=inputs).twin.outputs["y"])
    for run_seed, sizes, cores in random_runs(53, 2, 0, 2, max_elements=5000):
        run = session.check(sizes, seed=run_seed, core_num=cores)
        assert run.ok, run.describe()


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize(
    ("dtype", "post", "text"),
    [
        # reinterpretations: the register read as the other type, no instruction
        ("int32", ("Abs", "Cast(uint32)", "Add(7)"), "(AscendC::Reg::RegTensor<uint32_t>&)r1"),
        ("uint16", ("Add(3)", "Cast(int16)", "Abs"), "(AscendC::Reg::RegTensor<int16_t>&)r1"),
        # float16 / bfloat16 -> int32 through float: FloorToInt, Ceil2Int and the truncating Cast
        ("float16", ("Muls(2.5)", "FloorToInt"), "kAfRegCast_UNKNOWN_SAT_CAST_FLOOR"),
        ("bfloat16", ("Ceil2Int", "Abs"), "kAfRegCast_UNKNOWN_SAT_CAST_CEIL"),
        ("float16", ("Cast(int32)", "Add(1)"), "kAfRegCast_UNKNOWN_SAT_CAST_TRUNC"),
    ],
)
def test_cast_routes_with_views_and_half_to_int32_run_in_registers(template, dtype, post, text):
    """Casts whose route reinterprets integers (a register view) or rounds float16 / bfloat16 to int32 (Cast
    up, exact, then the rounding Cast): one vector function, the memory path's bits at the edges (the
    largest values, -1; for FloorToInt / Ceil2Int NaN, infinities and values past the int32 range, which
    they saturate) and on random shapes."""
    graph = chain_graph(rank=2, dim=0, dtype=dtype, post=post, name=f"vf_route_{dtype}_{len(post)}")
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    assert text in kernel and "(VecElementwiseRegApiCall)" not in kernel
    ops = {"Cast", "FloorToInt", "Ceil2Int"}
    memory = memory_session(graph, template, ops)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        edges = np.array([info.min, info.max, -1 if info.min else 1, 0, 1, info.max - 2], dtype=np.int64)
    else:
        edges = np.array([0.5, -0.5, 2.5, -2.5, 1e9, -1e9, 65504, np.inf, -np.inf, np.nan, -0.0, 3.75])
        if (
            "Cast(int32)" in post
        ):  # a float -> int Cast of a value past the int32 range is outside the contract
            edges = np.array([0.5, -0.5, 2.5, -2.5, 65504, -65504, -0.0, 3.75, 1e4, -1e4, 0.99, -0.99])
    np_dtype = {"bfloat16": np.float32}.get(dtype, dtype)
    x = edges.astype(np_dtype).reshape(1, -1)
    sizes = {"a0": 1, "a1": edges.size, "b0": 2, "b1": edges.size}
    inputs = session.inputs(sizes, arrays={"x": x, "index": np.zeros((2, edges.size), dtype=np.int32)})
    run = session.check(sizes, inputs=inputs)
    assert run.ok, run.describe()
    assert same_bits(run.twin.outputs["y"], memory.check(sizes, inputs=inputs).twin.outputs["y"])
    same_as_memory(session, memory, 59, 2)
