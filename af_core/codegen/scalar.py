"""Scalar (one element) C++ for elementwise chains: what a SIMT lane computes.

A node's value is a function of the output coordinate. Broadcast nodes do
not compute anything: they *mask* coordinate axes (the value of
``Broadcast(v)`` at ``c`` is ``v`` at ``c`` with the broadcast axes set to
0), so a lane evaluates any chain of loads, broadcasts and elementwise ops at
its own coordinate. Leaves (Loads, IndirectLoads) are rendered by a callback
of the caller, which knows the pointers and strides.

Numerics follow the elementwise contract: float16/bfloat16/float32 operands
are converted to float, integer ops use their own type, and each result is
cast back to the node's dtype (rounding per op, like the reference).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import sympy

from af_core import dtypes as dt
from af_core.errors import CodegenError
from af_core.ir.graph import HintGraph, Node

Mask = frozenset[int]
LeafFn = Callable[[Node, Mask], str | None]


def compute_type(dtype: dt.DType) -> str:
    """The C++ type an op computes in for operands of ``dtype``."""
    if dtype.is_float:
        return "float"
    if dtype.is_bool:
        return "bool"
    return dtype.cpp


def value_type(dtype: dt.DType) -> str:
    return "bool" if dtype.is_bool else dtype.cpp


def literal(value: float) -> str:
    text = repr(float(value))
    if text in ("inf", "-inf", "nan"):
        raise CodegenError(f"scalar attribute {value} has no C++ literal here")
    return text


def wrapped_literal(value: float, dtype: dt.DType) -> str:
    """An integer scalar operand as the reference converts it: ``int(value)`` modulo 2^bits, in range."""
    bits = 8 * dtype.itemsize
    v = int(value) & ((1 << bits) - 1)
    if dtype.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    if v == -(1 << (bits - 1)):
        return f"({v + 1} - 1)"
    return f"{v}" if dtype.kind == "i" else f"{v}u" if bits <= 32 else f"{v}ull"


def broadcast_mask(node: Node, src: Node) -> set[int]:
    """Axes a Broadcast expands (input size 1, output size not 1)."""
    return {
        axis
        for axis, (a, b) in enumerate(zip(src.y.size, node.y.size))
        if sympy.sympify(a) == 1 and sympy.sympify(b) != 1
    }


class ScalarEmitter:
    """Emits ``const T vN = ...;`` lines for the nodes a lane needs, memoized per mask."""

    def __init__(self, graph: HintGraph, leaf: LeafFn, prefix: str = "v") -> None:
        self.graph = graph
        self.leaf = leaf
        self.prefix = prefix
        self.lines: list[str] = []
        self._memo: dict[tuple[str, Mask], str] = {}
        self._count = 0
        self.sources: set[str] = set()

    def _fresh(self) -> str:
        self._count += 1
        return f"{self.prefix}{self._count}"

    def value(self, node: Node, mask: Mask = frozenset()) -> str:
        """The variable holding ``node`` at the lane's coordinate with ``mask`` axes zeroed.

        Walks the chain with an explicit stack (chains of thousands of ops are legal), in
        the order a depth-first recursion would: inputs by port order, each line once.
        """
        # frames: (node, mask, pending) where pending is None on entry, else the deferred step
        stack: list[tuple[Node, Mask, tuple | None]] = [(node, mask, None)]
        while stack:
            current, cmask, pending = stack.pop()
            key = (current.name, cmask)
            if key in self._memo:
                continue
            if pending is not None:
                self._finish(current, cmask, pending)
                continue
            kind = current.op.compute_type
            if kind == "broadcast":
                src = self.graph.producer(current, "x")
                deps = [(src, frozenset(cmask | broadcast_mask(current, src)))]
                stack.append((current, cmask, ("alias", deps[0])))
            elif kind in ("store", "workspace"):
                deps = [(self.graph.producer(current, "x"), cmask)]
                stack.append((current, cmask, ("alias", deps[0])))
            else:
                leaf = self.leaf(current, cmask)
                if leaf is not None:
                    var = self._fresh()
                    self.lines.append(f"const {value_type(current.y.dtype)} {var} = {leaf};")
                    self._memo[key] = self.after(current, cmask, var)
                    continue
                if kind != "elementwise":
                    raise CodegenError(
                        f"node '{current.name}' ({current.type}) has no scalar form in a SIMT lane"
                    )
                deps = [(self.graph.producer(current, port), cmask) for port in current.op.inputs]
                stack.append((current, cmask, ("elementwise",)))
            for dep, dep_mask in reversed(deps):
                if (dep.name, dep_mask) not in self._memo:
                    stack.append((dep, dep_mask, None))
        return self._memo[(node.name, mask)]

    def _finish(self, node: Node, mask: Mask, pending: tuple) -> None:
        """Second visit of a node whose inputs are now memoized: emit it."""
        if pending[0] == "alias":
            dep, dep_mask = pending[1]
            var = self._memo[(dep.name, dep_mask)]
        else:
            var = self._elementwise(node, mask)
        self._memo[(node.name, mask)] = self.after(node, mask, var)

    def after(self, node: Node, mask: Mask, var: str) -> str:
        """Hook for subclasses: post-process a node's value (e.g. bound-check zeroing)."""
        return var

    def emit(self, text: str) -> None:
        self.lines.append(text)

    def fresh(self) -> str:
        return self._fresh()

    def _elementwise(self, node: Node, mask: Mask) -> str:
        op = node.op
        if not op.scalar_cpp:
            raise CodegenError(f"op {node.type} of node '{node.name}' has no scalar C++ form")
        args: dict[str, str] = {}
        first: dt.DType | None = None
        for port in op.inputs:
            producer = self.graph.producer(node, port)
            var = self.value(producer, mask)
            dtype = producer.y.dtype
            if dtype.is_float:
                args[port] = f"static_cast<float>({var})"
            else:
                args[port] = var
            if first is None and not dtype.is_bool:
                first = dtype
        first = first or node.y.dtype
        attrs = node.attr.ir_attr.as_dict()
        fmt = dict(args)
        fmt["C"] = compute_type(first)
        fmt["T"] = value_type(node.y.dtype)
        if "value" in attrs and attrs["value"] is not None:
            fmt["value"] = (
                literal(attrs["value"])
                if first.is_float or first.is_bool
                else wrapped_literal(attrs["value"], first)
            )
        try:
            expr = op.scalar_cpp.format(**fmt)
        except KeyError as exc:
            raise CodegenError(f"scalar form of {node.type} needs '{exc.args[0]}'") from None
        for source in op.cpp_sources:
            self.sources.add(source)
        var = self._fresh()
        out = node.y.dtype
        if out.is_bool:
            self.lines.append(f"const bool {var} = {expr};")
        else:
            self.lines.append(f"const {out.cpp} {var} = static_cast<{out.cpp}>({expr});")
        return var


def view_data(graph: HintGraph, node: Node, mask: Mask) -> tuple[Node, Mask]:
    """The Data node under a view (a Load or Broadcasts of a Load), with the axes masked on the way."""
    while node.op.compute_type == "broadcast":
        src = graph.producer(node, "x")
        mask = frozenset(mask | broadcast_mask(node, src))
        node = src
    if node.op.compute_type != "load":
        raise CodegenError(f"'{node.name}' ({node.type}) is not a view of a kernel input")
    return graph.producer(node, "x"), mask


def offset_axes(data: Node, mask: Mask) -> list[int]:
    """Axes whose coordinate the GM offset of ``data`` at a lane's coordinate uses: not masked, not of
    size 1, not of stride 0 (each contributes ``coordinate * stride``)."""
    return [
        axis
        for axis, stride in enumerate(data.y.strides)
        if axis not in mask and sympy.sympify(stride) != 0 and sympy.sympify(data.y.size[axis]) != 1
    ]


class LaneLoads:
    """The GM loads a lane makes for one value and the coordinate axes each depends on.

    Mirrors a lane emitter over :class:`ScalarEmitter` whose leaves are GM loads: values are memoized per
    (node, mask), a Load reads ``data`` at :func:`offset_axes`, an IndirectLoad evaluates its index (``x2``)
    at the same mask and reads its input (``x1``, a view) with the gathered axis ``dim`` replaced by the
    index and the output-level mask applied to every other axis. A value depends on the axes its loads'
    offsets use; a load none of whose axes is reduced reads the same element at every step of a lane's
    reduce loop, so the lane reads it once (the SIMT lanes hoist it, the SIMT template predicts it).
    """

    def __init__(self, graph: HintGraph) -> None:
        self.graph = graph
        self._axes: dict[tuple[str, Mask], frozenset[int]] = {}
        self.loads: list[tuple[str, Mask, frozenset[int]]] = []  # (Load / IndirectLoad node, mask, axes)

    def gather_parts(self, node: Node, mask: Mask) -> tuple[Node, Node, Mask]:
        """(index producer, input Data, mask of the input offset) of an IndirectLoad at ``mask``."""
        dim = int(node.attr.ir_attr.dim)
        data, view_mask = view_data(self.graph, self.graph.producer(node, "x1"), frozenset())
        # output-level broadcasts mask every axis but dim; the view's own broadcasts mask theirs
        return self.graph.producer(node, "x2"), data, frozenset((mask - {dim}) | view_mask)

    def axes(self, node: Node, mask: Mask = frozenset()) -> frozenset[int]:
        """Coordinate axes the value of ``node`` at ``mask`` depends on (walks the chain once per mask)."""
        stack: list[tuple[Node, Mask, bool]] = [(node, mask, False)]
        while stack:
            current, cmask, ready = stack.pop()
            key = (current.name, cmask)
            if key in self._axes:
                continue
            deps = self._deps(current, cmask)
            missing = [d for d in deps if (d[0].name, d[1]) not in self._axes]
            if missing and not ready:
                stack.append((current, cmask, True))
                stack.extend((d, m, False) for d, m in reversed(missing))
                continue
            self._axes[key] = self._finish(current, cmask, deps)
        return self._axes[(node.name, mask)]

    def _deps(self, node: Node, mask: Mask) -> list[tuple[Node, Mask]]:
        kind = node.op.compute_type
        if kind == "broadcast":
            src = self.graph.producer(node, "x")
            return [(src, frozenset(mask | broadcast_mask(node, src)))]
        if kind in ("store", "workspace"):
            return [(self.graph.producer(node, "x"), mask)]
        if kind == "indirect_load":
            return [(self.gather_parts(node, mask)[0], mask)]
        if kind == "load":
            return []
        if kind != "elementwise":
            raise CodegenError(f"node '{node.name}' ({node.type}) has no scalar form in a SIMT lane")
        return [(self.graph.producer(node, port), mask) for port in node.op.inputs]

    def _finish(self, node: Node, mask: Mask, deps: list[tuple[Node, Mask]]) -> frozenset[int]:
        kind = node.op.compute_type
        axes = frozenset().union(*(self._axes[(d.name, m)] for d, m in deps))
        if kind == "load":
            axes = frozenset(offset_axes(self.graph.producer(node, "x"), mask))
        elif kind == "indirect_load":
            dim = int(node.attr.ir_attr.dim)
            _, data, data_mask = self.gather_parts(node, mask)
            axes = axes | (frozenset(offset_axes(data, data_mask)) - {dim})
        if kind in ("load", "indirect_load"):
            self.loads.append((node.name, mask, axes))
        return axes

    def counts(self, node: Node, reduced: Iterable[int]) -> tuple[int, int]:
        """(loads at every step of the reduce over ``reduced``, loads once per lane) for ``node``'s value."""
        table = self.table(node, reduced)
        return table[(True, False)], table[(False, False)]

    def table(
        self, node: Node, reduced: Iterable[int], wide: int | None = None
    ) -> dict[tuple[bool, bool], int]:
        """Loads of ``node``'s value by (depends on a ``reduced`` axis, depends on axis ``wide``): a lane
        that computes several consecutive elements along ``wide`` reads the second kind once per element
        and the first kind once for all of them."""
        self.axes(node)
        red = frozenset(reduced)
        table = {(r, w): 0 for r in (False, True) for w in (False, True)}
        for _, _, axes in self.loads:
            table[(bool(axes & red), wide is not None and wide in axes)] += 1
        return table
