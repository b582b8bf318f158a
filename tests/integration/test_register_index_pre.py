"""The gather's index pre-chain (its offsets from a full index tile) as a register vector function.

The SIMD and SK-like tile gathers compute the offsets of a full index tile in one ``__simd_vf__`` function
(``AfGatherIndexVf`` with ``_neg`` / ``_bound`` for the need_check_negative / need_check_bound variants,
chosen when the kernel is generated) instead of the memory-based ``AfGatherOffsetsVector``. Differential:
the kernels with the register offsets and with the memory ones give the same output bits; both agree with
the reference; the API calls every case predicts are the twin's exactly in both forms; without the bound
check an out-of-range index is still reported by the twin.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from af_v35_regbase.api_calls.indirect_load import IndirectLoadRegApiCall, index_vf_name
from af_v35_regbase.testing import run_every_case
from hypothesis import given, settings
from hypothesis import strategies as st

from af_core import dtypes as dt
from af_core.autofuser import AutofuserOptions
from af_core.builders import GraphBuilder, embedding, expand_index, gather, index_select
from af_core.testing import chain_graph, gather_sizes
from af_core.tiling.solve import CaseRef, solve
from af_core.twin import TwinSanitizerError, TwinSession

pytestmark = pytest.mark.twin
CORES = 5


def _session(template: str, **kw) -> TwinSession:
    return TwinSession(chain_graph(**kw), AutofuserOptions(force_template=template))


def _offsets_forms(kernel: str) -> set[str]:
    """The offsets functions the kernel launches, by their variant's name (``index_vf_name``), whether they
    store the offsets or gather the data themselves (``AfGatherFusedVf_<data>_<full|compact>...``)."""
    found = set(re.findall(r"asc_vf_call<(AfGather(?:Index|Compact)Vf\w*)>\(", kernel))
    for index, rest in re.findall(r"asc_vf_call<AfGatherFusedVf_[a-z0-9]+_(full|compact)(\w*)>\(", kernel):
        found.add(("AfGatherCompactVf" if index == "compact" else "AfGatherIndexVf") + rest)
    return found


#: Compact index layouts (the index broadcast over some row axes): embedding (one value per row of D),
#: index_select on a middle axis, and a gather whose 3-D index is expanded over a trailing axis (two index
#: axes per row: the memory form's scalar path).
COMPACT_KINDS = ("embedding", "index_select", "expanded")


def _compact_graph(kind: str, dtype: str = "float32", index_dtype: str = "int32", **checks):
    g = GraphBuilder(f"compact_{kind}")
    if kind == "embedding":
        y = embedding(g.data("w", ["V", "D"], dtype), g.data("ids", ["b0", "b1"], index_dtype), **checks)
    elif kind == "index_select":
        y = index_select(g.data("x", ["a0", "V", "D"], dtype), 1, g.data("ids", ["n"], index_dtype), **checks)
    else:
        x = g.data("x", ["b0", "V", "b2", "D"], dtype)
        y = gather(x, 1, expand_index(g.data("ids", ["b0", "b1", "b2"], index_dtype), ["D"]), **checks)
    g.output(y, "y")
    return g.build()


def _compact_sizes(kind: str, rng: np.random.Generator) -> dict[str, int]:
    n = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    return {
        "V": n(1, 40),
        "D": n(1, 70),
        "b0": n(1, 9),
        "b1": n(1, 12),
        "b2": n(1, 5),
        "a0": n(1, 9),
        "n": n(1, 30),
    }


def _runs(session: TwinSession, sizes, **kw) -> dict[str, tuple]:
    """Every fitting case at ``sizes``: (twin run, measured counters, predicted api_calls); each case's
    register counters are the twin's exactly."""
    cases = run_every_case(session, session.inputs(sizes, seed=4, **kw), CORES)
    return {c.label: (c.run.twin, c.counted, c.predicted["api_calls"]) for c in cases}


def _check_random(s: TwinSession, sizes, rng, seed: int, *, negative: bool, bound: bool) -> None:
    """One run of ``s`` at ``sizes`` on a random core count, with negative indices (``negative``) and 20 %
    out of range (``bound``), checked against the reference."""
    run = s.check(
        sizes,
        seed=seed,
        core_num=int(rng.integers(1, 9)),
        negative_indices=negative,
        out_of_range=0.2 if bound else 0,
    )
    assert run.ok, run.describe()


def _both_forms(monkeypatch, make_session, sizes) -> list[tuple]:
    """Every fitting case at ``sizes`` with the register offsets and with the memory ones (``make_session()``
    builds the session under each), negative and out-of-range indices: both forms give the same output bits
    and each predicts its API calls exactly. Returns (register twin, memory twin) per case."""
    runs = {}
    for register in (True, False):
        monkeypatch.setattr(IndirectLoadRegApiCall, "register_offsets", register)
        s = make_session()
        assert bool(_offsets_forms(s.result.kernel)) == register
        runs[register] = _runs(s, sizes, negative_indices=True, out_of_range=0.2)
    assert runs[True].keys() == runs[False].keys()
    pairs = []
    for label, (twin, counted, predicted) in runs[True].items():
        mem_twin, mem_counted, mem_predicted = runs[False][label]
        for name, value in twin.outputs.items():
            np.testing.assert_array_equal(value, mem_twin.outputs[name])
        assert predicted == counted["api_calls"], (label, predicted, counted)
        assert mem_predicted == mem_counted["api_calls"], (label, mem_predicted, mem_counted)
        pairs.append((twin, mem_twin))
    return pairs


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("negative,bound", [(False, False), (True, False), (False, True), (True, True)])
def test_the_variant_is_chosen_when_the_kernel_is_generated(template, index_dtype, negative, bound):
    s = _session(
        template, rank=2, dim=1, index_dtype=index_dtype, need_check_negative=negative, need_check_bound=bound
    )
    assert _offsets_forms(s.result.kernel) == {index_vf_name(negative, bound, index_dtype == "int64")}
    body = s.result.kernel.split("#endif  // AF_GATHER_H")[-1]
    assert "AfGatherOffsetsVector<" not in body
    # an int64 index is narrowed in the function: no memory-based clamp or Cast before it
    assert "AscendC::Cast<int32_t, int64_t>" not in body and "AscendC::Maxs(" not in body


def test_explain_says_what_runs_in_registers():
    from af_core.explain import explain

    for index_dtype, text in (
        ("int32", "offsets: in registers; register Gather"),
        (
            "int64",
            "offsets: in registers (int64 narrowed there); register Gather in a vector function (64 elements per step)",
        ),
    ):
        s = _session("simd", rank=2, dim=1, index_dtype=index_dtype)
        report = explain(s.scheduled, {"a0": 5, "a1": 9, "b0": 5, "b1": 7})
        assert report.gather_forms and all(text in note for _k, _t, note in report.gather_forms), report
        assert text in report.markdown()  # within the 200 characters a note line keeps


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("kind", COMPACT_KINDS)
def test_a_compact_index_takes_the_compact_function(template, kind, monkeypatch):
    """A compact index's offsets are the compact variant of the register function; with the register form
    off, the memory paths (per-run ``Adds`` or the scalar loop), and no select tile."""
    for index_dtype in ("int32", "int64"):
        graph = _compact_graph(kind, index_dtype=index_dtype, need_check_bound=True)
        s = TwinSession(graph, AutofuserOptions(force_template=template))
        assert _offsets_forms(s.result.kernel) == {
            index_vf_name(False, True, index_dtype == "int64", compact=True)
        }
        body = s.result.kernel.split("#endif  // AF_GATHER_H")[-1]
        assert "AfGatherOffsetsSuffix<" not in body and "AfGatherOffsetsScalar<" not in body
        assert "AfGatherSelect(" in body
    monkeypatch.setattr(IndirectLoadRegApiCall, "register_offsets", False)
    s = TwinSession(_compact_graph(kind, need_check_bound=True), AutofuserOptions(force_template=template))
    body = s.result.kernel.split("#endif  // AF_GATHER_H")[-1]
    assert _offsets_forms(s.result.kernel) == set()
    assert "AfGatherOffsetsScalar<" in body and "AfGatherSelect(" not in body


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("kind", COMPACT_KINDS)
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int8"])
def test_compact_register_and_memory_offsets_give_the_same_bits(
    template, kind, index_dtype, dtype, monkeypatch
):
    """A compact index: the same outputs with the register offsets and the memory ones, with negative and
    out-of-range indices; each form predicts its API calls exactly (the register form: one launch and the
    zero slot's Duplicate per tile; the memory one: an ``Adds`` per index value where a value covers a
    multiple of 8 positions, else the scalar loop) and the register counters exactly (``_runs``). D = 16
    (float32 data) takes the memory form's suffix path, D = 21 its scalar loop."""
    sizes = {"V": 23, "D": 16 if dtype == "float32" else 21, "b0": 5, "b1": 9, "b2": 3, "a0": 6, "n": 17}
    graph = _compact_graph(kind, dtype, index_dtype, need_check_negative=True, need_check_bound=True)
    pairs = _both_forms(
        monkeypatch, lambda: TwinSession(graph, AutofuserOptions(force_template=template)), sizes
    )
    for twin, mem_twin in pairs:
        assert twin.counter("vector_calls") <= mem_twin.counter("vector_calls")


@settings(max_examples=10, deadline=None)
@given(
    template=st.sampled_from(["simd", "sklike"]),
    kind=st.sampled_from(COMPACT_KINDS),
    dtype=st.sampled_from(["float32", "int32", "float16", "uint8"]),
    index_dtype=st.sampled_from(["int32", "int64"]),
    negative=st.booleans(),
    bound=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_any_compact_index_gathers_like_the_reference(
    template, kind, dtype, index_dtype, negative, bound, seed
):
    graph = _compact_graph(kind, dtype, index_dtype, need_check_negative=negative, need_check_bound=bound)
    s = TwinSession(graph, AutofuserOptions(force_template=template))
    assert _offsets_forms(s.result.kernel) == {
        index_vf_name(negative, bound, index_dtype == "int64", compact=True)
    }
    rng = np.random.default_rng(seed)
    _check_random(s, _compact_sizes(kind, rng), rng, seed, negative=negative, bound=bound)


@pytest.mark.parametrize("template", ["simd", "sklike"])
def test_a_compact_index_out_of_range_without_the_bound_check_is_reported(template):
    s = TwinSession(_compact_graph("embedding"), AutofuserOptions(force_template=template))
    assert _offsets_forms(s.result.kernel) == {index_vf_name(False, False, compact=True)}
    inputs = s.inputs({"V": 4, "D": 8, "b0": 3, "b1": 5}, seed=1)
    inputs.storage["ids"][7] = 4
    with pytest.raises(TwinSanitizerError) as info:
        s.run(inputs, core_num=2)
    assert info.value.kind == "gather-out-of-range" and "index 4" in info.value.message
    inputs.storage["ids"][7] = 3
    assert s.check(inputs=inputs, core_num=2).ok


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
def test_register_and_memory_offsets_give_the_same_bits(template, index_dtype, dtype, monkeypatch):
    """Same outputs in both forms, with negative and out-of-range indices; each form predicts the API calls
    its offsets issue; the register form issues fewer memory-based vector calls and one more launch (as many
    for float32 data, which the offsets function gathers itself)."""
    sizes = {"a0": 7, "a1": 33, "a2": 19, "b0": 7, "b1": 21, "b2": 19}
    checks = {
        "dtype": dtype,
        "index_dtype": index_dtype,
        "need_check_negative": True,
        "need_check_bound": True,
    }
    pairs = _both_forms(monkeypatch, lambda: _session(template, rank=3, dim=1, **checks), sizes)
    # (1-byte data: the pitch of their tile is wider than an index row padded to 32 bytes, so the index load
    # fills each row's rest by a call of its own, which each form predicts too)
    for twin, mem_twin in pairs:
        assert twin.counter("vector_calls") < mem_twin.counter("vector_calls")
        # float32 data are gathered in the offsets function itself: as many launches as the memory offsets
        # and the register gather function
        more = 0 if dt.get(dtype).itemsize == 4 else 1
        assert twin.counter("vf_calls") >= mem_twin.counter("vf_calls") + more


@pytest.mark.parametrize("template", ["simd", "sklike"])
def test_an_out_of_range_index_without_the_bound_check_is_reported(template):
    s = _session(template, rank=2, dim=1, need_check_negative=True)
    assert _offsets_forms(s.result.kernel) == {index_vf_name(True, False)}
    inputs = s.inputs({"a0": 3, "a1": 4, "b0": 3, "b1": 4}, seed=1)
    inputs.storage["index"][5] = 4
    with pytest.raises(TwinSanitizerError) as info:
        s.run(inputs, core_num=2)
    assert info.value.kind == "gather-out-of-range" and "index 4" in info.value.message
    inputs.storage["index"][5] = -4  # wraps to 0: in range
    assert s.check(inputs=inputs, core_num=2).ok


@settings(max_examples=8, deadline=None)
@given(
    template=st.sampled_from(["simd", "sklike"]),
    dtype=st.sampled_from(["float32", "int32", "bfloat16", "uint8"]),
    index_dtype=st.sampled_from(["int32", "int64"]),
    rank_dim=st.sampled_from([(1, 0), (2, 0), (2, 1), (3, 1), (3, 2)]),
    negative=st.booleans(),
    bound=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_any_full_index_gathers_like_the_reference(
    template, dtype, index_dtype, rank_dim, negative, bound, seed
):
    rank, dim = rank_dim
    s = _session(
        template,
        rank=rank,
        dim=dim,
        dtype=dtype,
        index_dtype=index_dtype,
        need_check_negative=negative,
        need_check_bound=bound,
    )
    assert _offsets_forms(s.result.kernel) == {index_vf_name(negative, bound, index_dtype == "int64")}
    rng = np.random.default_rng(seed)
    _check_random(s, gather_sizes(rng, rank, dim), rng, seed, negative=negative, bound=bound)


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_only_the_tiles_read_past_their_end_are_padded(template, index_dtype, monkeypatch):
    """The scheduler pads each tile by what the gather asks of it (``read_past_tile``): the offset pattern
    by a vector; the index tile by a vector only when the register function's dual load reads an int64 one
    in 512-byte steps; no other tile."""
    buffers = {}
    for register in (True, False):
        monkeypatch.setattr(IndirectLoadRegApiCall, "register_offsets", register)
        s = _session(template, rank=2, dim=1, index_dtype=index_dtype, need_check_bound=True)
        stage_buffers = [b for c in s.scheduled.cases[:1] for st in c.impl.stages for b in st.buffers]
        buffers[register] = {b.name: str(b.bytes) for b in stage_buffers}
    for register, found in buffers.items():
        padded = {name for name, size in found.items() if size.endswith("+ 256")}
        want = {"indirect_load_pattern"}
        if register and index_dtype == "int64":
            want.add(next(name for name in found if name.startswith("index") and name.endswith("_tile")))
        assert padded == want, (register, found)


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_a_compact_index_pads_its_pattern_and_select_tile(template, index_dtype, monkeypatch):
    """A compact index: the pattern and (with the register form) the select tile run a vector past the row,
    both fixed tiles; the compact index tile is read by register Gathers of single elements, not padded."""
    for register in (True, False):
        monkeypatch.setattr(IndirectLoadRegApiCall, "register_offsets", register)
        graph = _compact_graph("embedding", index_dtype=index_dtype, need_check_bound=True)
        s = TwinSession(graph, AutofuserOptions(force_template=template))
        stage_buffers = [b for c in s.scheduled.cases[:1] for st in c.impl.stages for b in st.buffers]
        found = {b.name: str(b.bytes) for b in stage_buffers}
        padded = {name for name, size in found.items() if size.endswith("+ 256")}
        want = {"indirect_load_pattern", "indirect_load_select"} if register else {"indirect_load_pattern"}
        assert padded == want, (register, found)
        assert ("indirect_load_select" in found) == register


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_the_register_offsets_need_no_scratch_tiles(template, index_dtype, monkeypatch):
    """The core allocates only the scratch tiles the gather asks for (``gather_scratch``): none for the
    register function, the int32 copy, the wrap tile and the two masks for the memory-based offsets. Less
    UB per row lets the register form hold at least as many rows."""
    names, rows = {}, {}
    sizes = {"a0": 64, "a1": 8, "b0": 64, "b1": 1000}
    for register in (True, False):
        monkeypatch.setattr(IndirectLoadRegApiCall, "register_offsets", register)
        s = _session(template, rank=2, dim=1, index_dtype=index_dtype, need_check_negative=True)
        case = s.scheduled.cases[0]
        names[register] = {b.name for st in case.impl.stages for b in st.buffers}
        sch = s.scheduled
        ev = solve([CaseRef.of(case)], sch.size_names, sizes, CORES, sch.platform.ub_size, sch.guards)
        rows[register] = ev.evaluations[0].fields
    scratch = {"indirect_load_index_tmp", "indirect_load_mask", "indirect_load_mask2"}
    if index_dtype == "int64":
        scratch.add("indirect_load_index32")
    assert not names[True] & scratch
    assert scratch <= names[False]
    tile_max = next(k for k in rows[True] if k.endswith("tile_max"))
    assert rows[True][tile_max] > rows[False][tile_max], (rows[True][tile_max], rows[False][tile_max])


def test_a_scratch_tile_the_core_does_not_offer_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(
        IndirectLoadRegApiCall, "gather_scratch", classmethod(lambda cls, **kw: frozenset({"bogus"}))
    )
    with pytest.raises(Exception) as info:
        _session("simd", rank=2, dim=1).result  # noqa: B018 (building the result schedules the case)
    text = str(info.value)
    assert (
        "IndirectLoad 'indirect_load'" in text and "gather_scratch asks for scratch tiles ['bogus']" in text
    )
    assert "the core offers ['offsets', 'conv', 'tmp', 'mask', 'mask2', 'select']" in text
