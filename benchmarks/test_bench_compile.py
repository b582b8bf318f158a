"""pytest-benchmark: schedule + codegen latency (no g++), for trend tracking.

Run with ``pytest benchmarks --benchmark-only`` (``python3 dev.py bench`` does).
No assertion on time: numbers go to BENCHMARKS.md, not into pass/fail.
"""

from __future__ import annotations

import pytest

from af_core.autofuser import Autofuser
from af_core.samples import seed_minimal
from af_core.testing import chain_graph


def compile_graph(graph):
    fuser = Autofuser()
    return fuser.generate(fuser.schedule(graph))


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
