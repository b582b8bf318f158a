"""LoadRowsRegApiCall: GM view rows -> a UB tile (DataCopyPad, or scalar for broadcast rows)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy

from af_core.template_api import (
    ApiCall,
    CeilDiv,
    Gt,
    ImplGraph,
    ImplNode,
    Le,
    LoadRowsAttrs,
    Lt,
    Role,
    Select,
    dense,
    product,
)

TILE_IO_SOURCE = "af_tile_io"
#: rows one ``DataCopyPad`` of ``AfLoadRows`` moves at most (its block count is 12 bits)
MAX_ROWS = 4095


def merged_rows(view: Mapping[str, Any]) -> Mapping[str, Any]:
    """``view`` with its outer axes of size 1 dropped and each pair of adjacent outer axes that step as one
    merged (the outer one's stride is the inner one's size times its stride): the same rows at the same
    offsets, numbered the same way. ``AfLoadRows`` shares one ``DataCopyPad`` among consecutive rows only
    along the last outer axis, so rows of ``x[4096, 90, 32]`` read as one axis of 368640 rows take one copy
    a tile instead of one per 90 rows the tile spans."""
    sizes = [sympy.sympify(v) for v in view["outer_sizes"]]
    strides = [sympy.sympify(v) for v in view["outer_strides"]]
    kept = [(size, stride) for size, stride in zip(sizes, strides) if size != 1]
    merged: list[tuple[sympy.Expr, sympy.Expr]] = []
    for size, stride in kept:
        if merged and merged[-1][1] == size * stride:
            merged[-1] = (merged[-1][0] * size, stride)
        else:
            merged.append((size, stride))
    if len(merged) == len(sizes):
        return view
    return {**view, "outer_sizes": [m[0] for m in merged], "outer_strides": [m[1] for m in merged]}


def row_view(ctx, name: str, view: Mapping[str, Any]) -> list[str]:
    """C++ lines declaring an ``AfRowView`` named ``name`` from a template's view description."""
    lines = [
        f"AfRowView {name}{{}};",
        f"{name}.outerRank = {len(view['outer_sizes'])};",
        f"{name}.innerRank = {len(view['inner_sizes'])};",
    ]
    for key, field in (
        ("outer_sizes", "outerSizes"),
        ("outer_strides", "outerStrides"),
        ("inner_sizes", "innerSizes"),
        ("inner_strides", "innerStrides"),
    ):
        for i, value in enumerate(view[key]):
            lines.append(f"{name}.{field}[{i}] = {ctx.expr(value)};")
    return lines


class LoadRowsRegApiCall(ApiCall):
    """Fills :attr:`Role.LOAD_ROWS`."""

    name = "LoadRowsRegApiCall"
    sources = (TILE_IO_SOURCE,)
    roles = frozenset({Role.LOAD_ROWS})

    @classmethod
    def predicted_counters(cls, node: ImplNode, impl: ImplGraph) -> dict[str, Any]:
        """``api_calls`` beyond the node's one per tile: a dense row whose tile pitch runs past its data
        padded to 32 bytes gets the rest of each row filled with the pad value, one ``Duplicate`` per row
        (``AfLoadRows``). The copies are counted as the node's call, unless consecutive rows cannot share
        one ``DataCopyPad`` at all: when the last outer axis steps less than a row (a row broadcast over it,
        stride 0, as an index_select's index over the outer rows) or has one element, every row is a copy
        of its own (``rows - 1`` more); otherwise a copy takes at most 4095 rows (``DataCopyPad``'s block
        count). The axes are :func:`merged_rows`' (axes that step as one are one); rows that share copies in
        runs broken at the wrap of the last outer axis that does not step as one with the axis before it
        are counted as one (where the tile starts decides the breaks). A non-dense row is read element by
        element and issues no vector call: the node's one per tile is taken back (-1)."""
        a = LoadRowsAttrs.of(node)
        view = merged_rows(a.view)
        if not dense(view):
            return {"api_calls": sympy.Integer(-1)}
        size = impl.tensor(node.outputs[0]).dtype.itemsize
        width = product(view["inner_sizes"])
        filled = CeilDiv(width * size, 32) * (32 // size)
        calls = Select(Gt(a.pitch, filled), a.rows, 0)
        if view["outer_sizes"]:
            last_size, last_stride = view["outer_sizes"][-1], view["outer_strides"][-1]
            apart = sympy.Or(Lt(last_stride, width), Le(last_size, 1))
            calls = calls + Select(apart, a.rows - 1, CeilDiv(a.rows, MAX_ROWS) - 1)
        return {"api_calls": calls}

    def generate_api_call_string(self) -> str:
        ctx, a = self.ctx, LoadRowsAttrs.of(self.node)
        gm = self.node.inputs[0]
        out = self.node.outputs[0]
        ctype = ctx.cpp_type(ctx.impl.tensor(out).dtype)
        view = ctx.unique("view")
        make, dst = ctx.produce(out)
        lines = row_view(ctx, view, merged_rows(a.view))
        lines += [
            make,
            f"AfLoadRows<{ctype}>({dst}, {ctx.gm(gm)}, {view}, {ctx.expr(a.first_row)}, {ctx.expr(a.rows)}, "
            f"{ctx.expr(a.pitch)}, static_cast<{ctype}>(0));",
            ctx.finish(out),
        ]
        return "\n".join(line for line in lines if line)
