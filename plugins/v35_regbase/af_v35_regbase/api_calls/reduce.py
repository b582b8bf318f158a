"""ReduceRegApiCall: reduce UB tiles over a run of axes.

Each of ``tiles`` tile rows (``src_pitch`` / ``dst_pitch`` elements apart)
is viewed as ``[rows, group, inner]`` and reduced over ``group``: Sum, Max,
Min, and Mean (a Sum scaled by 1/group). Float16/bfloat16 data is reduced in
a float32 tile; the cast back is a separate node. Whether the 3510 ReduceSum /
ReduceMax / ReduceMin accept the tile's dtype comes from the dtype table and
is passed to ``AfReduceRows`` as template flags: without them (8/16-bit sums,
8-bit max/min) ``af_reduce.h`` folds groups with Add / Max / Min, which wrap
like the reference's integer accumulation.
"""

from __future__ import annotations

from af_core.template_api import ApiCall, ReduceAttrs, Role
from af_core.template_api import dtypes as dt
from af_v35_regbase import api_dtypes

REDUCE_SOURCE = "af_reduce"
_KIND = {"Sum": "SUM", "Mean": "SUM", "Max": "MAX", "Min": "MIN"}


class ReduceRegApiCall(ApiCall):
    """Fills :attr:`Role.REDUCE`."""

    name = "ReduceRegApiCall"
    sources = (REDUCE_SOURCE,)
    roles = frozenset({Role.REDUCE})

    @classmethod
    def supports(cls, op_type: str) -> bool:
        return op_type in _KIND

    @classmethod
    def rejection(cls, op_type: str, in_dtypes, out_dtype) -> str | None:
        """Why a reduce of ``op_type`` over ``out_dtype`` tiles has no legal 3510 vector form, or None."""
        kind, dtype = op_type, dt.get(out_dtype)
        if kind not in _KIND:
            return f"no vector reduce of kind {kind}"
        if kind == "Mean" and not dtype.is_float:
            return "an integer Mean floor-divides a wide sum; the vector reduce has no such form"
        step = "Add" if kind in ("Sum", "Mean") else kind
        if dtype.is_bool or not api_dtypes.accepts(step, dtype):
            return f"{step} does not accept {dtype} on 3510"
        return None

    def build_api_param(self) -> None:
        a = ReduceAttrs.of(self.node)
        self.param.update(
            kind=_KIND[a.kind],
            mean=a.kind == "Mean",
            rows=self.ctx.expr(a.rows),
            group=self.ctx.expr(a.group),
            inner=self.ctx.expr(a.inner),
            tiles=self.ctx.expr(a.tiles),
            src_pitch=self.ctx.expr(a.src_pitch),
            dst_pitch=self.ctx.expr(a.dst_pitch),
        )

    def generate_api_call_string(self) -> str:
        ctx, p = self.ctx, self.param
        src_name, work_name = self.node.inputs
        dst_name = self.node.outputs[0]
        dtype = ctx.impl.tensor(dst_name).dtype
        ctype = ctx.cpp_type(dtype)
        sum_api = "true" if api_dtypes.accepts("ReduceSum", dtype) else "false"
        extreme_api = (
            "true"
            if api_dtypes.accepts("ReduceMax", dtype) and api_dtypes.accepts("ReduceMin", dtype)
            else "false"
        )
        take_src, src = ctx.use(src_name)
        take_work, work = ctx.produce(work_name)
        alloc, dst = ctx.produce(dst_name)
        per_tile = f"({p['rows']}) * ({p['inner']})"
        lines = [
            take_src,
            take_work,
            alloc,
            f"for (int64_t tr = 0; tr < {p['tiles']}; ++tr) {{",
            f"    AfReduceRows<{ctype}, {sum_api}, {extreme_api}>({dst}[static_cast<uint32_t>(tr * ({p['dst_pitch']}))], "
            f"{src}[static_cast<uint32_t>(tr * ({p['src_pitch']}))], {work}, {p['rows']}, {p['group']}, "
            f"{p['inner']}, AfReduceKind::{p['kind']});",
        ]
        if p["mean"]:
            lines += [
                f"    AscendC::Muls({dst}[static_cast<uint32_t>(tr * ({p['dst_pitch']}))], "
                f"{dst}[static_cast<uint32_t>(tr * ({p['dst_pitch']}))], "
                f"static_cast<{ctype}>(1.0 / static_cast<double>({p['group']})), static_cast<int32_t>({per_tile}));",
            ]
        lines += ["}", ctx.finish(dst_name)]
        return "\n".join(line for line in lines if line)
