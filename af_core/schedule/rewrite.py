"""Graph rewrites that move input-chain ops behind an IndirectLoad.

Gathering first and computing after reduces work when the IndirectLoad
selects fewer elements than its input has (first seed, 功能需求2). Both
rewrites work on a template's private copy of the graph.

- :func:`sink_unary_ops` (SIMD): move unary elementwise ops that directly
  feed ``IndirectLoad.x1`` behind it, one at a time, while the IndirectLoad
  does not enlarge the data; stop at a binary op, a Broadcast or a Load.
- :func:`hoist_input_chain` (SIMT): move the whole input chain behind the
  IndirectLoad; every Load of the chain gets its own IndirectLoad sharing the
  index, binary ops combine the gathered values.

With ``need_check_bound`` a moved op would see the 0 of an out-of-range lane
where the original saw nothing: SIMD only moves ops with f(0) == 0; SIMT
records the node after which the bound check applies
(``graph.attrs["bound_check_after"]``) so the kernel zeroes at that point.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sympy

from af_core.dtypes import DType
from af_core.errors import Unsupported
from af_core.ir.graph import Axis, HintGraph, Node
from af_core.ir.sizes import Expr, contiguous_strides, expand_polynomial
from af_core.ops.opdef import CAST, ComputeType, RefContext


def enlarges(il: Node, graph: HintGraph) -> bool:
    """True unless the IndirectLoad provably produces no more elements than its input has."""
    src = graph.producer(il, "x1")
    n_in = sympy.Integer(1)
    n_out = sympy.Integer(1)
    for s in src.y.size:
        n_in = n_in * s
    for s in il.y.size:
        n_out = n_out * s
    diff = expand_polynomial(n_in - n_out)
    if diff.is_number:
        return bool(diff < 0)
    return diff.is_nonnegative is not True


def preserves_zero(node: Node) -> bool:
    """Whether f(0) == 0 for a unary elementwise op (checked on its own reference)."""
    import numpy as np  # only for graphs with an op to move: compiling needs no numpy otherwise

    dtype = node.y.dtype
    zero = np.zeros((1,), dtype=dtype.np)
    try:
        out = node.op.reference(
            RefContext(node.name, {"x": zero}, {"x": dtype}, node.attr.ir_attr.as_dict(), dtype, (1,))
        )
    except Exception:
        return False
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.asarray(out, dtype=np.float64) == 0))


def _retarget(node: Node, dtype: DType | None, axes: Iterable[Axis] | None, sizes: Sequence[Expr]) -> None:
    node.y.dtype = dtype
    node.y.axis = axes
    node.y.size = sizes
    node.y.strides = contiguous_strides(list(sizes))
    node.attr.sched.axis = axes


def sink_unary_ops(graph: HintGraph, il: Node) -> list[str]:
    """SIMD rewrite; returns the names of the moved ops (in their new order)."""
    moved: list[str] = []
    bound = bool(il.attr.ir_attr.need_check_bound)
    while True:
        op = graph.producer(il, "x1")
        if op.op.compute_type != ComputeType.ELEMENTWISE or len(op.op.inputs) != 1:
            break
        if len(graph.consumers(op)) != 1:
            break
        if enlarges(il, graph):
            break
        if bound and not preserves_zero(op):
            break
        if op.y.dtype != graph.producer(op, "x").y.dtype and CAST not in op.op.roles:
            break
        src = graph.producer(op, "x")
        consumers = graph.consumers(il)
        # x1 <- src ; il -> op -> former consumers of il
        il.connect("x1", src)
        il.y.dtype = src.y.dtype
        op.connect("x", il)
        _retarget(op, op.y.dtype, il.y.axis, il.y.size)
        for consumer, port in consumers:
            consumer.connect(port, op)
        moved.insert(0, op.name)
    return moved


def is_view(graph: HintGraph, node: Node) -> bool:
    """A Load, or Broadcasts of a Load: data as stored, seen through stride-0 axes."""
    while node.op.compute_type == ComputeType.BROADCAST:
        node = graph.producer(node, "x")
    return node.op.compute_type == ComputeType.LOAD


def hoist_input_chain(graph: HintGraph, il: Node) -> dict[str, object]:
    """SIMT rewrite: every input-chain op moves behind the IndirectLoad.

    Each view (a Load, possibly through Broadcasts) feeding the chain gets its
    own IndirectLoad sharing the index; the elementwise ops are rebuilt, with
    their names, in output coordinates. Returns ``{"gathers": [...],
    "moved": [...], "result": name}``.
    """
    x1 = graph.producer(il, "x1")
    if is_view(graph, x1):
        graph.attrs["bound_check_after"] = il.name
        return {"gathers": [il.name], "moved": [], "result": il.name}
    index = graph.producer(il, "x2")
    consumers = graph.consumers(il)
    attrs_ = il.attr.ir_attr.explicit()
    axes, sizes = il.y.axis, il.y.size
    order = {n.name: i for i, n in enumerate(graph.topo_order())}
    chain: dict[str, Node] = {}
    stack = [x1]
    while stack:
        node = stack.pop()
        if node.name in chain or is_view(graph, node):
            continue
        if node.op.compute_type != ComputeType.ELEMENTWISE:
            raise Unsupported(f"node '{node.name}' ({node.type}) cannot move behind '{il.name}'")
        chain[node.name] = node
        stack.extend(graph.producer(node, port) for port in node.op.inputs)
    for node in chain.values():
        for consumer, _port in graph.consumers(node):
            if consumer.name not in chain and consumer is not il:
                raise Unsupported(f"input-chain node '{node.name}' also feeds '{consumer.name}'")
    recipe = []
    for node in sorted(chain.values(), key=lambda n: order[n.name]):
        recipe.append(
            (
                node.name,
                node.op,
                node.attr.ir_attr.explicit(),
                node.y.dtype,
                [(port, graph.producer(node, port)) for port in node.op.inputs],
            )
        )
    graph.remove_node(il)
    for name, *_rest in reversed(recipe):
        graph.remove_node(graph.node(name))
    lifted: dict[str, Node] = {}
    gathers: list[str] = []

    def gather_view(view: Node) -> Node:
        if view.name not in lifted:
            gather = Node(il.op, f"{il.name}_{view.name}")
            for key, value in attrs_.items():
                gather.attr.ir_attr.set(key, value)
            _retarget(gather, view.y.dtype, axes, sizes)
            graph.add_node(gather)
            gather.x1 = view
            gather.x2 = index
            gathers.append(gather.name)
            lifted[view.name] = gather
        return lifted[view.name]

    for name, op, attrs2, dtype, inputs in recipe:
        node = Node(op, name)
        for key, value in attrs2.items():
            node.attr.ir_attr.set(key, value)
        _retarget(node, dtype, axes, sizes)
        graph.add_node(node)
        for port, src in inputs:
            node.connect(port, lifted[src.name] if src.name in chain else gather_view(src))
        lifted[name] = node
    result = lifted[x1.name]
    for consumer, port in consumers:
        consumer.connect(port, result)
    graph.attrs["bound_check_after"] = result.name
    return {"gathers": gathers, "moved": [r[0] for r in recipe], "result": result.name}
