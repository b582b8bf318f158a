"""Kernel generation: one function per case, a loop tree per stage, tiling-key dispatch.

For every stage the loop tree follows the ImplGraph axes:

- BLOCK_OUT is the core index: no loop, ``GetBlockIdx()`` picks the share;
- BLOCK_IN gives the share's offset and length;
- TILE_OUT is a ``for`` loop over the tiles of that share, TILE_IN the tile
  length (with the tail computed as ``actual``);
- nodes sit in the loop their ``loop_axis`` names (``None``: stage prologue);
  inside it the symbols ``<axis>_start`` / ``<axis>_actual`` (the tile's or
  share's first element of the merged axis and its length) may appear in any
  formula a node carries.

Everything the loop bounds need comes from tiling fields (``t.c<key>_...``)
and graph sizes (``t.<size>``), so one kernel serves every shape.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from af_core import naming
from af_core.codegen.api_call import create_api_call
from af_core.codegen.context import KernelContext, LoopLevel, loop_variable
from af_core.errors import CodegenError
from af_core.ir.sizes import storage_elements
from af_core.schedule.case import Case
from af_core.schedule.impl_graph import ImplNode, Stage, Storage


def _indent(text: str, n: int) -> str:
    pad = " " * n
    return "\n".join(pad + line if line.strip() else line for line in text.splitlines())


def _render_nodes(nodes: list[ImplNode], ctx: KernelContext) -> str:
    out = []
    for node in nodes:
        if node.api_call is None:
            continue
        call = create_api_call(node.api_call)
        code = call.generate(node, ctx).rstrip()
        frees = [ctx.release(t) for t in node.attrs.get("release", ())]
        code = "\n".join([code, *(f for f in frees if f)])
        out.append(
            f"// {naming.comment(node.name)}: {naming.comment(node.op_type)} "
            f"({naming.comment(node.api_call)})\n{code}"
        )
    return "\n".join(out)


def _stage_body(stage: Stage, ctx: KernelContext) -> str:
    merged = next(
        (
            a
            for a in stage.axes
            if a.type in ("MERGED", "ORIGINAL") and any(b.from_ == (a.name,) for b in stage.axes)
        ),
        None,
    )
    tile_out = stage.axis("TILE_OUT")
    tile_in = stage.axis("TILE_IN")
    block_in = stage.axis("BLOCK_IN")
    if merged is None or block_in is None:
        raise CodegenError(f"stage '{stage.name}' of {ctx.case.label} has no merged axis with a block split")
    ctx.stage = stage
    ctx.loops = {}
    ctx.vars = {}
    ctx.queued = set()
    ctx.dequeued = set()
    ctx.aliases = {}
    prologue = [n for n in stage.nodes if n.loop_axis is None]
    lines = ["const int64_t blockIdx = AscendC::GetBlockIdx();"]
    lines.append(f"if (blockIdx < {ctx.field(stage.used_cores)}) {{")
    body: list[str] = [f"AF_STAGE_MARK({ctx.impl.stages.index(stage)});"]
    if prologue:
        body.append(_render_nodes(prologue, ctx))
    share = block_in.size
    if tile_out is not None:
        if tile_in is None:
            raise CodegenError(
                f"stage '{stage.name}' of {ctx.case.label} splits TILE_OUT without a TILE_IN axis"
            )
        tiles = tile_out.size
        t, c = tile_out.name, loop_variable(tile_out.name)
        body += [
            f"const int64_t {c}_begin = blockIdx * {ctx.expr(share)};",
            f"const int64_t {c}_end = AfMin({c}_begin + {ctx.expr(share)}, {ctx.expr(tiles)});",
            f"for (int64_t {c} = {c}_begin; {c} < {c}_end; ++{c}) {{",
        ]
        level = LoopLevel(t, f"{c}_start", f"{c}_actual", c)
        ctx.loops = {t: level}
        ctx.loop = level
        inner = [
            f"const int64_t {c}_start = {c} * {ctx.expr(tile_in.size)};",
            f"const int64_t {c}_actual = AfMin({ctx.expr(tile_in.size)}, {ctx.expr(merged.size)} - {c}_start);",
        ]
        in_loop = [n for n in stage.nodes if n.loop_axis == t]
        inner.append(_render_nodes(in_loop, ctx))
        body.append(_indent("\n".join(inner), 4))
        body.append("}")
        stray = [n.name for n in stage.nodes if n.loop_axis not in (None, t)]
    else:
        b, c = block_in.name, loop_variable(block_in.name)
        level = LoopLevel(b, f"{c}_start", f"{c}_actual")
        ctx.loops = {b: level}
        ctx.loop = level
        body += [
            f"const int64_t {c}_start = blockIdx * {ctx.expr(share)};",
            f"const int64_t {c}_actual = AfMin({ctx.expr(share)}, {ctx.expr(merged.size)} - {c}_start);",
            _render_nodes([n for n in stage.nodes if n.loop_axis == b], ctx),
        ]
        stray = [n.name for n in stage.nodes if n.loop_axis not in (None, b)]
    if stray:
        raise CodegenError(f"nodes {stray} of stage '{stage.name}' sit in loops the stage does not have")
    lines.append(_indent("\n".join(body), 4))
    lines.append("}")
    return "\n".join(lines)


def case_function(
    case: Case,
    size_names: Sequence[str],
    gm_params: Sequence[str],
    param_of: dict[str, str],
    definitions: dict[str, str],
    sources: set[str],
) -> str:
    """The C++ function implementing one case (``param_of``: graph node -> kernel parameter)."""
    ctx = KernelContext(case, size_names, definitions, sources)
    impl = case.impl
    lines = ["AscendC::TPipe pipe;"]
    for tensor in sorted(impl.tensors.values(), key=lambda t: t.name):
        if tensor.location == Storage.UB:
            continue
        ctype = KernelContext.cpp_type(tensor.dtype)
        count = storage_elements(tensor.sizes, tensor.strides) if tensor.sizes else sympy.Integer(1)
        if tensor.location == Storage.GM:
            if tensor.gm_arg not in param_of:
                raise CodegenError(f"tensor '{tensor.name}' names no kernel argument ('{tensor.gm_arg}')")
            base = f"reinterpret_cast<__gm__ {ctype}*>({param_of[tensor.gm_arg]})"
        else:
            base = f"reinterpret_cast<__gm__ {ctype}*>(workspace + {ctx.expr(tensor.ws_offset)})"
        lines.append(f"AscendC::GlobalTensor<{ctype}> {ctx.gm(tensor.name)};")
        lines.append(f"{ctx.gm(tensor.name)}.SetGlobalBuffer({base}, {ctx.expr(count)});")
    for i, stage in enumerate(impl.stages):
        lines.append(f"// ---- stage {i}: {naming.comment(stage.name)}")
        if stage.sync_before:
            lines.append("AscendC::SyncAll();")
        block = []
        if i > 0:
            block.append("pipe.Reset();")
        for buf in stage.buffers:
            src, _, dst = buf.position.partition("_")  # VECIN_VECOUT: a queue bound from VECIN to VECOUT
            if buf.kind == "que" and dst:
                block.append(
                    f"AscendC::TQueBind<AscendC::TPosition::{src}, AscendC::TPosition::{dst}, {buf.num}> "
                    f"{ctx.buffer(buf.name)};"
                )
                block.append(f"pipe.InitBuffer({ctx.buffer(buf.name)}, {buf.num}, {ctx.expr(buf.bytes)});")
            elif buf.kind == "que":
                block.append(
                    f"AscendC::TQue<AscendC::TPosition::{buf.position}, {buf.num}> {ctx.buffer(buf.name)};"
                )
                block.append(f"pipe.InitBuffer({ctx.buffer(buf.name)}, {buf.num}, {ctx.expr(buf.bytes)});")
            else:  # a TBuf of a bound position sits at its source position; codegen places its flags
                block.append(f"AscendC::TBuf<AscendC::TPosition::{src}> {ctx.buffer(buf.name)};")
                block.append(f"pipe.InitBuffer({ctx.buffer(buf.name)}, {ctx.expr(buf.bytes)});")
        block.append(_stage_body(stage, ctx))
        lines.append("{")
        lines.append(_indent("\n".join(block), 4))
        lines.append("}")
    params = ", ".join(
        [*(f"GM_ADDR {p}" for p in gm_params), "GM_ADDR workspace", "const AutofuseTilingData& t"]
    )
    body = _indent("\n".join(lines), 4)
    return (
        f"// {naming.comment(case.label)} (tiling key {case.tiling_key}), "
        f"template plugin {naming.comment(case.plugin or 'unknown')}\n"
        f"__aicore__ inline void {case.function_name}({params})\n{{\n{body}\n}}\n"
    )
