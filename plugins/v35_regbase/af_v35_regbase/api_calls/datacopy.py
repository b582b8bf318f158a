"""StoreRegApiCall: UB -> GM with DataCopyPad (rows of any byte length)."""

from __future__ import annotations

from af_core.template_api import ApiCall, Role, StoreRowsAttrs


class StoreRegApiCall(ApiCall):
    """Stores ``count`` contiguous elements of a UB tensor at ``gm_offset`` of a GM tensor.

    Optional ``rows`` / ``pitch`` attrs store ``rows`` blocks of ``count``
    elements each, taken every ``pitch`` elements in UB (a padded tile).
    """

    name = "StoreRegApiCall"
    roles = frozenset({Role.STORE_ROWS})

    def build_api_param(self) -> None:
        a, ctx = StoreRowsAttrs.of(self.node), self.ctx
        self.param.update(
            offset=ctx.expr(a.gm_offset),
            count=ctx.expr(a.count),
            rows=ctx.expr(a.rows),
            pitch=None if a.pitch is None else ctx.expr(a.pitch),
        )

    def generate_api_call_string(self) -> str:
        ctx, p = self.ctx, self.param
        src_name, dst_name = self.node.inputs[0], self.node.outputs[0]
        ctype = ctx.cpp_type(ctx.impl.tensor(src_name).dtype)
        take, src = ctx.use(src_name)
        size = f"static_cast<int64_t>(sizeof({ctype}))"
        if p["pitch"] is None:
            gap = "0"
        else:
            gap = f"static_cast<uint32_t>((({p['pitch']}) * {size} - AfAlignUp(({p['count']}) * {size}, 32)) / 32)"
        lines = [
            take,
            ctx.sync(src_name, "V", "MTE3"),
            "{",
            f"    const int64_t rows = {p['rows']};",
            "    for (int64_t r0 = 0; r0 < rows; r0 += 4095) {",
            "        const int64_t n = AfMin(rows - r0, 4095);",
            f"        AscendC::DataCopyExtParams params(static_cast<uint16_t>(n), "
            f"static_cast<uint32_t>(({p['count']}) * {size}), {gap}, 0, 0);",
        ]
        if p["pitch"] is None:
            lines.append(f"        AscendC::DataCopyPad({ctx.gm(dst_name)}[{p['offset']}], {src}, params);")
        else:
            lines.append(
                f"        AscendC::DataCopyPad({ctx.gm(dst_name)}[{p['offset']} + r0 * ({p['count']})], "
                f"{src}[static_cast<uint32_t>(r0 * ({p['pitch']}))], params);"
            )
        lines += [
            "    }",
            "}",
            ctx.sync(src_name, "MTE3", "V"),
        ]
        return "\n".join(line for line in lines if line)
