"""``afc`` on a graph file with only af-core and the fake back end installed.

The command line must not assume the real back end: its run table shows
"-" for the counters another back end's twin does not keep, and its
failures are classified the same whatever back end failed.
"""

from __future__ import annotations

import json

import fake_backend
import pytest
from fake_backend import FakeBrokenGather, FakeLanesTemplate
from fake_backend.graphs import offset_chain

from af_core.cli import EXIT_INTERNAL, main
from af_core.ir.serialize import to_json
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin

SHAPE = ["--shape", "a0=5", "--shape", "a1=4", "--shape", "b0=3", "--shape", "b1=6"]  # 18 output elements


@pytest.fixture(autouse=True)
def _wide_console(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps table cells to the terminal width


def _graph():
    """The pipeline tests' "gather2d" graph: working twin builds here are cache hits of theirs."""
    return offset_chain()


@pytest.fixture
def graph_file(tmp_path):
    path = tmp_path / "graph.json"
    with fake_backend.installed():  # the graph uses the fake back end's op
        path.write_text(to_json(_graph()), encoding="utf-8")
    return path


def test_run_compares_with_the_reference(graph_file, capsys):
    with fake_backend.installed():
        assert main(["run", str(graph_file), *SHAPE, "--cores", "4", "--selection", "seed"]) == 0
    out = capsys.readouterr().out
    assert "match" in out and "MISMATCH" not in out
    assert "fake_lanes/flat" in out  # the small-output variant, by the seed rule's scores


def test_compile_writes_what_the_session_builds(graph_file, tmp_path, capsys):
    out = tmp_path / "out"
    with fake_backend.installed():
        assert main(["compile", str(graph_file), "-o", str(out), *SHAPE]) == 0
        session = TwinSession(_graph())
    assert "3 case(s), 1 rejection(s)" in capsys.readouterr().out
    for name, text in session.result.files().items():
        assert (out / name).read_text(encoding="utf-8") == text, name
    proto = json.loads((out / "proto.json").read_text(encoding="utf-8"))
    assert [r["template"] for r in proto["rejections"]] == ["fake_refuser"]


def test_explain_lists_every_candidate(graph_file, capsys):
    with fake_backend.installed():
        assert main(["explain", str(graph_file), *SHAPE]) == 0
    out = capsys.readouterr().out
    for label in ("fake_lanes/flat", "fake_lanes/staged", "fake_lanes/tiled"):
        assert label in out


def test_plugins_lists_the_fake_back_end(capsys):
    with fake_backend.installed():
        assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert fake_backend.DIST in out and "fake_lanes" in out and "FakeLanesGather" in out


def test_run_with_a_kernel_that_does_not_compile_is_an_internal_error(graph_file, capsys):
    with fake_backend.installed(templates=[FakeLanesTemplate(gather_call=FakeBrokenGather.name)]):
        assert main(["run", str(graph_file), *SHAPE]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "internal error" in err and "autofuse_chain" in err
