"""Fusion analysis around one IndirectLoad: its input, index and output chains.

The first seed fuses vertically only::

    load -> broadcast? -> elementwise* -> IndirectLoad.x1
    load -> broadcast? -> elementwise* -> IndirectLoad.x2
    IndirectLoad -> elementwise* -> reduce? -> store

Side inputs of binary ops (a second Load, possibly broadcast) may join any
chain. :func:`analyze` classifies every node of a normalized graph into one
of those chains or raises :class:`FusionError` (an :class:`~af_core.errors.Unsupported`) saying which
node breaks the pattern; templates then work from the classification instead
of re-walking the graph.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from af_core.errors import Unsupported
from af_core.ir.graph import HintGraph, Node
from af_core.ops.core_ops import loop_axes
from af_core.ops.opdef import ComputeType


class FusionError(Unsupported):
    """The graph is not a fusion pattern the IndirectLoad path supports."""


CHAIN_OPS = ("elementwise", "broadcast")


@attrs.define
class FusionAnalysis:
    """Nodes of the fused subgraph, by role, each list in topological order."""

    graph: HintGraph
    indirect_load: Node
    input_chain: list[Node]  # between the data Load(s) and IndirectLoad.x1 (no Loads)
    index_chain: list[Node]  # between the index Load(s) and IndirectLoad.x2 (no Loads)
    post_chain: list[Node]  # elementwise/broadcast after IndirectLoad, before the reduce
    reduce: Node | None
    store: Node
    output: Node
    loads: dict[str, str]  # Load name -> role: "input", "index", "post"

    @property
    def dim(self) -> int:
        return int(self.indirect_load.attr.ir_attr.dim)

    @property
    def rank(self) -> int:
        return len(self.indirect_load.y.size)

    def loads_of(self, role: str) -> list[Node]:
        return [self.graph.node(n) for n, r in self.loads.items() if r == role]

    def data_of(self, load: Node) -> Node:
        return self.graph.producer(load, "x")

    def reduce_axes(self) -> tuple[int, ...]:
        if self.reduce is None:
            return ()
        src = self.graph.producer(self.reduce, "x")
        return loop_axes(src.y.size, self.reduce.y.size)

    def summary(self) -> dict[str, object]:
        return {
            "indirect_load": self.indirect_load.name,
            "dim": self.dim,
            "input_chain": [n.name for n in self.input_chain],
            "index_chain": [n.name for n in self.index_chain],
            "post_chain": [n.name for n in self.post_chain],
            "reduce": None if self.reduce is None else self.reduce.name,
            "reduce_axes": list(self.reduce_axes()),
        }


def _upstream(graph: HintGraph, start: Node) -> list[Node]:
    """Every node feeding ``start`` (inclusive), deterministic order."""
    seen: dict[str, Node] = {}
    stack = [start]
    while stack:
        node = stack.pop()
        if node.name in seen:
            continue
        seen[node.name] = node
        producers = (graph.producer_or_none(node, port) for port in node.op.inputs)
        stack.extend(p for p in producers if p is not None)
    return list(seen.values())


def _chain_and_loads(
    graph: HintGraph, start: Node, misplaced: Callable[[Node], str]
) -> tuple[list[Node], list[Node]]:
    """Split what feeds ``start`` (inclusive) into chain ops and Loads; Data nodes are skipped.

    Anything else raises a FusionError with the text ``misplaced(node)``.
    """
    ops, loads = [], []
    for node in _upstream(graph, start):
        kind = node.op.compute_type
        if kind == "load":
            loads.append(node)
        elif kind in CHAIN_OPS:
            ops.append(node)
        elif kind != "data":
            raise FusionError(misplaced(node))
    return ops, loads


def _the_indirect_load(graph: HintGraph, il: Node | None) -> Node:
    """``il``, or the graph's one IndirectLoad: the fused kernel is built around exactly one."""
    if il is not None:
        return il
    ils = graph.nodes_of_type("IndirectLoad")
    if len(ils) != 1:
        raise FusionError(
            f"graph '{graph.name}' has {len(ils)} IndirectLoad nodes; the fused kernel "
            "supports exactly one (split the graph)"
        )
    return ils[0]


def _feeding_chain(
    graph: HintGraph, il: Node, port: str, order: dict[str, int]
) -> tuple[list[Node], list[Node]]:
    """The chain ops and the Loads feeding IndirectLoad ``port``, each in topological order."""
    inner, loads = _chain_and_loads(
        graph,
        graph.producer(il, port),
        lambda node: (
            f"node '{node.name}' ({node.type}) feeds IndirectLoad port {port}; only "
            "Load, Broadcast and elementwise ops may precede an IndirectLoad"
        ),
    )
    inner.sort(key=lambda n: order[n.name])
    loads.sort(key=lambda n: order[n.name])
    return inner, loads


def _downstream(graph: HintGraph, il: Node) -> tuple[dict[str, Node], Node | None, dict[str, Node]]:
    """Everything the IndirectLoad's result flows into up to the Stores: (the chain ops and the reduce
    by name, the reduce or None, the Stores reached by name). Only elementwise / broadcast ops (a DAG)
    and at most one reduce may follow it."""
    reduce = None
    down: dict[str, Node] = {}
    frontier = [il]
    stores: dict[str, Node] = {}
    while frontier:
        node = frontier.pop()
        for nxt, _port in graph.consumers(node):
            kind = nxt.op.compute_type
            if kind == "store":
                stores[nxt.name] = nxt
                continue
            if nxt.name in down:
                continue
            if kind == "reduce":
                if reduce is not None and reduce is not nxt:
                    raise FusionError(f"'{nxt.name}' is a second reduce after '{il.name}'; one is supported")
                reduce = nxt
            elif kind not in CHAIN_OPS:
                raise FusionError(
                    f"node '{nxt.name}' ({nxt.type}) cannot follow an IndirectLoad in a fused kernel"
                )
            down[nxt.name] = nxt
            frontier.append(nxt)
    return down, reduce, stores


def _the_store(graph: HintGraph, il: Node, stores: dict[str, Node], reduce: Node | None) -> Node:
    """The one Store the IndirectLoad's result reaches; a reduce must feed it directly (nothing after a
    reduce is fused)."""
    if len(stores) != 1:
        raise FusionError(
            f"the output of '{il.name}' reaches {len(stores)} Stores; the fused kernel has one output"
        )
    store = next(iter(stores.values()))
    if reduce is not None:
        if graph.producer(store, "x") is not reduce or len(graph.consumers(reduce)) != 1:
            raise FusionError(
                f"reduce '{reduce.name}' must feed the Store directly; ops after a reduce are not fused"
            )
    return store


def _side_inputs(graph: HintGraph, il: Node, down: dict[str, Node]) -> tuple[list[Node], list[Node]]:
    """The chain ops and the Loads feeding the downstream ops from outside the IndirectLoad's result (a
    binary op's second operand)."""
    ops: list[Node] = []
    loads: list[Node] = []
    for node in list(down.values()):
        for port in node.op.inputs:
            producer = graph.producer(node, port)
            if producer is il or producer.name in down:
                continue

            def misplaced(side: Node, node: Node = node) -> str:
                return (
                    f"side input '{side.name}' ({side.type}) of '{node.name}' is not a "
                    "Load, Broadcast or elementwise op"
                )

            side_ops, side_loads = _chain_and_loads(graph, producer, misplaced)
            ops += side_ops
            loads += side_loads
    return ops, loads


def _the_output(graph: HintGraph, store: Node) -> Node:
    """The Output node the Store feeds, its only consumer."""
    output_consumers = graph.consumers(store)
    if len(output_consumers) != 1 or output_consumers[0][0].op.compute_type != ComputeType.OUTPUT:
        raise FusionError(f"Store '{store.name}' must feed exactly one Output")
    return output_consumers[0][0]


def _load_roles(input_loads: list[Node], index_loads: list[Node], post_loads: list[Node]) -> dict[str, str]:
    """Load name -> the chain it feeds ("input", "index" or "post"); a Load feeding two chains is refused
    (each chain reads its own Load)."""
    roles: dict[str, str] = {}
    for role, loads in (("input", input_loads), ("index", index_loads), ("post", post_loads)):
        for load in loads:
            if load.name in roles and roles[load.name] != role:
                raise FusionError(
                    f"Load '{load.name}' feeds both the {roles[load.name]} and the {role} chain; "
                    "give each chain its own Load"
                )
            roles[load.name] = role
    return roles


def _check_covered(graph: HintGraph, il: Node, fused: set[str]) -> None:
    """Refuse a graph with nodes outside the fusion (``fused``): the kernel would leave them uncomputed."""
    stray = [n.name for n in graph.nodes() if n.name not in fused]
    if stray:
        raise FusionError(
            f"nodes {stray} are not part of the IndirectLoad fusion around '{il.name}' "
            "(only vertical fusion with one output is supported)"
        )


def analyze(graph: HintGraph, il: Node | None = None) -> FusionAnalysis:
    """Classify the nodes of ``graph`` around its IndirectLoad."""
    il = _the_indirect_load(graph, il)
    order = {n.name: i for i, n in enumerate(graph.topo_order())}
    input_chain, input_loads = _feeding_chain(graph, il, "x1", order)
    index_chain, index_loads = _feeding_chain(graph, il, "x2", order)
    shared = {n.name for n in input_chain} & {n.name for n in index_chain}
    if shared:
        raise FusionError(
            f"nodes {sorted(shared)} feed both the input and the index of '{il.name}'; "
            "the input and index chains must be disjoint"
        )

    # everything downstream of the IndirectLoad: elementwise/broadcast ops (a DAG), at most one
    # reduce, feeding exactly one Store
    down, reduce, stores = _downstream(graph, il)
    store = _the_store(graph, il, stores, reduce)
    post, post_loads = _side_inputs(graph, il, down)
    post += [n for n in down.values() if n is not reduce]
    output = _the_output(graph, store)
    post = sorted({n.name: n for n in post}.values(), key=lambda n: order[n.name])
    roles = _load_roles(input_loads, index_loads, post_loads)
    covered = set(roles) | {n.name for n in input_chain + index_chain + post}
    covered |= {il.name, store.name, output.name} | ({reduce.name} if reduce else set())
    covered |= {graph.producer(graph.node(n), "x").name for n in roles}
    _check_covered(graph, il, covered)
    return FusionAnalysis(
        graph=graph,
        indirect_load=il,
        input_chain=input_chain,
        index_chain=index_chain,
        post_chain=post,
        reduce=reduce,
        store=store,
        output=output,
        loads=dict(sorted(roles.items(), key=lambda kv: order[kv[0]])),
    )
