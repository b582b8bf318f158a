"""The host memory budget: a run estimated to need more than the limit is refused before any allocation.

The command line runs in a child process whose address space is capped (``RLIMIT_AS``), so a
regression that allocated the run's arrays again fails with exit 3 instead of taking the machine's
memory; the API is refused in process with small limits.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from af_core.builders import GraphBuilder, embedding, index_select
from af_core.cli import main
from af_core.errors import MemoryBudgetError
from af_core.ir.serialize import to_json
from af_core.samples import lookup
from af_core.twin import TwinSession, run_graph
from af_core.twin.budget import MemoryLimit

pytestmark = pytest.mark.twin
CAP = 4 << 30  # address space of a child afc: more than it needs, far less than a refused run's arrays


def emb_graph():
    """The README's builders example."""
    g = GraphBuilder("emb")
    w = g.data("weight", ["V", 64], "float32")
    ids = g.data("ids", ["B", "L"], "int64")
    g.output(g.reduce("Sum", embedding(w, ids), [1]))
    return g.build()


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def afc_capped(
    *args: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "af_core", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        preexec_fn=_cap,
        timeout=timeout,
    )


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1, (proc.returncode, proc.stderr)
    assert lines[0].startswith("afc: error: ") and "Traceback" not in proc.stderr
    return lines[0]


def test_a_huge_size_is_refused_before_any_allocation(tmp_path):
    """V=10^10 used to reach numpy's allocation of the inputs (exit 3, "internal error ... a bug")."""
    graph = tmp_path / "g.json"
    graph.write_text(to_json(emb_graph()))
    line = one_error_line(afc_capped("run", str(graph), "--shape", "V=10000000000,B=4,L=8"))
    assert "sizes V=10000000000, B=4, L=8 need an estimated" in line
    assert "over the limit of" in line and "'weight'" in line and "--max-memory" in line


def test_a_huge_data_stride_is_refused_before_any_allocation(tmp_path):
    """A Data node whose constant stride spans a TiB of storage at small sizes compiles, and used to run."""
    g = GraphBuilder("strided")
    x = g.data("x", ["N", "H"], "float32", strides=[1 << 40, 1])
    idx = g.data("idx", ["K"], "int64")
    g.output(g.reduce("Sum", index_select(x, 0, idx), [1]), "y")
    graph = tmp_path / "strided.json"
    graph.write_text(to_json(g.build()))
    assert main(["compile", str(graph), "-o", str(tmp_path / "out")]) == 0
    line = one_error_line(afc_capped("run", str(graph), "--shape", "N=4,H=8,K=3"))
    assert (
        "sizes N=4, H=8, K=3 need an estimated" in line and "the largest tensor, 'x', takes 12.0 TiB" in line
    )


def test_max_memory_and_af_max_memory_set_the_limit(tmp_path):
    graph = tmp_path / "g.json"
    graph.write_text(to_json(emb_graph()))
    shape = ("--shape", "V=100,B=4,L=8")
    line = one_error_line(afc_capped("run", str(graph), *shape, "--max-memory", "1M"))
    assert (
        "sizes V=100, B=4, L=8 need an estimated" in line
        and "over the limit of 1.0 MiB (--max-memory)" in line
    )
    line = one_error_line(afc_capped("run", str(graph), *shape, env={"AF_MAX_MEMORY": "2M"}))
    assert "over the limit of 2.0 MiB (AF_MAX_MEMORY)" in line
    line = one_error_line(afc_capped("run", str(graph), *shape, env={"AF_MAX_MEMORY": "plenty"}))
    assert "AF_MAX_MEMORY must be a byte count" in line and "'plenty'" in line
    proc = afc_capped("run", str(graph), *shape, "--max-memory", "0")
    assert proc.returncode == 2 and "--max-memory must be at least 1 byte" in proc.stderr
    proc = afc_capped("run", str(graph), *shape, "--max-memory", "1G", env={"AF_MAX_MEMORY": "1M"})
    assert proc.returncode == 0, proc.stderr  # the argument wins over the environment


def test_the_python_api_refuses_too_and_builds_nothing():
    graph = emb_graph()
    sizes = {"V": 100, "B": 4, "L": 8}
    session = TwinSession(graph, max_memory=1 << 20, defer_build=True)
    for call in (lambda: session.inputs(sizes), lambda: session.check(sizes)):
        with pytest.raises(MemoryBudgetError) as caught:
            call()
        assert caught.value.limit == 1 << 20 and caught.value.estimate > 1 << 20
        assert "sizes V=100, B=4, L=8 need an estimated" in str(caught.value)
    arrays = {"weight": np.zeros((100, 64), np.float32), "ids": np.zeros((4, 8), np.int64)}
    with pytest.raises(MemoryBudgetError):
        session.inputs(arrays=arrays)
    assert session._build is None  # refused before g++ was asked for anything
    with pytest.raises(MemoryBudgetError, match="sizes V=10000000000, B=4, L=8"):
        run_graph(graph, {"V": 10**10, "B": 4, "L": 8})
    with pytest.raises(MemoryBudgetError, match=r"\(a test\)"):
        run_graph(graph, sizes, max_memory=MemoryLimit(1000, "a test"))


def test_af_max_memory_applies_to_sessions(monkeypatch):
    monkeypatch.setenv("AF_MAX_MEMORY", "3M")
    session = TwinSession(emb_graph(), defer_build=True)
    with pytest.raises(MemoryBudgetError, match=r"over the limit of 3\.0 MiB \(AF_MAX_MEMORY\)"):
        session.check({"V": 100, "B": 4, "L": 8})
    plan = TwinSession(emb_graph(), max_memory=1 << 30, defer_build=True).plan({"V": 100, "B": 4, "L": 8})
    assert plan.limit == MemoryLimit(1 << 30, "max_memory") and plan.memory.total < 1 << 30


MEASURE = textwrap.dedent(
    """
    import json, resource, sys, tracemalloc
    from af_core.samples import lookup
    from af_core.twin import TwinSession

    sample, sizes = sys.argv[1], json.loads(sys.argv[2])
    session = TwinSession(lookup(sample).build())
    plan = session.plan(sizes)
    tracemalloc.start()
    run = session.check(sizes)
    python_peak = tracemalloc.get_traced_memory()[1]
    twin_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    m = plan.memory
    print(json.dumps([run.ok, python_peak, m.total - m.twin, twin_peak, m.twin]))
    """
)


@pytest.mark.parametrize(
    "sample,sizes",
    [
        ("embedding_post", {"V": 1000, "D": 64, "B": 30000}),
        ("index_select_sum", {"N": 5000, "H": 96, "K": 20000}),
    ],
)
def test_the_estimate_bounds_what_a_run_takes(sample, sizes):
    """numpy's allocations (tracemalloc) stay under the Python parts, the twin's peak RSS under its part."""
    TwinSession(lookup(sample).build())  # built here, so the child's only child is the twin run
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, sample, json.dumps(sizes)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    ok, python_peak, python_bound, twin_peak, twin_bound = json.loads(proc.stdout.splitlines()[-1])
    assert ok
    assert 0 < python_peak <= python_bound, (python_peak, python_bound)
    assert 0 < twin_peak <= twin_bound, (twin_peak, twin_bound)


def _npy_header(path: Path, shape: tuple[int, ...]) -> None:
    """An .npy file whose header announces ``shape`` (float32) but which holds 16 bytes of data."""
    with path.open("wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": shape})
        f.write(bytes(16))


def _rows_graph(tmp_path: Path) -> Path:
    g = GraphBuilder("rows")
    x = g.data("x", ["N", "H"], "float32")
    idx = g.data("idx", ["K"], "int64")
    g.output(g.reduce("Sum", index_select(x, 0, idx), [1]), "y")
    graph = tmp_path / "rows.json"
    graph.write_text(to_json(g.build()))
    (tmp_path / "in").mkdir()
    np.save(tmp_path / "in" / "idx.npy", np.zeros(3, np.int64))
    return graph


def test_an_npy_file_announcing_more_than_it_holds_is_refused_unread(tmp_path):
    """np.load allocated what the header announced (here 40 TB) before finding the file short."""
    graph, inputs = _rows_graph(tmp_path), tmp_path / "in"
    _npy_header(inputs / "x.npy", (10**13, 1))
    line = one_error_line(afc_capped("run", str(graph), "--inputs", str(inputs)))
    assert "x.npy' is not a readable .npy array" in line and "announces 40000000000000 bytes" in line


def test_input_arrays_over_the_limit_are_refused_before_they_are_read(tmp_path):
    graph, inputs = _rows_graph(tmp_path), tmp_path / "in"
    np.save(inputs / "x.npy", np.zeros((5000, 100), np.float32))
    line = one_error_line(afc_capped("run", str(graph), "--inputs", str(inputs), "--max-memory", "1M"))
    assert "--inputs arrays hold 1.9 MiB, over the memory limit of 1.0 MiB (--max-memory)" in line


def test_an_npy_path_that_is_not_a_regular_file_is_refused(tmp_path):
    """A FIFO named x.npy used to block np.load for ever."""
    graph, inputs = _rows_graph(tmp_path), tmp_path / "in"
    os.mkfifo(inputs / "x.npy")
    line = one_error_line(afc_capped("run", str(graph), "--inputs", str(inputs), timeout=120))
    assert "x.npy' is not a regular file" in line
