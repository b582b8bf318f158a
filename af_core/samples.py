"""Sample graphs for the demo, the docs and the tests.

Each sample is a graph plus the concrete shapes it is shown with. The core
has the ones built from core ops only (the seed's minimal graph, an
index_select with a row sum); plugins register the samples that use their
ops (``af_register_samples``), so the core names no plugin op.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs

from af_core.dtypes import DType
from af_core.ir.graph import Axis, HintGraph, Node
from af_core.ir.sizes import Expr


@attrs.frozen
class Sample:
    name: str
    description: str
    build: Callable[[], HintGraph]
    shapes: tuple[dict[str, int], ...]


def seed_minimal() -> HintGraph:
    """The first seed's pyautofuse script, built with the ascir API (dim=2, float16, int32)."""
    from af_core import ascir

    graph = ascir.HintGraph("indirect_load_minimal_graph")
    s = [graph.create_size(f"s{i}") for i in range(8)]
    z = [graph.create_axis(f"z{i}", s[i]) for i in range(8)]

    def strides(sizes: list[Expr]) -> list[Expr]:
        return [sizes[1] * sizes[2] * sizes[3], sizes[2] * sizes[3], sizes[3], ascir.SizeExpr(1)]

    def describe(node: Node, dtype: DType, axes: list[Axis], sizes: list[Expr]) -> None:
        node.y.dtype = dtype
        node.y.axis = axes
        node.y.size = sizes
        node.y.strides = strides(sizes)

    f16, i32 = ascir.dtypes.float16, ascir.dtypes.int32
    x = ascir.ops.Data("x", graph)
    x.attr.ir_attr.index = 0
    describe(x, f16, z[:4], s[:4])
    index = ascir.ops.Data("index", graph)
    index.attr.ir_attr.index = 1
    describe(index, i32, z[4:], s[4:])
    input_load = ascir.ops.Load("input_load")
    input_load.x = x
    input_load.attr.sched.axis = z[:4]
    describe(input_load, f16, z[:4], s[:4])
    index_load = ascir.ops.Load("index_load")
    index_load.x = index
    index_load.attr.sched.axis = z[4:]
    describe(index_load, i32, z[4:], s[4:])
    il = ascir.ops.IndirectLoad("indirect_load")
    il.attr.sched.axis = z[4:]
    il.attr.ir_attr.dim = 2
    il.x1 = input_load
    il.x2 = index_load
    describe(il, f16, z[4:], s[4:])
    store = ascir.ops.Store("store")
    store.x = il
    store.attr.sched.axis = z[4:]
    describe(store, f16, z[4:], s[4:])
    y = ascir.ops.Output("y", graph)
    y.x = store
    y.attr.ir_attr.index = 0
    describe(y, f16, z[4:], s[4:])
    return graph


def index_select_sum() -> HintGraph:
    """index_select over rows of a table, then a sum over the selected rows' last axis."""
    from af_core.builders import GraphBuilder, index_select

    g = GraphBuilder("index_select_rowsum")
    x = g.data("x", ["N", "H"], "float32")
    idx = g.data("idx", ["K"], "int64")
    y = index_select(x, 0, idx, need_check_negative=True)
    y = g.reduce("Sum", y, [1])
    g.output(y, "y")
    return g.build()


def installed_samples() -> tuple[Sample, ...]:
    """The core's samples, then every sample the installed plugins register, in registration order.

    A plugin sample named like one of the core's is a plugin error naming its distribution.
    """
    from af_core.errors import PluginError
    from af_core.registry import get_registry

    entries = get_registry().samples.in_order()
    core_names = {s.name for s in CORE_SAMPLES}
    for entry in entries:
        if entry.name in core_names:
            raise PluginError(
                f"sample '{entry.name}' registered by '{entry.distribution}' has the name of one of "
                "af-core's own samples; rename it"
            )
    return CORE_SAMPLES + tuple(entry.value for entry in entries)


def lookup(name: str) -> Sample:
    """The installed sample called ``name`` (KeyError listing the installed ones when absent)."""
    for sample in installed_samples():
        if sample.name == name:
            return sample
    raise KeyError(
        f"no installed sample '{name}' (installed: {', '.join(s.name for s in installed_samples())})"
    )


SEED_MINIMAL = Sample(
    "seed_minimal",
    "the design seed's minimal graph (dynamic shapes)",
    seed_minimal,
    (
        {"s0": 2, "s1": 3, "s2": 10, "s3": 8, "s4": 2, "s5": 3, "s6": 6, "s7": 8},
        {"s0": 64, "s1": 2, "s2": 40, "s3": 32, "s4": 64, "s5": 2, "s6": 16, "s7": 32},
    ),
)
INDEX_SELECT_SUM = Sample(
    "index_select_sum",
    "index_select (negative indices allowed) + row sum",
    index_select_sum,
    ({"N": 500, "H": 96, "K": 200},),
)
#: The core's own samples (core ops only).
CORE_SAMPLES = (SEED_MINIMAL, INDEX_SELECT_SUM)


def load_graph(path: str | Path) -> HintGraph:
    """A graph from a ``.json`` file or a ``.py`` program (see :mod:`af_core.graph_files`)."""
    from af_core.graph_files import load_graph as load

    return load(path)
