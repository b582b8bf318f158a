"""The rowcopy template is discovered, rejects what it cannot do, has an honest cost and competes under both policies."""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import graphs
import pytest
from af_template_rowcopy.api_call import RowCopyApiCall

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.errors import ScheduleError, TwinError
from af_core.explain import explain
from af_core.registry import get_registry
from af_core.traffic import traffic
from af_core.twin import TwinSession
from af_core.twin.runner import TwinRunner

# The competitor of the dispatch tests: a built-in template (installed beside this one by its tox env).
needs_simt = pytest.mark.skipif(
    importlib.util.find_spec("af_indirect_load_simt") is None,
    reason="the dispatch tests need the SIMT template as a competitor",
)

LONG_ROWS = {"N": 1000, "H": 1024, "K": 16}  # 4 KiB rows, 16 of 1000 selected
SHORT_ROWS = {"N": 1000, "H": 8, "K": 5000}  # 32-byte rows, many indices


def test_discovered_from_its_distribution():
    registry = get_registry()
    assert registry.entry("template", "rowcopy").distribution == "af-template-rowcopy"
    assert registry.entry("api_call", "RowCopyApiCall").distribution == "af-template-rowcopy"
    assert registry.entry("api_source", "af_row_copy").distribution == "af-template-rowcopy"


@pytest.mark.parametrize(
    "build,reason",
    [
        (graphs.full_index_gather, "needs one index value per row"),
        (graphs.index_chain_select, "sit between the index and the gather"),
        (graphs.reduce_over_rows, "reduces inside rows only"),
    ],
)
def test_rejects_what_it_cannot_do(build, reason):
    with pytest.raises(ScheduleError, match=reason) as info:
        Autofuser(AutofuserOptions(force_template="rowcopy")).schedule(build())
    rejected = [r for r in info.value.rejections if r.template == "rowcopy"]
    assert len(rejected) == 1 and reason in rejected[0].reason and rejected[0].plugin == "af-template-rowcopy"


@functools.cache
def session(selection: str) -> TwinSession:
    return TwinSession(graphs.index_select_relu("float32", "int32"), AutofuserOptions(selection=selection))


def chosen(selection: str, sizes: dict[str, int], cores: int = 8) -> str:
    """The case the generated host tiling picks on the twin (checked against the reference)."""
    s = session(selection)
    run = s.check(sizes, seed=5, core_num=cores)
    assert run.ok, run.describe()
    report = explain(s.scheduled, sizes, cores)
    assert next(r for r in report.rows if r.status == "chosen").template == run.template
    return run.template


@needs_simt
@pytest.mark.twin
def test_seed_policy_long_rows_are_its_region():
    assert chosen("seed", LONG_ROWS) == "rowcopy"
    row = next(r for r in explain(session("seed").scheduled, LONG_ROWS, 8).rows if r.template == "rowcopy")
    assert row.score == 2
    assert chosen("seed", SHORT_ROWS) != "rowcopy"
    row = next(r for r in explain(session("seed").scheduled, SHORT_ROWS, 8).rows if r.template == "rowcopy")
    assert row.score == -1 and row.status == "candidate"


@needs_simt
@pytest.mark.twin
def test_cost_policy_decides_on_modelled_cost():
    # long rows: SIMT's predicted counters make it the cheaper case, as the twin counts it (test below)
    assert chosen("cost", LONG_ROWS) == "simt"
    rows = {r.template: r for r in explain(session("cost").scheduled, LONG_ROWS, 8).rows}
    assert rows["rowcopy"].status == "candidate" and rows["rowcopy"].cost > rows["simt"].cost
    assert chosen("cost", SHORT_ROWS) != "rowcopy"
    rows = {r.template: r for r in explain(session("cost").scheduled, SHORT_ROWS, 8).rows}
    assert rows["rowcopy"].status == "candidate"
    assert rows["rowcopy"].cost > min(r.cost for r in rows.values() if r.cost is not None)


@pytest.mark.twin
@pytest.mark.parametrize(
    "sizes,cores", [(LONG_ROWS, 8), (SHORT_ROWS, 8), ({"N": 5000, "H": 128, "K": 300}, 48)]
)
def test_modelled_cost_matches_the_twin_counted_cost(sizes, cores):
    """Random indices (no neighbouring rows to merge): modelled and twin-counted cost agree within 5%."""
    s = TwinSession(graphs.index_select_relu("float32", "int32"), AutofuserOptions(force_template="rowcopy"))
    run = s.check(sizes, seed=1, core_num=cores)
    assert run.ok, run.describe()
    counted = traffic(s.graph, run.inputs, run.twin.outputs, run.twin.counters, s.scheduled.info).cost
    modelled = next(r for r in explain(s.scheduled, sizes, cores).rows if r.status == "chosen").cost
    assert abs(modelled - counted) <= 0.05 * counted, (modelled, counted)
    assert {"kernel.cpp", "tiling.cpp", "harness.cpp", "harness"} <= {
        p.name for p in s.build.directory.iterdir()
    }


@needs_simt
@pytest.mark.twin
def test_simt_model_tracks_its_twin_count_on_row_gathers():
    """docs/writing-templates.md §8: why SIMT, not rowcopy, wins the cost policy for long rows (update the page
    if this fails)."""
    counted = {}
    for template in ("rowcopy", "simt"):
        s = TwinSession(
            graphs.index_select_relu("float32", "int32"), AutofuserOptions(force_template=template)
        )
        run = s.check(LONG_ROWS, seed=1, core_num=8)
        assert run.ok, run.describe()
        counted[template] = traffic(
            s.graph, run.inputs, run.twin.outputs, run.twin.counters, s.scheduled.info
        ).cost
        modelled = next(r for r in explain(s.scheduled, LONG_ROWS, 8).rows if r.status == "chosen").cost
        if template == "simt":
            assert abs(modelled - counted["simt"]) <= 0.05 * counted["simt"], (modelled, counted)
            assert run.twin.counter("datacopy_calls") == 0 and run.twin.counter("vector_calls") == 0
    assert counted["simt"] < counted["rowcopy"] < 1.1 * counted["simt"]


@pytest.mark.twin
def test_a_gxx_failure_names_the_kernel_and_carries_the_compiler_log(monkeypatch):
    """What docs/writing-templates.md says to look at when g++ rejects a generated kernel."""
    broken = RowCopyApiCall.generate_api_call_string
    monkeypatch.setattr(
        RowCopyApiCall,
        "generate_api_call_string",
        lambda self: broken(self) + "\nrow_copy_not_declared_anywhere();",
    )
    monkeypatch.setenv("AF_ASCENDC_CHECK", "0")  # else the official-header check refuses it first
    with pytest.raises(TwinError) as info:
        TwinSession(graphs.index_select_relu("float32", "int32"), AutofuserOptions(force_template="rowcopy"))
    first = str(info.value).splitlines()[0]
    head, _, diagnostic = first.partition(" does not compile (")
    assert head == "kernel 'autofuse_isel_relu' for the twin", first
    assert "kernel.cpp:" in diagnostic and "row_copy_not_declared_anywhere" in diagnostic, first
    assert "row_copy_not_declared_anywhere" in info.value.log


@pytest.mark.twin
def test_compile_artifacts_rebuild_by_hand(tmp_path):
    """`afc compile` writes a kernel.cpp that g++ checks on its own against the twin headers."""
    program = tmp_path / "isel.py"
    program.write_text(
        "import graphs\ngraph = graphs.index_select_relu('float32', 'int32')\n", encoding="utf-8"
    )
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(Path(graphs.__file__).parent)}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "af_core",
            "compile",
            str(program),
            "-o",
            str(out),
            "--force-template",
            "rowcopy",
        ],
        check=True,
        env=env,
        capture_output=True,
    )
    assert {
        "kernel.cpp",
        "tiling.cpp",
        "autofuse_tiling_data.h",
        "infer_shape.cpp",
        "proto.json",
        "report.md",
    } <= {p.name for p in out.iterdir()}
    includes = [f"-I{d}" for d in TwinRunner().include_dirs()]
    cxx = shutil.which("g++")
    flags = ["-std=c++17", "-O1", "-g0", "-pthread", "-DAF_CPU_TWIN=1", "-fsyntax-only"]  # as the guide's §12
    proc = subprocess.run(
        [cxx, *flags, *includes, f"-I{out}", str(out / "kernel.cpp")], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
