"""Elementwise runs as register vector functions (VfChainRegApiCall) in the SIMD and SK-like templates.

Each run of ops with a register form becomes one ``__simd_vf__`` function launched with ``asc_vf_call``;
the twin runs it in registers and must agree with the reference; ops without a register form stay
memory-based calls and the ImplGraph's notes (which ``afc explain`` prints) say why.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from af_v35_regbase.api_calls.indirect_load import IndirectLoadRegApiCall
from af_v35_regbase.api_calls.vf_chain import VfChainRegApiCall
from af_v35_regbase.testing import memory_session, run_every_case

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.builders import GraphBuilder, gather
from af_core.testing import chain_graph, random_runs, same_bits
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin

SIZES = {"a0": 37, "a1": 70, "b0": 29, "b1": 70}


def _graph():
    # input-pre: 3 ops, index-pre: 1 op, post: 3 ops; all float32 / int32 with register forms
    return chain_graph(
        rank=2,
        dim=0,
        pre=("Mul(0.5)", "Exp", "Add(side)"),
        index_pre=("Abs",),
        post=("Abs", "Sub(side)", "Relu"),
        name="vf_chains",
    )


@pytest.mark.parametrize("template", ["simd", "sklike"])
def test_chains_run_in_registers_like_the_reference(template):
    session = TwinSession(_graph(), AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    functions = set(re.findall(r"__simd_vf__ inline void (AfChainVf_[0-9a-f]+)\(", kernel))
    assert len(functions) >= 2, kernel
    for func in functions:
        assert f"asc_vf_call<{func}>(" in kernel
    run = session.check(SIZES, seed=3, core_num=4)
    assert run.ok, run.describe()
    twin = run.twin
    assert twin.counter("vf_calls") > 0
    assert twin.counter("reg_loads") > 0 and twin.counter("reg_stores") > 0
    # every op of the three chains is a register instruction: none is a memory-based vector call
    assert "(VecElementwiseRegApiCall)" not in kernel
    notes = [n for case in session.scheduled.cases for n in case.impl.meta.get("vector_chains", ())]
    assert "3 op(s) Muls ('muls'), Exp ('exp'), Add ('add') in one VfChainRegApiCall" in notes, notes
    assert "3 op(s) Abs ('abs_1'), Sub ('sub'), Relu ('relu') in one VfChainRegApiCall" in notes, notes


def test_one_function_per_run_loads_each_input_once_and_stores_only_what_is_read_later():
    scheduled = Autofuser(AutofuserOptions(force_template="simd")).schedule(_graph())
    case = scheduled.cases[0]
    chains = [n for n in case.impl.stages[0].nodes if n.op_type == "VectorChain"]
    assert len(chains) == 3  # input pre, index pre, post
    post = chains[-1]
    assert [s.op for s in post.attrs["steps"]] == ["Abs", "Sub", "Relu"]
    assert len(post.outputs) == 1  # the intermediate Abs and Sub values stay in registers
    fused = [n for n in case.impl.stages[0].nodes if n.fused_into == post.name]
    assert [n.op_type for n in fused] == ["Abs", "Sub", "Relu"] and all(n.api_call is None for n in fused)


#: a float16 chain with a Cast no register Cast step computes (int8 -> int32) in its middle
MIXED_POST = ("Sigmoid", "Mul(100.0)", "Cast(int8)", "Cast(int32)", "Abs", "Relu")


def test_a_chain_through_bytes_splits_into_runs_with_the_reason():
    """float16 -> int8 makes a byte by a 2 -> 1-byte Cast, which a run of 4-byte values cannot hold (the only
    byte such a run stores is a 4-byte integer's low byte): that Cast is a run of its own; int8 -> int32 then
    starts the next run, which loads the bytes into every fourth byte lane (DIST_UNPACK4_B8) and widens them
    in registers."""
    graph = chain_graph(rank=2, dim=0, dtype="float16", post=MIXED_POST, name="vf_mixed")
    session = TwinSession(graph, AutofuserOptions(force_template="simd"))
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    byte_run = (
        "starts a new run: Cast float16 -> int8 next to 4-byte values: the 1-byte values sit in every fourth "
        "byte lane, which only a widening Cast reads"
    )
    assert notes == [
        "2 op(s) Sigmoid ('sigmoid'), Muls ('muls') in one VfChainRegApiCall",
        f"Cast ('cast') {byte_run}",
        "1 op(s) Cast ('cast') in one VfChainRegApiCall",
        f"Cast ('cast_1') {byte_run}",
        "3 op(s) Cast ('cast_1'), Abs ('abs'), Relu ('relu') in one VfChainRegApiCall",
    ], notes
    assert "AscendC::Reg::LoadDist::DIST_UNPACK4_B8>" in session.result.kernel
    run = session.check(SIZES, seed=5, core_num=3)
    assert run.ok, run.describe()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_chains_compute_in_float_registers_like_the_memory_path(dtype):
    """Ops the memory path computes in float32 (promote, composite, casts) run in float registers: 64
    elements per step, the 2-byte tiles unpacked on load and packed on store, rounded after every op."""
    graph = chain_graph(
        rank=2,
        dim=0,
        dtype=dtype,
        pre=("Mul(0.5)", "Add(0.25)"),
        post=("Sigmoid", "Mul(3.0)", "Cast(float32)"),
    )
    session = TwinSession(graph, AutofuserOptions(force_template="simd"))
    kernel = session.result.kernel
    assert "LoadDist::DIST_UNPACK_B16" in kernel
    assert "(VecElementwiseRegApiCall)" not in kernel
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert [n.split(" (")[0] for n in notes] == ["2 op(s) Muls", "3 op(s) Sigmoid"], notes
    run = session.check(SIZES, seed=6, core_num=4)
    assert run.ok, run.describe()
    assert run.twin.counter("vf_calls") > 0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_2byte_direct_ops_without_a_register_form_in_their_dtype_run_in_float_registers(dtype):
    """Neg on bfloat16 (the register Muls takes no bfloat16) and a 2-byte Mul next to float32 values (one
    vector step holds 64 float lanes) compute in float32 registers and round once, as the memory path's
    2-byte calls do: the same bits."""
    graph = chain_graph(
        rank=2, dim=0, dtype=dtype, pre=("Neg", "Abs"), post=("Mul(side)", "Cast(float32)", "Exp")
    )
    session = TwinSession(graph, AutofuserOptions(force_template="simd"))
    kernel = session.result.kernel
    assert "(VecElementwiseRegApiCall)" not in kernel
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert notes == [
        "2 op(s) Neg ('neg'), Abs ('abs') in one VfChainRegApiCall",
        "3 op(s) Mul ('mul'), Cast ('cast'), Exp ('exp') in one VfChainRegApiCall",
    ], notes
    run = session.check(SIZES, seed=8, core_num=4)
    assert run.ok, run.describe()
    assert run.twin.counter("vf_calls") > 0


@pytest.mark.parametrize("template", ["simd", "sklike"])
def test_int64_max_and_min_run_in_64bit_registers(template, monkeypatch):
    """An int64 index clamped with Mins / Maxs: RegTensor<int64_t> (32 lanes a step), each as Duplicate +
    Min / Max like the 3510 MinsImpl / MaxsImpl, the same values as the memory path's calls. (The gather's
    offsets function is off: its computing instructions would join the count below.)"""
    monkeypatch.setattr(IndirectLoadRegApiCall, "register_offsets", False)
    graph = chain_graph(
        rank=2, dim=0, index_dtype="int64", index_pre=("Minimum(5)", "Maximum(0)"), name="vf_i64"
    )
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    assert "AscendC::Reg::RegTensor<int64_t>" in kernel and "UpdateMask<int64_t>" in kernel
    assert "(VecElementwiseRegApiCall)" not in kernel
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert notes == ["2 op(s) Mins ('mins'), Maxs ('maxs') in one VfChainRegApiCall"], notes
    run = session.check(SIZES, seed=9, core_num=4)
    assert run.ok, run.describe()
    # per 32-lane step: 1 load, Duplicate + 7 for Min, Duplicate + 7 for Max, 1 store; the float32 gather's
    # function adds 2 loads (indices, Gather) and 1 store per step and no computing instruction
    loads, stores = run.twin.counter("reg_loads"), run.twin.counter("reg_stores")
    chain_steps = 2 * stores - loads
    assert chain_steps > 0 and loads - stores > 0
    assert run.twin.counter("reg_compute") == 16 * chain_steps


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_floor_ceil_round_are_register_truncates(dtype):
    """Floor / Ceil / Round: the register Truncate with the memory path's RoundMode (in float32 registers
    next to the float32 values of a promoted Muls, exact either way)."""
    graph = chain_graph(rank=2, dim=0, dtype=dtype, pre=("Floor",), post=("Mul(3.7)", "Round", "Ceil"))
    session = TwinSession(graph, AutofuserOptions(force_template="simd"))
    kernel = session.result.kernel
    assert "AscendC::Reg::Truncate<" in kernel and "RoundMode::CAST_FLOOR" in kernel
    assert "(VecElementwiseRegApiCall)" not in kernel
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert [n.split(" (")[0] for n in notes] == ["1 op(s) Floor", "3 op(s) Muls"], notes
    run = session.check(SIZES, seed=10, core_num=4)
    assert run.ok, run.describe()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_reciprocal_and_rsqrt_are_float_divs_of_ones(dtype):
    """Reciprocal / Rsqrt have no register instruction: Duplicate(1) and Div (after Sqrt) in float32, the
    bits of the memory path's Reciprocal / Rsqrt on the twin."""
    graph = chain_graph(rank=2, dim=0, dtype=dtype, pre=("Abs", "Add(0.5)", "Rsqrt"), post=("Reciprocal",))
    session = TwinSession(graph, AutofuserOptions(force_template="simd"))
    kernel = session.result.kernel
    assert "AscendC::Reg::Div(" in kernel and "AscendC::Reg::Sqrt(" in kernel
    assert "(VecElementwiseRegApiCall)" not in kernel
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert [n.split(" (")[0] for n in notes] == ["3 op(s) Abs", "1 op(s) Reciprocal"], notes
    run = session.check(SIZES, seed=11, core_num=4)
    assert run.ok, run.describe()


def masked_graph(dtype: str, ids_dtype: str, reduce: bool = True):
    """A masked-mean-like post chain: Where(ids != -1, y, zero), then Where(y > 0.5, y, side) and
    Where(y < side, side, y) (a scalar Compares and a tensor Compare of gathered values), summed per row."""
    g = GraphBuilder(f"masked_{dtype}_{ids_dtype}")
    x = g.data("x", ["a0", "a1"], dtype)
    y = gather(x, 0, g.data("index", ["b0", "b1"], "int32"))
    ids = g.data("ids", ["b0", "b1"], ids_dtype)
    zero = g.data("zero", ["b0", "b1"], dtype)
    side = g.data("side", ["b0", "b1"], dtype)
    y = g.op("Where", g.op("Nes", ids, value=-1), y, zero)
    y = g.op("Where", g.op("Gts", y, value=0.5), y, side)
    y = g.op("Where", g.op("Lt", y, side), side, y)
    if reduce:
        y = g.reduce("Sum", y, [1])
    g.output(y, "y")
    return g.build()


MASKED_RUN = (
    "6 op(s) Nes ('nes'), Where ('where'), Gts ('gts'), Where ('where_1'), Lt ('lt'), Where ('where_2') "
    "in one VfChainRegApiCall"
)


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize(
    ("dtype", "ids_dtype"), [("float32", "int32"), ("float16", "int16"), ("bfloat16", "int16")]
)
def test_compare_and_where_run_in_registers_with_mask_registers(template, dtype, ids_dtype):
    """Compare / Compares into a MaskReg and Where as Reg::Select by it, inside one vector function: no
    bit-mask tile, no memory-based call, and the memory path's bits on the twin."""
    session = TwinSession(masked_graph(dtype, ids_dtype), AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    assert "AscendC::Reg::Compares<" in kernel and "AscendC::Reg::Compare<" in kernel
    # three Wheres, and the row sum's register reduce keeps the lanes past a tail by a Select
    assert kernel.count("AscendC::Reg::Select(") == 4
    assert "(VecElementwiseRegApiCall)" not in kernel
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    # the row sum (test_register_reduce.py): float32 takes it into the run (SIMD: b0 groups of b1 values per
    # tile row, loaded with LoadUnAlign as they may not start aligned), 2-byte reduces it alone
    reduce_notes = [n for n in notes if n.startswith(("Sum ('sum')", "the Sum ('sum')"))]
    notes = [n for n in notes if n not in reduce_notes]
    joined = MASKED_RUN.replace(" in one", " and the Sum ('sum') in one")
    if dtype == "float32":
        assert notes[0] == joined and not reduce_notes, notes
    else:
        assert notes[0] == MASKED_RUN, notes
        assert len(reduce_notes) == 2, reduce_notes
    assert ("AscendC::Reg::LoadUnAlign(" in kernel) == (template == "simd")
    # 2-byte sums are taken in float32: the Cast up cannot join the run of 2-byte masks (another note)
    assert all("Cast (" in n for n in notes[1:]) and len(notes) == (1 if dtype == "float32" else 4), notes
    chain = next(n for n in session.scheduled.cases[0].impl.stages[-1].nodes if n.op_type == "VectorChain")
    assert len(chain.outputs) == 1  # only the last Where's values leave the registers
    for seed in (12, 13):
        run = session.check(SIZES, seed=seed, core_num=4)
        assert run.ok, run.describe()
        assert run.twin.counter("vf_calls") > 0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_2byte_compares_with_a_scalar_the_dtype_cannot_hold(dtype):
    """Values next to 0.5 +- one 2-byte step and ids equal to the pad: the register Compares takes the
    scalar the memory path's Compares takes, so the twin agrees with the reference on every lane."""
    import numpy as np

    graph = masked_graph(dtype, "int16", reduce=False)
    session = TwinSession(graph, AutofuserOptions(force_template="simd"))
    sizes = {"a0": 2, "a1": 8, "b0": 2, "b1": 8}
    x = np.array(
        [[0.5, 0.49951171875, 0.50048828125, 0.498046875, 0.501953125, -0.0, float("nan"), 1.0]] * 2,
        dtype=np.float16 if dtype == "float16" else np.float32,
    )
    ids = np.array([[-1, 0, -1, 3, 4, -1, 6, 7], [0, -1, 2, -1, 4, 5, -1, 7]], dtype=np.int16)
    zero = np.zeros((2, 8), dtype=x.dtype)
    side = np.full((2, 8), 0.25, dtype=x.dtype)
    arrays = {"x": x, "index": np.array([[1] * 8, [0] * 8]), "ids": ids, "zero": zero, "side": side}
    run = session.check(sizes, inputs=session.inputs(sizes, arrays=arrays))
    assert run.ok, run.describe()
    assert "(VecElementwiseRegApiCall)" not in session.result.kernel


@pytest.mark.parametrize("template", ["simd", "sklike"])
def test_index_pre_wraps_negative_indices_in_registers(template):
    """Where(index < 0, index + n, index) on int32 indices: Compares, Adds and Select in one index-pre vector
    function, the reference's gather on random sizes with negative indices."""
    g = GraphBuilder("wrap_negative_vf")
    x = g.data("x", ["a0", 7], "float32")
    index = g.data("index", ["b0", "b1"], "int32")
    index = g.op("Where", g.op("Lts", index, value=0), g.op("Adds", index, value=7), index)
    g.output(g.op("Abs", gather(x, 1, index)), "y")
    session = TwinSession(g.build(), AutofuserOptions(force_template=template))
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert "3 op(s) Lts ('lts'), Adds ('adds'), Where ('where') in one VfChainRegApiCall" in notes, notes
    assert "AscendC::Reg::Compares<int32_t, AscendC::CMPMODE::LT>" in session.result.kernel
    for k, (a0, b0, b1) in enumerate([(5, 3, 11), (1, 1, 70), (8, 8, 129)]):
        run = session.check({"a0": a0, "b0": b0, "b1": b1}, seed=20 + k, core_num=3, negative_indices=True)
        assert run.ok, run.describe()
        assert (run.inputs.logical["index"] < 0).any()


@pytest.mark.parametrize("template", ["simd", "sklike"])
def test_masked_chains_match_the_reference_on_random_shapes(template):
    from af_core.testing import random_runs

    session = TwinSession(masked_graph("float32", "int32"), AutofuserOptions(force_template=template))
    for run_seed, sizes, cores in random_runs(23, 2, 0, 3, max_elements=5000):
        run = session.check(sizes, seed=run_seed, core_num=cores)
        assert run.ok, run.describe()


def test_a_comparison_read_by_a_logical_op_shares_its_run():
    """A Gts read by a Where and by LogicalNot (the register Not on mask registers): the comparison, the
    logical op and both Wheres are one run, no bool leaves the registers (the case where one must:
    test_a_mask_register_needs_one_element_size_in_the_run)."""
    g = GraphBuilder("mask_escapes")
    x = g.data("x", ["a0", "a1"], "float32")
    y = gather(x, 0, g.data("index", ["b0", "b1"], "int32"))
    side = g.data("side", ["b0", "b1"], "float32")
    gt = g.op("Gts", g.op("Abs", y), value=0.5)
    y = g.op("Where", gt, y, side)
    y = g.op("Where", g.op("LogicalNot", gt), g.op("Exp", y), y)
    g.output(y, "y")
    session = TwinSession(g.build(), AutofuserOptions(force_template="simd"))
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert notes == [
        "6 op(s) Abs ('abs'), Gts ('gts'), Where ('where'), LogicalNot ('logicalnot'), Exp ('exp'), Where "
        "('where_1') in one VfChainRegApiCall"
    ], notes
    assert "AscendC::Reg::Not(m" in session.result.kernel
    run = session.check(SIZES, seed=14, core_num=3)
    assert run.ok, run.describe()


#: 2-byte data -> the Cast up its comparisons take in a run of 2- and 4-byte values
WIDE_COMPARES = {
    "float16": "Cast<float, half, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
    "bfloat16": "Cast<float, bfloat16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
    "int16": "Cast<int32_t, int16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
}


def wide_mask_graph(dtype: str, ids_dtype: str):
    """Where(ids != -1, y, zero) and Where(y > 3, y, side) on gathered ``dtype`` values with ``ids_dtype``
    ids: one comparison of each element size, each read by a Where of the other size when they differ."""
    g = GraphBuilder(f"wide_masks_{dtype}_{ids_dtype}")
    y = gather(g.data("x", ["a0", "a1"], dtype), 0, g.data("index", ["b0", "b1"], "int32"))
    ids = g.data("ids", ["b0", "b1"], ids_dtype)
    y = g.op("Where", g.op("Nes", ids, value=-1), y, g.data("zero", ["b0", "b1"], dtype))
    y = g.op("Where", g.op("Gts", y, value=3.0), y, g.data("side", ["b0", "b1"], dtype))
    g.output(y, "y")
    return g.build()


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize(
    ("dtype", "ids_dtype"),
    [("float16", "int32"), ("bfloat16", "int32"), ("float32", "int16"), ("int16", "int32")],
)
def test_a_run_of_2_and_4_byte_values_makes_every_mask_at_4_bytes(template, dtype, ids_dtype):
    """2-byte data masked by 4-byte ids (or the reverse): a mask register holds one element size, so in the
    run's 64-element step a comparison of 2-byte values compares them widened exactly to 4 bytes, and a Where
    of 2-byte values selects their bits as int16 widened to int32 and narrowed back -- both comparisons and
    Wheres in one function, no memory call. The memory path's bits (NaN payloads, -0, ties at the scalar),
    the reference on random shapes and the predicted register counters."""
    graph = wide_mask_graph(dtype, ids_dtype)
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert notes == [
        "4 op(s) Nes ('nes'), Where ('where'), Gts ('gts'), Where ('where_1') in one VfChainRegApiCall"
    ], notes
    body = session.result.kernel.split("#endif  // AF_GATHER_H")[-1]
    narrow = dtype if dtype != "float32" else ids_dtype
    assert WIDE_COMPARES[narrow] in body, body
    if dtype != "float32":  # the Wheres select 2-byte bits in int32 lanes
        assert "Cast<int16_t, int32_t, kAfRegCast_ZERO_NO_SAT_UNKNOWN>" in body
    assert "(VecElementwiseRegApiCall)" not in session.result.kernel
    memory = memory_session(graph, template, {"Nes", "Gts", "Where"})
    assert "AscendC::Reg::Select(" not in memory.result.kernel.split("#endif  // AF_GATHER_H")[-1]
    n = 16
    if dtype == "int16":
        x = np.array([0, 1, 2, 3, 4, -5, 32767, -32768, 7, 3, 4, 2, 9, -1, 5, 6], dtype=np.int16)
    else:
        bits = [0x7E00, 0x7C01, 0xFE00, 0x8000, 0x4200, 0x4201, 0x41FF, 0x7C00, 0xFC00, 0x4400, 0x3C00]
        halves = np.array(bits + [0x4248, 0x4300, 0x0001, 0x8001, 0x4000], dtype=np.uint16).view(np.float16)
        x = halves if dtype == "float16" else halves.astype(np.float32)  # bfloat16: the session rounds
    ids = np.array([[-1, 0] * 8, [3, -1] * 8], dtype=ids_dtype)
    fill = "float32" if dtype == "bfloat16" else dtype
    arrays = {
        "x": x.reshape(1, n),
        "index": np.zeros((2, n), dtype=np.int32),
        "ids": ids,
        "zero": np.full((2, n), -2, dtype=fill),
        "side": np.full((2, n), 8, dtype=fill),
    }
    with np.errstate(invalid="ignore"):  # the NaNs of x
        inputs = session.inputs({"a0": 1, "a1": n, "b0": 2, "b1": n}, arrays=arrays)
    got = session.run(inputs).outputs["y"]
    assert same_bits(got, memory.run(inputs).outputs["y"])
    for seed, sizes, cores in random_runs(16, 2, 0, 3):
        run_every_case(session, session.inputs(sizes, seed=seed), cores)


@pytest.mark.parametrize(
    ("dtype", "ids_dtype"), [("float32", "uint16"), ("uint16", "int32"), ("uint16", "float32")]
)
def test_uint16_masks_next_to_4_byte_values(dtype, ids_dtype):
    """uint16 ids compared widened to uint32, uint16 data selected as int16 bits widened to int32: one vector
    function, the memory path's bits and the reference on random shapes."""
    g = GraphBuilder(f"wide_masks_u16_{dtype}_{ids_dtype}")
    y = gather(g.data("x", ["a0", "a1"], dtype), 0, g.data("index", ["b0", "b1"], "int32"))
    ids = g.data("ids", ["b0", "b1"], ids_dtype)
    y = g.op("Where", g.op("Nes", ids, value=7), y, g.data("zero", ["b0", "b1"], dtype))
    y = g.op("Where", g.op("Gts", y, value=3.0), y, g.data("side", ["b0", "b1"], dtype))
    g.output(y, "y")
    graph = g.build()
    session = TwinSession(graph, AutofuserOptions(force_template="simd"))
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert notes == [
        "4 op(s) Nes ('nes'), Where ('where'), Gts ('gts'), Where ('where_1') in one VfChainRegApiCall"
    ], notes
    body = session.result.kernel.split("#endif  // AF_GATHER_H")[-1]
    assert "Cast<uint32_t, uint16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>" in body, body
    memory = memory_session(graph, "simd", {"Nes", "Gts", "Where"})
    for seed, sizes, cores in random_runs(17, 2, 0, 2):
        run = session.check(sizes, seed=seed, core_num=cores)
        assert run.ok, (sizes, run.describe())
        kept = memory.run(run.inputs, core_num=cores).outputs["y"]
        assert same_bits(run.twin.outputs["y"], kept), sizes


def test_masks_next_to_bytes_still_take_one_element_size():
    """Bytes next to 4-byte values sit in every fourth byte lane, where no mask of 4-byte elements reaches
    them: a Where of int8 values cannot share a run with the int32 comparison making its mask; a float16 one
    can."""
    assert (
        VfChainRegApiCall.run_rejection(
            [("Nes", ("int32",), "bool"), ("Where", ("bool", "float16", "float16"), "float16")]
        )
        is None
    )
    assert VfChainRegApiCall.run_rejection(
        [("Nes", ("int32",), "bool"), ("Where", ("bool", "int8", "int8"), "int8")]
    ) == (
        "Nes makes or reads a mask register, which holds one element size; the run holds element sizes [1, 4]"
    )
    # mask ops all of one size next to values of the other keep masks of their size in a run of their own
    assert VfChainRegApiCall.run_rejection(
        [
            ("Nes", ("int16",), "bool"),
            ("Where", ("bool", "int16", "int16"), "int16"),
            ("Cast", ("int16",), "int32"),
        ]
    ) == (
        "Nes makes or reads a mask register, which holds one element size; the run holds element sizes [2, 4] "
        "(the mask ops are of one element size)"
    )


def test_kernels_are_identical_whatever_the_hash_seed():
    script = (
        "from af_core.autofuser import Autofuser, AutofuserOptions\n"
        "from af_core.testing import chain_graph\n"
        "g = chain_graph(rank=2, dim=0, pre=('Mul(0.5)', 'Exp', 'Add(side)'), index_pre=('Abs',),"
        " post=('Abs', 'Sub(side)', 'Relu'), name='vf_chains')\n"
        "f = Autofuser(AutofuserOptions())\n"
        "print(f.generate(f.schedule(g)).kernel)\n"
        "from test_register_chains import masked_graph\n"
        "print(f.generate(f.schedule(masked_graph('float16', 'int16'))).kernel)\n"
    )
    outs = []
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.append(
            subprocess.run(
                [sys.executable, "-c", script],
                env=env,
                capture_output=True,
                text=True,
                cwd=os.path.dirname(__file__),
            ).stdout
        )
    assert outs[0] and outs[0] == outs[1]
    assert "asc_vf_call<" in outs[0]
    assert outs[0].count("__simd_vf__") >= 2
    assert "AscendC::Reg::Compares<half, AscendC::CMPMODE::GT>" in outs[0]


def test_corpus_coverage_the_readme_states():
    """README: on the workload corpus every elementwise op of the SIMD and SK-like cases is in one of 40
    register runs; of the 30 reduces 11 end the run before them in its function (2 of them over SIMD groups
    that may not start aligned, loaded with LoadUnAlign), 19 run alone in one (9 after a run of unpacked
    2-byte values) and none stays a reduce call."""
    from collections import Counter

    from af_core.workloads import load_workloads

    fuser = Autofuser(AutofuserOptions())
    fused = joined = alone = 0
    others: Counter[str] = Counter()
    for workload in load_workloads():
        for case in fuser.schedule(workload.graph).cases:
            if case.template not in ("simd", "sklike"):
                continue
            for note in case.impl.meta.get("vector_chains", ()):
                if " alone in one VfChainRegApiCall" in note:
                    alone += 1
                elif " in one VfChainRegApiCall" in note:
                    fused += 1
                    joined += " and the " in note
                else:
                    others[note.split(": ", 1)[1].split(":")[0]] += 1
    assert (fused, joined, alone) == (40, 11, 19)
    assert others == {"the run holds element sizes [2, 4]": 9}, others


def test_explain_lists_the_register_runs_and_the_memory_calls():
    from af_core.explain import explain

    # the Cast from int64 to float32 reads the int64 tile as a register pair, which the run making that int64
    # as two int32 registers does not have: it starts the next run (both in registers)
    post = ("Abs", "Relu", "Cast(int64)", "Cast(float32)")
    graph = chain_graph(rank=2, dim=0, dtype="float32", post=post, name="vf_cast64")
    scheduled = Autofuser(AutofuserOptions(force_template="simd")).schedule(graph)
    report = explain(scheduled, SIZES)
    notes = [note for _key, template, note in report.vector_chains if template == "simd"]
    assert "3 op(s) Abs ('abs'), Relu ('relu'), Cast ('cast') in one VfChainRegApiCall" in notes
    assert (
        "Cast ('cast_1') starts a new run: a Cast from int64 to a float reads the int64 tile as a RegTraitNumTwo "
        "register; a Cast to int64 in the same run makes its value as two int32 registers, which no register "
        "pair holds"
    ) in notes
    assert "1 op(s) Cast ('cast_1') in one VfChainRegApiCall" in notes
    assert not [note for note in notes if "stays a single vector call" in note], notes
    assert "Elementwise chains:" in report.markdown()


def test_explain_lists_the_masks_of_a_run_of_2_and_4_byte_values():
    """float16 data masked by int32 ids: explain lists the comparisons and Wheres in one function (no memory
    call), and why the row sum does not end it."""
    from af_core.explain import explain

    scheduled = Autofuser(AutofuserOptions(force_template="simd")).schedule(masked_graph("float16", "int32"))
    report = explain(scheduled, SIZES)
    notes = [note for _key, template, note in report.vector_chains if template == "simd"]
    assert MASKED_RUN.replace(" in one", ", Cast ('sum_in') in one").replace("6 op(s)", "7 op(s)") in notes
    assert not [note for note in notes if "stays a single vector call" in note], notes
    assert any(n.startswith("Sum ('sum') does not end the run before it") for n in notes), notes
    assert "Elementwise chains:" in report.markdown()


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("dtype", ["int32", "int16", "uint8"])
def test_bitwise_ops_are_register_and_or_xor_not(template, dtype):
    """BitwiseAnd / Or / Xor / Not join the run as the register And / Or / Xor / Not in the tile's own
    type (the memory path computes them on the int16 view of the same bytes): one function, no memory call,
    twin == reference."""
    graph = chain_graph(
        rank=2,
        dim=0,
        dtype=dtype,
        post=("BitwiseAnd(side)", "BitwiseNot", "BitwiseXor(side)", "BitwiseOr(side)"),
        name=f"vf_bits_{dtype}",
    )
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    kernel = session.result.kernel
    for api in ("And", "Not", "Xor", "Or"):
        assert f"AscendC::Reg::{api}(" in kernel, api
    assert "(VecElementwiseRegApiCall)" not in kernel
    notes = [n for case in session.scheduled.cases for n in case.impl.meta.get("vector_chains", ())]
    assert any(n.startswith("4 op(s) BitwiseAnd ('bitwiseand')") for n in notes), notes
    for seed in (21, 22):
        run = session.check(SIZES, seed=seed, core_num=3)
        assert run.ok, run.describe()
