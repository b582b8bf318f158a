"""The twin's shared-L2 counters on generated kernels, against the line counters measured beside them.

With the default L2 (128 MiB, 128-byte lines, 16 ways) everything these sizes touch fits, so nothing is
evicted: the lines read from HBM are the distinct lines read (``cachelines_read``, 128-byte lines too)
unless a kernel reads a line it wrote first (its workspace), and the lines written back are the distinct
lines written (``cachelines_written``). The bytes cores read from L2 are the DataCopy bytes plus one line
per data-cache fill, whatever the replay order.
"""

from __future__ import annotations

import pytest

from af_core.autofuser import AutofuserOptions
from af_core.builders import GraphBuilder, embedding
from af_core.errors import AfError
from af_core.platform import Platform
from af_core.testing import chain_graph
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin
CORES = 8
LINE = 128


def _lookup(rows: int, width: int):
    """weight [rows, width] float32, ids [N] int64 -> embedding -> y: every core reads rows others read."""
    g = GraphBuilder("l2_lookup")
    w = g.data("weight", [rows, width], "float32")
    ids = g.data("ids", ["N"], "int64")
    g.output(embedding(w, ids), "y")
    return g.build()


def _every_case(session: TwinSession, sizes: dict[str, int]):
    """(case label, run) for each case of the session that fits ``sizes`` on :data:`CORES` cores."""
    inputs = session.inputs(sizes, seed=5)
    for case in session.scheduled.cases:
        try:
            run = session.check(inputs=inputs, core_num=CORES, tiling_key=case.tiling_key)
        except AfError:
            continue  # the case does not fit these sizes
        assert run.ok, run.describe()
        yield case.label, run.twin


def _check_levels(label: str, twin) -> None:
    k = twin.counters
    assert k["l2_read_bytes"] == k["gm_read_bytes"] + LINE * k["dcache_misses"], (label, k)
    if k["scalar_gm_writes"] == 0:
        assert k["l2_write_bytes"] == k["gm_write_bytes"], (label, k)
    assert k["hbm_write_bytes"] == LINE * k["cachelines_written"], (label, k)
    if twin.workspace_size == 0:
        assert k["hbm_read_bytes"] == LINE * k["cachelines_read"], (label, k)
    else:  # a workspace line written before it is read comes from L2
        assert k["hbm_read_bytes"] <= LINE * k["cachelines_read"], (label, k)
    assert k["l2_misses"] * LINE >= k["hbm_read_bytes"] and k["l2_hits"] >= 0, (label, k)


def test_a_gather_chain_reads_each_line_from_hbm_once_in_every_case():
    session = TwinSession(chain_graph(rank=3, dim=1, post=("Relu",)))
    sizes = {"a0": 12, "a1": 40, "a2": 64, "b0": 12, "b1": 10, "b2": 64}
    labels = []
    for label, twin in _every_case(session, sizes):
        _check_levels(label, twin)
        labels.append(label)
    assert {"simd/db", "sklike"} <= set(labels), labels


def test_rows_many_cores_read_come_from_hbm_once_and_from_l2_each_time():
    # 4096 lookups of 50 rows of 256 bytes: the table is 100 lines, read many times over by 8 cores
    session = TwinSession(_lookup(50, 64))
    seen = {}
    for label, twin in _every_case(session, {"N": 4096}):
        _check_levels(label, twin)
        k = twin.counters
        table, ids, out = 50 * 256 // LINE, 4096 * 8 // LINE, 4096 * 256 // LINE
        assert k["hbm_read_bytes"] <= (table + ids) * LINE, (label, k)
        assert k["hbm_write_bytes"] == out * LINE, (label, k)
        assert k["l2_hits"] > 0 and k["l2_read_bytes"] > k["hbm_read_bytes"], (label, k)
        if k["dcache_misses"] == 0:  # every looked-up row crosses from L2 to a core (DataCopy)
            assert k["l2_read_bytes"] >= 4096 * 256, (label, k)
        else:  # or from L2 to the core's data cache, at least once a core
            assert k["l2_read_bytes"] >= 50 * 256, (label, k)
        seen[label] = k
    assert any(k["dcache_misses"] > 0 for k in seen.values()), seen  # a case reading through the data cache


def test_the_platforms_l2_reaches_the_twin():
    # the same lookups with an L2 of one 16-way set of 128-byte lines (2 KiB): the 100 table lines no longer
    # fit, so rows read again come from HBM again
    small = Platform(l2_size=16 * LINE, l2_line=LINE, l2_ways=16)
    graph, sizes = _lookup(50, 64), {"N": 4096}
    default = dict(_every_case(TwinSession(graph), sizes))
    tiny = dict(_every_case(TwinSession(graph, AutofuserOptions(platform=small)), sizes))
    assert default.keys() == tiny.keys() and default, (default.keys(), tiny.keys())
    for label, twin in tiny.items():
        k, d = twin.counters, default[label].counters
        assert k["l2_read_bytes"] == d["l2_read_bytes"] and k["gm_read_bytes"] == d["gm_read_bytes"], label
        assert k["hbm_read_bytes"] > d["hbm_read_bytes"], (label, k, d)
