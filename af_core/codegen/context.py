"""What an ApiCall may ask while it renders one node: :class:`KernelContext`, and the loop variables' names.

Its own module, apart from the kernel generator that makes one per case: an ApiCall names this class in
its signatures, and the kernel generator creates ApiCalls, so the two living in one module tied the
ApiCall base to the generator in an import cycle (tools/check_layers.py counts type-only imports too).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import sympy

from af_core import dtypes as dt
from af_core import naming
from af_core.codegen.cexpr import CppFormatter
from af_core.errors import CodegenError
from af_core.schedule.case import Case
from af_core.schedule.impl_graph import POSITION_PIPES, Buffer, ImplGraph, Stage


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
