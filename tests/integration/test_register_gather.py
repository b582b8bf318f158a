"""The tile gather of the SIMD and SK-like templates as a register vector function (Reg::Gather).

2- and 4-byte data move with the register Gather inside one ``__simd_vf__`` function per data dtype; 1-byte
data keep the memory-based ``AscendC::Gather`` and the ImplGraph's notes (printed by ``afc explain``) say
why. Either way the twin must agree with the reference across data and index dtypes, negative indices,
out-of-range indices with the bound check (the zero slot), the three offset paths (whole index tile,
broadcast suffix, scalar) and tails; and the counters the case predicts must still match the twin's.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from af_v35_regbase.api_calls.indirect_load import IndirectLoadRegApiCall, register_gather_rejection
from hypothesis import given, settings
from hypothesis import strategies as st

from af_core import dtypes as dt
from af_core.autofuser import AutofuserOptions
from af_core.builders import GraphBuilder, embedding
from af_core.schedule.cost import twin_counters
from af_core.testing import chain_graph, gather_sizes
from af_core.tiling.solve import CaseRef, solve
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin

REGISTER = ("float32", "int32", "uint32", "float16", "bfloat16", "int16", "uint16")
MEMORY = ("int8", "uint8")


def _session(template: str, **kw) -> TwinSession:
    return TwinSession(chain_graph(**kw), AutofuserOptions(force_template=template))


def _gather_form(kernel: str) -> str:
    """``AfGatherVf_<dtype>`` when the data move by the register Gather (in the gather function, or in the
    offsets function that gathers 4-byte data itself, ``AfGatherFusedVf_<dtype>_...``), else "memory"."""
    functions = re.findall(r"asc_vf_call<(AfGatherVf_\w+)>\(", kernel)
    functions += [f"AfGatherVf_{d}" for d in re.findall(r"asc_vf_call<AfGatherFusedVf_([a-z0-9]+)_", kernel)]
    memory = "AscendC::Gather(" in kernel
    assert bool(functions) != memory, kernel
    return functions[0] if functions else "memory"


def _check(session: TwinSession, sizes, seed: int, cores: int, **kw):
    run = session.check(sizes, seed=seed, core_num=cores, **kw)
    assert run.ok, f"{sizes}: {run.describe()}"
    return run


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("dtype", [*REGISTER, *MEMORY])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_twin_equals_reference_in_the_form_the_dtype_has(template, dtype, index_dtype):
    s = _session(template, rank=3, dim=1, dtype=dtype, index_dtype=index_dtype)
    form = _gather_form(s.result.kernel)
    if dtype in REGISTER:
        assert form == f"AfGatherVf_{dtype}"
    else:
        assert form == "memory"
    rng = np.random.default_rng(sum(map(ord, template + dtype + index_dtype)))
    for k, cores in enumerate((1, 3, 8)):
        _check(s, gather_sizes(rng, 3, 1), k, cores)


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("negative,bound", [(True, False), (False, True), (True, True)])
def test_negative_and_out_of_range_indices(template, dtype, negative, bound):
    s = _session(
        template,
        rank=2,
        dim=1,
        dtype=dtype,
        index_dtype="int64",
        need_check_negative=negative,
        need_check_bound=bound,
    )
    assert _gather_form(s.result.kernel) == f"AfGatherVf_{dtype}"
    rng = np.random.default_rng(5)
    for k, cores in enumerate((2, 5)):
        run = _check(
            s,
            gather_sizes(rng, 2, 1),
            k,
            cores,
            negative_indices=negative,
            out_of_range=0.3 if bound else 0,
        )
        assert run.twin.counter("vf_calls") > 0


@pytest.mark.parametrize("width", [16, 5])
def test_broadcast_suffix_and_scalar_offsets_with_the_zero_slot(width):
    g = GraphBuilder(f"emb_reg{width}")
    w = g.data("w", ["V", "D"], "float16")
    i = g.data("ids", ["b0", "b1"], "int32")
    g.output(embedding(w, i, need_check_bound=True), "y")
    s = TwinSession(g.build(), AutofuserOptions(force_template="simd"))
    assert _gather_form(s.result.kernel) == "AfGatherVf_float16"
    run = _check(s, {"V": 50, "D": width, "b0": 3, "b1": 4}, 2, 3, out_of_range=0.2)
    assert run.twin.counter("gather_elements") > 0


@pytest.mark.parametrize("template", ["simd", "sklike"])
def test_explain_notes_name_the_gather_form(template):
    reg = _session(template, rank=2, dim=1, dtype="float16")
    mem = _session(template, rank=2, dim=1, dtype="int8")
    reg_notes = [n for c in reg.scheduled.cases for n in c.impl.meta.get("gather_forms", ())]
    mem_notes = [n for c in mem.scheduled.cases for n in c.impl.meta.get("gather_forms", ())]
    # the offsets first (full index: in registers), then how the data move
    offsets = "IndirectLoad ('indirect_load'): offsets: in registers; "
    assert f"{offsets}register Gather in a vector function (64 elements per step)" in reg_notes, reg_notes
    assert any(
        n.startswith(f"{offsets}memory-based Gather: int8 data: the register Gather widens")
        for n in mem_notes
    ), mem_notes


def test_explain_prints_the_gather_form_of_every_case():
    from af_core.autofuser import Autofuser
    from af_core.explain import explain

    sizes = {"a0": 5, "a1": 9, "b0": 5, "b1": 7}
    for dtype, text in (("float32", "register Gather"), ("uint8", "memory-based Gather: uint8 data")):
        graph = chain_graph(rank=2, dim=1, dtype=dtype, name=f"explain_{dtype}")
        scheduled = Autofuser(AutofuserOptions(force_template="simd")).schedule(graph)
        report = explain(scheduled, sizes)
        assert {t for _k, t, _n in report.gather_forms} == {"simd"}
        assert all(text in note for _k, _t, note in report.gather_forms), report.gather_forms
        assert "Gather forms:" in report.markdown()


def test_rejection_follows_the_element_size():
    assert register_gather_rejection(dt.get("float32")) is None
    assert register_gather_rejection(dt.get("bfloat16")) is None
    assert "widens each byte" in register_gather_rejection(dt.get("uint8"))
    assert "no register Gather form" in register_gather_rejection(dt.get("int64"))


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_register_and_memory_gather_give_the_same_bits_and_api_calls(template, dtype, monkeypatch):
    """The register form replaces one memory-based call by one launch: same outputs, the same API calls
    counted by the twin, and the same prediction. 4-byte data are gathered by the offsets function itself
    (both in registers): one launch fewer per tile than the register offsets and the memory Gather."""
    sizes = {"a0": 7, "a1": 33, "a2": 19, "b0": 7, "b1": 21, "b2": 19}
    runs = {}
    for register in (True, False):
        monkeypatch.setattr(IndirectLoadRegApiCall, "register_gather", register)
        s = _session(template, rank=3, dim=1, dtype=dtype, need_check_bound=True)
        assert (_gather_form(s.result.kernel) != "memory") == register
        inputs = s.inputs(sizes, seed=4, out_of_range=0.2)
        sch = s.scheduled
        refs = [CaseRef.of(c) for c in sch.cases]
        evs = solve(refs, sch.size_names, inputs.sizes, 6, sch.platform.ub_size, sch.guards).evaluations
        measured = {}
        for case, ev in zip(sch.cases, evs):
            if not ev.fits:
                continue
            run = s.check(inputs=inputs, core_num=6, tiling_key=case.tiling_key)
            assert run.ok, run.describe()
            counted = twin_counters(run.twin.counters)
            measured[case.label] = (run.twin, counted, ev.resources["api_calls"])
        assert measured
        runs[register] = measured
    assert runs[True].keys() == runs[False].keys()
    for label, (twin, counted, predicted) in runs[True].items():
        mem_twin, mem_counted, mem_predicted = runs[False][label]
        for name, value in twin.outputs.items():
            np.testing.assert_array_equal(value, mem_twin.outputs[name])
        assert (predicted, mem_predicted) == (counted["api_calls"], mem_counted["api_calls"])
        if dt.get(dtype).itemsize == 4:  # fused (``IndirectLoadRegApiCall.fused`` with both forms on)
            assert counted["api_calls"] < mem_counted["api_calls"]
            assert twin.counter("vf_calls") == mem_twin.counter("vf_calls")  # one launch a tile in both
        else:
            assert counted["api_calls"] == mem_counted["api_calls"]
            assert twin.counter("vf_calls") > mem_twin.counter("vf_calls")
        assert twin.counter("vector_calls") < mem_twin.counter("vector_calls")


@settings(max_examples=10, deadline=None)
@given(
    template=st.sampled_from(["simd", "sklike"]),
    dtype=st.sampled_from(["float32", "int32", "float16", "bfloat16", "int8"]),
    index_dtype=st.sampled_from(["int32", "int64"]),
    rank_dim=st.sampled_from([(1, 0), (2, 0), (2, 1), (3, 1), (3, 2), (4, 2)]),
    bound=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_any_shape_gathers_like_the_reference(template, dtype, index_dtype, rank_dim, bound, seed):
    rank, dim = rank_dim
    s = _session(
        template,
        rank=rank,
        dim=dim,
        dtype=dtype,
        index_dtype=index_dtype,
        need_check_negative=True,
        need_check_bound=bound,
    )
    rng = np.random.default_rng(seed)
    _check(
        s,
        gather_sizes(rng, rank, dim),
        seed,
        int(rng.integers(1, 9)),
        negative_indices=True,
        out_of_range=0.2 if bound else 0,
    )


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("full", [True, False])
def test_4_byte_data_are_gathered_by_the_offsets_function(template, full, monkeypatch):
    """4-byte data: one function computes the offsets and gathers (the offsets never leave the registers),
    so no offsets tile is allocated and more rows fit a tile than with the offsets stored; 2- and 1-byte
    data keep the offsets tile (the 2-byte Gather reads the offsets as uint16 lanes, 1-byte data take the
    memory Gather)."""

    def graph(dtype: str):
        if full:
            return chain_graph(rank=2, dim=1, dtype=dtype, need_check_bound=True)
        g = GraphBuilder("emb")
        g.output(embedding(g.data("w", ["V", "D"], dtype), g.data("ids", ["b0", "b1"], "int32")), "y")
        return g.build()

    sizes = {"a0": 64, "a1": 8, "b0": 64, "b1": 1000} if full else {"V": 8, "D": 1000, "b0": 64, "b1": 4}

    def tile_rows(s: TwinSession) -> int:
        sch = s.scheduled
        ev = solve([CaseRef.of(sch.cases[0])], sch.size_names, sizes, 4, sch.platform.ub_size, sch.guards)
        fields = ev.evaluations[0].fields
        return fields[next(k for k in fields if k.endswith("tile_max"))]

    rows = {}
    for dtype in ("float32", "int32", "float16", "int8"):
        s = TwinSession(graph(dtype), AutofuserOptions(force_template=template))
        kernel = s.result.kernel
        buffers = {b.name for st in s.scheduled.cases[0].impl.stages for b in st.buffers}
        fused = re.findall(r"asc_vf_call<(AfGatherFusedVf_\w+)>\(", kernel)
        if dtype in ("float32", "int32"):
            assert fused and fused[0].startswith(f"AfGatherFusedVf_{dtype}_{'full' if full else 'compact'}")
            assert "indirect_load_offsets" not in buffers and "AfGatherVf_" not in kernel
            rows[dtype] = tile_rows(s)
        else:
            assert not fused and "indirect_load_offsets" in buffers
    monkeypatch.setattr(IndirectLoadRegApiCall, "fused", classmethod(lambda cls, data: False))
    stored = TwinSession(graph("float32"), AutofuserOptions(force_template=template))
    assert "AfGatherFusedVf_" not in stored.result.kernel
    assert rows["float32"] > tile_rows(stored), (rows, tile_rows(stored))
