"""The row gathers the tests compile: each a function returning a HintGraph."""

from __future__ import annotations

from af_core.builders import GraphBuilder, embedding, gather, index_select


def index_select_plain(dtype: str = "float32", index_dtype: str = "int64", negative: bool = True):
    """index_select(x[N, H], 0, idx[K]) with no post chain; negative indices allowed."""
    g = GraphBuilder("isel_plain")
    x = g.data("x", ["N", "H"], dtype)
    idx = g.data("idx", ["K"], index_dtype)
    g.output(index_select(x, 0, idx, need_check_negative=negative), "y")
    return g.build()


def index_select_chain(dtype: str = "float32", index_dtype: str = "int32"):
    """index_select -> Abs -> Adds(0.5): an elementwise chain without side inputs, run once per distinct row."""
    g = GraphBuilder("isel_chain")
    x = g.data("x", ["N", "H"], dtype)
    idx = g.data("idx", ["K"], index_dtype)
    y = g.op("Adds", g.op("Abs", index_select(x, 0, idx, need_check_negative=True)), value=0.5)
    g.output(y, "y")
    return g.build()


def index_select_bound(dtype: str = "float16"):
    """index_select, bound-checked: out-of-range rows are zeros."""
    g = GraphBuilder("isel_bound")
    x = g.data("x", ["N", "H"], dtype)
    idx = g.data("idx", ["K"], "int32")
    g.output(index_select(x, 0, idx, need_check_bound=True), "y")
    return g.build()


def embedding_2d(dtype: str = "bfloat16", index_dtype: str = "int32"):
    """embedding(ids[B, S], weight[V, D]): positions over two output axes, table stride 0 on the first."""
    g = GraphBuilder("emb2d")
    weight = g.data("weight", ["V", "D"], dtype)
    ids = g.data("ids", ["B", "S"], index_dtype)
    g.output(embedding(weight, ids), "y")
    return g.build()


def middle_axis_select(dtype: str = "int32"):
    """index_select(x[A, N, H], 1, idx[K]): positions over an outer axis the table has too."""
    g = GraphBuilder("isel_middle")
    x = g.data("x", ["A", "N", "H"], dtype)
    idx = g.data("idx", ["K"], "int64")
    g.output(index_select(x, 1, idx), "y")
    return g.build()


def row_reduce():
    """index_select -> sum over the row: a reduce after the gather."""
    g = GraphBuilder("isel_sum")
    x = g.data("x", ["N", "H"], "float32")
    idx = g.data("idx", ["K"], "int32")
    g.output(g.reduce("Sum", index_select(x, 0, idx), [1]), "y")
    return g.build()


def side_input_chain():
    """index_select times a per-position scale: a side input indexed by position."""
    g = GraphBuilder("isel_side")
    x = g.data("x", ["N", "H"], "float32")
    idx = g.data("idx", ["K"], "int32")
    y = index_select(x, 0, idx)
    scale = g.broadcast(g.data("scale", ["K", 1], "float32"), y.shape)
    g.output(g.op("Mul", y, scale), "y")
    return g.build()


def full_index_gather():
    """torch.gather with an index that varies inside the row: not a row gather."""
    g = GraphBuilder("full_gather")
    x = g.data("x", ["N", "H"], "float32")
    idx = g.data("idx", ["K", "H"], "int32")
    g.output(gather(x, 0, idx), "y")
    return g.build()
