"""Section 14 of docs/writing-templates.md, the questions template authors asked: every snippet there runs,
and the facts its answers state hold (a wrong sentence fails here)."""

from __future__ import annotations

import inspect
import re
import shutil
import subprocess
from importlib import resources
from pathlib import Path
from types import SimpleNamespace

import attrs
import numpy as np
import pytest
import sympy

from af_core import toolchain
from af_core.autofuser import Autofuser
from af_core.builders import GraphBuilder, gather, index_select
from af_core.codegen.kernel import case_function
from af_core.errors import UsageError
from af_core.platform import Platform, set_platform
from af_core.samples import index_select_sum
from af_core.schedule.impl_graph import POSITION_PIPES
from af_core.schedule.scheduler import _propose
from af_core.template_api import (
    CORE_NUM,
    UB_SIZE,
    AutofuserOptions,
    Case,
    CaseRef,
    CeilDiv,
    CodegenError,
    ImplGraph,
    ImplNode,
    KernelContext,
    Rejected,
    RowTiles,
    ScheduleContext,
    ScheduleError,
    Stage,
    TileBuilder,
    TilePlan,
    TilingSpec,
    TwinSession,
    Unsupported,
    assign_releases,
    dtypes,
    evaluate_case,
    pitch_for,
    view_of,
)
from af_core.twin import run_graph

DOC = Path(__file__).resolve().parents[2] / "docs" / "writing-templates.md"
SECTION = "## 14. Questions template authors asked"
#: The answers' snippets, in the order the section gives them.
MARKERS = [
    "faq-score",
    "faq-rejections",
    "faq-row-select",
    "faq-tile-release",
    "faq-fuse-order",
    "faq-sync",
    "faq-dcache",
    "faq-fraction",
    "faq-twin-kwargs",
    "faq-view-of",
]
SNIPPET = re.compile(r"<!-- doc-test: ([a-z0-9-]+) -->\s*```python\n(.*?)```", flags=re.S)
# The answers are about the built-in templates and the v35 back end: with af-core alone (the `core` and
# `torch` envs) there is nothing to answer them with, so the module runs where every package is installed
# (`floors`, which runs tests/core beside them).
for _plugin in ("af_v35_regbase", "af_indirect_load_simd", "af_indirect_load_simt", "af_indirect_load_dedup"):
    pytest.importorskip(_plugin, reason="the answers read the built-in templates and the v35 back end")
V35 = resources.files("af_v35_regbase")
ENV = {"core_num": 8, "ub_size": 1024}


def header(path: str) -> str:
    """An af-v35-regbase C++ file with its whitespace runs made single spaces."""
    return " ".join((V35 / path).read_text(encoding="utf-8").split())


def section_snippets() -> dict[str, str]:
    """Marker -> code of every doc-test block of section 14, in order."""
    text = DOC.read_text(encoding="utf-8")
    assert SECTION in text, f"{DOC.name} has no section '{SECTION}'"
    return dict(SNIPPET.findall(text.split(SECTION, 1)[1]))


def test_the_section_has_one_snippet_per_question():
    assert list(section_snippets()) == MARKERS


@pytest.mark.parametrize("marker", MARKERS)
def test_snippet_runs(marker):
    code = section_snippets()[marker]
    exec(compile(code, f"{DOC.name}:{marker}", "exec"), {"__name__": marker})


@pytest.fixture(scope="module")
def scheduled():
    return Autofuser().schedule(index_select_sum())


# -- 1. a case's score -------------------------------------------------------------------------------


def test_a_case_keeps_its_spec_in_tiling():
    assert "tiling" in attrs.fields_dict(Case) and not hasattr(Case, "spec")


def test_a_score_over_a_field_is_evaluated_after_the_fields_and_only_for_a_fitting_case():
    spec = TilingSpec()
    tile = spec.add("tile", CeilDiv(sympy.Symbol("K"), CORE_NUM))
    spec.add("used_cores", 1)
    spec.block_dim = 1
    spec.score = sympy.Piecewise((2, sympy.Ge(tile, 4)), (-1, True))
    assert evaluate_case(CaseRef(0, "t", spec), {"K": 100, **ENV}).score == 2  # tile = 13
    assert evaluate_case(CaseRef(0, "t", spec), {"K": 20, **ENV}).score == -1  # tile = 3
    spec.require(sympy.Le(sympy.Symbol("K"), 50), "too many rows")
    dropped = evaluate_case(CaseRef(0, "t", spec), {"K": 100, **ENV})
    assert (dropped.fits, dropped.score, dropped.reason) == (False, None, "too many rows")


def test_cases_come_in_tiling_key_order(scheduled):
    assert [c.tiling_key for c in scheduled.cases] == list(range(len(scheduled.cases)))
    order = [(c.template, c.variant) for c in scheduled.cases]
    assert order == sorted(order)


# -- 2. rejections -----------------------------------------------------------------------------------


def test_a_forced_template_that_is_not_installed_has_no_rejections():
    with pytest.raises(ScheduleError, match="forced template 'nosuch' is not installed") as info:
        Autofuser(AutofuserOptions(force_template="nosuch")).schedule(index_select_sum())
    assert info.value.rejections == []


def test_unsupported_is_a_schedule_error():
    assert issubclass(Unsupported, ScheduleError)


def test_how_a_rejection_reads():
    assert str(Rejected("t", "why", plugin="p")) == "t (p) rejected at schedule: why"
    assert str(Rejected("t", "why", stage="tiling")) == "t rejected at tiling: why"


class _Fake:
    name = "fake"

    def __init__(self, answer):
        self.answer = answer

    def propose(self, graph, node, ctx):
        return self.answer(graph)


def _field_named_like_a_size(graph):
    spec = TilingSpec()
    spec.add("K", 1)
    return [Case("fake", "default", graph, ImplGraph(graph.name, "fake"), spec)]


def _raises(graph):
    raise ValueError("oops")


@pytest.mark.parametrize(
    ("answer", "stage", "reason"),
    [
        (_field_named_like_a_size, "tiling", "tiling field(s) K have the symbol name of a graph size"),
        (_raises, "schedule", "template raised ValueError: oops"),
        (lambda graph: [Rejected("fake", "mine", stage="codegen")], "codegen", "mine"),
        (lambda graph: ["text"], "schedule", "template returned str, not a Case or Rejected"),
    ],
)
def test_the_stage_of_a_rejection(scheduled, answer, stage, reason):
    entry = SimpleNamespace(name="fake", value=_Fake(answer), distribution="af-fake")
    ctx = ScheduleContext(scheduled.platform, scheduled.options, scheduled.measures, "g")
    cases, rejections = _propose(entry, scheduled.normalized, scheduled.analysis.indirect_load.name, ctx)
    assert cases == [] and rejections == [Rejected("fake", reason, stage=stage, plugin="af-fake")]


# -- 3. AfRowSelectSource ----------------------------------------------------------------------------

#: Calls AfRowSelectSource for the five rows of a 1-axis view over the index values {2, -1, -6, 5, 7}
#: (extent 5, table stride 3); argv: checkNegative, checkBound. AscendC's GlobalTensor and, on the twin,
#: AfTwin::Fail are stand-ins with the same behaviour for this use.
ROW_SELECT_PROBE = r"""
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#define __aicore__
namespace AscendC {
template <typename T>
struct GlobalTensor {
    const T* data;
    T GetValue(uint64_t i) const { return data[i]; }
};
}  // namespace AscendC
#if defined(AF_CPU_TWIN)
namespace AfTwin {
[[noreturn]] inline void Fail(const char* kind, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::printf("fail %s: ", kind);
    std::vprintf(fmt, ap);
    va_end(ap);
    std::fflush(stdout);
    std::_Exit(86);
}
}  // namespace AfTwin
#endif
#include "af_row_select.h"
int main(int argc, char** argv) {
    (void)argc;
    const int64_t values[] = {2, -1, -6, 5, 7};
    const AscendC::GlobalTensor<int64_t> index{values};
    AfRowSelectView v{};
    v.rank = 1;
    v.sizes[0] = 5;
    v.indexStrides[0] = 1;
    v.tableStrides[0] = 3;
    v.extent = 5;
    v.width = 3;
    v.checkNegative = argv[1][0] == '1';
    v.checkBound = argv[2][0] == '1';
    for (int64_t row = 0; row < 5; ++row) {
        std::printf("%lld ", static_cast<long long>(AfRowSelectSource(index, v, row)));
        std::fflush(stdout);
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def row_select_probe(tmp_path_factory):
    cxx = toolchain.compiler()
    if shutil.which(cxx) is None:
        pytest.skip(f"no C++ compiler '{cxx}'")
    work = tmp_path_factory.mktemp("row_select")
    (work / "probe.cpp").write_text(ROW_SELECT_PROBE, encoding="utf-8")
    built = {}
    for where, flags in (("device", []), ("twin", ["-DAF_CPU_TWIN"])):
        exe = work / where
        subprocess.run(
            [cxx, "-std=c++17", *flags, f"-I{V35 / 'api'}", str(work / "probe.cpp"), "-o", str(exe)],
            check=True,
            capture_output=True,
        )
        built[where] = exe
    return built


def _select(probe, where: str, negative: bool, bound: bool) -> tuple[int, str]:
    proc = subprocess.run(
        [str(probe[where]), str(int(negative)), str(int(bound))], capture_output=True, text=True, timeout=30
    )
    return proc.returncode, proc.stdout.strip()


@pytest.mark.parametrize("where", ["device", "twin"])
def test_an_out_of_range_row_is_minus_one_with_the_bound_check(row_select_probe, where):
    assert _select(row_select_probe, where, True, True) == (0, "6 12 -1 -1 -1")  # -1 wraps to 4; -6 to -1
    assert _select(row_select_probe, where, False, True) == (0, "6 -1 -1 -1 -1")  # no wrap: -1 is out


def test_without_the_bound_check_the_device_still_gets_minus_one(row_select_probe):
    assert _select(row_select_probe, "device", True, False) == (0, "6 12 -1 -1 -1")


def test_without_the_bound_check_the_twin_stops(row_select_probe):
    code, out = _select(row_select_probe, "twin", True, False)
    assert code == 86
    assert (
        out
        == "6 12 fail gather-out-of-range: row gather: index -1 is outside [0, 5) and need_check_bound is off"
    )


def test_the_row_select_flags_come_from_the_gather():
    from af_v35_regbase.row_select import row_select

    g = GraphBuilder("isel")
    x, idx = g.data("x", ["N", "H"], "float32"), g.data("idx", ["K"], "int64")
    g.output(index_select(x, 0, idx, need_check_bound=True), "y")
    s = Autofuser().schedule(g.build())
    view = row_select(s.normalized, s.analysis.indirect_load, s.analysis, "probe").view
    assert (view["check_negative"], view["check_bound"]) == (False, True)


# -- 4. who frees a tile -----------------------------------------------------------------------------


def _ctx(impl: ImplGraph, stage: Stage) -> KernelContext:
    ctx = KernelContext(Case("mine", "default", index_select_sum(), impl, TilingSpec()), [], {}, set())
    ctx.stage = stage
    return ctx


def test_releases_go_on_the_last_node_with_a_call_per_buffer():
    impl = ImplGraph("g", "mine")
    stage = Stage("mine")
    plan = TilePlan(impl, stage, 8)
    rows = plan.tile("rows", dtypes.float32, 64, position="VECIN", que=True)
    same = plan.alias("same", rows, dtypes.float32)  # in place: the same buffer
    stage.nodes = [
        ImplNode("a", "X", "Call", (), (rows,)),
        ImplNode("b", "Y", "Call", (rows,), (same,)),
        ImplNode("c", "Z", "Call", (same,), ()),
        ImplNode("d", "Z", None, (same,), ()),  # documentation only: not a user
    ]
    assign_releases(stage, impl)
    assert [n.attrs.get("release") for n in stage.nodes] == [None, None, ["same"], None]


def test_a_tbuf_is_never_freed_and_an_early_release_fails_the_next_reader():
    impl = ImplGraph("g", "mine")
    stage = Stage("mine")
    plan = TilePlan(impl, stage, 8)
    tmp = plan.tile("tmp", dtypes.float32, 64)
    out = plan.tile("out", dtypes.float32, 64, position="VECOUT", que=True)
    ctx = _ctx(impl, stage)
    assert ctx.produce(tmp)[0] == "AscendC::LocalTensor<float> tmp_1 = tmp_buf.Get<float>();"
    assert ctx.release(tmp) == ""
    ctx.produce(out)
    ctx.finish(out)
    ctx.use(out)
    assert ctx.release(out) == "out_buf.FreeTensor(out_3);"
    with pytest.raises(
        CodegenError, match="UB tensor 'out' is read before any node of stage 'mine' produced it"
    ):
        ctx.use(out)


# -- 5. fuse_chains order ----------------------------------------------------------------------------


def _chain_case(order: str) -> tuple[Case, list[str]]:
    """A row-tile stage load -> Abs -> Exp -> store, fused at ``order``: "right" (after the store, before
    the releases), "early" (before the store) or "late" (after the releases)."""
    g = GraphBuilder("chain")
    y = index_select(g.data("x", ["N", "H"], "float32"), 0, g.data("idx", ["K"], "int64"))
    g.output(g.exp(g.abs(y)), "y")
    s = Autofuser().schedule(g.build())
    graph, an = s.normalized, s.analysis
    il, value = an.indirect_load, graph.producer(an.store, "x")
    k, h = (sympy.Symbol(n, integer=True, positive=True) for n in "KH")  # the graph's sizes
    spec = TilingSpec()
    rows = spec.add("rows", k)
    rt = RowTiles(rows, "R", "R")
    impl = ImplGraph(graph.name, "mine")
    stage = Stage("mine", rt.axes(("K",)))
    plan = TilePlan(impl, stage, rt.tile)
    b = TileBuilder(graph, impl, plan, rt.loop, sympy.Symbol("RT_start"), sympy.Symbol("RT_actual"))
    pitch = pitch_for(h, [il.y.dtype])
    table = graph.producer(il, "x1")  # a stand-in for the gather step: any call filling a tile
    b.load(table, view_of(graph, table, [k], 1), pitch, rows)
    b.tensor_of[il.name] = b.tensor_of[table.name]
    for node in an.post_chain:
        b.compute(node, pitch, final=node is value)
    if order == "early":
        b.fuse_chains()
    b.store(an.store.name, b.tensor_of[value.name], an.output.name, h, pitch, rows, value.y.dtype)
    impl.add_gm(an.output)
    if order == "right":
        b.fuse_chains()
    stage.nodes = b.nodes
    assign_releases(stage, impl)
    if order == "late":
        b.fuse_chains()
        stage.nodes = b.nodes
    impl.stages = [stage]
    rt.add_fields(spec, plan.max_rows(UB_SIZE), "fit")
    spec.block_dim = rt.used_cores
    case = Case("mine", "default", graph, impl, spec)
    case.tiling_key = 0
    return case, s.size_names


def _frees(order: str) -> list[str]:
    case, sizes = _chain_case(order)
    code = case_function(case, sizes, ["x", "y"], {"x": "x", "y": "y"}, {}, set())
    return [line.strip().split(".")[0] for line in code.splitlines() if "FreeTensor" in line]


def test_fused_after_every_node_and_before_the_releases_frees_every_queue():
    assert _frees("right") == ["x_load_tile_buf", "exp_tile_buf"]


def test_fused_before_the_store_fails_at_the_call_naming_it():
    with pytest.raises(ScheduleError, match=r"fuse_chains\(\): the chain of \['abs', 'exp'\] writes no tile"):
        _frees("early")


def test_fused_after_the_releases_fails_at_the_call_naming_it():
    with pytest.raises(ScheduleError, match=r"fuse_chains\(\) called after assign_releases\(\)"):
        _frees("late")


def test_the_twin_stops_an_allocation_from_a_full_queue():
    pipe = header("twin/include/af_twin/pipe.h")
    assert 'AfTwin::Fail("que-misuse", "TQue::AllocTensor: all %u buffers of the queue are taken' in pipe


# -- 6. pipe events ----------------------------------------------------------------------------------


def test_what_a_position_orders():
    assert POSITION_PIPES == {
        "VECIN": ("MTE2", "V"),
        "VECOUT": ("V", "MTE3"),
        "VECIN_VECOUT": ("MTE2", "MTE3"),
    }
    impl = ImplGraph("g", "mine")
    stage = Stage("mine")
    plan = TilePlan(impl, stage, 8)
    rows = plan.tile("rows", dtypes.float32, 64, position="VECIN", que=True)
    tmp = plan.tile("tmp", dtypes.float32, 64)
    ctx = _ctx(impl, stage)
    assert ctx.sync(rows, "MTE2", "V") == "" and ctx.sync(rows, "V", "MTE2") == ""
    assert ctx.sync(tmp, "V", "S") == KernelContext.flag_pair("V", "S")
    assert "GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_S)" in ctx.sync(tmp, "V", "S")


# -- 7. the data cache -------------------------------------------------------------------------------


def test_the_data_cache_reserve_and_the_twins_model():
    assert Platform().dcache_reserve == 32768
    assert "dcache_reserve" not in inspect.signature(set_platform).parameters
    runtime = header("twin/include/af_twin/runtime.h")
    assert "static constexpr uint32_t kWays = 4;" in runtime
    assert "constexpr uint32_t kGmLine = 128;" in runtime
    assert "uint32_t dcacheReserve = 32768;" in runtime
    assert "sets = std::max<uint32_t>(1, bytes / (kGmLine * kWays));" in runtime
    from af_core.twin.runner import TwinRunner

    assert "self.platform.dcache_reserve" in inspect.getsource(TwinRunner.run)


def test_only_simt_declares_a_data_cache():
    from af_core.builders import embedding

    g = GraphBuilder("emb")
    g.output(embedding(g.data("weight", ["V", "D"], "float32"), g.data("ids", ["B", "S"], "int32")), "y")
    cases = Autofuser().schedule(g.build()).cases
    declared = {c.template: int(c.tiling.resources["dcache_bytes"]) for c in cases}
    assert {"dedup", "simd", "simt", "sklike"} <= set(declared)
    assert {t: v for t, v in declared.items() if v} == {"simt": 32768}


# -- 8. fractions ------------------------------------------------------------------------------------

B, S, V = sympy.symbols("B S V", integer=True, positive=True)


def test_a_piecewise_rewrites_its_condition_even_unevaluated():
    kept = sympy.Piecewise((2, sympy.Ge(B * S - 4 * V, 0)), (-1, True))
    assert str(kept) == "Piecewise((2, B*S - 4*V >= 0), (-1, True))"
    unevaluated = sympy.Piecewise((2, sympy.Ge(B * S, 4 * V, evaluate=False)), (-1, True))
    assert str(unevaluated) == "Piecewise((2, V <= B*S/4), (-1, True))"


def test_a_fractional_field_fails_in_evaluate_case():
    spec = TilingSpec()
    spec.add("quarter", B * S / 4)
    with pytest.raises(CodegenError, match=r"integer formula contains the fraction 1/4 in B\*S/4"):
        evaluate_case(CaseRef(0, "t", spec), {"B": 4, "S": 4, **ENV})


def test_a_fractional_field_is_scheduled_and_fails_at_code_generation():
    fuser = Autofuser(AutofuserOptions(force_template="simt"))
    scheduled = fuser.schedule(index_select_sum())
    h = next(v.symbol for v in scheduled.normalized.sizes() if v.name == "H")
    scheduled.cases[0].tiling.add("quarter", h / 4)
    with pytest.raises(CodegenError, match=r"integer formula contains the fraction 1/4 in H/4"):
        fuser.generate(scheduled)


# -- 9. TwinSession keywords -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def session():
    return TwinSession(index_select_sum(), defer_build=True)


SIZES = {"N": 50, "H": 8, "K": 64}


def test_the_session_signatures():
    def named(fn):
        return [p.name for p in inspect.signature(fn).parameters.values()]

    drawing = ["negative_indices", "out_of_range", "positive", "distribution"]
    assert named(TwinSession.inputs) == ["self", "sizes", "seed", "arrays", *drawing]
    assert named(TwinSession.check) == ["self", "sizes", "seed", "core_num", "inputs", "tiling_key", *drawing]
    assert named(run_graph)[-4:] == drawing


def test_the_session_takes_no_info(session):
    with pytest.raises(TypeError, match="unexpected keyword argument 'info'"):
        session.inputs(SIZES, info=None)


def test_an_unknown_distribution_is_refused(session):
    with pytest.raises(UsageError, match="index distribution 'no such': unknown name"):
        session.inputs(SIZES, seed=5, distribution="no such")


def test_out_of_range_values(session):
    idx = session.inputs(SIZES, seed=5, out_of_range=1.0).storage["idx"]
    assert ((idx >= 50) & (idx <= 56) | (idx <= -51) & (idx >= -57)).all()
    positive = session.inputs(SIZES, seed=5, positive=True).storage["x"]
    assert positive.min() >= 0.25


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"seed": 9}, "seed"),
        ({"seed": 0}, "seed"),
        ({"distribution": "zipf"}, "distribution"),
        ({"negative_indices": True, "positive": True}, "negative_indices, positive"),
        ({"out_of_range": 0.5}, "out_of_range"),
    ],
)
def test_check_on_given_inputs_refuses_drawing_options(session, given, named):
    inputs = session.inputs(SIZES, seed=5)
    with pytest.raises(
        UsageError, match=f"check\\(inputs=...\\) draws no values, so {named} would be ignored"
    ):
        session.check(inputs=inputs, **given)


def test_check_on_given_inputs_refuses_other_sizes(session):
    inputs = session.inputs(SIZES, seed=5)
    with pytest.raises(UsageError, match="differ: K=65 \\(inputs: 64\\)"):
        session.check({**SIZES, "K": 65}, inputs=inputs)


def test_packed_arrays_take_no_drawing_options(session):
    arrays = {"x": np.zeros((50, 8), np.float32), "idx": np.zeros(64, np.int64)}
    with pytest.raises(UsageError, match="inputs\\(arrays=...\\) draws no values, so seed, distribution"):
        session.inputs(arrays=arrays, seed=1, distribution="unique")


def test_check_on_given_inputs_draws_nothing(session, monkeypatch):
    import af_core.inputs

    given = session.inputs(SIZES, seed=5)

    class Launched(Exception):
        pass

    def launch(inputs, **kw):
        assert inputs is given
        raise Launched

    def draw(*args, **kw):
        raise AssertionError("check drew inputs")

    monkeypatch.setattr(af_core.inputs, "make_inputs", draw)
    monkeypatch.setattr(session, "run", launch)
    with pytest.raises(Launched):
        session.check(SIZES, inputs=given, distribution="uniform", negative_indices=False)


# -- 10. view_of -------------------------------------------------------------------------------------


def _two_outer():
    g = GraphBuilder("two_outer")
    x = g.data("x", ["P", "Q", "N", "H"], "float32")
    g.output(gather(x, 2, g.data("index", ["B", "C", "K", "H"], "int64")), "y")
    return g.build()


def test_outer_sizes_are_taken_as_given():
    graph = _two_outer()
    table = graph.producer(graph.nodes_of_type("IndirectLoad")[0], "x1")
    assert view_of(graph, table, [7, 3], 2)["outer_sizes"] == [7, 3]
    assert [str(e) for e in view_of(graph, table, [7], 1)["inner_sizes"]] == ["Q", "N", "H"]


def test_the_simd_template_numbers_table_rows_by_the_output():
    scheduled = Autofuser(AutofuserOptions(force_template="simd")).schedule(_two_outer())
    load = next(n for n in scheduled.cases[0].impl.stages[0].nodes if n.name == "x_load")
    assert [str(e) for e in load.attrs["view"]["outer_sizes"]] == ["B", "C"]


def test_a_row_offset_wraps_the_outer_sizes():
    tile_io = header("api/af_tile_io.h")
    assert (
        "for (int32_t d = rank - 1; d >= 0; --d) { offset += (i % sizes[d]) * strides[d]; i /= sizes[d];"
        in tile_io
    )
    assert "return AfStridedOffset(v.outerSizes, v.outerStrides, v.outerRank, row);" in tile_io
