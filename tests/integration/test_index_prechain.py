"""Index pre-chains on embedding / index_select: ``embedding(w, ids - start)`` and masked ids.

The builders view the whole elementwise chain computing the index (not only
a Load straight from ``g.data()``); the twin's output equals both the
reference interpreter and a numpy expectation written out by hand. What
cannot be viewed (an index also used elsewhere) is refused with rule
``builder-view`` naming the node.
"""

from __future__ import annotations

import numpy as np
import pytest

from af_core.builders import GraphBuilder, embedding, index_select
from af_core.errors import AscirError
from af_core.twin import TwinSession

START, END = 40, 104


def shard_graph(masked: bool):
    """Vocab-parallel shard: rows [START, END) of the vocabulary live in a [END-START, D] table."""
    g = GraphBuilder("shard_masked" if masked else "shard_shifted")
    w = g.data("weight", [END - START, "D"], "float32")
    ids = g.data("ids", ["B", "L"], "int64")
    local = g.op("Subs", ids, value=float(START))
    if masked:
        outside = g.op("LogicalOr", g.op("Lts", ids, value=float(START)), g.op("Ges", ids, value=float(END)))
        keep = g.cast(g.op("LogicalNot", outside), "int64")
        local = g.op("Mul", local, keep)  # ids outside the shard read row 0
    g.output(embedding(w, local), "y")
    return g.build()


def test_shifted_and_masked_embedding_views_the_whole_index_chain():
    graph = shard_graph(masked=True)
    ids_data = graph.node("ids")
    assert [str(s) for s in ids_data.y.strides][-1] == "0"  # the Data is the broadcast view
    for name in ("subs", "lts", "ges", "logicalor", "logicalnot", "cast", "mul"):
        assert len(graph.node(name).y.size) == 3, name


@pytest.mark.twin
@pytest.mark.parametrize("masked", [False, True])
def test_prechained_embedding_runs_on_the_twin(masked):
    session = TwinSession(shard_graph(masked))
    rng = np.random.default_rng(3)
    for b, length, d in ((2, 5, 8), (3, 7, 16)):
        weight = rng.standard_normal((END - START, d)).astype(np.float32)
        low, high = (0, 160) if masked else (START, END)
        ids = rng.integers(low, high, (b, length)).astype(np.int64)
        # logical views: the table broadcast over B, the ids over D (the Data nodes' stride-0 views)
        arrays = {
            "weight": np.broadcast_to(weight, (b, END - START, d)),
            "ids": np.broadcast_to(ids[..., None], (b, length, d)),
        }
        run = session.check(inputs=session.inputs({"D": d, "B": b, "L": length}, arrays=arrays))
        assert run.ok, run.describe()
        inside = (ids >= START) & (ids < END)
        local = np.where(inside, ids - START, 0) if masked else ids - START
        np.testing.assert_array_equal(run.twin.outputs["y"], weight[local])  # bitwise: data movement


def test_index_used_elsewhere_is_refused_with_builder_view():
    g = GraphBuilder("shared_index")
    x = g.data("x", ["N", "H"], "float32")
    idx = g.data("idx", ["K"], "int32")
    shifted = g.op("Adds", idx, value=1.0)
    g.output(g.op("Muls", idx, value=2.0), "other")
    with pytest.raises(AscirError) as err:
        index_select(x, 0, shifted)
    assert err.value.rule == "builder-view"
    assert "idx_load" in str(err.value)
