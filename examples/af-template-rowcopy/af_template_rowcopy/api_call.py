"""RowCopyApiCall: the per-row copy of the rowcopy template (C++ in ``af_row_copy.h``).

The ImplNode it renders (built by :class:`~af_template_rowcopy.template.RowCopyTemplate`):

- inputs: the table's and the index's GM tensors; output: one UB queue tile
  of ``rows x pitch`` elements;
- attrs: ``view`` (sizes, index strides and table strides of the output axes
  up to the gathered one, the gathered axis' table extent, the row width,
  the two index checks), ``first_row`` and ``rows`` (formulas over the tile
  loop's ``_start`` / ``_actual`` symbols) and ``pitch``.
"""

from __future__ import annotations

from typing import ClassVar

from af_v35_regbase.row_select import render_row_select

from af_core.template_api import ApiCall
from af_template_rowcopy.plugin import ROW_COPY_SOURCE  # the API source the call inlines


class RowCopyApiCall(ApiCall):
    """Copies the table rows an index selects into a UB tile, one DataCopyPad per row (or run of rows)."""

    name: ClassVar[str] = "RowCopyApiCall"
    sources: ClassVar[tuple[str, ...]] = (ROW_COPY_SOURCE,)

    def generate_api_call_string(self) -> str:
        ctx, a = self.ctx, self.node.attrs
        table, index = self.node.inputs
        out = self.node.outputs[0]
        view = a["view"]
        name = ctx.unique("rowview")
        lines = render_row_select(ctx, name, view)
        ctype = ctx.cpp_type(ctx.impl.tensor(out).dtype)
        itype = ctx.cpp_type(ctx.impl.tensor(index).dtype)
        make, dst = ctx.produce(out)
        lines += [
            make,
            f"AfRowCopy<{ctype}, {itype}>({dst}, {ctx.gm(table)}, {ctx.gm(index)}, {name}, "
            f"{ctx.expr(a['first_row'])}, {ctx.expr(a['rows'])}, {ctx.expr(a['pitch'])});",
            ctx.finish(out),
        ]
        return "\n".join(line for line in lines if line)
