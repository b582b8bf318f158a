"""The back end's maximum rank runs clean under the sanitizers; one more is a validation error."""

from __future__ import annotations

import pytest

from af_core.builders import GraphBuilder, gather
from af_core.errors import AscirError
from af_core.ir.validate import MAX_RANK
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin


def rank_graph(rank: int):
    g = GraphBuilder(f"rank{rank}")
    shape = [f"d{i}" for i in range(rank)]
    x = g.data("x", shape, "float32")
    idx = g.data("idx", shape[:-1] + ["k0"], "int32")
    g.output(g.op("Relu", gather(x, rank - 1, idx)), "y")
    return g


def test_max_rank_runs_under_sanitizers():
    session = TwinSession(rank_graph(MAX_RANK).build(), sanitize=True)
    sizes = {f"d{i}": 2 for i in range(MAX_RANK)} | {"k0": 3}
    for case in session.scheduled.cases:
        run = session.check(sizes, seed=case.tiling_key, core_num=3, tiling_key=case.tiling_key)
        assert run.ok, f"{case.label}: {run.describe()}"


def test_one_rank_more_is_rejected_before_codegen():
    with pytest.raises(AscirError) as info:
        rank_graph(MAX_RANK + 1).build()
    assert info.value.rule == "rank-max"
