"""JSON form of a HintGraph; ``from_json(to_json(g))`` reproduces ``g`` exactly.

Expressions are stored as canonical sympy text and parsed back with the
graph's own size symbols (no ``eval``). Node, size and axis order is kept, so
the text of a graph is stable and diffable. Reading checks the data against
the format's table (:mod:`af_core.ir.schema`, docs/graph-format.md) before a
graph is built from it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import sympy

from af_core.errors import AscirError, GraphFormatError, GraphStructureError
from af_core.ir.graph import Axis, HintGraph, Node
from af_core.ir.schema import FORMAT, check, loads
from af_core.ir.sizes import as_expr, to_text
from af_core.naming import printable

if TYPE_CHECKING:
    from af_core.ops.table import OpTable


def _attr_to_json(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "expr":
        return to_text(sympy.sympify(value))
    if kind == "int_list":
        return list(value)
    return value


def graph_to_dict(graph: HintGraph) -> dict[str, Any]:
    nodes = []
    for node in graph.nodes():
        specs = node.op.attr_specs
        y = node.y
        nodes.append(
            {
                "name": node.name,
                "type": node.type,
                "inputs": {
                    port: producer.name
                    for port in node.op.inputs
                    if (producer := graph.producer_or_none(node, port)) is not None
                },
                "ir_attr": {
                    k: _attr_to_json(specs[k].kind, v) for k, v in node.attr.ir_attr.explicit().items()
                },
                "sched_axis": None
                if node.attr.sched.axis is None
                else [a.name for a in node.attr.sched.axis],
                "y": {
                    "dtype": None if y.dtype is None else y.dtype.name,
                    "axis": None if y.axis is None else [a.name for a in y.axis],
                    "size": None if y.size is None else [to_text(s) for s in y.size],
                    "strides": None if y.strides is None else [to_text(s) for s in y.strides],
                },
            }
        )
    return {
        "format": FORMAT,
        "name": graph.name,
        "sizes": [{"name": v.name, "max": v.max_value} for v in graph.sizes()],
        "axes": [{"name": a.name, "size": to_text(a.size)} for a in graph.axes()],
        "attrs": graph.attrs,
        "nodes": nodes,
    }


def to_json(graph: HintGraph, *, indent: int | None = 1) -> str:
    return json.dumps(graph_to_dict(graph), indent=indent, sort_keys=False)


def graph_from_dict(data: Any, ops: OpTable) -> HintGraph:
    """A graph from its JSON form, checked against the format first (:mod:`af_core.ir.schema`); op types
    are found in ``ops`` (``af_core.graph_files`` passes the installed plugins' table).

    A value that breaks the format raises a :class:`~af_core.errors.GraphFormatError`
    naming the node (or size, axis, top-level field), the field and the rule;
    a graph that fits the format but breaks a rule of the graph API (an
    unknown op, attribute, port, axis or producer) raises that rule's
    AscirError.
    """
    check(data, lambda op_type: _attr_kinds(ops, op_type))
    try:
        return _graph_from_dict(data, ops)
    except AscirError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, sympy.SympifyError, SyntaxError) as exc:
        # the check above leaves nothing that reaches here; kept so a gap is still a user error
        what = f"missing field {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise GraphStructureError("json-format", f"malformed graph JSON ({what})") from None


def _attr_kinds(ops: OpTable, op_type: str) -> dict[str, str] | None:
    op = ops.lookup(op_type)
    return None if op is None else {name: spec.kind for name, spec in op.attr_specs.items()}


def _graph_from_dict(data: dict[str, Any], ops: OpTable) -> HintGraph:
    graph = HintGraph(data["name"], ops)
    for size in data.get("sizes", []):
        graph.create_size(size["name"], size.get("max"))
    symbols = graph.size_symbols()
    for axis in data.get("axes", []):
        try:
            size = as_expr(axis["size"], symbols)
        except (TypeError, ValueError) as exc:
            raise GraphFormatError(
                "size-expression",
                printable(str(exc)),
                field="size",
                owner=f"axis '{printable(axis['name'])}'",
            ) from None
        graph.create_axis(axis["name"], size)
    graph.attrs.update(data.get("attrs") or {})
    axes = {a.name: a for a in graph.axes()}

    def axis_list(names: list[str] | None, where: str, node: str) -> list[Axis] | None:
        if names is None:
            return None
        try:
            return [axes[n] for n in names]
        except KeyError as exc:
            raise GraphStructureError(
                "axis-known", f"{where} names unknown axis {exc.args[0]!r}", node=node
            ) from None

    created: list[tuple[Node, dict[str, str]]] = []
    for item in data.get("nodes", []):
        node = Node(item["type"], item["name"], graph)
        for key, value in (item.get("ir_attr") or {}).items():
            node.attr.ir_attr.set(key, value)
        node.attr.sched.axis = axis_list(item.get("sched_axis"), "sched_axis", node.name)
        y = item.get("y") or {}
        node.y.dtype = y.get("dtype")
        node.y.axis = axis_list(y.get("axis"), "y.axis", node.name)
        node.y.size = y.get("size")  # parsed by the setter, which names the node in its errors
        node.y.strides = y.get("strides")
        created.append((node, item.get("inputs") or {}))
    for node, inputs in created:
        for port, producer in inputs.items():
            if not graph.has_node(producer):
                raise GraphStructureError(
                    "port-producer", f"port wired to unknown node '{producer}'", node=node.name, port=port
                )
            node.connect(port, graph.node(producer))
    return graph


def from_json(text: str, ops: OpTable) -> HintGraph:
    """A graph from the text of a graph file (nothing in it is evaluated), its op types found in ``ops``;
    see :func:`graph_from_dict`."""
    try:
        data = loads(text)
    except json.JSONDecodeError as exc:
        raise GraphStructureError("json-format", f"not JSON: {exc}") from None
    return graph_from_dict(data, ops)
