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

if TYPE_CHECKING:
    from af_core.codegen.kernel import KernelContext

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
