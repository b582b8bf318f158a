"""Test helpers for af_core and plugin authors: graphs, inputs, comparisons.

Plugin test suites import these instead of re-writing graph boilerplate;
they are part of the public API (like pytest's ``pytester``).
"""

from __future__ import annotations

from collections.abc import Iterator

from af_core import ascir
from af_core.dtypes import DType
from af_core.ir.graph import Axis, HintGraph, Node
from af_core.ir.sizes import Expr


def seed_style_gather(
    *,
    dtype: DType | str = ascir.dtypes.float16,
    index_dtype: DType | str = ascir.dtypes.int32,
    dim: int = 2,
    rank: int = 4,
    static: dict[str, int] | None = None,
    name: str = "gather_graph",
) -> HintGraph:
    """Data -> Load -> IndirectLoad -> Store -> Output, like the first seed's script."""
    graph = ascir.HintGraph(name)
    static = static or {}

    def size(n: str) -> Expr:
        return graph.create_size(static[n]) if n in static else graph.create_size(n)

    ins = [size(f"s{i}") for i in range(rank)]
    outs = [size(f"s{i}") for i in range(rank, 2 * rank)]
    in_axes = [graph.create_axis(f"z{i}", s) for i, s in enumerate(ins)]
    out_axes = [graph.create_axis(f"z{rank + i}", s) for i, s in enumerate(outs)]

    def strides(sizes: list[Expr]) -> list[Expr]:
        out, acc = [], ascir.SizeExpr(1)
        for s in reversed(sizes):
            out.append(acc)
            acc = acc * s
        return list(reversed(out))

    def describe(node: Node, dt: DType | str, axes: list[Axis], sizes: list[Expr]) -> None:
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


# ---------------------------------------------------------------------------
# chains around a gather, in the workload corpus' compact op syntax

import numpy as _np  # noqa: E402

from af_core.workloads import apply_op  # noqa: E402,F401  (re-exported for tests)


def chain_graph(
    *,
    rank: int,
    dim: int,
    dtype: str = "float32",
    index_dtype: str = "int32",
    pre: tuple[str, ...] = (),
    index_pre: tuple[str, ...] = (),
    post: tuple[str, ...] = (),
    reduce: tuple[str, tuple[int, ...]] | None = None,
    need_check_negative: bool = False,
    need_check_bound: bool = False,
    name: str = "chain",
) -> HintGraph:
    """x[a0..] -pre-> gather(dim, index[b0..] -index_pre->) -post-> reduce? -> y, dynamic sizes."""
    from af_core.builders import GraphBuilder, gather

    g = GraphBuilder(name)
    x = g.data("x", [f"a{i}" for i in range(rank)], dtype)
    for op in pre:
        x = apply_op(g, op, x)
    index = g.data("index", [f"b{i}" for i in range(rank)], index_dtype)
    for op in index_pre:
        index = apply_op(g, op, index)
    y = gather(x, dim, index, need_check_negative=need_check_negative, need_check_bound=need_check_bound)
    for op in post:
        y = apply_op(g, op, y)
    if reduce is not None:
        kind, axes = reduce
        y = g.reduce(kind, y, list(axes))
    g.output(y, "y")
    return g.build()


def gather_sizes(
    rng: _np.random.Generator,
    rank: int,
    dim: int,
    *,
    max_extent: int = 9,
    max_elements: int = 20000,
    ones: float = 0.15,
) -> dict[str, int]:
    """Random sizes for :func:`chain_graph`: index sizes <= input sizes off ``dim``, tails included."""
    dim = dim % rank
    while True:
        a = [int(rng.integers(1, max_extent + 1)) if rng.random() > ones else 1 for _ in range(rank)]
        b = [
            int(rng.integers(1, n + 1)) if i != dim else int(rng.integers(1, max_extent + 1))
            for i, n in enumerate(a)
        ]
        if int(_np.prod(a)) <= max_elements and int(_np.prod(b)) <= max_elements:
            sizes = {f"a{i}": v for i, v in enumerate(a)}
            sizes.update({f"b{i}": v for i, v in enumerate(b)})
            return sizes


CORE_COUNTS = (1, 48, 5, 2)


def random_runs(
    seed: int,
    rank: int,
    dim: int,
    runs: int,
    *,
    cores: tuple[int, ...] = CORE_COUNTS,
    extents: tuple[int, ...] = (9,),
    max_elements: int = 4000,
) -> Iterator[tuple[int, dict[str, int], int]]:
    """``runs`` random twin runs of :func:`chain_graph`: yields (run seed, sizes, core count).

    Core counts cycle through ``cores``; each shape's largest extent is drawn
    from ``extents``. The template test suites share it so their sweeps read alike.
    """
    rng = _np.random.default_rng(seed)
    for k in range(runs):
        extent = int(rng.choice(extents))
        sizes = gather_sizes(rng, rank, dim, max_extent=extent, max_elements=max_elements)
        yield seed * 10 + k, sizes, cores[k % len(cores)]


def same_bits(a: _np.ndarray, b: _np.ndarray) -> bool:
    """Whether two arrays hold the same dtype and the same bytes (NaN payloads and -0 included): what a
    register form and the memory-based calls it replaces must agree on."""
    a, b = _np.ascontiguousarray(a), _np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.tobytes() == b.tobytes()
