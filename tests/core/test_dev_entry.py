"""dev.py's test command: environments are built one at a time, then tested in parallel.

pip builds a local project inside its own folder (build/, *.egg-info); two tox
environments installing the same af-* package at once can delete each other's
files mid-build. The test command therefore builds every environment first,
sequentially, and only then runs the tests in parallel.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

DEV = Path(__file__).resolve().parents[2] / "dev.py"


def load_dev() -> ModuleType:
    spec = importlib.util.spec_from_file_location("af_dev_entry", DEV)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def dev(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, list[list[str]], list[int]]:
    module = load_dev()
    calls: list[list[str]] = []
    results: list[int] = []
    monkeypatch.setattr(module, "ensure_tox", lambda: Path("/venv/bin/tox"))

    def call(args: list[str], cwd: Path) -> int:
        calls.append(list(args))
        return results.pop(0) if results else 0

    monkeypatch.setattr(module.subprocess, "call", call)
    return module, calls, results


def test_environments_are_built_sequentially_before_the_parallel_run(dev) -> None:
    module, calls, _ = dev
    assert module.main(["test", "-e", "core,simd", "--", "-k", "tiling"]) == 0
    assert len(calls) == 2
    setup, run = calls
    assert setup[1:3] == ["run", "--notest"]
    assert "run-parallel" not in setup
    assert run[1] == "run-parallel"
    # the same selection and posargs reach both phases
    assert setup[-5:] == run[-5:] == ["-e", "core,simd", "--", "-k", "tiling"]


def test_a_failed_build_stops_before_any_test_runs(dev) -> None:
    module, calls, results = dev
    results.append(3)
    assert module.main(["test"]) == 3
    assert len(calls) == 1 and "--notest" in calls[0]
