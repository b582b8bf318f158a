"""Every afc command, run as a subprocess: output and exit code, bad input included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from af_core.builders import GraphBuilder, gather
from af_core.ir.serialize import to_json

pytestmark = pytest.mark.twin
ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "minimal_graph.py")
SEED_SHAPE = "s0=6,s1=2,s2=40,s3=32,s4=6,s5=2,s6=16,s7=32"


def afc(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    env = {**os.environ, **(env or {})}
    env.setdefault("AF_TWIN_CACHE", str(Path.home() / ".cache" / "af-twin"))
    return subprocess.run(
        [sys.executable, "-m", "af_core", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=900,
    )


def graph_file(tmp_path: Path, name: str = "g", dtype: str = "float32") -> Path:
    g = GraphBuilder(name)
    x = g.data("x", ["a0", "a1"], dtype)
    i = g.data("index", ["b0", "b1"], "int64")
    g.output(g.op("Relu", gather(x, 1, i)), "y")
    path = tmp_path / f"{name}.json"
    path.write_text(to_json(g.build()))
    return path


def assert_one_line_error(proc: subprocess.CompletedProcess, text: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("afc: error:"), proc.stderr
    assert text in lines[0] and "Traceback" not in proc.stderr


def test_plugins():
    proc = afc("plugins")
    assert proc.returncode == 0, proc.stderr
    for dist in (
        "af-core",
        "af-elementwise",
        "af-v35-regbase",
        "af-indirect-load-simd",
        "af-indirect-load-simt",
        "af-indirect-load-sklike",
        "af-indirect-load-dedup",
    ):
        assert dist in proc.stdout
    assert "IndirectLoadRegApiCall" in proc.stdout and "load errors: none" in proc.stdout


def test_compile_writes_every_artifact_and_the_pictures(tmp_path):
    out = tmp_path / "out"
    proc = afc("compile", SEED, "--shape", SEED_SHAPE, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    names = {p.name for p in out.iterdir()}
    assert {
        "kernel.cpp",
        "tiling.cpp",
        "autofuse_tiling_data.h",
        "infer_shape.cpp",
        "proto.json",
        "report.md",
        "graph.mmd",
    } <= names
    assert any(n.startswith("case") and n.endswith(".mmd") for n in names)
    assert "TILING_KEY_IS(" in (out / "kernel.cpp").read_text()
    assert "Choice for the given shape" in (out / "report.md").read_text()
    proto = json.loads((out / "proto.json").read_text())
    assert proto["candidates"] and proto["graph"] == "indirect_load_minimal_graph"


def test_compile_many_graphs_in_parallel(tmp_path):
    a, b = graph_file(tmp_path, "first"), graph_file(tmp_path, "second", "float16")
    proc = afc("compile", str(a), str(b), "-j", "2", "-o", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "first" / "kernel.cpp").exists()
    assert (tmp_path / "out" / "second" / "kernel.cpp").exists()
    assert "compiled 'first'" in proc.stdout and "compiled 'second'" in proc.stdout


def test_explain_lists_every_candidate():
    proc = afc("explain", SEED, "--shape", SEED_SHAPE, "--cores", "48")
    assert proc.returncode == 0, proc.stderr
    assert "chosen" in proc.stdout and "simt" in proc.stdout and "sklike" in proc.stdout
    assert "continuous bytes 5120" in proc.stdout  # s1*s2*s3*2: axis 0 never counts


def test_run_with_random_and_given_inputs(tmp_path):
    path = graph_file(tmp_path)
    proc = afc("run", str(path), "--shape", "a0=4,a1=9,b0=3,b1=5", "--cores", "4")
    assert proc.returncode == 0, proc.stderr
    assert "match" in proc.stdout
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    np.save(inputs / "x.npy", np.arange(36, dtype=np.float32).reshape(4, 9) - 10)
    np.save(inputs / "index.npy", np.array([[0, 8, 3], [1, 1, 1], [7, 6, 5]], dtype=np.int64))
    proc = afc("run", str(path), "--shape", "a0=4,a1=9,b0=3,b1=3", "--inputs", str(inputs))
    assert proc.returncode == 0, proc.stderr
    assert "match" in proc.stdout


def test_a_failing_compile_is_shown_by_its_first_diagnostic(tmp_path):
    """A kernel g++ rejects: afc run names the kernel and prints g++'s first error after the colon."""
    from af_core import toolchain

    cxx = toolchain.compiler_path()
    broken = tmp_path / "broken.h"
    broken.write_text("#error deliberately broken for this test\n")
    wrapper = tmp_path / "cxx"  # g++, plus a header with an #error in front of every kernel.cpp
    wrapper.write_text(
        f'#!/bin/sh\ncase " $* " in *" kernel.cpp "*) exec "{cxx}" -include "{broken}" "$@";; '
        f'esac\nexec "{cxx}" "$@"\n'
    )
    wrapper.chmod(0o755)
    path = graph_file(tmp_path)
    proc = afc(
        "run",
        str(path),
        "--shape",
        "a0=4,a1=9,b0=3,b1=5",
        env={"CXX": str(wrapper), "AF_TWIN_CACHE": str(tmp_path / "cache")},
    )
    assert proc.returncode == 3, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    head, _, shown = lines[0].partition("does not compile (cxx exit 1): ")
    assert "kernel 'autofuse_g' for the twin" in head, lines[0]
    assert shown.startswith(f"{broken}:1:2: error: #error deliberately broken for this test"), lines[0]
    debug = afc(
        "run",
        str(path),
        "--shape",
        "a0=4,a1=9,b0=3,b1=5",
        "--debug",
        env={"CXX": str(wrapper), "AF_TWIN_CACHE": str(tmp_path / "cache")},
    )
    assert debug.returncode == 3 and "Traceback" in debug.stderr and "CompileError" in debug.stderr


def test_demo_runs_every_sample():
    proc = afc("demo", "--cores", "8")
    assert proc.returncode == 0, proc.stderr
    for name in ("seed_minimal", "embedding_post", "index_select_sum", "gather_rows"):
        assert name in proc.stdout
    assert "all outputs match the reference" in proc.stdout


def test_graph_pictures(tmp_path):
    proc = afc("graph", SEED)
    assert proc.returncode == 0 and "flowchart TD" in proc.stdout and "class n5 indirect" in proc.stdout
    assert "stage " in proc.stdout  # case pictures show their stages
    proc = afc("graph", SEED, "--format", "dot", "-o", str(tmp_path / "pics"))
    assert proc.returncode == 0, proc.stderr
    dot = (tmp_path / "pics" / "graph.dot").read_text()
    assert dot.startswith('digraph "indirect_load_minimal_graph"') and "#f9a825" in dot
    assert any("cluster_0" in p.read_text() for p in (tmp_path / "pics").glob("case*.dot"))


def test_svg_without_graphviz_is_a_clean_error(monkeypatch):
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    proc = afc("graph", SEED, "--format", "svg", "--no-cases")
    if proc.returncode == 0:
        assert "<svg" in proc.stdout  # graphviz is installed next to python
    else:
        assert_one_line_error(proc, "graphviz")


def test_bad_inputs_are_one_line_errors(tmp_path):
    assert_one_line_error(afc("compile", str(tmp_path / "missing.py")), "does not exist")
    assert_one_line_error(afc("run", SEED, "--shape", "s0=x"), "must be an integer")
    assert_one_line_error(afc("run", SEED, "--shape", "s0=2"), "needs a value for s1")
    bad = json.loads(graph_file(tmp_path).read_text())
    for node in bad["nodes"]:
        if node["name"] in ("index", "index_load"):
            node["y"]["dtype"] = "float32"  # a float index
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    assert_one_line_error(afc("explain", str(path), "--shape", "a0=2,a1=2,b0=2,b1=2"), "rule 'index-dtype'")
    proc = afc("--debug", "explain", str(path), "--shape", "a0=2,a1=2,b0=2,b1=2")
    assert proc.returncode == 2 and "Traceback" in proc.stderr


def test_no_command_is_a_usage_error():
    proc = afc()
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "see 'afc --help'" in proc.stderr


def test_explain_under_each_selection_policy(tmp_path):
    path = graph_file(tmp_path)
    shape = "a0=48,a1=64,b0=48,b1=16"
    chosen = {}
    for policy in ("seed", "cost"):
        proc = afc("explain", str(path), "--shape", shape, "--cores", "48", "--selection", policy)
        assert proc.returncode == 0, proc.stderr
        assert f"selection policy {policy}" in proc.stdout
        rows = [line.split("│") for line in proc.stdout.splitlines() if "chosen" in line]
        assert len(rows) == 1, proc.stdout
        chosen[policy] = rows[0][2].strip()
    default = afc("explain", str(path), "--shape", shape, "--cores", "48").stdout
    assert "selection policy cost" in default and "lowest modelled cost" in default
    # beside the pick, what the other installed policy would pick
    assert f"other selection policies would pick: seed -> {chosen['seed']}" in default, default
    assert chosen["seed"].startswith("simd") and chosen["cost"] == "simt", chosen
    proc = afc("explain", str(path), "--shape", shape, "--selection", "fastest")
    assert (
        proc.returncode == 2 and "unknown selection policy 'fastest' (installed: cost, seed)" in proc.stderr
    )


def test_run_shows_the_size_names_of_the_graph(tmp_path):
    """Lower-case size names are escaped in the C++ (they could meet a template's own symbols); the
    table shows the names the user wrote."""
    g = GraphBuilder("lower")
    x = g.data("x", ["vocab", "dim"], "float32")
    i = g.data("index", ["batch", "dim"], "int64")
    g.output(gather(x, 0, i), "y")
    path = tmp_path / "lower.json"
    path.write_text(to_json(g.build()))
    proc = afc("run", str(path), "--shape", "vocab=9,dim=4,batch=3")
    assert proc.returncode == 0, proc.stderr
    assert "vocab=9" in proc.stdout and "batch=3" in proc.stdout and "afx" not in proc.stdout
