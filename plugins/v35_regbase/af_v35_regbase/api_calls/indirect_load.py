"""IndirectLoadRegApiCall: the IndirectLoad node, dispatched on the gather mode the case asks for.

Like Autofuse's ``IndirectLoadRegApiCall``, one ApiCall serves every
template; ``node.attrs["gather_mode"]`` (a :class:`GatherMode`) selects the
generator — SIMT lanes reading GM, or a vector Gather of a UB tile — so any
template, built in or not, gets the form it schedules for. A mode without a
generator here is a codegen error, not a silent fallback.
"""

from __future__ import annotations

from af_core import dtypes
from af_core.backend import GatherMode, Role
from af_core.codegen.api_call import ApiCall
from af_core.errors import CodegenError
from af_v35_regbase.simt_lanes import SIMT_SOURCE, simt_lanes

GATHER_SOURCE = "af_gather"


class IndirectLoadRegApiCall(ApiCall):
    """Fills :attr:`Role.GATHER` in both gather modes."""

    name = "IndirectLoadRegApiCall"
    roles = frozenset({Role.GATHER})
    gather_modes = frozenset({GatherMode.LANES, GatherMode.TILE})

    def parse_attr(self) -> None:
        self.param["gather_mode"] = self.node.attrs.get("gather_mode")

    def generate_api_call_string(self) -> str:
        mode = self.param["gather_mode"]
        if mode == GatherMode.LANES.value:
            return self.generate_lanes()
        if mode == GatherMode.TILE.value:
            return self.generate_tile()
        known = ", ".join(sorted(m.value for m in self.gather_modes))
        raise CodegenError(
            f"IndirectLoadRegApiCall: node '{self.node.name}' asks for gather mode {mode!r}; "
            f"this ApiCall generates {known}"
        )

    # -- SIMT lanes ------------------------------------------------------------
    def generate_lanes(self) -> str:
        ctx, attrs = self.ctx, self.node.attrs
        ctx.need_source(SIMT_SOURCE)
        out = ctx.impl.tensor(attrs["out"])
        ctype = ctx.cpp_type(out.dtype)
        lines = []
        if attrs["mode"] == "gm":
            # GetPhyAddr() is const in the official API; the offset form is the writable pointer
            out_ptr = f"{ctx.gm(out.name)}.GetPhyAddr(0)"
            name, text, ptr_args, int_args = simt_lanes(ctx, attrs, ctype, "gm")
        else:
            acquire, var = ctx.produce(out.name)
            lines.append(acquire)
            out_ptr = f"reinterpret_cast<__ubuf__ {ctype}*>({var}.GetPhyAddr())"
            name, text, ptr_args, int_args = simt_lanes(ctx, attrs, ctype, "ub")
        ctx.define(name, text)
        start, count = ctx.expr(attrs["start"]), ctx.expr(attrs["count"])
        args = ", ".join([out_ptr, *ptr_args, "laneStart", "laneCount", *int_args])
        # a template may launch fewer threads than the VF allows (``threads``, a formula in [1, 2048])
        most = ctx.expr(attrs["threads"]) if attrs.get("threads") is not None else "AF_SIMT_MAX_THREADS"
        lines += [
            "{",
            f"    const int64_t laneStart = {start};",
            f"    const int64_t laneCount = {count};",
            "    if (laneCount > 0) {",
            f"        const uint32_t threads = static_cast<uint32_t>(AfMin(laneCount, {most}));",
            f"        AscendC::Simt::VF_CALL<{name}>(AscendC::Simt::Dim3(threads), {args});",
            "    }",
            "}",
        ]
        if attrs["mode"] == "ub":
            lines.append("AscendC::PipeBarrier<PIPE_ALL>();")
            lines.append(ctx.finish(out.name))
        return "\n".join(line for line in lines if line)

    # -- SIMD (and the SK-like gather stage) -----------------------------------
    def _geometry(self, name: str) -> list[str]:
        ctx, a = self.ctx, self.node.attrs
        g = a["geom"]
        lines = [f"AfGatherGeom {name}{{}};", f"{name}.rank = {len(g['sizes'])};"]
        for key, field in (("sizes", "sizes"), ("idx_strides", "idxStrides"), ("in_strides", "inStrides")):
            for i, value in enumerate(g[key]):
                lines.append(f"{name}.{field}[{i}] = {ctx.expr(value)};")
        for key, field in (
            ("extent", "extent"),
            ("in_pitch", "inPitch"),
            ("idx_pitch", "idxPitch"),
            ("out_pitch", "outPitch"),
            ("zero_slot", "zeroSlot"),
        ):
            lines.append(f"{name}.{field} = {ctx.expr(g[key])};")
        suffix = " * ".join(f"{name}.sizes[{i}]" for i in range(1, len(g["sizes"]))) or "1"
        lines += [
            f"{name}.suffix = {suffix};",
            f"{name}.fullIndex = {'true' if g['full_index'] else 'false'};",
            f"{name}.needNegative = {'true' if a['need_check_negative'] else 'false'};",
            f"{name}.needBound = {'true' if a['need_check_bound'] else 'false'};",
        ]
        return lines

    def generate_tile(self) -> str:
        ctx, a = self.ctx, self.node.attrs
        ctx.need_source(GATHER_SOURCE)
        base = self.node.name[: -len("_pattern")] if a["phase"] == "pattern" else self.node.name
        geom = "geom_" + ctx.ident(base)
        data_t = ctx.cpp_type(dtypes.get(a["data_dtype"]))
        if a["phase"] == "pattern":
            make, pattern = ctx.produce(a["pattern"])
            return "\n".join([*self._geometry(geom), make, f"AfGatherPattern<{data_t}>({pattern}, {geom});"])
        slice_name, index_name, pattern_name = self.node.inputs[:3]
        gathered_name, offsets_name = self.node.outputs
        idx_t = ctx.cpp_type(ctx.impl.tensor(index_name).dtype)
        lines = []
        take, src = ctx.use(slice_name)
        lines.append(take)
        take, idx = ctx.use(index_name)
        lines.append(take)
        take, pattern = ctx.use(pattern_name)
        lines.append(take)
        make, off = ctx.produce(offsets_name)
        lines.append(make)
        extra = {}
        for key, tensor in a["extra"].items():
            make, var = ctx.produce(tensor)
            lines.append(make)
            extra[key] = var
        make, out = ctx.produce(gathered_name)
        lines.append(make)
        rows = ctx.expr(a["rows"])
        count = f"static_cast<int32_t>(({rows}) * {geom}.outPitch)"
        name = self.node.name
        lines += [
            f"AscendC::Duplicate({src}[static_cast<uint32_t>({geom}.zeroSlot)], static_cast<{data_t}>(0), "
            f"static_cast<int32_t>(32 / sizeof({data_t})));",
            "AscendC::PipeBarrier<PIPE_V>();",
        ]
        if a["geom"]["full_index"]:
            if idx_t == "int64_t":
                conv = extra["conv"]
                lines += [
                    f"AscendC::Maxs({idx}, {idx}, static_cast<int64_t>(-{geom}.extent - 1), {count});",
                    "AscendC::PipeBarrier<PIPE_V>();",
                    f"AscendC::Mins({idx}, {idx}, static_cast<int64_t>({geom}.extent), {count});",
                    "AscendC::PipeBarrier<PIPE_V>();",
                    f"AscendC::Cast<int32_t, int64_t>({conv}, {idx}, AscendC::RoundMode::CAST_NONE, "
                    f"static_cast<uint32_t>({count}));",
                    "AscendC::PipeBarrier<PIPE_V>();",
                ]
                idx32 = conv
            else:
                idx32 = idx
            tmp = extra.get("tmp", off)
            lines.append(
                f"AfGatherOffsetsVector<{data_t}>({off}, {idx32}, {pattern}, {tmp}, {extra['mask']}, "
                f"{extra['mask2']}, {rows}, {geom}, {ctx.c_string(name)});"
            )
        else:
            suffix_ok = "true" if a["geom"]["dim_only"] else "false"
            lines += [
                f"if ({suffix_ok} && {geom}.suffix % 8 == 0) {{",
                f"    AfGatherOffsetsSuffix<{idx_t}, {data_t}>({off}, {idx}, {pattern}, {rows}, {geom}, {ctx.c_string(name)});",
                "} else {",
                f"    AfGatherOffsetsScalar<{idx_t}, {data_t}>({off}, {idx}, {rows}, {geom}, {ctx.c_string(name)});",
                "}",
            ]
        lines += [
            f"AscendC::Gather({out}, {src}, {off}.ReinterpretCast<uint32_t>(), 0, static_cast<uint32_t>({count}));",
            "AscendC::PipeBarrier<PIPE_V>();",
            ctx.finish(gathered_name),
        ]
        return "\n".join(line for line in lines if line)
