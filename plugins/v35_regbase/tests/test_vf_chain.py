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

import pytest

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.testing import chain_graph
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
    assert [s["op"] for s in post.attrs["steps"]] == ["Abs", "Sub", "Relu"]
    assert len(post.outputs) == 1  # the intermediate Abs and Sub values stay in registers
    fused = [n for n in case.impl.stages[0].nodes if n.fused_into == post.name]
    assert [n.op_type for n in fused] == ["Abs", "Sub", "Relu"] and all(n.api_call is None for n in fused)


def test_ops_without_a_register_form_stay_memory_calls_with_the_reason():
    graph = chain_graph(
        rank=2, dim=0, dtype="float16", post=("Sigmoid", "Exp2", "Abs", "Relu"), name="vf_mixed"
    )
    session = TwinSession(graph, AutofuserOptions(force_template="simd"))
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert notes == [
        "1 op(s) Sigmoid ('sigmoid') in one VfChainRegApiCall",
        "Exp2 ('exp2') stays a single vector call: Exp2 takes a composite memory form with no register form "
        "here",
        "2 op(s) Abs ('abs'), Relu ('relu') in one VfChainRegApiCall",
    ], notes
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
def test_int64_max_and_min_run_in_64bit_registers(template):
    """An int64 index clamped with Mins / Maxs: RegTensor<int64_t> (32 lanes a step), each as Duplicate +
    Min / Max like the 3510 MinsImpl / MaxsImpl, the same values as the memory path's calls."""
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
    # per 32-lane step: 1 load, Duplicate + 7 for Min, Duplicate + 7 for Max, 1 store
    assert run.twin.counter("reg_compute") == 16 * run.twin.counter("reg_stores")


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


def test_kernels_are_identical_whatever_the_hash_seed():
    script = (
        "from af_core.autofuser import Autofuser, AutofuserOptions\n"
        "from af_core.testing import chain_graph\n"
        "g = chain_graph(rank=2, dim=0, pre=('Mul(0.5)', 'Exp', 'Add(side)'), index_pre=('Abs',),"
        " post=('Abs', 'Sub(side)', 'Relu'), name='vf_chains')\n"
        "f = Autofuser(AutofuserOptions())\n"
        "print(f.generate(f.schedule(g)).kernel)\n"
    )
    outs = []
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outs.append(
            subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True).stdout
        )
    assert outs[0] and outs[0] == outs[1]
    assert "asc_vf_call<" in outs[0]
    assert outs[0].count("__simd_vf__") >= 2


def test_corpus_coverage_the_readme_states():
    """README: on the workload corpus every elementwise op of the SIMD and SK-like cases is in one of 40
    register runs."""
    from collections import Counter

    from af_core.workloads import load_workloads

    fuser = Autofuser(AutofuserOptions())
    fused = 0
    others: Counter[str] = Counter()
    for workload in load_workloads():
        for case in fuser.schedule(workload.graph).cases:
            if case.template not in ("simd", "sklike"):
                continue
            for note in case.impl.meta.get("vector_chains", ()):
                if " in one VfChainRegApiCall" in note:
                    fused += 1
                else:
                    others[note.split(": ", 1)[1]] += 1
    assert fused == 40
    assert others == {}


def test_explain_lists_the_register_runs_and_the_memory_calls():
    from af_core.explain import explain

    graph = chain_graph(
        rank=2, dim=0, dtype="float16", post=("Sigmoid", "Exp2", "Abs", "Relu"), name="vf_mixed"
    )
    scheduled = Autofuser(AutofuserOptions(force_template="simd")).schedule(graph)
    report = explain(scheduled, SIZES)
    notes = [(template, note) for _key, template, note in report.vector_chains]
    assert ("simd", "2 op(s) Abs ('abs'), Relu ('relu') in one VfChainRegApiCall") in notes
    assert any(
        t == "simd" and note.startswith("Exp2 ('exp2') stays a single vector call") for t, note in notes
    )
    assert "Elementwise chains:" in report.markdown()
