"""pytest-benchmark: schedule + codegen latency (no g++), for trend tracking.

Run with ``pytest benchmarks --benchmark-only`` (``python3 dev.py bench`` does).
No assertion on time: numbers go to BENCHMARKS.md, not into pass/fail.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from new_graphs import FRESH_PROCESS, bytecode_env, new_minimal_graph  # beside this file

from af_core.autofuser import Autofuser
from af_core.samples import seed_minimal
from af_core.testing import chain_graph


def compile_graph(graph):
    """Schedule and generate, every artifact read (the proto is rendered on first read)."""
    fuser = Autofuser()
    result = fuser.generate(fuser.schedule(graph))
    result.files()
    return result


def test_seed_minimal_graph(benchmark):
    graph = seed_minimal()
    result = benchmark(compile_graph, graph)
    assert "TILING_KEY_IS(" in result.kernel


@pytest.mark.parametrize("ops", [1, 8, 32, 128])
def test_chain(benchmark, ops):
    chain = tuple(("Relu", "Muls(1.5)", "Exp", "Abs")[i % 4] for i in range(ops))
    graph = chain_graph(rank=3, dim=1, post=chain)
    result = benchmark(compile_graph, graph)
    assert result.kernel.count("AscendC::") > ops


def test_new_minimal_graph_each_round(benchmark):
    """Cold caches in a warm process: every round compiles a graph (name, size names) never seen before."""
    fuser = Autofuser()
    fuser.generate(fuser.schedule(seed_minimal()))  # the process is warm: plugins loaded, code paths run

    def setup():
        return (new_minimal_graph(),), {}

    def compile_new(graph):
        result = fuser.generate(fuser.schedule(graph))
        result.files()
        return result

    result = benchmark.pedantic(compile_new, setup=setup, rounds=15)
    assert "TILING_KEY_IS(" in result.kernel


def test_fresh_process_imports_and_first_compile(benchmark):
    """A fresh interpreter: import af_core's compiler and compile the minimal graph once (whole process)."""

    env = bytecode_env()  # with cached bytecode, as an installed package has it

    def fresh():
        return subprocess.run(
            [sys.executable, "-c", FRESH_PROCESS],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )

    fresh()  # writes the bytecode

    proc = benchmark.pedantic(fresh, rounds=5)
    imported, first, imported_cpu, first_cpu = (float(v) for v in proc.stdout.split())
    assert min(imported, first, imported_cpu, first_cpu) > 0
