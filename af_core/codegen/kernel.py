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

import attrs
import sympy

from af_core import dtypes as dt
from af_core import naming
from af_core.codegen.api_call import create_api_call
from af_core.codegen.cexpr import CppFormatter
from af_core.errors import CodegenError
from af_core.ir.sizes import storage_elements
from af_core.schedule.case import Case
from af_core.schedule.impl_graph import POSITION_PIPES, Buffer, ImplGraph, ImplNode, Stage, Storage


@attrs.define
class LoopLevel:
    """C++ names describing where a node sits: the range of the merged axis it covers."""

    axis: str  # the ImplAxis name (formulas use the symbols <axis>_start and <axis>_actual)
    start: str  # first element (of the merged axis) of this tile / share
    actual: str  # number of elements in this tile / share
    index: str | None = None  # tile index variable, when in a tile loop


class KernelContext:
    """What an ApiCall may ask while it renders one node of one case."""

    def __init__(self, case: Case, size_names: Sequence[str], definitions: dict[str, str], sources: set[str]):
        self.case = case
        self.impl: ImplGraph = case.impl
        self.size_names = list(size_names)
        self.field_names = set(case.tiling.field_names())
        self.definitions = definitions
        self.sources = sources
        self.stage: Stage | None = None
        self.loop: LoopLevel | None = None
        self.loops: dict[str, LoopLevel] = {}
        self._format = CppFormatter(self._rename)
        self.vars: dict[str, str] = {}  # UB tensor -> C++ LocalTensor variable in scope
        self.queued: set[str] = set()  # UB tensors enqueued and not yet dequeued
        self.dequeued: set[str] = set()  # UB tensors a queue handed out (DeQue)
        self.aliases: dict[str, str] = {}  # a tensor written in place of another: that one
        self._counter = 0

    # -- names -------------------------------------------------------------
    def field(self, name: str) -> str:
        if name not in self.field_names:
            raise CodegenError(f"case {self.case.label} has no tiling field '{name}'")
        return f"t.c{self.case.tiling_key}_{name}"

    def _rename(self, name: str) -> str:
        if name in self.field_names:
            return self.field(name)
        if name in self.size_names:
            return f"t.{name}"
        for level in self.loops.values():
            if name == level.axis + "_start":
                return level.start
            if name == level.axis + "_actual":
                return level.actual
        raise CodegenError(f"symbol '{name}' is neither a size, a tiling field nor a loop variable")

    def expr(self, value: object) -> str:
        """C++ int64 text of a formula over sizes, tiling fields and loop variables."""
        state = tuple((k, v.start, v.actual) for k, v in sorted(self.loops.items()))
        return self._format(sympy.sympify(value), state)

    def gm(self, tensor: str) -> str:
        """The GlobalTensor variable of a GM/workspace tensor (its name through :func:`naming.ident`)."""
        return f"{naming.ident(tensor)}_gm"

    def buffer(self, name: str) -> str:
        return f"{naming.ident(name)}_buf"

    @staticmethod
    def ident(name: str) -> str:
        """A C++ identifier for any name (graph/node/tensor names are user text)."""
        return naming.ident(name)

    @staticmethod
    def c_string(text: str) -> str:
        """A C++ string literal holding ``text`` (quotes included), safe for any text."""
        return naming.c_string(text)

    @staticmethod
    def comment(text: str) -> str:
        """``text`` made inert for the inside of a C++ comment."""
        return naming.comment(text)

    def unique(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    @staticmethod
    def cpp_type(dtype: dt.DType) -> str:
        return "uint8_t" if dtype.is_bool else dtype.cpp

    # -- UB tensors: the Alloc -> call -> EnQue / DeQue -> call -> Free skeleton --
    def _current_stage(self, tensor: str) -> Stage:
        """The stage being rendered; UB tensors live only inside one."""
        if self.stage is None:
            raise CodegenError(f"UB tensor '{tensor}' is used outside a stage")
        return self.stage

    def _buffer_of(self, tensor: str) -> Buffer:
        name = self.impl.tensor(tensor).buffer
        stage = self._current_stage(tensor)
        for buf in stage.buffers:
            if buf.name == name:
                return buf
        raise CodegenError(f"UB tensor '{tensor}' uses buffer '{name}', which stage '{stage.name}' lacks")

    def _ctype(self, tensor: str) -> str:
        return self.cpp_type(self.impl.tensor(tensor).dtype)

    @staticmethod
    def flag_pair(src: str, dst: str) -> str:
        """A SetFlag / WaitFlag pair from pipe ``src`` to pipe ``dst`` on an event id the TPipe has free (the
        queues hold theirs, so it never collides with one of a queue's flags)."""
        event = f"AscendC::HardEvent::{src}_{dst}"
        free_id = f"GetTPipePtr()->FetchEventID({event})"
        return "\n".join(
            (f"AscendC::SetFlag<{event}>({free_id});", f"AscendC::WaitFlag<{event}>({free_id});")
        )

    def sync(self, tensor: str, src: str, dst: str) -> str:
        """The flags a call owes between an earlier access of UB tensor ``tensor`` on pipe ``src`` and its
        own on pipe ``dst``: none when the tensor's buffer carries that pair (POSITION_PIPES: a VECOUT
        buffer orders V -> MTE3 and MTE3 -> V), else a SetFlag / WaitFlag pair."""
        pipes = POSITION_PIPES.get(self._buffer_of(tensor).position)
        if pipes is not None and (src, dst) in (pipes, (pipes[1], pipes[0])):
            return ""
        return self.flag_pair(src, dst)

    def produce(self, tensor: str, *, like: str | None = None) -> tuple[str, str]:
        """Start writing a UB tensor: AllocTensor from its queue, Get its TBuf, or reuse ``like``'s storage.

        A TBuf at VECIN / VECOUT first waits until its consumer pipe is done with what it held (what a
        queue's AllocTensor does)."""
        if like is not None:
            var = self.vars[like]
            self.aliases[tensor] = like
            if self._ctype(like) != self._ctype(tensor):
                alias = self.unique(f"{naming.ident(tensor)}_")
                self.vars[tensor] = alias
                return (
                    f"AscendC::LocalTensor<{self._ctype(tensor)}> {alias} = "
                    f"{var}.template ReinterpretCast<{self._ctype(tensor)}>();"
                ), alias
            self.vars[tensor] = var
            return "", var
        buf = self._buffer_of(tensor)
        var = self.unique(f"{naming.ident(tensor)}_")
        ctype = self._ctype(tensor)
        how = "AllocTensor" if buf.kind == "que" else "Get"
        self.vars[tensor] = var
        line = f"AscendC::LocalTensor<{ctype}> {var} = {self.buffer(buf.name)}.{how}<{ctype}>();"
        if buf.kind != "que" and buf.position in POSITION_PIPES:
            producer, consumer = POSITION_PIPES[buf.position]
            line = self.flag_pair(consumer, producer) + "\n" + line
        return line, var

    def finish(self, tensor: str) -> str:
        """Done writing: EnQue for queue tensors (the consumer DeQues); a TBuf at VECIN / VECOUT makes its
        consumer pipe wait for the producer's writes (what EnQue / DeQue do); nothing for other TBufs.

        A tensor written in place of one its queue handed out (DeQue) was written by the queue's consumer
        pipe, which is the pipe that reads it next: EnQue / DeQue again would order nothing (their flags
        run from the queue's producer pipe), so it stays live. A reader on another pipe owes its own flags
        (:meth:`sync`)."""
        buf = self._buffer_of(tensor)
        if buf.kind != "que":
            if buf.position in POSITION_PIPES:
                return self.flag_pair(*POSITION_PIPES[buf.position])
            return ""
        if self.aliases.get(tensor) in self.dequeued:
            return ""
        self.queued.add(tensor)
        return f"{self.buffer(buf.name)}.EnQue({self.vars[tensor]});"

    def use(self, tensor: str) -> tuple[str, str]:
        """Read a UB tensor: DeQue it once if it was enqueued, else its live variable."""
        if tensor in self.queued:
            self.queued.discard(tensor)
            self.dequeued.add(tensor)
            buf = self._buffer_of(tensor)
            var = self.unique(f"{naming.ident(tensor)}_")
            ctype = self._ctype(tensor)
            self.vars[tensor] = var
            return f"AscendC::LocalTensor<{ctype}> {var} = {self.buffer(buf.name)}.DeQue<{ctype}>();", var
        if tensor not in self.vars:
            raise CodegenError(
                f"UB tensor '{tensor}' is read before any node of stage "
                f"'{self._current_stage(tensor).name}' produced it"
            )
        return "", self.vars[tensor]

    def release(self, tensor: str) -> str:
        """After the last use: FreeTensor for queue tensors."""
        buf = self._buffer_of(tensor)
        var = self.vars.pop(tensor, None)
        if buf.kind != "que" or var is None:
            return ""
        return f"{self.buffer(buf.name)}.FreeTensor({var});"

    # -- file-level additions ------------------------------------------------
    def need_source(self, name: str) -> None:
        self.sources.add(name)

    def define(self, key: str, text: str) -> str:
        """Add a definition (functor, helper) before the case functions, once per key."""
        existing = self.definitions.get(key)
        if existing is not None and existing != text:
            raise CodegenError(f"two different definitions named '{key}'")
        self.definitions[key] = text
        return key


def loop_variable(axis: str) -> str:
    """The C++ name of a loop axis' variables (``<it>``, ``<it>_start``, ``<it>_actual``, ...).

    Axis names are template text. The ``af_`` prefix (a namespace no escaped
    name, GM tensor, buffer or ApiCall local uses) keeps any of them (``t``, a
    keyword, ``blockIdx``) from clashing with the kernel's own names; a name
    that is not plain ASCII letters and digits goes through :func:`naming.ident`
    first (whose escapes always hold a ``_``, so the mapping stays injective).
    Formulas still name the symbols ``<axis>_start`` / ``<axis>_actual``;
    :meth:`KernelContext.expr` maps them to these variables.
    """
    plain = axis.isascii() and axis.isalnum()
    return f"af_{axis if plain else naming.ident(axis)}"


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
