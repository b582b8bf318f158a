"""The workload corpus is package data: a wheel built from the repository carries it and loads it.

A non-editable install has no ``benchmarks/`` beside the package, so the corpus
must come from inside ``af_core``; this builds the af-core wheel (pip, the
build backend of pyproject.toml) and loads the corpus from the unpacked wheel
in a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from af_core.workloads import CORPUS, corpus_text, load_workloads

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # a copy of what the wheel is built from, so the build leaves nothing in the checkout
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "af_core", source / "af_core", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    (found,) = out.glob("af_core-*.whl")
    return found


def test_one_corpus_in_the_repository_and_it_is_inside_the_package():
    assert not (ROOT / "benchmarks" / "workloads.json").exists()
    assert (ROOT / "af_core" / CORPUS).is_file()
    cases = json.loads(corpus_text())["cases"]
    assert [w.name for w in load_workloads()] == [c["name"] for c in cases]


def test_the_wheel_carries_the_corpus_and_loads_it_without_the_checkout(wheel, tmp_path):
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read(f"af_core/{CORPUS}") == (ROOT / "af_core" / CORPUS).read_bytes()
        archive.extractall(tmp_path / "site")
    script = "import af_core, af_core.workloads as w; print(af_core.__file__); print(len(w.load_workloads()))"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    where, count = proc.stdout.split()
    assert Path(where).is_relative_to(tmp_path / "site")
    assert int(count) == len(json.loads(corpus_text())["cases"]) > 0


def test_the_wheel_carries_the_json_schema_of_graph_files(wheel, tmp_path):
    name = "af_core/ir/graph.schema.json"
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read(name) == (ROOT / name).read_bytes()
        archive.extractall(tmp_path / "site")
    script = (
        "from importlib.resources import files; import json; "
        "print(json.loads((files('af_core.ir') / 'graph.schema.json').read_text())['title'])"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.strip() == "af graph file (af-hintgraph/1)"
