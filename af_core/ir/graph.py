"""HintGraph: the ASCIR graph a front end builds.

The Python surface follows pyautofuse so that Inductor-generated scripts run
unchanged (through ``af_core.ascir``, whose graphs and op factories bring the
installed plugins' op table; here a graph resolves op types only through the
table it is given, :mod:`af_core.ops.table`): ``ascir.ops.Load("name")`` creates a node that joins a graph when
one of its ports is wired to a node that already belongs to one,
``node.x1 = producer`` wires a port, ``node.attr.ir_attr.dim = 2`` sets an IR
attribute (checked against the op's declaration), and ``node.y`` describes
the output tensor (dtype, axis, size, strides).

Edges are multi-edges producer -> consumer keyed by the consumer's port name,
kept in plain dicts laid out as networkx's ``MultiDiGraph`` keeps them (node
payloads are :class:`Node` objects). Compiling a graph needs only a
topological order and a cycle check, both done here, so the compile path does
not import networkx (about 80 ms of a fresh process); :attr:`HintGraph.nx`
builds a networkx view for whoever wants its algorithms, and a cycle is
reported through ``networkx.find_cycle``. Insertion order is kept everywhere
so that every traversal is deterministic.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import sympy

from af_core import dtypes as dt
from af_core.errors import AttrError, GraphStructureError, UnknownOpError
from af_core.ir.sizes import MAX_LITERAL as INT64_MAX
from af_core.ir.sizes import Expr, as_expr, size_symbol

if TYPE_CHECKING:
    import networkx as nx

    from af_core.ops.opdef import OpDef
    from af_core.ops.table import OpTable

# networkx is imported only by ``HintGraph.nx`` and to name the cycle of a cyclic graph: building,
# validating and compiling a graph never load it.

#: the edges of one producer -> consumer pair: port names in insertion order (values unused)
_Ports = dict[str, None]


@attrs.frozen
class Axis:
    """A named loop axis with its size expression."""

    id: int
    name: str
    size: Expr

    def __repr__(self) -> str:
        return f"Axis({self.name}={self.size})"


@attrs.frozen
class SizeVar:
    """A dynamic size: its symbol and an optional declared upper bound."""

    name: str
    symbol: sympy.Symbol
    max_value: int | None = None


def _op_def(op: OpDef | str, name: str, graph: HintGraph | None) -> OpDef:
    """``op`` itself, or the definition the graph's op table gives the op type it names."""
    if not isinstance(op, str):
        return op
    table = graph.ops if graph is not None else None
    if table is None:
        raise UnknownOpError(
            "op-table",
            f"op type '{op}' is given by name, but there is no op table to find it in: pass its OpDef, or add "
            "the node to a graph built with one (GraphBuilder, ascir.HintGraph and af_core.graph_files give "
            "the installed plugins' ops)",
            node=name,
        )
    found = table.lookup(op)
    if found is None:
        raise UnknownOpError("op-known", f"no installed plugin registers op type '{op}'", node=name)
    return found


class TensorDesc:
    """``node.y``: dtype, axis, size and strides of a node's output."""

    __slots__ = ("_node", "_dtype", "_axis", "_size", "_strides")

    def __init__(self, node: Node) -> None:
        self._node = node
        self._dtype: dt.DType | None = None
        self._axis: tuple[Axis, ...] | None = None
        self._size: tuple[Expr, ...] | None = None
        self._strides: tuple[Expr, ...] | None = None

    def _symbols(self) -> dict[str, sympy.Symbol]:
        graph = self._node.graph
        return graph.size_symbols() if graph is not None else {}

    @property
    def dtype(self) -> dt.DType | None:
        return self._dtype

    @dtype.setter
    def dtype(self, value: dt.DType | str | None) -> None:
        if value is None:
            self._dtype = None
            return
        try:
            self._dtype = dt.get(value)
        except KeyError as exc:
            raise AttrError("dtype-known", str(exc.args[0]), node=self._node.name, port="y") from None

    @property
    def axis(self) -> tuple[Axis, ...] | None:
        return self._axis

    @axis.setter
    def axis(self, value: Iterable[Axis] | None) -> None:
        self._axis = None if value is None else tuple(_check_axes(self._node, "y", value))

    @property
    def size(self) -> tuple[Expr, ...] | None:
        return self._size

    @size.setter
    def size(self, value: Iterable[object] | None) -> None:
        self._size = None if value is None else self._exprs(value, "size")

    def _exprs(self, value: Iterable[object], what: str) -> tuple[Expr, ...]:
        syms = self._symbols()
        try:
            return tuple(as_expr(v, syms) for v in value)
        except (TypeError, ValueError) as exc:
            raise AttrError(
                f"{what}-expression",
                f"y.{what} holds something that is not a size expression: {exc}",
                node=self._node.name,
                port="y",
            ) from None

    @property
    def strides(self) -> tuple[Expr, ...] | None:
        return self._strides

    @strides.setter
    def strides(self, value: Iterable[object] | None) -> None:
        self._strides = None if value is None else self._exprs(value, "strides")

    # pyautofuse also exposes repeats for sizes
    repeats = size

    def copy_from(self, other: TensorDesc) -> None:
        self._dtype = other._dtype
        self._axis = other._axis
        self._size = other._size
        self._strides = other._strides

    def __repr__(self) -> str:
        return (
            f"TensorDesc(dtype={self._dtype}, axis={[a.name for a in self._axis or ()]}, "
            f"size={list(self._size or ())}, strides={list(self._strides or ())})"
        )


def _check_axes(node: Node, where: str, value: Iterable[Axis]) -> list[Axis]:
    axes = list(value)
    for a in axes:
        if not isinstance(a, Axis):
            raise AttrError(
                "axis-type",
                f"expected Axis objects from graph.create_axis, got {a!r}",
                node=node.name,
                port=where,
            )
    return axes


class IrAttrs:
    """``node.attr.ir_attr``: attributes the op declares, type-checked on assignment."""

    __slots__ = ("_node", "_values")

    def __init__(self, node: Node) -> None:
        object.__setattr__(self, "_node", node)
        object.__setattr__(self, "_values", {})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        spec = self._node.op.attr_specs.get(name)
        if spec is None:
            raise AttrError(
                "attr-known",
                f"op {self._node.type} has no IR attribute '{name}' "
                f"(declared: {', '.join(self._node.op.attr_specs) or 'none'})",
                node=self._node.name,
            )
        return self._values.get(name, spec.default)

    def __setattr__(self, name: str, value: Any) -> None:
        self.set(name, value)

    def set(self, name: str, value: Any) -> None:
        node = self._node
        spec = node.op.attr_specs.get(name)
        if spec is None:
            raise AttrError(
                "attr-known",
                f"op {node.type} has no IR attribute '{name}' "
                f"(declared: {', '.join(node.op.attr_specs) or 'none'})",
                node=node.name,
            )
        self._values[name] = _coerce_attr(node, spec.kind, name, value)

    def items(self) -> list[tuple[str, Any]]:
        return list(self._values.items())

    def as_dict(self) -> dict[str, Any]:
        """Explicitly set values plus declared defaults."""
        out = {spec.name: spec.default for spec in self._node.op.attrs}
        out.update(self._values)
        return out

    def explicit(self) -> dict[str, Any]:
        return dict(self._values)


def _coerce_attr(node: Node, kind: str, name: str, value: Any) -> Any:
    def bad(expected: str) -> AttrError:
        return AttrError(
            "attr-type",
            f"IR attribute '{name}' expects {expected}, got {value!r}",
            node=node.name,
        )

    if kind == "bool":
        if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
            return bool(value)
        raise bad("a bool")
    if kind == "int":
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise bad("an int")
        return int(value)
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
            raise bad("a number")
        return float(value)
    if kind == "expr":
        try:
            syms = node.graph.size_symbols() if node.graph is not None else {}
            return as_expr(value, syms)
        except (TypeError, ValueError, sympy.SympifyError):
            raise bad("a size expression") from None
    if kind == "int_list":
        try:
            items = list(value)
        except TypeError:
            raise bad("a list of ints") from None
        if any(isinstance(v, bool) or not hasattr(v, "__index__") for v in items):
            raise bad("a list of ints")
        return tuple(int(v) for v in items)
    raise bad(kind)


class SchedAttrs:
    """``node.attr.sched``: scheduling hints from the front end (loop axes)."""

    __slots__ = ("_node", "_axis")

    def __init__(self, node: Node) -> None:
        self._node = node
        self._axis: tuple[Axis, ...] | None = None

    @property
    def axis(self) -> tuple[Axis, ...] | None:
        return self._axis

    @axis.setter
    def axis(self, value: Iterable[Axis] | None) -> None:
        self._axis = None if value is None else tuple(_check_axes(self._node, "sched.axis", value))


class NodeAttrs:
    __slots__ = ("ir_attr", "sched")

    def __init__(self, node: Node) -> None:
        self.ir_attr = IrAttrs(node)
        self.sched = SchedAttrs(node)


class Node:
    """One ASCIR node. Ports are attributes named after the op's inputs."""

    __slots__ = ("name", "type", "op", "graph", "attr", "y", "_pending", "_pending_consumers")

    def __init__(self, op_type: OpDef | str, name: str, graph: HintGraph | None = None) -> None:
        op = _op_def(op_type, str(name), graph)
        object.__setattr__(self, "name", str(name))
        object.__setattr__(self, "type", op.name)
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "graph", None)
        object.__setattr__(self, "attr", NodeAttrs(self))
        object.__setattr__(self, "y", TensorDesc(self))
        object.__setattr__(self, "_pending", {})
        object.__setattr__(self, "_pending_consumers", [])
        if graph is not None:
            graph.add_node(self)

    # -- ports -------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.op.inputs:
            self.connect(name, value)
            return
        if name in Node.__slots__:
            object.__setattr__(self, name, value)
            return
        raise AttrError(
            "port-known",
            f"op {self.type} has no port or attribute '{name}' "
            f"(ports: {', '.join(self.op.inputs) or 'none'})",
            node=self.name,
            port=name,
        )

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails: ports
        op = object.__getattribute__(self, "op")
        if name in op.inputs:
            return self.input(name)
        raise AttributeError(f"node '{object.__getattribute__(self, 'name')}' has no attribute '{name}'")

    def connect(self, port: str, producer: Any) -> None:
        if isinstance(producer, TensorDesc):
            producer = producer._node
        if not isinstance(producer, Node):
            raise GraphStructureError(
                "port-producer",
                f"a port must be wired to a node or a node's .y, got {producer!r}",
                node=self.name,
                port=port,
            )
        if port not in self.op.inputs:
            raise AttrError("port-known", f"op {self.type} has no port '{port}'", node=self.name, port=port)
        graph = self.graph or producer.graph
        if graph is None:
            self._pending[port] = producer
            producer._pending_consumers.append((self, port))
            return
        if self.graph is None:
            graph.add_node(self)
        if producer.graph is None:
            graph.add_node(producer)
        if producer.graph is not graph:
            raise GraphStructureError(
                "port-same-graph",
                f"producer '{producer.name}' belongs to graph '{producer.graph.name}', "
                f"consumer to '{graph.name}'",
                node=self.name,
                port=port,
            )
        graph._set_edge(producer, self, port)

    def input(self, port: str) -> Node | None:
        """The node wired to ``port``, or None while the port is unconnected."""
        if self.graph is None:
            return self._pending.get(port)
        return self.graph.producer_or_none(self, port)

    def inputs(self) -> dict[str, Node | None]:
        return {p: self.input(p) for p in self.op.inputs}

    def __repr__(self) -> str:
        return f"<{self.type} '{self.name}'>"


class HintGraph:
    """An ASCIR hint graph (``ascir.HintGraph(name)``)."""

    def __init__(self, name: str, ops: OpTable | None = None) -> None:
        self.name = str(name)
        #: where nodes named by op type find their definitions (None: nodes must be given OpDefs)
        self.ops = ops
        # networkx's MultiDiGraph layout: node dict, successors and predecessors (the two share
        # each pair's port dict), all in insertion order so every walk matches what it walked
        self._nodes: dict[str, Node] = {}
        self._succ: dict[str, dict[str, _Ports]] = {}
        self._pred: dict[str, dict[str, _Ports]] = {}
        self._sizes: dict[str, SizeVar] = {}
        self._axes: list[Axis] = []
        self._order: dict[str, int] = {}
        self.attrs: dict[str, Any] = {}  # graph-level annotations (e.g. template metadata)

    # -- sizes and axes ----------------------------------------------------
    def create_size(self, name_or_value: str | int, max_value: int | None = None) -> Expr:
        """A dynamic size symbol (by name) or a static size (by int)."""
        if isinstance(name_or_value, bool):
            raise TypeError("a size cannot be a bool")
        if isinstance(name_or_value, int):
            return sympy.Integer(name_or_value)
        name = str(name_or_value)
        if not name.isidentifier():
            raise ValueError(f"size name '{name}' is not an identifier")
        if max_value is not None and (
            isinstance(max_value, bool) or not isinstance(max_value, int) or not 1 <= max_value <= INT64_MAX
        ):
            raise ValueError(
                f"the maximum of size '{name}' must be an integer from 1 to 2^63-1 or none, got {max_value!r}"
            )
        existing = self._sizes.get(name)
        if existing is not None:
            if max_value is not None and existing.max_value != max_value:
                self._sizes[name] = attrs.evolve(existing, max_value=max_value)
            return existing.symbol
        var = SizeVar(name, size_symbol(name), max_value)
        self._sizes[name] = var
        return var.symbol

    def sizes(self) -> list[SizeVar]:
        return list(self._sizes.values())

    def size_symbols(self) -> dict[str, sympy.Symbol]:
        return {v.name: v.symbol for v in self._sizes.values()}

    def size_var(self, name: str) -> SizeVar | None:
        return self._sizes.get(name)

    def size_env(self, sizes: Mapping[str, int]) -> dict[str, int]:
        """Size values keyed by graph name -> keyed by symbol name (what formulas evaluate with).

        Symbol names are the sizes' C++ identifiers (``class`` becomes
        ``afxclass``, ``s0`` stays ``s0``). Idempotent: a mapping whose keys are
        all symbol names already is returned as it is; otherwise keys that are
        graph names are translated and other keys kept.
        """
        symbols = {v.symbol.name for v in self._sizes.values()}
        if all(k in symbols for k in sizes):
            return dict(sizes)
        return {(self._sizes[k].symbol.name if k in self._sizes else k): v for k, v in sizes.items()}

    def create_axis(self, name: str, size: object) -> Axis:
        axis = Axis(len(self._axes), str(name), as_expr(size, self.size_symbols()))
        for a in self._axes:
            if a.name == axis.name:
                raise ValueError(f"graph '{self.name}' already has an axis named '{name}'")
        self._axes.append(axis)
        return axis

    def axes(self) -> list[Axis]:
        return list(self._axes)

    def axis(self, name: str) -> Axis:
        for a in self._axes:
            if a.name == name:
                return a
        raise KeyError(f"graph '{self.name}' has no axis '{name}'")

    # -- nodes -------------------------------------------------------------
    def add_node(self, node: Node) -> Node:
        if node.graph is self:
            return node
        if node.graph is not None:
            raise GraphStructureError(
                "node-one-graph", f"already belongs to graph '{node.graph.name}'", node=node.name
            )
        if node.name in self._order:
            raise GraphStructureError(
                "node-unique-name", f"graph '{self.name}' already has a node with this name", node=node.name
            )
        object.__setattr__(node, "graph", self)
        self._order[node.name] = len(self._order)
        self._nodes[node.name] = node
        self._succ[node.name] = {}
        self._pred[node.name] = {}
        pending = dict(node._pending)
        node._pending.clear()
        for port, producer in pending.items():
            node.connect(port, producer)
        consumers = list(node._pending_consumers)
        node._pending_consumers.clear()
        for consumer, port in consumers:
            if consumer.graph is None or consumer._pending.get(port) is node:
                consumer._pending.pop(port, None)
                consumer.connect(port, node)
        return node

    def _add_edge(self, u: str, v: str, port: str) -> None:
        ports = self._succ[u].get(v)
        if ports is None:
            ports = self._succ[u][v] = self._pred[v][u] = {}
        ports[port] = None

    def _set_edge(self, producer: Node, consumer: Node, port: str) -> None:
        self.disconnect(consumer, port)
        self._add_edge(producer.name, consumer.name, port)

    def disconnect(self, consumer: Node, port: str) -> None:
        for u, ports in list(self._pred[consumer.name].items()):
            if port in ports:
                del ports[port]
                if not ports:
                    del self._succ[u][consumer.name]
                    del self._pred[consumer.name][u]

    def remove_node(self, node: Node) -> None:
        name = node.name
        if self._nodes.get(name) is not node:
            raise KeyError(f"graph '{self.name}' has no node '{name}'")
        del self._nodes[name]
        for v in self._succ.pop(name):
            del self._pred[v][name]
        for u in self._pred.pop(name):
            del self._succ[u][name]
        del self._order[name]
        object.__setattr__(node, "graph", None)

    def node(self, name: str) -> Node:
        try:
            return self._nodes[name]
        except KeyError:
            raise KeyError(f"graph '{self.name}' has no node '{name}'") from None

    def has_node(self, name: str) -> bool:
        return name in self._order

    def nodes(self) -> list[Node]:
        """All nodes, in insertion order."""
        return [self._nodes[n] for n in sorted(self._order, key=self._order.__getitem__)]

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes())

    def __len__(self) -> int:
        return len(self._order)

    def producer(self, consumer: Node, port: str) -> Node:
        """The node feeding ``consumer``'s input ``port``.

        Passes and templates walk validated graphs, where every port is wired; an unconnected port
        here is a graph error (the rule validation reports), not a None to trip over later.
        """
        producer = self.producer_or_none(consumer, port)
        if producer is None:
            raise GraphStructureError(
                "port-connected",
                f"input port of {consumer.type} is not connected",
                node=consumer.name,
                port=port,
            )
        return producer

    def producer_or_none(self, consumer: Node, port: str) -> Node | None:
        """The node feeding ``consumer``'s input ``port``, None while the port is unconnected."""
        for u, ports in self._pred[consumer.name].items():
            if port in ports:
                return self._nodes[u]
        return None

    def consumers(self, producer: Node) -> list[tuple[Node, str]]:
        """(consumer, port) pairs fed by ``producer``, in deterministic order."""
        out = [(self._nodes[v], key) for v, ports in self._succ[producer.name].items() for key in ports]
        out.sort(key=lambda item: (self._order[item[0].name], item[1]))
        return out

    def edges(self) -> list[tuple[Node, Node, str]]:
        """(producer, consumer, port) for every connected input port, consumers in node order
        and ports in their op's order (what drawings and printers walk)."""
        out = []
        for node in self.nodes():
            for port in node.op.inputs:
                producer = self.producer_or_none(node, port)
                if producer is not None:
                    out.append((producer, node, port))
        return out

    def nodes_of_type(self, op_type: str) -> list[Node]:
        return [n for n in self.nodes() if n.type == op_type]

    def _sorted_names(self) -> list[str]:
        """Node names in topological order, the smallest insertion rank first among the ready ones.

        The order networkx's ``lexicographical_topological_sort`` keyed by the rank gives (ties of
        equal ranks broken by position in the node dict, as there). A cyclic graph leaves the nodes
        on or behind a cycle out.
        """
        position = {n: i for i, n in enumerate(self._nodes)}
        waiting = {v: sum(len(p) for p in preds.values()) for v, preds in self._pred.items()}
        ready = [(self._order[v], position[v], v) for v, count in waiting.items() if count == 0]
        heapq.heapify(ready)
        names = []
        while ready:
            name = heapq.heappop(ready)[2]
            names.append(name)
            for child, ports in self._succ[name].items():
                waiting[child] -= len(ports)
                if waiting[child] == 0:
                    heapq.heappush(ready, (self._order[child], position[child], child))
        return names

    def find_cycle(self) -> list[str] | None:
        """The nodes of one cycle (the one ``networkx.find_cycle`` reports), or None for a DAG."""
        if len(self._sorted_names()) == len(self._nodes):  # linear: most graphs end here
            return None
        import networkx as nx

        try:
            cycle = nx.find_cycle(self.nx)
        except nx.NetworkXNoCycle:  # pragma: no cover - the sort above found one
            return None
        return [edge[0] for edge in cycle]

    def topo_order(self) -> list[Node]:
        """Topological order, ties broken by insertion order (deterministic).

        Raises GraphStructureError on a cyclic graph (validation reports the cycle first).
        """
        names = self._sorted_names()
        if len(names) != len(self._nodes):
            cycle = self.find_cycle() or []
            raise GraphStructureError(
                "graph-acyclic",
                f"the graph has a cycle through {' -> '.join(cycle)}",
                node=cycle[0] if cycle else None,
                values={"cycle": cycle},
            )
        return [self._nodes[n] for n in names]

    @property
    def nx(self) -> nx.MultiDiGraph:
        """A networkx ``MultiDiGraph`` of this graph (producer -> consumer, key = port; node attribute
        ``node`` = the :class:`Node`), built on each call with the node and edge order of the graph."""
        import networkx as nx

        view = nx.MultiDiGraph()
        for name, node in self._nodes.items():
            view.add_node(name, node=node)
        for u, succ in self._succ.items():
            for v, ports in succ.items():
                for port in ports:
                    view.add_edge(u, v, key=port)
        return view

    # -- copies ------------------------------------------------------------
    def copy(self, name: str | None = None) -> HintGraph:
        """A deep copy: templates rewrite copies, never the user's graph."""
        new = HintGraph(name or self.name, self.ops)
        new._sizes = dict(self._sizes)
        new._axes = list(self._axes)
        new.attrs = dict(self.attrs)
        for node in self.nodes():
            clone = Node(node.op, node.name)
            clone.y.copy_from(node.y)
            object.__setattr__(clone.attr.ir_attr, "_values", dict(node.attr.ir_attr.explicit()))
            clone.attr.sched.axis = node.attr.sched.axis
            new.add_node(clone)
        for u, succ in self._succ.items():
            for v, ports in succ.items():
                for port in ports:
                    new._add_edge(u, v, port)
        return new

    def __repr__(self) -> str:
        return f"<HintGraph '{self.name}' with {len(self)} nodes>"
