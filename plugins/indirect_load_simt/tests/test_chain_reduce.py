"""The UB reduce (``simt``) finishes a tile with the back end's register chain when the chain accepts the
view: every run is compared with the reference interpreter, and the case's predicted API calls, register
instructions and cycles, lane accesses and written bytes equal what the twin counts."""

from __future__ import annotations

import pytest

from af_core.autofuser import AutofuserOptions
from af_core.builders import GraphBuilder, embedding
from af_core.schedule.cost import COUNTER_NAMES, twin_counters
from af_core.tiling.solve import CaseRef, solve
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin
CORES = 8
EXACT = ("api_calls", "reg_instructions", "reg_cycles", "scalar_accesses", "write_bytes")


def bag(kind: str, width, dtype: str):
    """An embedding bag: weight [V, width] gathered by ids [B, L], reduced over the bag."""
    g = GraphBuilder(f"bag_{kind.lower()}")
    w = g.data("weight", ["V", width], dtype)
    ids = g.data("ids", ["B", "L"], "int64")
    g.output(g.reduce(kind, embedding(w, ids), [1]), "y")
    return g.build()


def dot(width: int, dtype: str):
    """Rows gathered by ids [B, N] and dotted with a query row per B (the HSTU negatives' shape)."""
    g = GraphBuilder("dot")
    w = g.data("weight", ["V", width], dtype)
    ids = g.data("ids", ["B", "N"], "int64")
    q = g.data("query", ["B", 1, width], dtype)
    rows = embedding(w, ids)
    g.output(g.reduce("Sum", g.mul(rows, g.broadcast(q, ["B", "N", width])), [2]), "y")
    return g.build()


def predicted_and_twin(session: TwinSession, sizes: dict[str, int]) -> tuple[dict, dict]:
    """The ``simt`` case's predicted counters at ``sizes`` and the twin's, after a run that must match."""
    inputs = session.inputs(sizes, seed=5)
    sch = session.scheduled
    case = next(c for c in sch.cases if c.label == "simt")
    ev = solve([CaseRef.of(case)], sch.size_names, inputs.sizes, CORES, sch.platform.ub_size, sch.guards)
    run = session.check(inputs=inputs, core_num=CORES, tiling_key=case.tiling_key)
    assert run.ok, run.describe()
    predicted = {n: ev.evaluations[0].resources[n] for n in COUNTER_NAMES}
    return predicted, twin_counters(run.twin.counters)


CHAINED = [
    pytest.param(bag("Sum", 64, "float32"), {"V": 4000, "B": 96, "L": 12}, id="sum-f32-64"),
    pytest.param(bag("Mean", 64, "float32"), {"V": 400, "B": 50, "L": 9}, id="mean-f32-64"),
    pytest.param(bag("Sum", 256, "float16"), {"V": 500, "B": 40, "L": 16}, id="sum-f16-256"),
    pytest.param(bag("Max", 40, "float32"), {"V": 500, "B": 30, "L": 7}, id="max-f32-40"),
    pytest.param(dot(256, "float32"), {"V": 300, "B": 6, "N": 16}, id="dot-f32-256"),
    pytest.param(dot(33, "float16"), {"V": 97, "B": 15, "N": 7}, id="dot-f16-33-unaligned"),
    pytest.param(dot(8, "float32"), {"V": 50, "B": 6, "N": 4}, id="dot-f32-8"),
]


@pytest.mark.parametrize("graph,sizes", CHAINED)
def test_the_chain_reduces_the_tile_and_predicts_the_twin(graph, sizes):
    session = TwinSession(graph, AutofuserOptions(force_template="simt"))
    predicted, measured = predicted_and_twin(session, sizes)
    assert measured["reg_instructions"] > 0, "the register chain did not take the reduce"
    for name in EXACT:
        assert predicted[name] == measured[name], (name, predicted[name], measured[name])


def test_a_kept_inner_size_the_graph_leaves_open_keeps_a_reduce_call_per_group():
    """With the kept width a size symbol, the chain cannot know its rows start on 32-byte blocks; the
    reduce stays a call per group, predicted as exactly."""
    session = TwinSession(bag("Sum", "D", "float32"), AutofuserOptions(force_template="simt"))
    predicted, measured = predicted_and_twin(session, {"V": 300, "B": 20, "L": 5, "D": 16})
    assert measured["reg_instructions"] == 0
    assert measured["api_calls"] >= 20 * 5  # a copy and Adds for each of the 20 groups of 5 rows
    for name in EXACT:
        assert predicted[name] == measured[name], (name, predicted[name], measured[name])
