"""Validation of a HintGraph before anything else looks at it.

Rules are checked in a fixed order and the first broken one raises an
:class:`AscirError` subclass naming the node, the port, the rule id and the
values involved. :func:`validate` returns a :class:`GraphInfo` with the
resolved dtype, sizes and strides of every node (inferred where the graph left
them unset) and :func:`normalized_copy` gives a copy with those filled in and
negative IndirectLoad dims normalized, which is what schedulers consume.

Rule ids (stable; tests and tools match on them): port-connected,
graph-acyclic, graph-has-output, io-index, io-index-unique, desc-rank,
sched-axis-rank, rank-max, size-declared, size-positive, stride-nonnegative, size-matches-axis,
dtype-declared, shape-declared, byte-offset-int64, plus the op rules raised by
``OpDef.infer`` (index-dtype, indirect-load-rank, indirect-load-dim,
index-size-le-input, broadcast-from-one, elementwise-shape, ...).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import sympy

from af_core import dtypes as dt
from af_core.errors import (
    AscirError,
    DTypeError,
    GraphStructureError,
    OverflowRiskError,
    ShapeError,
)
from af_core.ir.graph import HintGraph, Node
from af_core.ir.sizes import Expr, contiguous_strides, expand_polynomial, size_name, storage_elements
from af_core.naming import demangle
from af_core.ops.core_ops import normalize_dim
from af_core.ops.opdef import ComputeType, InferContext, PortInfo

INT64_MAX = (1 << 63) - 1
#: The highest tensor rank the back end holds (infer_shape, the twin harness and the kernels'
#: index arithmetic size their arrays by it).
MAX_RANK = 8


@attrs.frozen
class NodeInfo:
    dtype: dt.DType
    sizes: tuple[Expr, ...]
    strides: tuple[Expr, ...]


@attrs.define
class GraphInfo:
    """Resolved tensor facts for every node of a valid graph."""

    nodes: dict[str, NodeInfo]
    order: list[str]

    def __getitem__(self, name: str) -> NodeInfo:
        return self.nodes[name]


def validate(graph: HintGraph) -> GraphInfo:
    """Check every rule; return resolved node facts or raise the first AscirError."""
    nodes = graph.nodes()
    _check_ports(graph, nodes)
    cycle = graph.find_cycle()
    if cycle:
        raise GraphStructureError(
            "graph-acyclic",
            f"the graph has a cycle through {' -> '.join(cycle)}",
            node=cycle[0],
            values={"cycle": cycle},
        )
    _check_io(nodes)
    infos: dict[str, NodeInfo] = {}
    order = graph.topo_order()
    for node in order:
        infos[node.name] = _check_node(graph, node, infos)
    return GraphInfo(infos, [n.name for n in order])


def _check_ports(graph: HintGraph, nodes: list[Node]) -> None:
    for node in nodes:
        for port in node.op.inputs:
            if graph.producer_or_none(node, port) is None:
                raise GraphStructureError(
                    "port-connected",
                    f"input port of {node.type} is not connected",
                    node=node.name,
                    port=port,
                )


def _check_io(nodes: list[Node]) -> None:
    if not any(n.op.compute_type == ComputeType.OUTPUT for n in nodes):
        raise GraphStructureError("graph-has-output", "the graph has no Output node")
    for kind in ("data", "output"):
        seen: dict[int, str] = {}
        for node in nodes:
            if node.op.compute_type != kind:
                continue
            index = node.attr.ir_attr.index
            if index is None or index < 0:
                raise GraphStructureError(
                    "io-index",
                    f"{node.type} needs a non-negative attr.ir_attr.index",
                    node=node.name,
                    values={"index": index},
                )
            if index in seen:
                raise GraphStructureError(
                    "io-index-unique",
                    f"{node.type} index {index} is also used by '{seen[index]}'",
                    node=node.name,
                    values={"index": index},
                )
            seen[index] = node.name


def _check_rank(node: Node, rank: int) -> None:
    if rank > MAX_RANK:
        raise ShapeError(
            "rank-max",
            f"rank {rank} exceeds the back end's maximum rank {MAX_RANK}",
            node=node.name,
            port="y",
            values={"rank": rank, "max_rank": MAX_RANK},
        )


def _check_declared(graph: HintGraph, node: Node, exprs: list[Expr]) -> None:
    """Every size symbol a shape uses is one the graph declares (create_size / the JSON "sizes")."""
    declared = {v.symbol.name for v in graph.sizes()}
    for expr in exprs:
        for sym in sorted(sympy.sympify(expr).free_symbols, key=lambda s: s.name):
            if sym.name not in declared:
                raise ShapeError(
                    "size-declared",
                    f"size '{size_name(sym)}' is used but not declared (graph.create_size, or the JSON "
                    "'sizes' list)",
                    node=node.name,
                    port="y",
                    values={"size": size_name(sym)},
                )


def _check_desc_ranks(node: Node) -> None:
    y = node.y
    lengths = {
        "axis": None if y.axis is None else len(y.axis),
        "size": None if y.size is None else len(y.size),
        "strides": None if y.strides is None else len(y.strides),
    }
    known = {k: v for k, v in lengths.items() if v is not None}
    for rank in known.values():
        _check_rank(node, rank)
    if len(set(known.values())) > 1:
        raise ShapeError(
            "desc-rank",
            "y.axis, y.size and y.strides must have the same length",
            node=node.name,
            port="y",
            values=known,
        )
    sched = node.attr.sched.axis
    if sched is not None and y.axis is not None and len(sched) != len(y.axis):
        raise ShapeError(
            "sched-axis-rank",
            f"attr.sched.axis has {len(sched)} axes but y.axis has {len(y.axis)}",
            node=node.name,
            values={"sched_axis": [a.name for a in sched], "y_axis": [a.name for a in y.axis]},
        )


def _positive_product(expr: Expr) -> bool:
    """Whether ``expr`` is a product of positive numbers and symbols declared positive (most sizes are),
    decided from the factors' own flags: sympy's assumption system answers the same for these, at a cost
    a fresh process pays for every new product."""
    factors = expr.args if expr.is_Mul else (expr,)
    return all(
        (f.is_Number and f > 0)
        or (f.is_Symbol and f.is_positive is True)
        or (f.is_Pow and f.exp.is_Integer and f.base.is_Symbol and f.base.is_positive is True)
        for f in factors
    )


def _check_sizes(node: Node, sizes: tuple[Expr, ...], strides: tuple[Expr, ...] | None) -> None:
    for axis, size in enumerate(sizes):
        size = sympy.sympify(size)
        if size.is_number:
            if not size.is_Integer or int(size) <= 0:
                raise ShapeError(
                    "size-positive",
                    f"size {size} on axis {axis} is not a positive integer",
                    node=node.name,
                    port="y",
                    values={"axis": axis, "size": size},
                )
        elif not _positive_product(size) and size.is_positive is not True:
            raise ShapeError(
                "size-positive",
                f"size {size} on axis {axis} is not provably positive",
                node=node.name,
                port="y",
                values={"axis": axis, "size": size},
            )
    for axis, stride in enumerate(strides or ()):
        stride = sympy.sympify(stride)
        if (
            not _positive_product(stride)
            and stride.is_nonnegative is not True
            and not (stride.is_number and stride >= 0)
        ):
            raise ShapeError(
                "stride-nonnegative",
                f"stride {stride} on axis {axis} is not provably non-negative",
                node=node.name,
                port="y",
                values={"axis": axis, "stride": stride},
            )
    axes = node.y.axis
    if axes is not None:
        for i, (axis, size) in enumerate(zip(axes, sizes)):
            if size != axis.size and size != 1:
                raise ShapeError(
                    "size-matches-axis",
                    f"size {size} on axis {i} is neither the size of axis {axis.name} ({axis.size}) nor 1",
                    node=node.name,
                    port="y",
                    values={"axis": axis.name},
                )


def _check_node(graph: HintGraph, node: Node, infos: dict[str, NodeInfo]) -> NodeInfo:
    _check_desc_ranks(node)
    inputs = {}
    for port in node.op.inputs:
        producer = graph.producer(node, port)
        info = infos[producer.name]
        inputs[port] = PortInfo(info.dtype, info.sizes, info.strides)
    declared = PortInfo(node.y.dtype, node.y.size, node.y.strides)
    attrs_ = node.attr.ir_attr.as_dict()
    ctx = InferContext(node.name, node.op, inputs, attrs_, declared)
    out = node.op.infer(ctx) if node.op.infer is not None else declared
    dtype = out.dtype
    sizes = out.sizes
    if node.y.dtype is not None and dtype is not None and node.y.dtype != dtype:
        raise DTypeError(
            "dtype-declared",
            f"declared y.dtype {node.y.dtype} but {node.type} produces {dtype}",
            node=node.name,
            port="y",
        )
    dtype = node.y.dtype or dtype
    if dtype is None:
        raise DTypeError(
            "dtype-declared", "the output dtype is neither declared nor inferable", node=node.name, port="y"
        )
    if node.y.size is not None and sizes is not None:
        if len(node.y.size) != len(sizes) or any(
            a != b and sympy.sympify(a - b) != 0
            for a, b in zip(node.y.size, sizes)  # equal: no subtraction
        ):
            raise ShapeError(
                "shape-declared",
                f"declared y.size {list(node.y.size)} but {node.type} produces {list(sizes)}",
                node=node.name,
                port="y",
            )
    sizes = tuple(node.y.size) if node.y.size is not None else sizes
    if sizes is None:
        raise ShapeError(
            "shape-declared", "the output size is neither declared nor inferable", node=node.name, port="y"
        )
    strides = node.y.strides
    if node.op.compute_type == ComputeType.DATA and strides is None:
        raise ShapeError("desc-rank", "a Data node must declare y.strides", node=node.name, port="y")
    if strides is not None and len(strides) != len(sizes):
        raise ShapeError(
            "desc-rank",
            f"y.strides has {len(strides)} entries for rank {len(sizes)}",
            node=node.name,
            port="y",
        )
    _check_rank(node, len(sizes))
    _check_declared(graph, node, [*sizes, *(strides or ())])
    _check_sizes(node, sizes, strides)
    strides = tuple(strides) if strides is not None else tuple(contiguous_strides(list(sizes)))
    _check_overflow(graph, node, dtype, sizes, strides)
    return NodeInfo(dtype, tuple(sizes), strides)


def _upper_bounds(graph: HintGraph, exprs: list[Expr]) -> dict[str, int] | None:
    """Declared maxima for every symbol used, or None if one is unbounded."""
    bounds: dict[str, int] = {}
    for expr in exprs:
        for sym in sympy.sympify(expr).free_symbols:
            var = graph.size_var(size_name(sym))
            if var is None or var.max_value is None:
                return None
            bounds[sym.name] = var.max_value
    return bounds


def _check_overflow(
    graph: HintGraph, node: Node, dtype: dt.DType, sizes: Sequence[Expr], strides: Sequence[Expr]
) -> None:
    """Largest byte offset of the tensor must fit int64 for all declared sizes.

    Whatever the sizes, no constant of its byte span may leave int64 either (a constant stride of
    2^62 float32 elements): the kernel and the host tiling spell those constants as int64 literals.
    """
    span = storage_elements(sizes, strides) * dtype.itemsize
    for what, expr in [*((f"stride {s} in bytes", s * dtype.itemsize) for s in strides), ("byte span", span)]:
        expr = expand_polynomial(expr)
        for term in sympy.Add.make_args(expr):
            constant = abs(term.as_coeff_Mul()[0])
            if constant > INT64_MAX:
                raise OverflowRiskError(
                    "byte-offset-int64",
                    f"its {what}, {expr}, holds the constant {constant}, which exceeds int64 whatever the sizes",
                    node=node.name,
                    port="y",
                    values={"strides": [str(s) for s in strides]},
                )
    elements = sympy.Integer(1)
    for s in sizes:
        elements = elements * s
    nbytes = elements * dtype.itemsize
    bounds = _upper_bounds(graph, [span, nbytes])
    if bounds is None:
        return  # unbounded sizes: the generated host tiling checks at run time
    from af_core.ir.evaluate import eval_int

    worst = max(eval_int(sympy.sympify(span), bounds), eval_int(sympy.sympify(nbytes), bounds))
    if worst > INT64_MAX:
        raise OverflowRiskError(
            "byte-offset-int64",
            f"the largest byte offset {worst} exceeds int64 for the declared size bounds",
            node=node.name,
            port="y",
            values={"bounds": {demangle(k): v for k, v in sorted(bounds.items())}},
        )


def normalized_copy(graph: HintGraph, info: GraphInfo | None = None) -> tuple[HintGraph, GraphInfo]:
    """A copy with every y field resolved and IndirectLoad dims non-negative."""
    info = info or validate(graph)
    copy = graph.copy()
    for node in copy.nodes():
        ni = info[node.name]
        node.y.dtype = ni.dtype
        node.y.size = ni.sizes
        node.y.strides = ni.strides
        if node.type == "IndirectLoad":
            node.attr.ir_attr.dim = normalize_dim(node.attr.ir_attr.dim, len(ni.sizes))
    return copy, info


def check(graph: HintGraph) -> None:
    """Validate and discard the facts (raise on the first broken rule)."""
    validate(graph)


__all__ = ["AscirError", "GraphInfo", "NodeInfo", "validate", "normalized_copy", "check"]
