"""Short graph builders: gather, index_select, embedding and their chains.

``GraphBuilder`` writes the same ASCIR a front end would (Data -> Load ->
ops -> Store -> Output, every y field filled) with far less ceremony::

    g = GraphBuilder("emb")
    w = g.data("weight", ["V", 64], "float32")
    ids = g.data("ids", ["B"], "int64")
    out = g.relu(embedding(w, ids))
    g.output(out)
    graph = g.build()

``index_select`` and ``embedding`` normalize to IndirectLoad the way the
first design seed describes: the 1-D index is broadcast over the other axes
with stride 0 (a view of the same global buffer), and for embedding with
multi-dimensional indices the table is broadcast over the leading index axes
with stride 0, so that output == index shape and rank(input) == rank(index).

The index may be computed first by elementwise ops of its own shape
(``embedding(w, g.op("Subs", ids, value=start))``, ids masked with
comparisons and ``Where``): the whole chain is re-viewed with the broadcast
shape, each Data under it with stride 0 on the new axes. An index (or a node
of its chain) that another op also uses is refused with rule
``builder-view``: re-viewing it would change what that op sees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import sympy

from af_core import dtypes as dt
from af_core.errors import AscirError, UnknownOpError
from af_core.ir.graph import Axis, HintGraph, Node
from af_core.ir.sizes import Expr, as_expr, contiguous_strides
from af_core.ir.validate import validate
from af_core.ops.core_ops import normalize_dim
from af_core.ops.opdef import InferContext, OpDef, PortInfo
from af_core.ops.table import OpTable
from af_core.registry import registry_ops


@attrs.define(eq=False)
class TensorRef:
    """A tensor under construction: the node producing it and its facts."""

    builder: GraphBuilder
    node: Node

    @property
    def dtype(self) -> dt.DType:
        return self.node.y.dtype

    @property
    def shape(self) -> tuple[Expr, ...]:
        return tuple(self.node.y.size)

    @property
    def rank(self) -> int:
        return len(self.node.y.size)

    def __repr__(self) -> str:
        return f"TensorRef({self.node.name}: {self.dtype}{list(self.shape)})"


class GraphBuilder:
    """Builds a valid HintGraph op by op."""

    def __init__(self, name: str, ops: OpTable | None = None) -> None:
        """``ops``: where op types are found (default: the installed plugins', the registry's table)."""
        self.ops: OpTable = registry_ops() if ops is None else ops
        self.graph = HintGraph(name, self.ops)
        self._counter: dict[str, int] = {}
        self._data_index = 0
        self._output_index = 0

    def _op(self, op_type: str, node: str | None = None) -> OpDef:
        """The definition of ``op_type`` in this builder's table; an unknown one names the op type."""
        opdef = self.ops.lookup(op_type)
        if opdef is None:
            raise UnknownOpError("op-known", f"no installed plugin registers op type '{op_type}'", node=node)
        return opdef

    # -- naming and sizes --------------------------------------------------
    def _name(self, base: str) -> str:
        n = self._counter.get(base, 0)
        self._counter[base] = n + 1
        name = base if n == 0 else f"{base}_{n}"
        while self.graph.has_node(name):
            n += 1
            self._counter[base] = n + 1
            name = f"{base}_{n}"
        return name

    def size(self, value: int | str | Expr, max_value: int | None = None) -> Expr:
        if isinstance(value, sympy.Basic):
            return value
        return self.graph.create_size(value, max_value)

    def _new_axes(self, sizes: Sequence[Expr]) -> list[Axis]:
        base = len(self.graph.axes())
        return [self.graph.create_axis(f"z{base + i}", s) for i, s in enumerate(sizes)]

    # -- graph inputs and outputs -----------------------------------------
    def data(
        self,
        name: str,
        shape: Sequence[int | str | Expr],
        dtype: str | dt.DType,
        strides: Sequence[int | str | Expr] | None = None,
    ) -> TensorRef:
        """A kernel input and its Load; returns the loaded tensor."""
        sizes = [self.size(s) for s in shape]
        symbols = self.graph.size_symbols()
        stride_exprs = (
            contiguous_strides(sizes) if strides is None else [as_expr(s, symbols) for s in strides]
        )
        axes = self._new_axes(sizes)
        data = Node("Data", name, self.graph)
        data.attr.ir_attr.index = self._data_index
        self._data_index += 1
        _describe(data, dt.get(dtype), axes, sizes, stride_exprs)
        load = Node(self._op("Load"), self._name(f"{name}_load"))
        load.x = data
        load.attr.sched.axis = axes
        _describe(load, dt.get(dtype), axes, sizes, contiguous_strides(sizes))
        return TensorRef(self, load)

    def output(self, tensor: TensorRef, name: str | None = None) -> Node:
        """Store ``tensor`` and expose it as the next kernel output."""
        name = name or self._name("y")
        node = tensor.node
        store = Node(self._op("Store"), self._name(f"{name}_store"))
        store.x = node
        _copy_desc(store, node)
        out = Node("Output", name, self.graph)
        out.x = store
        out.attr.ir_attr.index = self._output_index
        self._output_index += 1
        _copy_desc(out, store)
        return out

    def build(self) -> HintGraph:
        validate(self.graph)
        return self.graph

    # -- generic ops -------------------------------------------------------
    def op(
        self,
        op_type: str,
        *inputs: TensorRef,
        name: str | None = None,
        dtype: str | dt.DType | None = None,
        shape: Sequence[Expr] | None = None,
        **ir_attrs: Any,
    ) -> TensorRef:
        """Any registered op; y dtype/size are inferred with the op's own rule."""
        opdef = self._op(op_type, name)
        if len(inputs) != len(opdef.inputs):
            raise AscirError(
                "builder-arity",
                f"{op_type} takes {len(opdef.inputs)} inputs, got {len(inputs)}",
                node=name or op_type,
            )
        node = Node(opdef, name or self._name(op_type.lower()))
        for key, value in ir_attrs.items():
            node.attr.ir_attr.set(key, value)
        declared = PortInfo(None if dtype is None else dt.get(dtype), None if shape is None else tuple(shape))
        ctx = InferContext(
            node.name,
            opdef,
            {p: PortInfo(r.dtype, r.shape, None) for p, r in zip(opdef.inputs, inputs)},
            node.attr.ir_attr.as_dict(),
            declared,
        )
        if opdef.infer is None:
            raise AscirError(
                "op-infer",
                f"op {opdef.name} has no shape/dtype inference, so the builder cannot describe its output",
                node=node.name,
            )
        out = opdef.infer(ctx)
        out_dtype = declared.dtype or out.dtype
        out_sizes = declared.sizes or out.sizes
        if out_dtype is None or out_sizes is None:
            raise AscirError(
                "op-infer",
                f"op {opdef.name} inferred no {'dtype' if out_dtype is None else 'shape'} "
                "for its output; give it explicitly",
                node=node.name,
            )
        # wired only once inference accepted it, so an op the rules refuse leaves no node in the graph
        for port, ref in zip(opdef.inputs, inputs):
            node.connect(port, ref.node)
        sizes = list(out_sizes)
        first = inputs[0].node if inputs else None
        axes = _axes_like(self, first, sizes)
        _describe(node, out_dtype, axes, sizes, contiguous_strides(sizes))
        node.attr.sched.axis = axes
        return TensorRef(self, node)

    def __getattr__(self, op_type_lower: str) -> Callable[..., TensorRef]:
        """``g.relu(t)``, ``g.add(a, b)``, ``g.muls(t, value=2.0)`` for registered ops."""
        if op_type_lower.startswith("_"):
            raise AttributeError(op_type_lower)
        for op_name in self.ops.names():
            if op_name.lower() == op_type_lower:
                return lambda *inputs, **kw: self.op(op_name, *inputs, **kw)
        raise AttributeError(f"no registered op named like '{op_type_lower}'")

    def cast(self, tensor: TensorRef, dtype: str | dt.DType) -> TensorRef:
        from af_core.ops.opdef import CAST
        from af_core.registry import op_with_role

        return self.op(op_with_role(CAST).name, tensor, dtype=dtype)

    def broadcast(self, tensor: TensorRef, shape: Sequence[int | str | Expr]) -> TensorRef:
        sizes = [self.size(s) for s in shape]
        return self.op("Broadcast", tensor, shape=sizes)

    def reduce(self, kind: str, tensor: TensorRef, axes: Sequence[int]) -> TensorRef:
        rank = tensor.rank
        norm = sorted({normalize_dim(a, rank) for a in axes})
        sizes = [sympy.Integer(1) if i in norm else s for i, s in enumerate(tensor.shape)]
        return self.op(kind, tensor, shape=sizes)

    def indirect_load(
        self,
        x: TensorRef,
        index: TensorRef,
        dim: int,
        *,
        need_check_negative: bool = False,
        need_check_bound: bool = False,
        name: str | None = None,
    ) -> TensorRef:
        node = Node(self._op("IndirectLoad", name), name or self._name("indirect_load"))
        node.x1 = x.node
        node.x2 = index.node
        node.attr.ir_attr.dim = dim
        node.attr.ir_attr.need_check_negative = need_check_negative
        node.attr.ir_attr.need_check_bound = need_check_bound
        if x.rank != index.rank:
            raise AscirError(
                "indirect-load-rank",
                f"input rank {x.rank} differs from index rank {index.rank}",
                node=node.name,
                port="x2",
            )
        sizes = list(index.shape)
        axes = list(index.node.y.axis)
        _describe(node, x.dtype, axes, sizes, contiguous_strides(sizes))
        node.attr.sched.axis = axes
        return TensorRef(self, node)

    # -- views of Data tensors --------------------------------------------
    def _restride(
        self,
        ref: TensorRef,
        sizes: list[Expr],
        view_strides: Callable[[list[Expr]], list[Expr]],
        axes: list[Axis],
    ) -> None:
        """Give ``ref`` and everything computing it a broadcast view of the same global buffers.

        ``ref`` is a Load straight from ``g.data()`` or an elementwise chain
        over such Loads (an index pre-chain such as ``ids - start`` or a
        masked id): each Data of the chain is re-described as a view with
        ``view_strides(its strides)``, each Load and op of the chain with the
        new ``sizes`` and ``axes``. Only nodes of the same shape as ``ref``
        that nothing outside the chain uses can be re-viewed; anything else
        is refused (rule ``builder-view``) rather than silently changing
        what another consumer sees.
        """
        chain, datas = self._view_chain(ref)
        for data in datas:
            _describe(data, data.y.dtype, axes, sizes, list(view_strides(list(data.y.strides))))
        for node in chain:
            _describe(node, node.y.dtype, axes, sizes, contiguous_strides(sizes))
            node.attr.sched.axis = axes

    def _view_chain(self, ref: TensorRef) -> tuple[list[Node], list[Node]]:
        """The Loads and elementwise ops computing ``ref`` (topological order) and the Data nodes they read."""
        graph = self.graph
        shape = list(ref.shape)
        seen: dict[str, Node] = {}
        datas: dict[str, Node] = {}
        stack = [ref.node]
        while stack:
            node = stack.pop()
            if node.name in seen or node.name in datas:
                continue
            kind = node.op.compute_type
            if kind == "data":
                datas[node.name] = node
                continue
            if kind not in ("load", "elementwise"):
                raise AscirError(
                    "builder-view",
                    f"index_select/embedding can view only Loads from g.data() and elementwise ops over "
                    f"them; '{node.name}' is a {node.type}",
                    node=node.name,
                )
            if list(node.y.size) != shape:
                raise AscirError(
                    "builder-view",
                    f"'{node.name}' has sizes {list(node.y.size)}, not the index's {shape}; an index "
                    "chain with broadcasts cannot be viewed",
                    node=node.name,
                )
            seen[node.name] = node
            stack.extend(p for p in (graph.producer(node, port) for port in node.op.inputs) if p is not None)
        inside = set(seen) | set(datas)
        for node in [*seen.values(), *datas.values()]:
            users = [c.name for c, _port in graph.consumers(node)]
            outside = sorted(u for u in users if u not in inside)
            if node is ref.node and users:
                outside = sorted(users)
            if outside:
                raise AscirError(
                    "builder-view",
                    f"index_select/embedding need tensors no other op uses; '{node.name}' also feeds "
                    f"{outside} (give that use its own g.data())",
                    node=node.name,
                )
        order = {n.name: i for i, n in enumerate(graph.topo_order())}
        chain = sorted(seen.values(), key=lambda n: order[n.name])
        return chain, sorted(datas.values(), key=lambda n: order[n.name])


def _describe(
    node: Node, dtype: dt.DType, axes: Sequence[Axis], sizes: Sequence[Expr], strides: Sequence[Expr]
) -> None:
    node.y.dtype = dtype
    node.y.axis = axes
    node.y.size = sizes
    node.y.strides = strides


def _copy_desc(dst: Node, src: Node) -> None:
    dst.y.dtype = src.y.dtype
    dst.y.axis = src.y.axis
    dst.y.size = src.y.size
    dst.y.strides = contiguous_strides(list(src.y.size))
    dst.attr.sched.axis = src.y.axis


def _axes_like(builder: GraphBuilder, first: Node | None, sizes: list[Expr]) -> list[Axis]:
    """Axes of the first input where sizes agree (or the output is 1), new axes elsewhere."""
    known = list(first.y.axis) if first is not None and first.y.axis is not None else []
    if len(known) != len(sizes):
        return builder._new_axes(sizes)
    axes = []
    for axis, size in zip(known, sizes):
        if axis.size == size or size == 1:
            axes.append(axis)
        else:
            axes.append(builder._new_axes([size])[0])
    return axes


# ---------------------------------------------------------------------------
# torch-shaped front doors


def gather(
    x: TensorRef,
    dim: int,
    index: TensorRef,
    *,
    need_check_negative: bool = False,
    need_check_bound: bool = False,
) -> TensorRef:
    """``torch.gather(x, dim, index)``: IndirectLoad as is."""
    return x.builder.indirect_load(
        x, index, dim, need_check_negative=need_check_negative, need_check_bound=need_check_bound
    )


def expand_index(index: TensorRef, trailing: Sequence[int | str | Expr]) -> TensorRef:
    """View a loaded index with extra trailing axes of stride 0.

    torch's ``index.unsqueeze(-1).expand(..., *trailing)``: each index value
    selects a whole row of the trailing axes (the corpus' row gathers).
    """
    g = index.builder
    sizes = [*index.shape, *(g.size(t) for t in trailing)]
    axes = [*index.node.y.axis, *g._new_axes(sizes[index.rank :])]
    g._restride(index, sizes, lambda strides: [*strides, *([sympy.Integer(0)] * len(trailing))], axes)
    return index


def index_select(
    x: TensorRef,
    dim: int,
    index: TensorRef,
    *,
    need_check_negative: bool = False,
    need_check_bound: bool = False,
) -> TensorRef:
    """``torch.index_select(x, dim, index)`` with a 1-D index.

    The index becomes a stride-0 view of rank(x): sizes of x with dim replaced
    by len(index), stride 0 on every axis but dim.
    """
    g = x.builder
    if index.rank != 1:
        raise AscirError(
            "index-select-rank", f"index must be 1-D, got rank {index.rank}", node=index.node.name, port="x2"
        )
    dim = normalize_dim(dim, x.rank)
    if not 0 <= dim < x.rank:
        raise AscirError("indirect-load-dim", f"dim out of range for rank {x.rank}", node=index.node.name)
    sizes = list(x.shape)
    sizes[dim] = index.shape[0]
    axes = list(x.node.y.axis)
    axes[dim] = index.node.y.axis[0]

    def view(strides: list[Expr]) -> list[Expr]:
        out = [sympy.Integer(0)] * x.rank
        out[dim] = strides[0]
        return out

    g._restride(index, sizes, view, axes)
    return g.indirect_load(
        x, index, dim, need_check_negative=need_check_negative, need_check_bound=need_check_bound
    )


def embedding(
    weight: TensorRef,
    indices: TensorRef,
    *,
    need_check_negative: bool = False,
    need_check_bound: bool = False,
) -> TensorRef:
    """``torch.nn.functional.embedding(indices, weight)``: output indices.shape + [D].

    Normalized to IndirectLoad over rank k+1 (k = indices rank): the table is
    viewed as [i0..i_{k-2}, V, D] with stride 0 on the leading axes, the
    indices as [i0..i_{k-1}, D] with stride 0 on the last axis, dim = k-1.
    """
    g = weight.builder
    if weight.rank != 2:
        raise AscirError(
            "embedding-rank", f"weight must be 2-D, got rank {weight.rank}", node=weight.node.name, port="x1"
        )
    k = indices.rank
    ind_sizes = list(indices.shape)
    vocab, width = weight.shape
    index_sizes = ind_sizes + [width]
    index_axes = list(indices.node.y.axis) + [weight.node.y.axis[1]]
    weight_sizes = ind_sizes[:-1] + [vocab, width]
    weight_axes = list(indices.node.y.axis[:-1]) + list(weight.node.y.axis)
    g._restride(indices, index_sizes, lambda strides: [*strides, sympy.Integer(0)], index_axes)
    if k > 1:
        g._restride(weight, weight_sizes, lambda strides: [sympy.Integer(0)] * (k - 1) + strides, weight_axes)
    return g.indirect_load(
        weight, indices, k - 1, need_check_negative=need_check_negative, need_check_bound=need_check_bound
    )
