"""The row view that whole-row gather templates share (C++ in ``api/af_row_select.h``).

A template that copies whole table rows describes, per gather, which table
row an output row reads: the output axes up to and including the gathered
one (sizes, index strides, table strides), the gathered axis' table extent,
the row width and the two index checks. ``af_row_select.h`` turns that into a
table offset per output row (``AfRowSelectSource``); :func:`render_row_select`
writes the ``AfRowSelectView`` value a kernel passes to it, so every such
template fills the struct the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from af_core.template_api import ComputeType, Unsupported

if TYPE_CHECKING:
    from af_core.template_api import FusionAnalysis, HintGraph, KernelContext, Node

#: The API source name of ``af_row_select.h`` (registered by this plugin); list it in an API source's
#: ``requires`` to use ``AfRowSelectView`` / ``AfRowSelectSource`` there.
ROW_SELECT_SOURCE = "af_row_select"
#: Most output axes a row view holds (``AF_ROW_SELECT_MAX_DIMS``).
ROW_SELECT_MAX_AXES = 8


def render_row_select(ctx: KernelContext, name: str, view: Mapping[str, Any]) -> list[str]:
    """C++ lines declaring ``AfRowSelectView <name>`` from ``view``.

    ``view`` holds ``sizes``, ``index_strides`` and ``table_strides`` (one
    formula per output axis up to the gathered one, at most
    :data:`ROW_SELECT_MAX_AXES`), ``extent``, ``width`` (formulas) and
    ``check_negative`` / ``check_bound`` (bools); ``ctx`` is the ApiCall's
    code generation context (its ``expr`` prints a formula).
    """
    rank = len(view["sizes"])
    if not 1 <= rank <= ROW_SELECT_MAX_AXES:
        raise ValueError(f"a row view holds 1 to {ROW_SELECT_MAX_AXES} axes, not {rank}")
    lines = [f"AfRowSelectView {name}{{}};", f"{name}.rank = {rank};"]
    for key, member in (
        ("sizes", "sizes"),
        ("index_strides", "indexStrides"),
        ("table_strides", "tableStrides"),
    ):
        lines += [f"{name}.{member}[{i}] = {ctx.expr(value)};" for i, value in enumerate(view[key])]
    lines += [
        f"{name}.extent = {ctx.expr(view['extent'])};",
        f"{name}.width = {ctx.expr(view['width'])};",
        f"{name}.checkNegative = {'true' if view['check_negative'] else 'false'};",
        f"{name}.checkBound = {'true' if view['check_bound'] else 'false'};",
    ]
    return lines


@attrs.frozen
class RowSelect:
    """What a whole-row template reads for one gather: the table and index Data nodes, the gathered
    axis, and the row view (:func:`render_row_select` prints it)."""

    table: Node
    index: Node
    dim: int
    view: dict[str, Any]


def _loaded_data(graph: HintGraph, port_node: Node, what: str, who: str) -> Node:
    """The Data node a gather port reads, when the port is fed by a plain Load."""
    if port_node.op.compute_type != ComputeType.LOAD:
        raise Unsupported(
            f"the {what} of the gather is '{port_node.name}' ({port_node.type}); {who} reads "
            f"the {what} from GM as stored, so it must come straight from a Load"
        )
    return graph.producer(port_node, "x")


def row_select(graph: HintGraph, gather: Node, an: FusionAnalysis, who: str) -> RowSelect:
    """The row view of ``gather`` (the IndirectLoad ``an`` analysed) for a template that copies whole rows.

    Raises :class:`~af_core.errors.Unsupported`, naming ``who`` (e.g. "the row copy"), when the gather
    is not one: a bool table, ops between the table or the index and the gather (rows and index values
    are read as stored), more output axes up to the gathered one than a view holds, a table or index
    that is not loaded straight from GM, an index that varies inside a row, or rows that are not one
    contiguous block.
    """
    import sympy

    from af_core.template_api import dense, product

    if gather.y.dtype.is_bool:
        raise Unsupported("bool tables are not supported")
    if an.input_chain:
        raise Unsupported(
            f"ops {[n.name for n in an.input_chain]} sit between the table and the gather; "
            f"{who} copies table rows as stored"
        )
    if an.index_chain:
        raise Unsupported(
            f"ops {[n.name for n in an.index_chain]} sit between the index and the gather; "
            f"{who} reads index values as stored"
        )
    dim = an.dim
    if dim + 1 > ROW_SELECT_MAX_AXES:
        raise Unsupported(
            f"the gathered axis is axis {dim}; {who} numbers rows over at most {ROW_SELECT_MAX_AXES} axes"
        )
    table = _loaded_data(graph, graph.producer(gather, "x1"), "table", who)
    index = _loaded_data(graph, graph.producer(gather, "x2"), "index", who)
    out_sizes = list(gather.y.size)
    varying = [i for i in range(dim + 1, len(out_sizes)) if sympy.sympify(index.y.strides[i]) != 0]
    if varying:
        raise Unsupported(
            f"index '{index.name}' varies along axes {varying} after dim {dim}; {who} "
            "needs one index value per row (embedding / index_select)"
        )
    inner = {"inner_sizes": out_sizes[dim + 1 :], "inner_strides": list(table.y.strides[dim + 1 :])}
    if not dense(inner):
        raise Unsupported(
            f"the selected rows of table '{table.name}' are not one contiguous block "
            f"(strides {inner['inner_strides']})"
        )
    ir_attr = gather.attr.ir_attr
    view = {
        "sizes": out_sizes[: dim + 1],
        "index_strides": list(index.y.strides[: dim + 1]),
        "table_strides": list(table.y.strides[: dim + 1]),
        "extent": table.y.size[dim],
        "width": product(out_sizes[dim + 1 :]),
        "check_negative": bool(ir_attr.need_check_negative),
        "check_bound": bool(ir_attr.need_check_bound),
    }
    return RowSelect(table, index, dim, view)
