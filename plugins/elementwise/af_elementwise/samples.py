"""Sample graphs that use this plugin's ops, registered for ``afc demo``, the docs and the tests."""

from __future__ import annotations

from af_core.template_api import GraphBuilder, HintGraph, Sample, embedding, gather


def embedding_post() -> HintGraph:
    """Token embedding scaled and passed through a sigmoid gate (bfloat16)."""
    g = GraphBuilder("embedding_scaled_gate")
    weight = g.data("weight", ["V", "D"], "bfloat16")
    ids = g.data("ids", ["B"], "int32")
    y = embedding(weight, ids)
    y = g.op("Muls", y, value=45.25)
    y = g.op("Sigmoid", y)
    g.output(y, "y")
    return g.build()


def gather_rows() -> HintGraph:
    """torch.gather along the middle axis of [B, L, D] rows, bound-checked."""
    g = GraphBuilder("gather_rows")
    x = g.data("x", ["B", "L", "D"], "float16")
    idx = g.data("idx", ["B", "K", "D"], "int32")
    y = gather(x, 1, idx, need_check_bound=True)
    g.output(g.op("Relu", y), "y")
    return g.build()


SAMPLES: tuple[Sample, ...] = (
    Sample(
        "embedding_post",
        "embedding + scale + sigmoid",
        embedding_post,
        ({"V": 1000, "D": 64, "B": 300}, {"V": 50, "D": 4, "B": 7}),
    ),
    Sample(
        "gather_rows",
        "gather on the middle axis, bound-checked, relu",
        gather_rows,
        ({"B": 96, "L": 40, "D": 16, "K": 8}, {"B": 3, "L": 5, "D": 3, "K": 2}),
    ),
)
