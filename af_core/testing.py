"""Test helpers for af_core and plugin authors: graphs, inputs, comparisons.

Plugin test suites import these instead of re-writing graph boilerplate;
they are part of the public API (like pytest's ``pytester``).
"""

from __future__ import annotations

from af_core import ascir


def seed_style_gather(
    *,
    dtype=ascir.dtypes.float16,
    index_dtype=ascir.dtypes.int32,
    dim: int = 2,
    rank: int = 4,
    static: dict[str, int] | None = None,
    name: str = "gather_graph",
):
    """Data -> Load -> IndirectLoad -> Store -> Output, like the first seed's script."""
    graph = ascir.HintGraph(name)
    static = static or {}

    def size(n: str):
        return graph.create_size(static[n]) if n in static else graph.create_size(n)

    ins = [size(f"s{i}") for i in range(rank)]
    outs = [size(f"s{i}") for i in range(rank, 2 * rank)]
    in_axes = [graph.create_axis(f"z{i}", s) for i, s in enumerate(ins)]
    out_axes = [graph.create_axis(f"z{rank + i}", s) for i, s in enumerate(outs)]

    def strides(sizes):
        out, acc = [], ascir.SizeExpr(1)
        for s in reversed(sizes):
            out.append(acc)
            acc = acc * s
        return list(reversed(out))

    def describe(node, dt, axes, sizes):
        node.y.dtype = dt
        node.y.axis = axes
        node.y.size = sizes
        node.y.strides = strides(sizes)

    x = ascir.ops.Data("x", graph)
    x.attr.ir_attr.index = 0
    describe(x, dtype, in_axes, ins)
    index = ascir.ops.Data("index", graph)
    index.attr.ir_attr.index = 1
    describe(index, index_dtype, out_axes, outs)
    input_load = ascir.ops.Load("input_load")
    input_load.x = x
    input_load.attr.sched.axis = in_axes
    describe(input_load, dtype, in_axes, ins)
    index_load = ascir.ops.Load("index_load")
    index_load.x = index
    index_load.attr.sched.axis = out_axes
    describe(index_load, index_dtype, out_axes, outs)
    il = ascir.ops.IndirectLoad("indirect_load")
    il.attr.sched.axis = out_axes
    il.attr.ir_attr.dim = dim
    il.x1 = input_load
    il.x2 = index_load
    describe(il, dtype, out_axes, outs)
    store = ascir.ops.Store("store")
    store.x = il
    store.attr.sched.axis = out_axes
    describe(store, dtype, out_axes, outs)
    y = ascir.ops.Output("y", graph)
    y.x = store
    y.attr.ir_attr.index = 0
    describe(y, dtype, out_axes, outs)
    return graph
