"""LoadRowsRegApiCall: GM view rows -> a UB tile (DataCopyPad, or scalar for broadcast rows)."""

from __future__ import annotations

from typing import Any

import sympy

from af_core.backend import Role
from af_core.codegen.api_call import ApiCall
from af_core.ir.sizes import product
from af_core.schedule.impl_graph import ImplGraph, ImplNode
from af_core.schedule.rowtiles import dense
from af_core.tiling.spec import CeilDiv

TILE_IO_SOURCE = "af_tile_io"


def row_view(ctx, name: str, view: dict) -> list[str]:
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
        of its own (``rows - 1`` more). Rows that share copies in runs broken at the last outer axis's
        wrap are counted as one (where the tile starts decides the breaks). A non-dense row is read
        element by element and issues no vector call."""
        a = node.attrs
        view = a["view"]
        if not dense(view):
            return {}
        size = impl.tensor(node.outputs[0]).dtype.itemsize
        width = product(view["inner_sizes"])
        filled = CeilDiv(width * size, 32) * (32 // size)
        calls = sympy.Piecewise((a["rows"], sympy.Gt(a["pitch"], filled)), (0, True))
        if view["outer_sizes"]:
            last_size, last_stride = view["outer_sizes"][-1], view["outer_strides"][-1]
            apart = sympy.Or(sympy.Lt(last_stride, width), sympy.Le(last_size, 1))
            calls = calls + sympy.Piecewise((a["rows"] - 1, apart), (0, True))
        return {"api_calls": calls}

    def generate_api_call_string(self) -> str:
        ctx, a = self.ctx, self.node.attrs
        gm = self.node.inputs[0]
        out = self.node.outputs[0]
        ctype = ctx.cpp_type(ctx.impl.tensor(out).dtype)
        view = ctx.unique("view")
        make, dst = ctx.produce(out)
        lines = row_view(ctx, view, a["view"])
        lines += [
            make,
            f"AfLoadRows<{ctype}>({dst}, {ctx.gm(gm)}, {view}, {ctx.expr(a['first_row'])}, {ctx.expr(a['rows'])}, "
            f"{ctx.expr(a['pitch'])}, static_cast<{ctype}>(0));",
            ctx.finish(out),
        ]
        return "\n".join(line for line in lines if line)
