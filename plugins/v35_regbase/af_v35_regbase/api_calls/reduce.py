"""ReduceRegApiCall: reduce UB tiles over a run of axes.

Each of ``tiles`` tile rows (``src_pitch`` / ``dst_pitch`` elements apart)
is viewed as ``[rows, group, inner]`` and reduced over ``group``: Sum, Max,
Min, and Mean (a Sum scaled by 1/group). Float16/bfloat16 data is reduced in
a float32 tile; the cast back is a separate node.
"""

from __future__ import annotations

from af_core.codegen.api_call import ApiCall

REDUCE_SOURCE = "af_reduce"
_KIND = {"Sum": "SUM", "Mean": "SUM", "Max": "MAX", "Min": "MIN"}


class ReduceRegApiCall(ApiCall):
    name = "ReduceRegApiCall"
    sources = (REDUCE_SOURCE,)

    def build_api_param(self) -> None:
        a = self.node.attrs
        self.param.update(
            kind=_KIND[a["kind"]],
            mean=a["kind"] == "Mean",
            rows=self.ctx.expr(a["rows"]),
            group=self.ctx.expr(a["group"]),
            inner=self.ctx.expr(a["inner"]),
            tiles=self.ctx.expr(a.get("tiles", 1)),
            src_pitch=self.ctx.expr(a.get("src_pitch", 0)),
            dst_pitch=self.ctx.expr(a.get("dst_pitch", 0)),
        )

    def generate_api_call_string(self) -> str:
        ctx, p = self.ctx, self.param
        src_name, work_name = self.node.inputs
        dst_name = self.node.outputs[0]
        ctype = ctx.cpp_type(ctx.impl.tensor(dst_name).dtype)
        take_src, src = ctx.use(src_name)
        take_work, work = ctx.produce(work_name)
        alloc, dst = ctx.produce(dst_name)
        per_tile = f"({p['rows']}) * ({p['inner']})"
        lines = [take_src, take_work, alloc,
                 f"for (int64_t tr = 0; tr < {p['tiles']}; ++tr) {{",
                 f"    AfReduceRows<{ctype}>({dst}[static_cast<uint32_t>(tr * ({p['dst_pitch']}))], "
                 f"{src}[static_cast<uint32_t>(tr * ({p['src_pitch']}))], {work}, {p['rows']}, {p['group']}, "
                 f"{p['inner']}, AfReduceKind::{p['kind']});"]
        if p["mean"]:
            lines += [
                "    AscendC::PipeBarrier<PIPE_V>();",
                f"    AscendC::Muls({dst}[static_cast<uint32_t>(tr * ({p['dst_pitch']}))], "
                f"{dst}[static_cast<uint32_t>(tr * ({p['dst_pitch']}))], "
                f"static_cast<{ctype}>(1.0 / static_cast<double>({p['group']})), static_cast<int32_t>({per_tile}));",
            ]
        lines += ["}", "AscendC::PipeBarrier<PIPE_V>();", ctx.finish(dst_name)]
        return "\n".join(line for line in lines if line)
