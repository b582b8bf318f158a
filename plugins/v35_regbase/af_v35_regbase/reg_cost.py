"""Register instructions a vector function issues, and their cycles from the documented throughput.

One table and one counting rule, with two readers so the modelled figure
cannot drift from the emitted code:

- code generation: :class:`~af_v35_regbase.api_calls.vf_chain.VfChainRegApiCall`
  records a :class:`RegInstr` for every ``AscendC::Reg`` call it writes into
  a vector function (the function refuses to print a call it did not record);
- the cost model: the same ApiCall's ``predicted_counters`` builds the same
  function without writing it and turns its instructions into the counters
  ``reg_instructions`` and ``reg_cycles`` of :mod:`af_core.schedule.cost`
  with :func:`launch_counters`.

**Source of the figures.** :data:`RATES`, :data:`MOVE_RATES` and
:data:`CAST_RATES` are the "theoretical parallelism (element/cycle)" column
of the asc-devkit appendix ``docs/zh/api/附录/Reg矢量计算接口理论性能汇总.md``
(Ascend 950PR / 950DT), tables 1 and 2 (contiguous aligned LoadAlign /
StoreAlign: 256 / 128 / 64 elements per cycle for b8 / b16 / b32), 6 (basic
arithmetic, e.g. Add float 64, Add int32 32, Exp / Sqrt / Ln / Div 16), 9
(Compare / Compares / Select), 10 (Cast: 64 between float and half /
bfloat16, 32 between float and int32, float -> int16 32, half -> int16 64,
int16 -> half 64, int16 -> float 32, int8 / uint8 -> half 64, half -> int8
64, int8 -> int16 / uint8 -> uint16 64, uint16 -> uint8 64; the table has
no row for 2-byte <-> 4-byte integers, half <-> bfloat16, half -> uint8 nor
int16 -> uint8, which count one cycle; Truncate 64 for half / bfloat16, 32
for float) and 12 (Duplicate); table 1 also gives the block-strided
LoadAlign (非连续对齐搬入, ``DATA_BLOCK_COPY``: 128 / 64 / 32, half the
contiguous rate) and the register Gather (离散搬入: b16 64, b32 32), table 7
the bitwise And / Or / Xor / Not (one vector per cycle) and table 11
``Reduce`` (one vector per cycle); table 1's 连续非对齐搬入 row gives the
unaligned ``LoadUnAlign`` (256 / 128 / 64, one vector a cycle) and its
``LoadUnAlignPre`` (32 / 16 / 8: one 32-byte block a cycle); tables 3 / 4 give the moves of a mask register
to and from UB (:data:`MASK_MOVE_CYCLES`). Only the rows of instructions that generated
code issues are copied; a row is added when an ApiCall starts issuing its
instruction.

**Counting rule** (the CPU twin's ``RegRate`` / ``RegCycles`` in
``af_twin/reg.h`` count the same; a test compares the two tables entry by
entry): an instruction over ``n`` elements takes ``ceil(n / rate)`` cycles;
an instruction and type the table does not list takes one cycle per
vector; mask instructions (``UpdateMask`` / ``CreateMask``, listed in no
throughput table) take none, the mask-register logic one each
(:data:`MASK_LOGIC_CYCLES`). A 64-bit ``Max`` / ``Min`` is the sequence the
3510 implementation issues over a register pair (two trait conversions,
``Compare``, ``Select``, ``Duplicate``, ``Select``, the conversion back: seven
computing instructions of one cycle each, no 64-bit row exists) plus one
mask instruction (the ``MaskPack``, one cycle: table 5 gives the MaskReg Pack / UnPack 1 cycle each,
:data:`MASK_PACK_CYCLES`); a 64-bit ``Maxs`` / ``Mins`` is a
``Duplicate`` before it. The other 64-bit forms count the same way, one
computing instruction of one cycle per call of their sequence
(:data:`B64_SEQUENCES`, :data:`B64_COMPARE`, :data:`B64_SELECT`), ``Adds`` /
``Muls`` / ``Compares`` a ``Duplicate`` before ``Add`` / ``Mul`` / ``Compare``; a ``Cast`` from a
RegTraitNumTwo int64 register to float the sequence of :data:`CAST_B64_PAIR`.

**Single issue.** The table gives one instruction's figure; the appendix
``Reg矢量计算接口指令单双发汇总.md`` lists which instructions may issue two per
cycle (LoadAlign in its single-load modes, the arithmetic, compare, select,
cast, duplicate and mask instructions; not StoreAlign). The model adds
every instruction's cycles as if each issued alone, so its figure is an
upper bound; with perfect pairing the same code would take about half of it
plus the stores.

**Adding an instruction**: add its row to :data:`RATES` (or a rule in
:func:`issue` when one call issues several hardware instructions) and the
same figure to the twin's ``RegRate``; record it where the code is written
(a ``RegCall`` through ``_Function.instr`` / ``write`` or the reduce text's
writer in the vector-chain package ``api_calls/vf_chain``, or a
:class:`RegInstr` list of one's own ApiCall, as the register tile gather's
``gather_vf_step``) and return :func:`launch_counters` (one loop) or
:func:`loop_counters` (several) from its ``predicted_counters``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import attrs

from af_core.template_api import CeilDiv, Expr
from af_core.template_api import dtypes as dt

#: The asc-devkit document the figures come from.
SOURCE = "docs/zh/api/附录/Reg矢量计算接口理论性能汇总.md"
#: Bytes of one vector register (VL).
VECTOR_BYTES = 256

LOAD, STORE, COMPUTE, MASK = "load", "store", "compute", "mask"
KINDS = (LOAD, STORE, COMPUTE, MASK)

F16, BF16, F32 = "float16", "bfloat16", "float32"
I8, U8, I16, U16, I32, U32 = "int8", "uint8", "int16", "uint16", "int32", "uint32"

#: Tables 1 / 2: contiguous aligned LoadAlign / StoreAlign, elements per cycle by element size.
MOVE_RATES = {1: 256, 2: 128, 4: 64}
#: Table 1: the block-strided LoadAlign (非连续对齐搬入, ``DataCopyMode::DATA_BLOCK_COPY``) by element size.
BLOCK_MOVE_RATES = {1: 128, 2: 64, 4: 32}
#: Table 1, 连续非对齐搬入（LoadUnAlign）: ``LoadUnAlign`` (one vector: 256 / 128 / 64) and ``LoadUnAlignPre``
#: (one 32-byte block: 32 / 16 / 8) by element size, the unaligned load of a register reduce's groups.
UNALIGNED_MOVE_RATES = {"LoadUnAlign": {1: 256, 2: 128, 4: 64}, "LoadUnAlignPre": {1: 32, 2: 16, 4: 8}}

_ADD = {I8: 128, U8: 128, I16: 64, U16: 64, F16: 128, BF16: 128, I32: 32, U32: 32, F32: 64}
_MAX = {I8: 256, U8: 256, I16: 128, U16: 128, F16: 128, BF16: 128, I32: 64, U32: 64, F32: 64}
_MUL = {I16: 64, U16: 64, F16: 128, I32: 32, U32: 32, F32: 64}
_ABS = {I8: 128, I16: 64, F16: 128, I32: 32, F32: 64}
_TRANSCENDENTAL = {F16: 16, F32: 16}
_ONE_VECTOR = {t: 256 // dt.get(t).itemsize for t in (I8, U8, I16, U16, F16, BF16, I32, U32, F32)}
_BITS = {t: n for t, n in _ONE_VECTOR.items() if t in (I8, U8, I16, U16, I32, U32)}

#: Tables 6, 9, 10 (Truncate) and 12: elements per cycle of each computing instruction, by element type.
RATES: dict[str, dict[str, int]] = {
    "Abs": _ABS,
    "Neg": _ABS,
    "Exp": _TRANSCENDENTAL,
    "Ln": _TRANSCENDENTAL,
    "Sqrt": _TRANSCENDENTAL,
    "Div": _TRANSCENDENTAL,
    "Relu": {F16: 128, I32: 64, F32: 64},
    "Add": _ADD,
    "Sub": _ADD,
    "Adds": _ADD,
    "Mul": _MUL,
    "Muls": _MUL,
    "Max": _MAX,
    "Min": _MAX,
    "Maxs": _MAX,
    "Mins": _MAX,
    "Compare": _MAX,
    "Compares": _MAX,
    "Select": _MAX,
    "Duplicate": _MAX,
    "Truncate": {F16: 64, BF16: 64, F32: 32},
    # table 7
    "And": _BITS,
    "Or": _BITS,
    "Xor": _BITS,
    "Not": {**_BITS, F16: 128, F32: 64},
    # table 11 (the same-type forms generated)
    "Reduce": {t: n for t, n in _ONE_VECTOR.items() if t in (I16, U16, F16, I32, U32, F32)},
    # table 1, 离散搬入 (a register load; ``dtype`` is the gathered data's)
    "Gather": {I16: 64, U16: 64, F16: 64, BF16: 64, I32: 32, U32: 32, F32: 32},
}

#: Table 10: register Cast, elements per cycle by (source, destination) type.
CAST_RATES: dict[tuple[str, str], int] = {
    (F32, F16): 64,
    (F32, BF16): 64,
    (F16, F32): 64,
    (BF16, F32): 64,
    (F32, I32): 32,
    (I32, F32): 32,
    (F32, I16): 32,
    (F16, I16): 64,
    (I16, F16): 64,
    (I16, F32): 32,
    (I8, F16): 64,
    (U8, F16): 64,
    (F16, I8): 64,
    (I8, I16): 64,
    (U8, U16): 64,
    (U16, U8): 64,
}

#: Mask-register logic (``And`` / ``Or`` / ``Xor`` / ``Not`` on ``MaskReg``, kind :data:`MASK`): cycles of
#: one. Table 5 (MaskReg计算) gives 1 cycle for every MaskReg computation it lists (Move, Select, Pack, ...)
#: and does not list these four; they count like them. ``UpdateMask`` / ``CreateMask`` count none.
MASK_LOGIC_CYCLES = {"And": 1, "Or": 1, "Xor": 1, "Not": 1}
#: ``MaskPack`` / ``MaskUnPack`` inside a 64-bit sequence: table 5 lists Pack and UnPack at 1 cycle each.
MASK_PACK_CYCLES = 1
#: Moves of a predicate between a mask register and its bit-mask tile (``moves.load_mask`` /
#: ``store_mask``): cycles of one call. Table 3 (MaskReg数据搬入): ``LoadAlign`` of a mask 1, ``MaskGenWithRegTensor`` 4;
#: table 4 (MaskReg数据搬出): ``StoreAlign`` and ``StoreUnAlign`` of a mask 1; table 5: ``UnPack`` 1; table 2:
#: ``StoreUnAlignPost`` b32 8 elements (one 32-byte block) a cycle, and it writes at most one block: 1.
MASK_MOVE_CYCLES = {
    "MaskLoadAlign": 1,
    "MaskStoreAlign": 1,
    "MaskStoreUnAlign": 1,
    "MaskStoreUnAlignPost": 1,
    "MaskGenWithRegTensor": 4,
    "UnPack": MASK_PACK_CYCLES,
}

#: 64-bit Max / Min: computing instructions the 3510 implementation issues over a register pair.
B64_MAX_SEQUENCE = 7
#: 64-bit (RegTraitNumOne) register instructions -> the computing calls the 3510 implementation issues for
#: one, each counted one instruction of one cycle (the table has no 64-bit rows), plus one ``MaskPack``
#: (a mask instruction of :data:`MASK_PACK_CYCLES`). Every sequence converts its sources into a register pair (``B64TraitOneToTraitTwo``,
#: one per source), computes there and converts the result back (``B64TraitTwoToTraitOne``):
#: ``Add`` / ``Sub``: ``Add`` / ``Sub`` of the low halves with the carry into a mask, ``AddC`` / ``SubC`` of
#: the high halves (AddB64Impl / SubB64Impl); ``Mul``: ``Mull`` of the low halves and two ``vmula`` of the
#: cross products into the high half (MulB64Impl); ``And`` / ``Or`` / ``Xor`` / ``Not``: the op on each half
#: (AndB64Impl ... NotB64Impl); ``Neg``: ``Duplicate`` of 0 and the pair ``Sub`` (NegB64Impl, the ``Sub`` two
#: calls); ``Abs``: ``vbr``, ``vcmp_lt``, ``Sub``, ``SubC`` and two ``vsel`` (AbsB64Impl); ``Relu``: the pair
#: ``Maxs`` by 0 -- ``Duplicate``, then ``Compare``, ``Select``, ``Duplicate``, ``Select`` (ReluB64Impl).
B64_SEQUENCES = {
    "Max": B64_MAX_SEQUENCE,
    "Min": B64_MAX_SEQUENCE,
    "Add": 2 + 2 + 1,
    "Sub": 2 + 2 + 1,
    "Mul": 2 + 3 + 1,
    "And": 2 + 2 + 1,
    "Or": 2 + 2 + 1,
    "Xor": 2 + 2 + 1,
    "Not": 1 + 2 + 1,
    "Neg": 1 + 3 + 1,
    "Abs": 1 + 6 + 1,
    "Relu": 1 + 5 + 1,
}
#: 64-bit tensor-scalar instructions: a ``Duplicate`` of the scalar, then this pair instruction.
B64_SCALAR = {"Maxs": "Max", "Mins": "Min", "Adds": "Add", "Muls": "Mul", "Compares": "Compare"}
#: 64-bit ``Compare`` by CMPMODE (CompareImpl: ``MaskPack``, two ``B64TraitOneToTraitTwo``, CompareB64Impl,
#: ``MaskUnPack``): (computing calls, mask-register logic calls). EQ compares the low halves and, under that
#: mask, the high ones (two ``vcmp``); NE compares both and ``por``s them; GT / GE / LT / LE compare the high
#: halves for equality and both halves by the mode and ``psel`` between them (three ``vcmp``, one ``psel``).
#: The conversions and ``vcmp`` count one cycle each, the ``por`` / ``psel`` one cycle each as the mask logic
#: (:data:`MASK_LOGIC_CYCLES`, table 5), the ``MaskPack`` / ``MaskUnPack`` :data:`MASK_PACK_CYCLES` each.
B64_COMPARE = {
    "EQ": (2 + 2, 0),
    "NE": (2 + 2, 1),
    "GT": (2 + 3, 1),
    "GE": (2 + 3, 1),
    "LT": (2 + 3, 1),
    "LE": (2 + 3, 1),
}
#: 64-bit ``Select`` (SelectImpl): ``MaskPack``, two conversions, a ``vsel`` of each half, the conversion back.
B64_SELECT = 2 + 2 + 1
#: ``Cast<float, int64_t>`` of a RegTraitNumTwo register (the 3510 CastImpl RegTraitNumTwo -> RegTraitNumOne):
#: (computing calls, mask calls). ``MaskInterleave<int32_t>`` of the mask (a mask instruction, one cycle: table
#: 5's Interleave), ``Interleave`` of the two words into two RegTraitNumOne int64 registers, one ``vcvt``
#: s642f32 on each (table 10 has no int64 -> float row: one cycle each) and ``DeInterleave`` of the results
#: (table 14: b32 64 elements per cycle, one vector a cycle).
CAST_B64_PAIR = (1 + 2 + 1, 1)


@attrs.frozen
class RegInstr:
    """One ``AscendC::Reg`` call as written in a vector function.

    ``dtype`` is the element type of its registers (for a Cast, the
    destination; ``src`` the source), ``kind`` one of :data:`KINDS`, and
    ``elements`` the elements it moves or computes when that is not one full
    vector of ``dtype`` (a ``DIST_UNPACK_B16`` load, a ``DIST_PACK_B32`` store:
    64 two-byte elements).
    """

    api: str
    dtype: str
    kind: str = COMPUTE
    elements: int | None = None
    src: str | None = None
    #: a block-strided ``LoadAlign`` (``DATA_BLOCK_COPY``: a reduce's tail), at :data:`BLOCK_MOVE_RATES`
    block: bool = False
    #: a ``Compare`` / ``Compares``'s CMPMODE (its 64-bit sequence depends on it, :data:`B64_COMPARE`)
    mode: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"register instruction {self.api}: kind {self.kind!r} is not one of {KINDS}")


@attrs.frozen
class RegMix:
    """Hardware register instructions by kind and their single-issue cycles (per vector step, or a total)."""

    loads: int = 0
    stores: int = 0
    compute: int = 0
    masks: int = 0
    cycles: int = 0

    @property
    def instructions(self) -> int:
        """Every register instruction: loads + stores + computing + mask instructions."""
        return self.loads + self.stores + self.compute + self.masks

    def __add__(self, other: RegMix) -> RegMix:
        return RegMix(*(a + b for a, b in zip(attrs.astuple(self), attrs.astuple(other))))


def lanes(dtype: str) -> int:
    """Elements of ``dtype`` in one vector register."""
    return VECTOR_BYTES // dt.get(dtype).itemsize


def rate(instr: RegInstr) -> int | None:
    """Elements per cycle the table gives for the instruction, or None when it lists none."""
    if instr.api == "Gather":
        return RATES["Gather"].get(instr.dtype)
    if instr.api in UNALIGNED_MOVE_RATES:
        return UNALIGNED_MOVE_RATES[instr.api].get(dt.get(instr.dtype).itemsize)
    if instr.kind in (LOAD, STORE):
        return (BLOCK_MOVE_RATES if instr.block else MOVE_RATES).get(dt.get(instr.dtype).itemsize)
    if instr.api == "Cast":
        return CAST_RATES.get((instr.src or "", instr.dtype))
    return RATES.get(instr.api, {}).get(dt.get(instr.dtype).name)


def cycles(instr: RegInstr) -> int:
    """Single-issue cycles of one instruction: ceil(elements / rate), one when the table lists no rate,
    none for a mask instruction."""
    if instr.api in MASK_MOVE_CYCLES:
        return MASK_MOVE_CYCLES[instr.api]
    if instr.kind == MASK:
        return MASK_LOGIC_CYCLES.get(instr.api, 0)
    found = rate(instr)
    if found is None:
        return 1
    if instr.elements is not None:
        elements = instr.elements
    elif instr.api == "Cast":  # a Cast covers one vector of its wider type
        elements = min(lanes(instr.dtype), lanes(instr.src or instr.dtype))
    else:
        elements = lanes(instr.dtype)
    return math.ceil(elements / found)


def issue(instr: RegInstr) -> RegMix:
    """The hardware instructions one call issues, by kind, with their cycles."""
    wide = dt.get(instr.dtype).itemsize == 8 and instr.kind == COMPUTE
    if wide and instr.api in B64_SEQUENCES:
        calls = B64_SEQUENCES[instr.api]
        return RegMix(compute=calls, masks=1, cycles=calls + MASK_PACK_CYCLES)
    if wide and instr.api in B64_SCALAR:
        pair = RegInstr(B64_SCALAR[instr.api], instr.dtype, mode=instr.mode)
        return issue(RegInstr("Duplicate", instr.dtype)) + issue(pair)
    if wide and instr.api == "Compare":
        calls, logic = B64_COMPARE[instr.mode or ""]
        return RegMix(compute=calls, masks=2 + logic, cycles=calls + logic + 2 * MASK_PACK_CYCLES)
    if instr.api == "Cast" and instr.src is not None and dt.get(instr.src).itemsize == 8:
        calls, masks = CAST_B64_PAIR
        return RegMix(compute=calls, masks=masks, cycles=calls + masks)
    if wide and instr.api == "Select":
        return RegMix(compute=B64_SELECT, masks=1, cycles=B64_SELECT + MASK_PACK_CYCLES)
    counts = {LOAD: "loads", STORE: "stores", COMPUTE: "compute", MASK: "masks"}
    return RegMix(**{counts[instr.kind]: 1, "cycles": cycles(instr)})


def mix(instrs: Iterable[RegInstr]) -> RegMix:
    """The summed :func:`issue` of several calls (e.g. one vector step of a function)."""
    total = RegMix()
    for instr in instrs:
        total = total + issue(instr)
    return total


def vector_steps(count: Expr, step_lanes: int) -> Expr:
    """Loop iterations of a vector function over ``count`` elements, ``step_lanes`` per iteration."""
    return CeilDiv(count, step_lanes)


def loop_counters(parts: Iterable[tuple[Expr, RegMix]]) -> dict[str, Expr]:
    """The cost model's register counters of one launch whose instructions sit in several loops: each
    ``(iterations, mix of one iteration)`` summed."""
    instructions: Expr = 0
    cycles_: Expr = 0
    for iterations, part in parts:
        instructions = instructions + iterations * part.instructions
        cycles_ = cycles_ + iterations * part.cycles
    return {"reg_instructions": instructions, "reg_cycles": cycles_}


def launch_counters(per_step: RegMix, steps: Expr, once: RegMix | None = None) -> dict[str, Expr]:
    """The cost model's register counters of one launch: ``steps`` iterations of ``per_step`` plus the
    instructions issued ``once`` outside the loop."""
    once = once or RegMix()
    return {
        "reg_instructions": steps * per_step.instructions + once.instructions,
        "reg_cycles": steps * per_step.cycles + once.cycles,
    }
