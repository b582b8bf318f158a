"""The row gathers the tests compile: each a function returning a HintGraph, plus a size strategy."""

from __future__ import annotations

from af_core.builders import GraphBuilder, embedding, gather, index_select


def index_select_relu(dtype: str = "float32", index_dtype: str = "int64"):
    """index_select(x[N, H], 0, idx[K]) -> Relu; negative indices allowed."""
    g = GraphBuilder("isel_relu")
    x = g.data("x", ["N", "H"], dtype)
    idx = g.data("idx", ["K"], index_dtype)
    g.output(g.op("Relu", index_select(x, 0, idx, need_check_negative=True)), "y")
    return g.build()


def index_select_scaled_bound(dtype: str = "float16"):
    """index_select, bound-checked (out-of-range rows are zeros), times a broadcast row, plus a scalar."""
    g = GraphBuilder("isel_scaled")
    x = g.data("x", ["N", "H"], dtype)
    idx = g.data("idx", ["K"], "int32")
    y = index_select(x, 0, idx, need_check_bound=True)
    scale = g.broadcast(g.data("scale", [1, "H"], dtype), y.shape)
    y = g.op("Adds", g.op("Mul", y, scale), value=0.5)
    g.output(y, "y")
    return g.build()


def embedding_2d_sigmoid(dtype: str = "bfloat16"):
    """embedding(ids[B, S], weight[V, D]) -> Sigmoid: rows over two output axes, table stride 0 on the first."""
    g = GraphBuilder("emb2d")
    weight = g.data("weight", ["V", "D"], dtype)
    ids = g.data("ids", ["B", "S"], "int32")
    g.output(g.op("Sigmoid", embedding(weight, ids)), "y")
    return g.build()


def middle_axis_select(dtype: str = "int32"):
    """index_select(x[A, N, H], 1, idx[K]) with no post chain: the copied tile is stored as it is."""
    g = GraphBuilder("isel_middle")
    x = g.data("x", ["A", "N", "H"], dtype)
    idx = g.data("idx", ["K"], "int64")
    g.output(index_select(x, 1, idx), "y")
    return g.build()


def row_reduce(kind: str = "Sum", dtype: str = "float32"):
    """index_select(x[N, H, W], 0, idx[K]) -> Abs -> reduce over the last axis, inside each row."""
    g = GraphBuilder(f"isel_{kind.lower()}")
    x = g.data("x", ["N", "H", "W"], dtype)
    idx = g.data("idx", ["K"], "int32")
    y = g.op("Abs", index_select(x, 0, idx))
    g.output(g.reduce(kind, y, [2]), "y")
    return g.build()


def full_index_gather():
    """torch.gather with an index that varies inside the row: not a row gather."""
    g = GraphBuilder("full_gather")
    x = g.data("x", ["N", "H"], "float32")
    idx = g.data("idx", ["K", "H"], "int32")
    g.output(gather(x, 0, idx), "y")
    return g.build()


def index_chain_select():
    """index_select whose index goes through an op first."""
    g = GraphBuilder("index_chain")
    x = g.data("x", ["N", "H"], "float32")
    idx = g.data("idx", ["K", "H"], "int32")
    g.output(gather(x, 0, g.op("Maxs", idx, value=0.0)), "y")
    return g.build()


def reduce_over_rows():
    """index_select then a sum over the selected rows: the reduce crosses rows."""
    g = GraphBuilder("sum_rows")
    x = g.data("x", ["N", "H"], "float32")
    idx = g.data("idx", ["K"], "int32")
    g.output(g.reduce("Sum", index_select(x, 0, idx), [0]), "y")
    return g.build()
