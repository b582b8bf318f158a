"""The core of one vector function's code: its registers, the register calls of its loop body, the loop
text and the declarations.

Every ``AscendC::Reg`` call a function writes is a :class:`RegCall`, from which both its line of C++ and its
recorded :class:`~af_v35_regbase.reg_cost.RegInstr` come: the body is a list of calls, not of lines, so what
the cost model counts is what the text holds by construction, and nothing reads the text back. The families
of code -- loads and stores (:mod:`moves`), Casts (:mod:`casts`), 64-bit words (:mod:`b64`), value steps
(:mod:`values`), predicates (:mod:`predicates`), the reduce text (:mod:`reduce_text`) -- are functions of
their own modules taking the :class:`_Function`. This module knows none of them, nor the table of register
forms: the step layout it follows is chosen by the builder (:func:`build.step_layout`), so every family can
build on it without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from af_core.template_api import ChainReduce, ChainStep, CodegenError, ImplGraph, ImplNode
from af_core.template_api import dtypes as dt
from af_v35_regbase.api_calls.vf_chain.ops import VECTOR_BYTES, mask_tensors
from af_v35_regbase.api_calls.vf_chain.reduce_facts import starts_aligned
from af_v35_regbase.reg_cost import COMPUTE, MASK, RegInstr

#: element size -> the dtype name of the UpdateMask of a step (the mask type of text())
_MASK_DTYPES = {8: "int64", 4: "float32", 2: "float16", 1: "uint8"}
#: element size -> the C++ type the UpdateMask of a step takes
_MASK_TYPES = {8: "int64_t", 4: "float", 2: "half", 1: "uint8_t"}


@attrs.frozen
class _Source:
    """What a vector function is built from: the chain node, the tensors' dtypes, where definitions go
    (the kernel's, or nowhere when only its instructions are wanted)."""

    node: ImplNode
    impl: ImplGraph
    define: Callable[[str, str], object]

    def dtype_of(self, tensor: str) -> dt.DType:
        """The dtype of one of the node's tensors."""
        return self.impl.tensor(tensor).dtype


@attrs.frozen
class RegCall:
    """One ``AscendC::Reg`` call, from which both its C++ text and its recorded instruction come (the api named
    once): ``result = AscendC::Reg::api<template>(args...);``, recorded as a
    :class:`~af_v35_regbase.reg_cost.RegInstr` of ``dtype``."""

    api: str
    #: the element type of its registers as the cost model names it (a mask type name for a mask instruction;
    #: for a Cast, the destination)
    dtype: str
    args: tuple[str, ...]
    template: str = ""
    #: one of :data:`~af_v35_regbase.reg_cost.KINDS`
    kind: str = attrs.field(default=COMPUTE, kw_only=True)
    #: the elements it moves or computes when that is not one full vector of ``dtype``
    elements: int | None = attrs.field(default=None, kw_only=True)
    #: a Cast's source type name
    src: str | None = attrs.field(default=None, kw_only=True)
    #: a ``Compare`` / ``Compares``'s CMPMODE
    mode: str | None = attrs.field(default=None, kw_only=True)
    #: a block-strided ``LoadAlign`` (``DATA_BLOCK_COPY``)
    block: bool = attrs.field(default=False, kw_only=True)
    #: a load or store of a mask register: recorded as ``Mask<api>``, which the cost model prices as a mask
    #: move
    of_mask: bool = attrs.field(default=False, kw_only=True)
    #: what the call's result is assigned to (``mask``, a declared ``AscendC::Reg::MaskReg``), or nothing
    result: str = attrs.field(default="", kw_only=True)

    def text(self) -> str:
        """The call as C++."""
        call = f"AscendC::Reg::{self.api}{f'<{self.template}>' if self.template else ''}({', '.join(self.args)});"
        return f"{self.result} = {call}" if self.result else call

    def instr(self) -> RegInstr:
        """The instruction the cost model counts for the call."""
        api = f"Mask{self.api}" if self.of_mask else self.api
        return RegInstr(
            api, self.dtype, self.kind, self.elements, src=self.src, block=self.block, mode=self.mode
        )


@attrs.frozen
class StepLayout:
    """How one vector step of a function holds its values, chosen from its steps' forms by
    :func:`build.step_layout`."""

    #: the element size one step covers a register of: 4 when the function holds 4-byte values, else its
    #: largest (2 for an 8-bit Mul / Muls computed in int16 lanes)
    size: int
    #: 2-byte values next to 4-byte ones: in the even 2-byte lanes (DIST_UNPACK_B16 / DIST_PACK_B32)
    mixed: bool = False
    #: 1-byte values next to 2-byte ones: in the even byte lanes (DIST_UNPACK_B8 / DIST_PACK_B16)
    bytes_unpacked: bool = False
    #: 1-byte values next to 4-byte ones: in every fourth byte lane (DIST_UNPACK4_B8), read only by a
    #: 1 -> 2-byte Cast under ``mask16`` (the 2-byte lanes of the step's elements, twice as many)
    bytes_quartered: bool = False
    #: 64-bit tiles a Cast to float32 reads (:data:`routes.PAIR_FLOAT`), loaded as RegTraitNumTwo registers
    pair_reads: frozenset[str] = frozenset()


class _Function:
    """The body of one vector function: registers, the per-step instructions, the loop around them.

    Every ``AscendC::Reg`` call of the loop body is a :class:`RegCall` appended by :meth:`write` (most by
    :meth:`instr`, which makes the call from its arguments); the recorded instructions (:attr:`instrs`, which
    the cost model counts) are those calls' and :meth:`text` writes those calls, so the two cannot differ.
    A reduce function's calls around the per-vector body are placed by :mod:`reduce_text` as it writes them.
    """

    def __init__(
        self, source: _Source, steps: Sequence[ChainStep], reduce: ChainReduce | None, layout: StepLayout
    ) -> None:
        self.source = source
        #: the element offset of a step's vector in every tile: a flat step, or (reduce) the group row's
        self.offset = "o"
        self.reduce = reduce
        #: a reduce's loads: of a whole vector of data, and of a tail (block-masked)
        self.full_loads: list[RegCall] = []
        self.tail_loads: list[RegCall] = []
        #: a reduce function's calls around the per-vector body: (loop of :func:`reduce_text.loop_counts`,
        #: call)
        self.placed: list[tuple[str, RegCall]] = []
        #: a reduce over groups not known to start aligned: its LoadUnAlign(Pre) calls per vector, the
        #: LoadUnAlignPre calls per group (innermost axis, one UnalignRegForLoad per input)
        self.unaligned = reduce is not None and not starts_aligned(reduce, source.dtype_of(reduce.output))
        self.unaligned_loads: list[RegCall] = []
        self.row_pres: list[RegCall] = []
        self.uregs: list[str] = []
        #: tensor -> mask register: the predicates the steps make, and those loaded from bit-mask tiles
        self.masks: dict[str, str] = {}
        #: predicates read from bit-mask tiles made outside the function (:func:`moves.load_mask`)
        self.mask_reads = mask_tensors(steps)[1]
        self.mixed = layout.mixed
        self.bytes_unpacked = layout.bytes_unpacked
        self.bytes_quartered = layout.bytes_quartered
        self.halves = False
        #: tensor -> the 4-byte integer type whose register holds it as its low bytes
        #: (:data:`routes.LOW_BYTE`)
        self.low_bytes: dict[str, dt.DType] = {}
        #: tensor -> (low words, high words): a 64-bit value made by :data:`routes.SIGN_WORDS` or
        #: :data:`routes.FLOAT_WORDS`, stored as the pair
        self.words: dict[str, tuple[str, str]] = {}
        self.pair_reads = layout.pair_reads
        #: tensor -> its RegTraitNumTwo register
        self.pairs: dict[str, str] = {}
        self.mask_type = _MASK_TYPES[layout.size]
        #: lines written once before the loop (a mask store's pointer and UnalignRegForStore), and the calls
        #: once after it (the StoreUnAlignPost that writes a mask store's last bytes)
        self.before: list[str] = []
        self.after: list[RegCall] = []
        self.uload: str | None = None  # the UnalignRegForLoad of the 4- / 8-byte mask loads
        self.lanes = VECTOR_BYTES // layout.size
        if reduce is None:
            self.offset = f"i * {self.lanes}"
        self.decls: list[str] = []
        #: the register calls of one loop iteration (of a reduce function, those of one vector's body)
        self.body: list[RegCall] = []
        self.regs: dict[str, str] = {}  # tensor -> register
        self.mask_dtype = _MASK_DTYPES[layout.size]
        #: the UpdateMask of a step, written by :meth:`text` at the top of the loop (a reduce function's
        #: masks are placed by its text)
        self.step_mask = RegCall(
            "UpdateMask", self.mask_dtype, ("count",), self.mask_type, kind=MASK, result="mask"
        )

    def error(self, what: str) -> CodegenError:
        """The error for ``what`` went wrong in this function's node."""
        return CodegenError(f"node '{self.source.node.name}': {what}")

    @property
    def instrs(self) -> list[RegInstr]:
        """The register instructions of one loop iteration, the step's UpdateMask (written by :meth:`text`)
        first; of a reduce function, those of one vector's body (its masks are placed by its text)."""
        first = [] if self.reduce is not None else [self.step_mask]
        return [call.instr() for call in [*first, *self.body]]

    @property
    def after_instrs(self) -> list[RegInstr]:
        """The register instructions written once after the loop."""
        return [call.instr() for call in self.after]

    def write(self, call: RegCall) -> None:
        """Append one register call to the loop body: its line of the text and its recorded instruction."""
        self.body.append(call)

    def instr(
        self,
        api: str,
        dtype: dt.DType | str,
        *args: str,
        template: str = "",
        mask: str | None = "mask",
        kind: str = COMPUTE,
        src: dt.DType | None = None,
        mode: str | None = None,
        elements: int | None = None,
    ) -> None:
        """Write ``AscendC::Reg::api<template>(args..., mask);`` into the loop body (:meth:`write`), its
        :class:`~af_v35_regbase.reg_cost.RegInstr` recorded from the same call, so the instruction is named
        once for the text and the cost model. ``dtype`` is the element type of its registers (a mask type name
        for a mask instruction), ``src`` a Cast's source type, ``mode`` a comparison's CMPMODE, ``elements``
        the elements a load or store moves when not one vector of ``dtype``; ``mask`` None for a call taking
        none."""
        name = dtype if isinstance(dtype, str) else dtype.name
        call = RegCall(
            api,
            name,
            (*args, *([] if mask is None else [mask])),
            template,
            kind=kind,
            elements=elements,
            src=None if src is None else src.name,
            mode=mode,
        )
        self.write(call)

    def lines(self, calls: Sequence[RegCall], what: str) -> list[str]:
        """The lines of ``calls``, a list the ``what`` function writes, refused when an entry is not a
        :class:`RegCall` (a line written around :meth:`write` would not be counted)."""
        recorded = sum(isinstance(call, RegCall) for call in calls)
        if recorded != len(calls):
            raise self.error(
                f"the {what} writes {len(calls)} register calls but records {recorded} instructions (write "
                "each through _Function.write / instr)"
            )
        return [call.text() for call in calls]

    def reg(self, dtype: dt.DType) -> str:
        """A new register of ``dtype``, declared at the top of the function."""
        name = f"r{len(self.decls)}"
        self.decls.append(f"AscendC::Reg::RegTensor<{dtype.cpp}> {name};")
        return name

    def declarations(self, *masks: str) -> str:
        """The function's register declarations: its value registers, the step mask ``mask``, the extra
        ``masks`` a body names, and the comparison mask registers."""
        names = ["mask", *masks, *self.masks.values()]
        return "".join(f"    {d}\n" for d in self.decls) + "".join(
            f"    AscendC::Reg::MaskReg {m};\n" for m in names
        )

    def text(self) -> str:
        """The function body of a run with no reduce: the registers, then the loop over ``count`` in vector
        steps -- the step's UpdateMask, the body's calls -- with the lines once before and after it."""
        inner = "\n".join(f"        {line}" for line in self.lines(self.body, "vector function"))
        return (
            "{\n"
            + self.declarations(*(["mask16"] if self.halves else []))
            + "".join(f"    {line}\n" for line in self.before)
            + ("    uint32_t halves = count * 2u;\n" if self.halves else "")
            + f"    const uint32_t repeats = (count + {self.lanes - 1}u) / {self.lanes}u;\n"
            + "    for (uint32_t i = 0; i < repeats; ++i) {\n"
            + f"        {self.step_mask.text()}\n"
            + inner
            + "\n    }\n"
            + "".join(f"    {line}\n" for line in self.lines(self.after, "vector function"))
            + "}\n"
        )
