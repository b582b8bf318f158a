"""VfChainRegApiCall: a run of elementwise ops over one UB tile as one register vector function.

Autofuse's v35 layer wraps a fused subgraph into a ``VfCall``: a ``__simd_vf__``
function whose loop body is register-level calls. This class does that for a
run of elementwise ops the scheduler fused (:attr:`Role.VECTOR_CHAIN`): the
function loops over the tile in vector-length steps, loads each input once
with an aligned ``Reg::LoadAlign``, computes every op in registers under the
tail mask of the step (``Reg::UpdateMask``), and stores with ``Reg::StoreAlign``
only the values later nodes read. The kernel launches it with
``asc_vf_call<func>(...)``.

A step covers one vector register of the run's widest type: 64 elements when
the run holds 4-byte values, else 256 bytes of its one element size. In a run
that mixes 2- and 4-byte values, the 2-byte values sit in the even lanes of
their registers (``LoadAlign`` ``DIST_UNPACK_B16``, ``StoreAlign``
``DIST_PACK_B32``, register ``Cast`` with ``RegLayout::ZERO``), and only
casts and ops computed in float32 touch them.

Each op is computed exactly as its memory-based form computes it
(:func:`~af_v35_regbase.api_calls.legalize.op_form`), instruction for
instruction, with the register instruction taking the same dtype:

- ``direct`` / ``relu_maxs``: the instruction in the op's dtype; for the
  float16 / bfloat16 ops of :data:`ROUNDS_ONCE` whose register instruction
  takes no such dtype, or in a run with 4-byte values, Cast up, the
  instruction in float32 and Cast back (the same bits, see ROUNDS_ONCE);
- ``promote``: float16 / bfloat16 inputs cast up to float32 (exact), the op in
  float32, the result cast back with CAST_RINT;
- ``cast``: the route's Cast steps (:func:`register_route`), when each is a
  register Cast the twin and the 3510 implementation have (float <-> float16 /
  bfloat16, float <-> int32; float16 / bfloat16 -> int32 rounding through
  float; int16 <-> float, float16 -> int16, int16 -> float16, 2-byte <->
  4-byte integers and float16 <-> bfloat16, :func:`_two_byte_cast_trait`;
  int8 / uint8 <-> float16 / int16 / uint16, :func:`_byte_cast_trait`) or
  a same-width integer reinterpretation (a register view, no instruction); a
  Cast between two 2-byte types takes full 2-byte registers, so its run holds
  no 4-byte values; a run holding 1- and 2-byte values steps over 128
  elements, the 1-byte ones in the even byte lanes (``LoadAlign``
  ``DIST_UNPACK_B8``, ``StoreAlign`` ``DIST_PACK_B16``), read only by Casts; a
  run holding 1- and 4-byte values steps over 64, the 1-byte ones in every
  fourth byte lane (``LoadAlign`` ``DIST_UNPACK4_B8``), read only by Cast
  routes widening them (:func:`_widens_from_bytes`);
- 64-bit integers (a run of them alone, 32 per step): the ``direct`` and
  ``bits`` ops the 3510 register table takes for them (Add / Sub / Mul,
  Adds / Subs / Muls, Maximum / Minimum / Maxs / Mins, the bitwise ops, and
  on int64 Abs / Relu / Neg) and their comparisons and Where (Compare /
  Compares / Select), each a sequence over a register pair in the 3510
  implementation (:func:`_b64_rejection`);
- ``reinterpret`` / ``splat`` (uint16 / uint32 Adds / Subs / Muls on the
  signed view, Maxs / Mins as Duplicate + Max / Min): the register
  tensor-scalar instruction in the unsigned type (:data:`UNSIGNED_FORMS`);
- ``widen`` int8 Neg: the register Neg in int8; 8-bit Mul / Muls as the
  memory path computes them, in int16 lanes (:func:`_widened_bytes`);
- ``composite`` Sigmoid: 1 / (1 + exp(-x)) in float32, the reciprocal as a Div
  of a register of ones; ``composite`` Exp2: the memory path's steps, one
  register instruction each (:meth:`_Function.exp2`), the same bits.

Floor / Ceil / Round are the register ``Truncate`` with the memory path's
RoundMode. Reciprocal and Rsqrt (no register instruction of their own) are a
``Div`` of a register of ones, after a ``Sqrt`` for Rsqrt, in float32.

Comparisons (Gt / Ge / Lt / Le / Eq / Ne, and their scalar forms) are a
register ``Compare`` / ``Compares`` into a ``MaskReg``, and Where is a
``Select`` by that mask. Outside a run a predicate is the bit-mask tile the
memory path uses (one bit per element), so
:meth:`VfChainRegApiCall.run_local_dtypes` names ``bool`` and
:meth:`VfChainRegApiCall.edge_rejection` lets a run store a predicate read
outside it and load one made outside it, as the 3510 memory Compare writes and
Select reads one (:meth:`_Function.store_mask`, :meth:`_Function.load_mask`:
``StoreAlign`` / ``LoadAlign`` of the mask register for 1- and 2-byte steps,
``StoreUnAlign`` / ``LoadUnAlign`` + ``MaskGenWithRegTensor`` for 4-byte
ones, plus ``UnPack`` for a 64-bit run's load); a 64-bit run stores none and a
run a reduce ends loads none (the fusion keeps those ops memory calls, with
the reason). The masks are per element width, so a run holding them has one
mask size. The memory path compares into a bit-mask tile and selects by it; the
register path makes the same predicate per lane (the same scalar as
:func:`~af_v35_regbase.api_calls.vector.compare_scalar` picks for a 2-byte
Compares) and selects the same bits.

Logical ops (LogicalAnd / Or / Xor / Not) of those predicates are the register
``And`` / ``Or`` / ``Xor`` / ``Not`` on mask registers, under the step mask
(zeroing: no lane past the tail turns on) -- the predicate per lane the memory
path's bit-mask tiles hold, so a Where selects the same bits.

Bitwise ops (BitwiseAnd / Or / Xor / Not) are the register ``And`` / ``Or`` /
``Xor`` / ``Not`` in the tile's own integer type: the same bits as the memory
path's calls on the int16 view of the same bytes.

Every other form stays a memory-based call, for one of the reasons of
:data:`MEMORY_CALL_REASONS` (predicates crossing a run's edge, 8-bit Mul / Muls
widened to int16, casts through other type pairs and casts to or from 64 bits): forms
the 3510 register API has that vector functions do not generate yet. :meth:`VfChainRegApiCall.rejection`
says why, and ``afc explain`` prints it.

A reduce over a kept inner width (``out[r, i] = fold over g of x[r, g, i]``)
ends the run whose last value it reduces, or runs alone in a function of its
own (:meth:`VfChainRegApiCall.reduce_rejection` says when): each group row is
loaded with ``LoadAlign`` (a tail with the block-masked form,
``DataCopyMode::DATA_BLOCK_COPY``: only the 32-byte blocks the tail mask
reaches are read, nothing past the tile), the chain computed
in registers and folded into an accumulator in the memory path's order
(:func:`reduce_steps`), so the value never goes through UB. Over the innermost
axis the group is accumulated lane-wise and ``Reg::Reduce`` folds the lanes
(:func:`horizontal_steps`, whose docstring gives the float sum order). Group
rows or groups not known to start on 32-byte blocks (widths that do not fill
whole blocks, dynamic widths) are loaded with ``Reg::LoadUnAlign`` after a
``Reg::LoadUnAlignPre`` (:meth:`_Function._load_unaligned`) in the same order
of folds; it reads whole blocks past the data, so the tiles the function reads
are padded (:meth:`VfChainRegApiCall.read_past_tiles`). Results are stored
with ``StoreAlign`` at each result row's start, so a kept-width reduce whose
rows are not known to start on 32-byte blocks has no register form
(:func:`stores_aligned`). Where the register form has none the reduce stays
the memory-based ``ReduceRegApiCall``, with the reason in ``afc explain``.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections.abc import Callable, Sequence

import attrs
import sympy

from af_core.template_api import (
    ApiCall,
    CeilDiv,
    ChainReduce,
    ChainStep,
    CodegenError,
    Expr,
    FloorDiv,
    ImplGraph,
    ImplNode,
    Role,
    literal,
)
from af_core.template_api import dtypes as dt
from af_v35_regbase import reg_cost
from af_v35_regbase.api_calls.legalize import (
    BINARY,
    COMPARE,
    COMPARE_SCALAR,
    LOGICAL,
    TENSOR_SCALAR,
    TRUNCATE,
    Form,
    op_form,
)
from af_v35_regbase.api_calls.vector import compare_scalar, scalar_literal
from af_v35_regbase.api_calls.vf_chain.ops import (
    _F32,
    _I16,
    _I32,
    _U16,
    BITWISE_BINARY,
    COMPOSITE,
    RECIPROCALS,
    REG_API,
    VECTOR_BYTES,
    FormKind,
    _compares,
    _f32_only,
    _neg_in_own_type,
    _promotable,
    _widened_bytes,
    b64_api,
    form_kind,
    mask_tensors,
    step_signatures,
)
from af_v35_regbase.api_calls.vf_chain.ops import ROUNDS_ONCE as ROUNDS_ONCE
from af_v35_regbase.api_calls.vf_chain.ops import bool_inputs as bool_inputs
from af_v35_regbase.api_calls.vf_chain.reduce_facts import (
    _REDUCE_PARAMS,
    _REDUCE_TYPE,
    REDUCE_KINDS,
    REG_REDUCE,
    UNALIGN_REGS,
    UNALIGNED_READ_PAST,
    reduce_apis,
    starts_aligned,
    stores_aligned,
)
from af_v35_regbase.api_calls.vf_chain.routes import (
    _MADE_WORDS,
    _WIDE_COMPARE,
    FLOAT_WORDS,
    LOW_BYTE,
    LOW_WORDS,
    PAIR_FLOAT,
    SIGN_WORDS,
    _cast_trait,
    _low_byte,
    _modes,
    _route_modes,
    _route_sizes,
    _same_size_2b_cast,
    _trait,
    _widens_from_bytes,
    _word_route,
    register_route,
)
from af_v35_regbase.api_dtypes import reg_accepts
from af_v35_regbase.reg_cost import COMPUTE, LOAD, MASK, STORE, RegInstr

#: element size -> the dtype name of the UpdateMask of a step (the mask type of text())
_MASK_DTYPES = {8: "int64", 4: "float32", 2: "float16", 1: "uint8"}


#: Why a run of 64-bit values keeps a predicate read outside it (:meth:`VfChainRegApiCall.edge_rejection`).
B64_MASK_STORE = (
    "a mask of 8-byte elements has no store of one bit per element (StoreUnAlign takes b16 / b32 masks)"
)
#: Why a run ending with a reduce keeps out a predicate made outside it.
REDUCE_MASK_LOAD = (
    "a reduce's vector function loads no bit-mask tile (its group rows need not start on a byte)"
)


# -- why an op stays a memory-based call -------------------------------------
#: Every reason a SIMD / SK-like chain keeps an elementwise op a memory-based call instead of a register
#: instruction of its vector function: kind -> (regular expression the reason ``afc explain`` prints
#: matches, what it means). A ``no-form`` kind would be a case the 3510 register API has no form for (no
#: instruction in the op's dtype and no exact sequence of them); ``gap`` kinds are cases it has a form for
#: that vector functions do not generate yet -- every kind today is a gap. tests/integration/test_register_inventory.py builds every
#: op and dtype the elementwise plugin registers and the SIMD template accepts, and checks each op is in a
#: vector function or kept for one of these reasons (and which ops each gap holds).
MEMORY_CALL_REASONS: dict[str, tuple[str, str]] = {
    "gap: 64-bit op": (
        r"\w+ on 64-bit data: the 3510 register \w+ has no \w+ form generated here",
        "vector functions generate the 64-bit ops the 3510 register API computes over a register pair "
        "(Add / Sub / Mul and their scalar forms, Max / Min, bitwise ops, int64 Abs / Relu / Neg, Compare / "
        "Compares / Select) and the Casts to and from 64 bits (int64 <-> uint64 a register view, int64 -> int32 "
        "the low words of a dual load, a Cast to int64 words computed in a run of 4-byte values and a dual "
        "store, int64 -> float32 the register Cast of a RegTraitNumTwo register); no elementwise op of the "
        "plugin's table falls in this gap today",
    ),
    "gap: bool across a run edge": (
        r"its bool result is read outside the run \(by [^)]*\) and "
        + re.escape(B64_MASK_STORE)
        + r"|it reads the bool value '\w+', made outside the run, and "
        + re.escape(REDUCE_MASK_LOAD),
        "a predicate crosses a run's edge as the bit-mask tile the memory Compare writes and Select reads "
        "(:meth:`_Function.store_mask`, :meth:`_Function.load_mask`); a run of 64-bit values stores no such "
        "tile (its masks are of 8-byte elements, and StoreUnAlign takes b16 / b32 masks only), and a run "
        "ending with a reduce loads none (its group rows need not start on a byte of the tile)",
    ),
    "gap: cast route": (
        r"Cast \w+ -> \w+ \(CAST_\w+\) has no register Cast here"
        r"|Cast \w+ -> \w+ narrows 4-byte values to bytes, which no vector step holds together",
        "a Cast step with no register Cast in its rounding mode, or a route narrowing 4-byte values to bytes "
        "other than a 4-byte integer's low byte: such a byte would come out of the odd 2-byte lanes a "
        "narrowing Cast leaves, which the documentation does not define. Between bytes and 4-byte types "
        "vector functions widen bytes loaded into every fourth byte lane (LoadAlign DIST_UNPACK4_B8, "
        ":func:`_widens_from_bytes`) and store a 4-byte integer's low bytes (StoreAlign DIST_PACK4_B32, "
        ":data:`LOW_BYTE`); no elementwise op of the plugin's table falls in this gap today",
    ),
}


def memory_call_reason(reason: str) -> str | None:
    """The :data:`MEMORY_CALL_REASONS` kind whose pattern ``reason`` matches in full, or None."""
    for kind, (pattern, _why) in MEMORY_CALL_REASONS.items():
        if re.fullmatch(pattern, reason):
            return kind
    return None


@functools.lru_cache(maxsize=4096)
def _run_facts(op_type: str, ins: tuple, out) -> tuple[bool, frozenset[int], bool]:
    """What one op brings to a run's vector step: whether it makes or reads a mask register, the element
    sizes it holds in registers, and whether it is a 2-byte op computed in its own dtype (full 2-byte
    registers). Pure in the op and its dtypes, so cached: the scheduler asks again for every op a run
    grows by, which would make planning a long chain quadratic in the op analysis."""
    ins = tuple(dt.get(d) for d in ins)
    out = dt.get(out)
    if out.is_bool or any(d.is_bool for d in ins):
        return True, frozenset(d.itemsize for d in (*ins, out) if not d.is_bool), False
    form = op_form(op_type, ins, out)
    # a word route holds its 64-bit values as int32 words (or a register pair): 4-byte registers only
    words = _word_route(form)
    sizes = {d.itemsize for d in (*ins, out) if not (words and d.itemsize == 8)}
    in_f32 = _computes_in_float32(form) or op_type in RECIPROCALS
    if in_f32 or _f32_only(op_type, form, out):
        sizes.add(4)
    sizes |= _route_sizes(form)
    if _widened_bytes(op_type, form, out):
        sizes.add(2)
    narrow = _in_own_lanes(form) and out.itemsize == 2
    narrow = narrow or _same_size_2b_cast(form)
    return False, frozenset(sizes), narrow and not in_f32 and not _promotable(op_type, out)


def run_step_size(ops: Sequence[tuple[str, Sequence[dt.DType], dt.DType]]) -> int:
    """The element size a run of ``ops`` (accepted together) steps by, which is its masks' element size:
    4 when it holds 4-byte values (2- and 1-byte ones then sit unpacked next to them), else its largest size,
    1 for a run of predicates alone -- what :class:`_Function` chooses from the same ops' tiles."""
    sizes: set[int] = set()
    for op_type, ins, out in ops:
        sizes |= _run_facts(op_type, tuple(dt.get(d) for d in ins), dt.get(out))[1]
    return 4 if 4 in sizes else max(sizes, default=1)


def _mask_rejection(op_type: str, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """Why an op making or reading a bool value cannot join a run, or None (Compare / Compares into a
    mask register, Where as a Select by one)."""
    if op_type in COMPARE or op_type in COMPARE_SCALAR:
        api = "Compare" if op_type in COMPARE else "Compares"
        src = ins[0]
        if not out.is_bool or any(d != src for d in ins):
            return f"{op_type} mixes dtypes {', '.join(d.name for d in ins)} -> {out.name}"
        if not op_form(op_type, ins, out).legal or not reg_accepts(api, src):
            return f"the 3510 register {api} does not accept {src.name}"
        return None
    if op_type == "Where":
        cond, data = ins[0], ins[1:]
        if not cond.is_bool or out.is_bool or any(d != out for d in data):
            return f"Where mixes dtypes {', '.join(d.name for d in ins)} -> {out.name}"
        if not op_form(op_type, ins, out).legal or not reg_accepts("Select", out):
            return f"the 3510 register Select does not accept {out.name}"
        return None
    if op_type in LOGICAL:
        return _logical_rejection(op_type, ins, out)
    return f"{op_type} on bool values has no register form here"


# -- predicates in a run of 2- and 4-byte values ------------------------------------


def _wide_masks_rejection(ops: Sequence[tuple[str, Sequence[dt.DType], dt.DType]]) -> str | None:
    """Why the mask ops among ``ops`` (a run of 2- and 4-byte values) do not make their masks at 4 bytes, or
    None when they do: they must be of both sizes (masks crossing from one size to the other; mask ops of
    one size keep masks of that size in a run of their own, without the Casts) and each must have the
    4-byte form (:func:`_wide_mask_rejection`)."""
    sizes: set[int] = set()
    for op_type, ins, out in ops:
        ins_t = tuple(dt.get(d) for d in ins)
        out_t = dt.get(out)
        if out_t.is_bool or any(d.is_bool for d in ins_t):
            why = _wide_mask_rejection(op_type, ins_t, out_t)
            if why is not None:
                return why
            sizes |= {d.itemsize for d in (*ins_t, out_t) if not d.is_bool}
    return None if len(sizes) > 1 else "the mask ops are of one element size"


def _wide_mask_rejection(op_type: str, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """Why a mask op cannot make or read its mask at 4 bytes in a run holding 2- and 4-byte values, or None.

    A mask register holds one element size; such a run steps over 64 elements, its 2-byte values unpacked
    into the even 2-byte lanes. A comparison of 2-byte values compares them widened exactly to 4 bytes
    (:data:`_WIDE_COMPARE`); a Where of 2-byte values selects their bits as int16 widened to int32 and
    narrowed back (the low 16 bits: the same bits, NaN payloads included); 4-byte ones and logical ops are
    at 4 bytes already. So every mask of the run is one of 4-byte elements (:meth:`_Function.compare`,
    :meth:`_Function.select`)."""
    if op_type in LOGICAL:
        return None
    if op_type in COMPARE or op_type in COMPARE_SCALAR:
        src = ins[0]
        if src.itemsize == 4:
            return None
        wide = _WIDE_COMPARE.get(src.name)
        api = "Compare" if op_type in COMPARE else "Compares"
        if wide is None or _cast_trait(wide, src, "CAST_NONE") is None or not reg_accepts(api, wide):
            return f"{op_type} on {src.name} has no 4-byte register {api} after an exact widening"
        return None
    if op_type == "Where":
        return None if out.itemsize in (2, 4) else f"Where on {out.name} next to 4-byte masks"
    return f"{op_type} on bool values has no register form here"


# -- logical ops on mask registers ----------------------------------------------
def _logical_rejection(op_type: str, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """Why a logical op cannot join a run, or None: LogicalAnd / Or / Xor / Not of predicates are the
    register ``And`` / ``Or`` / ``Xor`` / ``Not`` on mask registers (:meth:`_Function.logical`)."""
    if not out.is_bool or not all(d.is_bool for d in ins):
        return f"{op_type} mixes dtypes {', '.join(d.name for d in ins)} -> {out.name}"
    return None


# -- uint16 / uint32 tensor-scalar ops ---------------------------------------------
#: Memory forms of uint16 / uint32 Adds / Subs / Muls (``reinterpret``: the op on the signed view) and Maxs /
#: Mins (``splat``: Duplicate + Max / Min) that a vector function computes as the register tensor-scalar
#: instruction in the unsigned type itself, which the 3510 register table takes: wrap-around addition and
#: multiplication give the same bits whatever the signedness, and the scalar (wrapped into the unsigned
#: type) is the bits the memory path's wrapped signed scalar has; Maxs / Mins of the scalar pick the value the
#: memory path's Max / Min with a register of it picks.
UNSIGNED_FORMS = (FormKind.REINTERPRET, FormKind.SPLAT)


def _unsigned_rejection(op_type: str, out: dt.DType) -> str | None:
    """Why a uint16 / uint32 tensor-scalar op of :data:`UNSIGNED_FORMS` has no register form, or None."""
    api = REG_API[op_type]
    return None if reg_accepts(api, out) else f"the 3510 register {api} does not accept {out.name}"


# -- 64-bit integer ops over a register pair ----------------------------------------
def _b64_rejection(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """Why an op on 64-bit data cannot join a run, or None. A run of 64-bit values holds 32 elements a step
    (one RegTraitNumOne register); the 3510 register implementation computes Add / Sub / Mul, Adds / Muls
    (Duplicate + Add / Mul), Max / Min / Maxs / Mins, And / Or / Xor / Not (int64 and uint64) and Abs / Relu /
    Neg (int64) there as a sequence over a register pair (:data:`~af_v35_regbase.reg_cost.B64_SEQUENCES`),
    whose results are the memory path's 64-bit wrap-around values (Compare / Compares / Select of 64-bit data
    go through :func:`_mask_rejection`). A Cast between int64 and uint64 is a register view (the memory path
    copies the same bits); the other Casts to and from 64 bits hold the 64-bit values as int32 words or a
    RegTraitNumTwo register in a run of 4-byte values (:data:`_WORD_MODES`). Each is the 64-bit legality
    (``wide``) of its form's row of :data:`REGISTER_FORMS`; a form with no such row has no 64-bit form."""
    row = REGISTER_FORMS.get(form_kind(form))
    if row is None or row.wide is None:
        return _b64_reason(op_type, out)
    return row.wide(op_type, form, ins, out)


def _b64_reason(op_type: str, out: dt.DType) -> str:
    """Why a 64-bit op has no register form here (the reason :data:`MEMORY_CALL_REASONS` ``gap: 64-bit op``
    matches)."""
    return f"{op_type} on 64-bit data: the 3510 register {b64_api(op_type, out)} has no {out.name} form generated here"


def _b64_pair_rejection(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """The 64-bit legality of the :data:`B64_FORMS` rows: the op's register instruction (:func:`b64_api`) in
    its own 64-bit type, one sequence over a register pair."""
    if any(d != out for d in ins) or not reg_accepts(b64_api(op_type, out), out):
        return _b64_reason(op_type, out)
    return None


def _b64_cast_rejection(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """The 64-bit legality of the ``cast`` row: int64 <-> uint64 as a register view, or a route holding its
    64-bit values as words or a register pair in a run of 4-byte values."""
    if form.steps and all(mode == "VIEW" for _to, _frm, mode in form.steps):
        return None  # int64 <-> uint64: the register read as the other type, no instruction
    if _word_route(form):
        return None  # 64-bit values as words (or a register pair), in a run of 4-byte values
    return _b64_reason(op_type, out)


def _byte_run_rejection(ops: Sequence[tuple[str, Sequence[dt.DType], dt.DType]]) -> str | None:
    """Why ops holding 1- and 2-byte values cannot share a run, or None. Such a run steps over 128
    elements: its 2-byte values fill whole registers, its 1-byte ones sit in the even byte lanes (loaded
    ``DIST_UNPACK_B8``, stored ``DIST_PACK_B16``), which only the register Casts between the two sizes
    (:func:`_byte_cast_trait`) and reinterpretations read: any other op on 1-byte data starts a new run."""
    for op_type, ins, out in ops:
        ins_t = tuple(dt.get(d) for d in ins)
        out_t = dt.get(out)
        if all(d.itemsize != 1 for d in (*ins_t, out_t)):
            continue
        form = op_form(op_type, ins_t, out_t)
        if form_kind(form) is not FormKind.CAST and not _widened_bytes(op_type, form, out_t):
            return (
                f"{op_type} on 1-byte data next to 2-byte values: the 1-byte values sit unpacked in the even "
                "byte lanes, which only a Cast (or an 8-bit Mul / Muls, cast up and back) reads"
            )
    return None


def _quarter_run_rejection(ops: Sequence[tuple[str, Sequence[dt.DType], dt.DType]]) -> str | None:
    """Why ops holding 1- and 4-byte values cannot share a run, or None. Such a run steps over 64 elements:
    its 1-byte values sit in every fourth byte lane (loaded ``DIST_UNPACK4_B8``), which only a Cast route
    widening them (:func:`_widens_from_bytes`) reads; the only byte made there is a 4-byte integer's low
    byte (:func:`_low_byte`), which stays in its 4-byte register until ``StoreAlign`` ``DIST_PACK4_B32``
    stores it, so no op of the run may read it (a run widening bytes makes none)."""
    reads = makes = False
    for op_type, ins, out in ops:
        ins_t = tuple(dt.get(d) for d in ins)
        out_t = dt.get(out)
        if all(d.itemsize != 1 for d in (*ins_t, out_t)):
            continue
        form = op_form(op_type, ins_t, out_t)
        route = register_route(form) if form_kind(form) is FormKind.CAST else None
        if isinstance(route, tuple) and _widens_from_bytes(route):
            reads = True
        elif isinstance(route, tuple) and _low_byte(route):
            makes = True
        else:
            return (
                f"{op_type} {', '.join(d.name for d in ins_t)} -> {out_t.name} next to 4-byte values: the "
                "1-byte values sit in every fourth byte lane, which only a widening Cast reads"
            )
    if reads and makes:
        return (
            "a byte made next to 4-byte values is the low byte of its 4-byte register, which only a store "
            "reads; the run also widens bytes"
        )
    return None


def _view(reg: str, to: dt.DType) -> str:
    """A register read as one of element type ``to`` (same size): ``(RegTensor<to>&)reg``, as the 3510
    implementation reinterprets registers; no instruction."""
    base = reg.rsplit(")", 1)[-1]
    return f"(AscendC::Reg::RegTensor<{to.cpp}>&){base}"


# -- the legality of each register form (the ``accepts`` of :data:`REGISTER_FORMS`' rows) -----------------
#: ``accepts`` / ``wide`` of a row: (op, its memory form, input dtypes, output dtype) -> why the form has no
#: register code for them, or None.
_Accepts = Callable[[str, Form, tuple[dt.DType, ...], dt.DType], str | None]


def _own_type_rejection(op_type: str, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """What every form but ``cast`` / ``composite`` asks first: a register instruction for the op
    (:data:`REG_API`) and inputs of the result's dtype."""
    if op_type not in REG_API:
        return f"op {op_type} has no register form in the vector function (memory-based call)"
    if any(d != out for d in ins):
        return f"{op_type} mixes dtypes {', '.join(d.name for d in ins)} -> {out.name}"
    return None


def _memory_form_reason(op_type: str, form: Form, out: dt.DType) -> str:
    """Why an op whose memory form is not one register instruction in its dtype stays a memory call."""
    return f"{op_type} on {out.name} takes the '{form_kind(form).value}' memory form (not one instruction in its dtype)"


def _no_row_rejection(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str:
    """Why an op whose form has no row of :data:`REGISTER_FORMS` (``reject``) cannot join a run."""
    return _own_type_rejection(op_type, ins, out) or _memory_form_reason(op_type, form, out)


def _reciprocal_rejection(op_type: str, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """Reciprocal / Rsqrt on a float (no register instruction of their own: a Div of ones in float32), asked
    before the ``direct`` / ``promote`` forms' own questions."""
    return None if all(d == out for d in ins) else f"{op_type} mixes dtypes"


def _api_rejection(api: str, op_type: str, out: dt.DType) -> str | None:
    """Whether the register ``api`` takes ``out`` -- or, for the ops of :data:`ROUNDS_ONCE`, float32."""
    if not reg_accepts(api, out) and not _promotable(op_type, out):
        return f"the 3510 register {api} does not accept {out.name}"
    return None


def _direct_accepts(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """``direct``: the op's register instruction in its dtype (or float32, :func:`_promotable`)."""
    if op_type in RECIPROCALS and out.is_float:
        return _reciprocal_rejection(op_type, ins, out)
    return _own_type_rejection(op_type, ins, out) or _api_rejection(REG_API[op_type], op_type, out)


def _promote_accepts(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """``promote``: the op's register instruction in float32."""
    if op_type in RECIPROCALS and out.is_float:
        return _reciprocal_rejection(op_type, ins, out)
    why = _own_type_rejection(op_type, ins, out)
    if why is not None:
        return why
    api = REG_API[op_type]
    return None if reg_accepts(api, _F32) else f"the 3510 register {api} does not accept float32"


def _bits_accepts(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """``bits``: the register And / Or / Xor / Not in the tile's own integer type."""
    why = _own_type_rejection(op_type, ins, out)
    if why is not None:
        return why
    api = REG_API[op_type]
    return None if reg_accepts(api, out) else f"the 3510 register {api} does not accept {out.name}"


def _unsigned_accepts(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """:data:`UNSIGNED_FORMS`: the register tensor-scalar instruction in the unsigned type."""
    return _own_type_rejection(op_type, ins, out) or _unsigned_rejection(op_type, out)


def _widen_accepts(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """``widen``: int8 Neg in its own type (:func:`_neg_in_own_type`), 8-bit Mul / Muls in int16 lanes
    (:func:`_widened_bytes`); any other widened op stays a memory call."""
    why = _own_type_rejection(op_type, ins, out)
    if why is not None:
        return why
    if _neg_in_own_type(op_type, out):
        return None
    if _widened_bytes(op_type, form, out):
        return None if reg_accepts(REG_API[op_type], _I16) else f"the 3510 register {op_type} takes no int16"
    return _memory_form_reason(op_type, form, out)


def _relu_maxs_accepts(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """``relu_maxs``: the register Maxs with 0 in the op's dtype."""
    return _own_type_rejection(op_type, ins, out) or _api_rejection("Maxs", op_type, out)


def _cast_accepts(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """``cast``: the route's register steps (:func:`register_route`)."""
    route = register_route(form)
    return route if isinstance(route, str) else None


def _composite_accepts(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """``composite``: the float32 sequences of :data:`COMPOSITE`."""
    if op_type not in COMPOSITE:
        return f"{op_type} takes a composite memory form with no register form here"
    return None


class VfChainRegApiCall(ApiCall):
    """Fills :attr:`Role.VECTOR_CHAIN`: a run of elementwise ops as one ``__simd_vf__`` function."""

    name = "VfChainRegApiCall"
    roles = frozenset({Role.VECTOR_CHAIN})

    @classmethod
    def supports(cls, op_type: str) -> bool:
        """Whether ``op_type`` has a register form for some dtype."""
        return op_type in REG_API or op_type in COMPOSITE or op_type == "Cast"

    @classmethod
    def rejection(cls, op_type: str, in_dtypes, out_dtype) -> str | None:
        """Why ``op_type`` on these dtypes cannot join a register vector function, or None when it can."""
        ins = tuple(dt.get(d) for d in in_dtypes)
        out = dt.get(out_dtype)
        if out.is_bool or any(d.is_bool for d in ins):
            return _mask_rejection(op_type, ins, out)
        form = op_form(op_type, ins, out)
        if out.itemsize == 8 or any(d.itemsize == 8 for d in ins):
            return _b64_rejection(op_type, form, ins, out)  # the rows' 64-bit legality
        row = REGISTER_FORMS.get(form_kind(form))
        if row is None:
            return _no_row_rejection(op_type, form, ins, out)
        return row.accepts(op_type, form, ins, out)

    @classmethod
    def run_local_dtypes(cls) -> frozenset[str]:
        """``bool``: a comparison's result lives in a mask register; it crosses a run's edge only as
        :meth:`edge_rejection` allows."""
        return frozenset({"bool"})

    @classmethod
    def edge_rejection(
        cls,
        ops: Sequence[tuple[str, Sequence[dt.DType], dt.DType]],
        dtype: dt.DType,
        *,
        stores: bool,
        reduces: bool,
    ) -> str | None:
        """Why a run of ``ops`` cannot store a predicate it makes (``stores``) or load one made outside it,
        or None. A predicate outside a run is the bit-mask tile the memory-based ops use (one bit per
        element, what the memory Compare writes and Select reads), so a run moves it to and from any other
        run or memory call: :meth:`_Function.store_mask` / :meth:`_Function.load_mask` by the run's mask
        size. A run of 64-bit values stores none (:data:`B64_MASK_STORE`); a run a reduce ends loads none
        (:data:`REDUCE_MASK_LOAD`; such a run stores nothing, a later node reading none of its values)."""
        if not dtype.is_bool:
            return f"a vector function keeps no {dtype.name} value in a register of its own"
        if reduces:
            return REDUCE_MASK_LOAD
        if stores and run_step_size(ops) == 8:
            return B64_MASK_STORE
        return None

    @classmethod
    def run_rejection(cls, ops: Sequence[tuple[str, Sequence[dt.DType], dt.DType]]) -> str | None:
        """Why these ops (each accepted alone) cannot share one function's vector steps, or None."""
        widths: set[int] = set()
        narrow_direct = []
        masked = []
        modes: set[str] = set()
        for op_type, ins, out in ops:
            modes |= _route_modes(op_type, tuple(ins), out)
            is_masked, sizes, narrow = _run_facts(op_type, tuple(ins), out)
            widths.update(sizes)
            if is_masked:
                masked.append(op_type)
            elif narrow:
                narrow_direct.append(op_type)
        if PAIR_FLOAT in modes and modes & set(_MADE_WORDS):
            return (
                "a Cast from int64 to a float reads the int64 tile as a RegTraitNumTwo register; a Cast to int64 in "
                "the same run makes its value as two int32 registers, which no register pair holds"
            )
        if len(widths) <= 1:  # one element size, or predicates alone (their masks of 1-byte elements)
            return None
        wide = _wide_masks_rejection(ops) if masked and widths == {2, 4} else None
        if masked and (widths != {2, 4} or wide is not None):
            return (
                f"{masked[0]} makes or reads a mask register, which holds one element size; the run holds "
                f"element sizes {sorted(widths)}" + (f" ({wide})" if wide else "")
            )
        if widths == {1, 2}:
            return _byte_run_rejection(ops)
        if 1 in widths and 4 in widths:
            bad = _quarter_run_rejection(ops)
            if bad is not None:
                return bad
            widths = widths - {1}  # the bytes are read only by widening Casts; the rest is a 2/4-byte run
        if widths <= {2, 4} and not narrow_direct:
            return None
        if widths == {2, 4}:
            return (
                f"{narrow_direct[0]} on 2-byte data next to 4-byte values: one vector step cannot hold both "
                "full 2-byte registers and 4-byte ones"
            )
        return (
            f"element sizes {sorted(widths)} in one run: a vector step holds 2- and 4-byte values together, "
            "1- and 2-byte values together, 8-byte values only alone"
        )

    @classmethod
    def reduce_rejection(cls, kind: str, dtype, view, ops) -> str | None:
        """Why a reduce of ``kind`` over ``dtype`` tiles viewed as ``view`` = ``(rows, group, inner)``
        cannot end a run of ``ops`` (empty: the reduce alone) in one vector function, or None when it can.

        Over a kept inner width the group rows are accumulated (:func:`reduce_steps`); over the innermost
        axis (``inner`` 1) the group is accumulated lane-wise and folded by ``Reg::Reduce``
        (:func:`horizontal_steps`). Group rows or groups known to start on 32-byte blocks are loaded
        with ``LoadAlign`` (block-masked for a tail, b8 / b16 / b32), the others with the unaligned
        ``LoadUnAlign`` (:func:`starts_aligned`, :meth:`read_past_tiles`); the run's vector step must be
        one register of ``dtype`` (no unpacked 2-byte values)."""
        red = dt.get(dtype)
        rows, group, inner = (sympy.sympify(v) for v in view)
        if kind not in REDUCE_KINDS:
            return f"no register reduce of kind {kind}"
        if red.is_bool or red.itemsize not in (1, 2, 4):
            return f"a register reduce of {red.name}: the block-masked LoadAlign takes b8 / b16 / b32 only"
        if kind == "Mean" and not red.is_float:
            return "an integer Mean floor-divides a wide sum; no register form"
        horizontal = inner == 1
        if not horizontal and not stores_aligned(rows, inner, red):
            return (
                f"its rows of {inner} {red.name} values may not start on 32-byte blocks ({rows} rows a tile "
                "row), and StoreAlign stores each row's results at the row's start"
            )
        for api in reduce_apis(kind, horizontal):
            if not reg_accepts(api, red):
                return f"the 3510 register {api} does not accept {red.name}"
        if horizontal:
            takes = REG_REDUCE["SUM" if kind in ("Sum", "Mean") else "MAX"]
            if red.name not in takes:
                return f"the 3510 register Reduce ({_REDUCE_TYPE[kind]}) does not accept {red.name}"
        if not ops:
            return None
        widths: set[int] = set()
        for op_type, ins, out in ops:
            ins = tuple(dt.get(d) for d in ins)
            out = dt.get(out)
            widths.update(d.itemsize for d in (*ins, out) if not d.is_bool)
            form = op_form(op_type, ins, out)
            if _computes_in_float32(form) or op_type in RECIPROCALS or _f32_only(op_type, form, out):
                widths.add(4)
            widths |= _route_sizes(form)
            if _widened_bytes(op_type, form, out):
                widths.add(2)
        if 8 in widths and widths != {8}:
            return (
                f"the run holds element sizes {sorted(widths)}: its 64-bit values are loaded as their words "
                "(dual LoadAlign), which has no block-masked form"
            )
        if widths != {red.itemsize}:
            return (
                f"the run holds element sizes {sorted(widths)}: its 2-byte values would be loaded unpacked, "
                "which has no block-masked form"
            )
        return None

    @classmethod
    def read_past_tile(cls, node: ImplNode, impl: ImplGraph, tensor: str) -> int:
        """:meth:`read_past_tiles`, and for a 64-bit tile a run of 4-byte values reads or writes as int32
        words a vector: its dual load (:data:`LOW_WORDS`, and the load of a RegTraitNumTwo register for
        :data:`PAIR_FLOAT`) reads and its dual store (:data:`SIGN_WORDS`, :data:`FLOAT_WORDS`, the mask
        ignored) writes 512 bytes a step, a vector more than a tile sized in whole 256-byte repeats may hold."""
        # the reduce's unaligned loads read past the tiles it reads, not past those it writes
        past = 0 if tensor in node.outputs else cls.read_past_tiles(node, impl)
        steps = node.attrs["steps"]
        made, reads = mask_tensors(steps)
        masks = made | reads
        if tensor in masks:
            # a bit-mask tile: a function stepping by 4- or 8-byte elements loads a step's bits by LoadUnAlign,
            # which reads the 256 bytes after the 32-byte block holding them (load_mask)
            sigs = step_signatures(steps, lambda t: impl.tensor(t).dtype)
            wide = tensor in reads and "reduce" not in node.attrs and run_step_size(sigs) >= 4
            return max(past, UNALIGNED_READ_PAST) if wide else past
        # a run of 64-bit values holds nothing else (32 per step); any other tile makes it a 4-byte step
        dtypes = [impl.tensor(t).dtype for t in (*node.inputs, *node.outputs) if t not in masks]
        if impl.tensor(tensor).dtype.itemsize == 8 and any(d.itemsize != 8 for d in dtypes):
            past = max(past, VECTOR_BYTES)
        return past

    @classmethod
    def read_past_tiles(cls, node: ImplNode, impl: ImplGraph) -> int:
        """Bytes past the end of its input tiles that one launch may read: a reduce whose groups are not
        known to start on 32-byte blocks loads them with ``LoadUnAlign``, which reads the 256 bytes after
        the 32-byte block holding its address (:data:`UNALIGNED_READ_PAST`); 0 otherwise."""
        reduce = node.attrs.get("reduce")
        if reduce is None or starts_aligned(reduce, impl.tensor(reduce.output).dtype):
            return 0
        return UNALIGNED_READ_PAST

    # -- code ----------------------------------------------------------------
    def generate_api_call_string(self) -> str:
        ctx, node = self.ctx, self.node
        steps = node.attrs["steps"]
        if "reduce" in node.attrs:
            return self._reduce_call(steps)
        lines: list[str] = []
        in_vars = []
        for name in node.inputs:
            take, var = ctx.use(name)
            lines.append(take)
            in_vars.append(var)
        by_step = {s.output: s for s in steps}
        ready = set(node.inputs)
        out_vars = []
        for name in node.outputs:
            lines += self._make_storage(name, by_step, ready)
            out_vars.append(ctx.vars[name])
        func = self._define_function(steps)
        tensors = [*node.outputs, *node.inputs]
        args = [
            f"(__ubuf__ {self._ctype(t)}*){v}.GetPhyAddr()" for t, v in zip(tensors, [*out_vars, *in_vars])
        ]
        args.append(f"static_cast<uint32_t>({ctx.expr(node.attrs['count'])})")
        lines.append(f"asc_vf_call<{func}>({', '.join(args)});")
        lines += [ctx.finish(name) for name in node.outputs]
        return "\n".join(line for line in lines if line)

    def _reduce_call(self, steps: Sequence[ChainStep]) -> str:
        """The launch of a vector function that computes the run and reduces its last value."""
        ctx, node = self.ctx, self.node
        red = node.attrs["reduce"]
        lines: list[str] = []
        in_vars = []
        for name in node.inputs:
            take, var = ctx.use(name)
            lines.append(take)
            in_vars.append(var)
        (out,) = node.outputs
        make, out_var = ctx.produce(out)
        lines.append(make)
        func = self._define_function(steps, red)
        args = [
            f"(__ubuf__ {self._ctype(t)}*){v}.GetPhyAddr()"
            for t, v in zip([out, *node.inputs], [out_var, *in_vars])
        ]
        args += [
            f"static_cast<uint32_t>({ctx.expr(getattr(red, key))})"
            for key in ("tiles", "rows", "group", "inner", "src_pitch", "dst_pitch")
        ]
        if red.kind == "Mean":
            args.append(f"static_cast<float>(1.0 / static_cast<double>({ctx.expr(red.group)}))")
        lines.append(f"asc_vf_call<{func}>({', '.join(args)});")
        lines.append(ctx.finish(out))
        return "\n".join(line for line in lines if line)

    def _dtype(self, tensor: str) -> dt.DType:
        return self.ctx.impl.tensor(tensor).dtype

    def _ctype(self, tensor: str) -> str:
        return self._dtype(tensor).cpp

    def _make_storage(self, tensor: str, by_step: dict[str, ChainStep], ready: set[str]) -> list[str]:
        """Lines that give ``tensor`` its storage: its own tile, or (in place) the tile of the value it
        replaces, following the in-place links back to an input or an earlier tile made ready here."""
        if tensor in ready:
            return []
        like = by_step[tensor].inplace
        lines: list[str] = []
        if like is not None and like not in ready:
            if like not in by_step:
                raise CodegenError(
                    f"node '{self.node.name}': in-place tile '{like}' is neither read nor made"
                )
            lines += self._make_storage(like, by_step, ready)
        make, _var = self.ctx.produce(tensor, like=like)
        ready.add(tensor)
        return [*lines, make]

    @classmethod
    def predicted_counters(cls, node: ImplNode, impl: ImplGraph) -> dict[str, Expr]:
        """``reg_instructions`` and ``reg_cycles`` of one launch: the instructions of the function
        :meth:`generate_api_call_string` writes for ``node`` (:func:`function_counts`), each times the
        iterations of the loop it sits in (:mod:`af_v35_regbase.reg_cost`)."""
        return function_counts(node, impl)

    def _define_function(self, steps: Sequence[ChainStep], reduce: ChainReduce | None = None) -> str:
        """Define the ``__simd_vf__`` function of these steps, and of the reduce that ends them if any
        (once per kernel); returns its name."""
        node = self.node
        fn = _build(_Source(node, self.ctx.impl, self.ctx.define), steps, reduce)
        params = [f"__ubuf__ {self._ctype(t)}* dst{j}" for j, t in enumerate(node.outputs)]
        params += [f"__ubuf__ {self._ctype(t)}* src{i}" for i, t in enumerate(node.inputs)]
        if reduce is None:
            params.append("uint32_t count")
        else:
            params += [f"uint32_t {p}" for p in _REDUCE_PARAMS]
            if reduce.kind == "Mean":
                params.append("float scale")
        signature = f"({', '.join(params)})\n"
        if reduce is None:
            body = fn.text()
        elif sympy.sympify(reduce.inner) == 1:
            body = fn.horizontal_text(reduce)
        else:
            body = fn.reduce_text(reduce)
        digest = hashlib.sha256((signature + body).encode()).hexdigest()[:12]
        func = f"AfChainVf_{digest}"
        what = "; ".join([*(str(s.op) for s in steps), *([reduce.kind] if reduce else [])])
        head = f"// register vector function: {self.ctx.comment(what)}\n__simd_vf__ inline void {func}"
        self.ctx.define(func, head + signature + body)
        return func


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


def _build(source: _Source, steps: Sequence[ChainStep], reduce: ChainReduce | None = None) -> _Function:
    """The vector function of a chain node: its loads, each step's instructions, its stores (none when a
    reduce ends the run: :meth:`_Function.reduce_text` / :meth:`_Function.horizontal_text` store it)."""
    fn = _Function(source, steps, reduce)
    for i, name in enumerate(source.node.inputs):
        fn.load(name, f"src{i}")
    for step in steps:
        fn.step(step)
    if reduce is None:
        for j, name in enumerate(source.node.outputs):
            fn.store(name, f"dst{j}")
    return fn


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
    #: a load or store of a mask register: recorded as ``Mask<api>``, which the cost model prices as a mask move
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


def _counted(node: ImplNode, impl: ImplGraph) -> _Function:
    """The function a chain node generates, built as code generation builds it with the definitions
    discarded: what the cost model counts."""
    return _build(
        _Source(node, impl, lambda _name, _text: None), node.attrs["steps"], node.attrs.get("reduce")
    )


def function_counts(node: ImplNode, impl: ImplGraph) -> dict[str, Expr]:
    """``reg_instructions`` and ``reg_cycles`` of one launch of the function a chain node generates: the
    same build as code generation (definitions discarded), each recorded instruction times the iterations
    of the loop it is written in -- the vector steps of ``count`` (and the lines after that loop once), or a
    reduce's loops (:meth:`_Function.loop_counts`)."""
    fn = _counted(node, impl)
    reduce = node.attrs.get("reduce")
    if reduce is None:
        steps = reg_cost.vector_steps(node.attrs["count"], fn.lanes)
        return reg_cost.launch_counters(reg_cost.mix(fn.instrs), steps, once=reg_cost.mix(fn.after_instrs))
    if sympy.sympify(reduce.inner) == 1:
        fn.horizontal_text(reduce)
    else:
        fn.reduce_text(reduce)
    loops = fn.loop_counts(reduce)
    return reg_cost.loop_counters([(loops[loop], reg_cost.mix(instrs)) for loop, instrs in fn.reduce_parts()])


def chain_mix(node: ImplNode, impl: ImplGraph) -> tuple[reg_cost.RegMix, int]:
    """(register instructions of one vector step, elements per step) of the function a chain node
    generates: the same build as code generation, with the definitions discarded."""
    fn = _counted(node, impl)
    return reg_cost.mix(fn.instrs), fn.lanes


class _Writer:
    """The text of a reduce function, piece by piece: a line of register calls is written by :meth:`calls`,
    which records them in the function's placed calls with the loop the line runs in -- the only way a
    call of the reduce text outside the per-vector body gets written."""

    def __init__(self, fn: _Function) -> None:
        self.fn = fn
        self.parts: list[str] = []

    def code(self, text: str) -> None:
        """Write ``text`` (C++ other than register calls, or already recorded calls' lines) as it is."""
        self.parts.append(text)

    def calls(self, loop: str, indent: str, *calls: RegCall) -> None:
        """Write ``calls`` on one line after ``indent``, each recorded as run once per iteration of ``loop``
        (a key of :meth:`_Function.loop_counts`)."""
        lines = self.fn.lines(calls, "reduce function")
        self.fn.placed += [(loop, call) for call in calls]
        self.parts.append(indent + " ".join(lines) + "\n")

    def text(self) -> str:
        """Everything written, in order."""
        return "".join(self.parts)


def _load_pre(u: str, dtype: dt.DType, at: str) -> RegCall:
    """The ``LoadUnAlignPre`` of ``u`` at address ``at``: the 32-byte block holding it."""
    return RegCall("LoadUnAlignPre", dtype.name, (u, at), kind=LOAD, elements=32 // dtype.itemsize)


@attrs.frozen
class _StepOperands:
    """What the register code of one value step reads: the step, its op and memory-path form, the dtypes of
    its inputs and output, and the registers holding its inputs."""

    step: ChainStep
    op: str
    form: Form
    ins: list[dt.DType]
    out: dt.DType
    srcs: list[str]

    @property
    def value(self) -> object:
        """The step's scalar operand (a tensor-scalar op's), or None."""
        return self.step.value

    @property
    def kind(self) -> FormKind:
        """The kind of the step's memory-path form: its row of :data:`REGISTER_FORMS`."""
        return form_kind(self.form)


class _Function:
    """The body of one vector function: registers, the per-step instructions, the loop around them.

    Every ``AscendC::Reg`` call of the loop body is a :class:`RegCall` appended by :meth:`write` (most by
    :meth:`instr`, which makes the call from its arguments); the recorded instructions (:attr:`instrs`, which
    the cost model counts) are those calls' and :meth:`text` writes those calls, so the two cannot differ.
    A reduce function's calls around the per-vector body are written and recorded together by a
    :class:`_Writer`. A value step's code is the ``emit`` of its form's row of :data:`REGISTER_FORMS`
    (:meth:`_value`).
    """

    def __init__(self, call: _Source, steps: Sequence[ChainStep], reduce: ChainReduce | None = None) -> None:
        self.call = call
        #: the element offset of a step's vector in every tile: a flat step, or (reduce) the group row's
        self.offset = "o"
        self.reduce = reduce
        #: a reduce's loads: of a whole vector of data, and of a tail (block-masked)
        self.full_loads: list[RegCall] = []
        self.tail_loads: list[RegCall] = []
        #: a reduce function's calls around the per-vector body: (loop of :meth:`loop_counts`, call)
        self.placed: list[tuple[str, RegCall]] = []
        #: a reduce over groups not known to start aligned: its LoadUnAlign(Pre) calls per vector, the
        #: LoadUnAlignPre calls per group (innermost axis, one UnalignRegForLoad per input)
        self.unaligned = reduce is not None and not starts_aligned(reduce, call.dtype_of(reduce.output))
        self.unaligned_loads: list[RegCall] = []
        self.row_pres: list[RegCall] = []
        self.uregs: list[str] = []
        #: tensor -> mask register: the predicates the steps make, and those loaded from bit-mask tiles
        self.masks: dict[str, str] = {}
        made, reads = mask_tensors(steps)
        #: predicates read from bit-mask tiles made outside the function (:meth:`load_mask`)
        self.mask_reads = reads
        dtypes = {call.dtype_of(t) for s in steps for t in (*s.inputs, s.output) if t not in made | reads}
        if reduce is not None:
            dtypes.add(call.dtype_of(reduce.output))
        forms = [call_form(call, s) for s in steps]
        in_f32 = any(
            _computes_in_float32(f)
            or s.op in RECIPROCALS
            or _f32_only(s.op, f, call.dtype_of(s.output))
            or 4 in _route_sizes(f)
            for s, f in zip(steps, forms)
        )
        wide = any(d.itemsize == 4 for d in dtypes) or in_f32
        self.mixed = wide and any(d.itemsize == 2 for d in dtypes)
        # an 8-bit Mul / Muls computes in int16 lanes: a run of 1-byte values then holds them unpacked
        widened = any(_widened_bytes(s.op, f, call.dtype_of(s.output)) for s, f in zip(steps, forms))
        #: 1-byte values next to 2-byte ones: in the even byte lanes (DIST_UNPACK_B8 / DIST_PACK_B16)
        self.bytes_unpacked = not wide and ({1, 2} <= {d.itemsize for d in dtypes} or widened)
        #: 1-byte values next to 4-byte ones: in every fourth byte lane (DIST_UNPACK4_B8), read only by a
        #: 1 -> 2-byte Cast under ``mask16`` (the 2-byte lanes of the step's elements, twice as many)
        self.bytes_quartered = wide and any(d.itemsize == 1 for d in dtypes)
        self.halves = False
        #: tensor -> the 4-byte integer type whose register holds it as its low bytes (:data:`LOW_BYTE`)
        self.low_bytes: dict[str, dt.DType] = {}
        #: tensor -> (low words, high words): a 64-bit value made by :data:`SIGN_WORDS` or :data:`FLOAT_WORDS`,
        #: stored as the pair
        self.words: dict[str, tuple[str, str]] = {}
        #: 64-bit tiles a Cast to float32 reads (:data:`PAIR_FLOAT`), loaded as RegTraitNumTwo registers
        self.pair_reads = {s.inputs[0] for s, f in zip(steps, forms) if PAIR_FLOAT in _modes(f)}
        #: tensor -> its RegTraitNumTwo register
        self.pairs: dict[str, str] = {}
        size = 4 if wide else max((d.itemsize for d in dtypes), default=1) if not widened else 2
        self.mask_type = {8: "int64_t", 4: "float", 2: "half", 1: "uint8_t"}[size]
        #: lines written once before the loop (a mask store's pointer and UnalignRegForStore), and the calls
        #: once after it (the StoreUnAlignPost that writes a mask store's last bytes)
        self.before: list[str] = []
        self.after: list[RegCall] = []
        self.uload: str | None = None  # the UnalignRegForLoad of the 4- / 8-byte mask loads
        self.lanes = VECTOR_BYTES // size
        if reduce is None:
            self.offset = f"i * {self.lanes}"
        self.decls: list[str] = []
        #: the register calls of one loop iteration (of a reduce function, those of one vector's body)
        self.body: list[RegCall] = []
        self.regs: dict[str, str] = {}  # tensor -> register
        self.mask_dtype = _MASK_DTYPES[size]
        #: the UpdateMask of a step, written by :meth:`text` at the top of the loop (a reduce function's
        #: masks are placed by its text)
        self.step_mask = RegCall(
            "UpdateMask", self.mask_dtype, ("count",), self.mask_type, kind=MASK, result="mask"
        )

    @property
    def instrs(self) -> list[reg_cost.RegInstr]:
        """The register instructions of one loop iteration, the step's UpdateMask (written by :meth:`text`)
        first; of a reduce function, those of one vector's body (its masks are placed by its text)."""
        first = [] if self.reduce is not None else [self.step_mask]
        return [call.instr() for call in [*first, *self.body]]

    @property
    def after_instrs(self) -> list[reg_cost.RegInstr]:
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
            raise CodegenError(
                f"node '{self.call.node.name}': the {what} writes {len(calls)} register calls but records "
                f"{recorded} instructions (write each through _Function.write / instr)"
            )
        return [call.text() for call in calls]

    def loop_counts(self, reduce: ChainReduce) -> dict[str, Expr]:
        """How often each loop of the reduce function (:meth:`reduce_text`, :meth:`horizontal_text`) runs
        its body in one launch, over the launch's ``tiles`` x ``rows`` groups: ``vector`` (the run's
        instructions), ``full`` / ``tail`` (the loads of a whole vector of data / of a tail), ``first`` /
        ``fold`` (the accumulator started / folded), ``chunk`` (one vector's width), ``row`` (one group),
        ``launch``."""
        tiles, rows, group, inner = (
            sympy.sympify(getattr(reduce, k)) for k in ("tiles", "rows", "group", "inner")
        )
        groups = tiles * rows
        if inner == 1:  # lane-wise over the group's vectors, then Reduce
            chunks, full = CeilDiv(group, self.lanes), FloorDiv(group, self.lanes)
            return {
                "launch": sympy.Integer(1),
                "row": groups,
                "chunk": groups * chunks,
                "vector": groups * chunks,
                "full": groups * full,
                "tail": groups * (chunks - full),
                "first": groups,
                "fold": groups * (chunks - 1),
            }
        chunks, full = CeilDiv(inner, self.lanes), FloorDiv(inner, self.lanes)
        return {
            "launch": sympy.Integer(1),
            "chunk": groups * chunks,
            "vector": groups * chunks * group,
            "full": groups * full * group,
            "tail": groups * (chunks - full) * group,
            "first": groups * chunks,
            "fold": groups * chunks * (group - 1),
        }

    def reduce_parts(self) -> list[tuple[str, list[reg_cost.RegInstr]]]:
        """Every register instruction of a reduce function's text, by the loop it runs in."""
        parts = [
            ("vector", self.instrs),
            ("full", [call.instr() for call in self.full_loads]),
            ("tail", [call.instr() for call in self.tail_loads]),
            ("vector", [call.instr() for call in self.unaligned_loads]),
        ]
        loops = sorted({loop for loop, _ in self.placed})
        return parts + [
            (loop, [call.instr() for where, call in self.placed if where == loop]) for loop in loops
        ]

    def reg(self, dtype: dt.DType) -> str:
        name = f"r{len(self.decls)}"
        self.decls.append(f"AscendC::Reg::RegTensor<{dtype.cpp}> {name};")
        return name

    def load(self, tensor: str, ptr: str) -> None:
        if tensor in self.mask_reads:
            self.load_mask(tensor, ptr)
            return
        dtype = self.call.dtype_of(tensor)
        if tensor in self.pair_reads and self.lanes == VECTOR_BYTES // 4 and self.reduce is None:
            # 64-bit values a Cast to float32 reads (PAIR_FLOAT): a RegTraitNumTwo register, whose LoadAlign is
            # the dual load; its reg[0] holds the low words a Cast to int32 (LOW_WORDS) reads
            pair = f"r{len(self.decls)}"
            self.decls.append(f"AscendC::Reg::RegTensor<{dtype.cpp}, AscendC::Reg::RegTraitNumTwo> {pair};")
            self.instr(
                "LoadAlign",
                _I32,
                pair,
                f"{ptr} + {self.offset}",
                mask=None,
                kind=LOAD,
                elements=2 * self.lanes,
            )
            self.pairs[tensor] = pair
            self.regs[tensor] = f"(AscendC::Reg::RegTensor<int32_t>&){pair}.reg[0]"
            return
        if dtype.itemsize == 8 and self.lanes == VECTOR_BYTES // 4 and self.reduce is None:
            # 64-bit values in a run of 4-byte ones (read only by int64 -> int32, LOW_WORDS): the dual load
            # splits a step's 64 values into their low words (the value's register) and high words
            low, high = self.reg(_I32), self.reg(_I32)
            self.instr(
                "LoadAlign",
                _I32,
                low,
                high,
                f"(__ubuf__ int32_t*)({ptr} + {self.offset})",
                template="int32_t, AscendC::Reg::LoadDist::DIST_DINTLV_B32",
                mask=None,
                kind=LOAD,
                elements=2 * self.lanes,
            )
            self.regs[tensor] = low
            return
        r = self.reg(dtype)
        if self.unaligned:
            self._load_unaligned(r, dtype, ptr)
        elif self.reduce is not None:
            # a whole vector of data: the contiguous load; a tail: only the 32-byte blocks the mask reaches
            # (nothing past the data), at the documented half rate of the block-strided load
            at = f"{ptr} + {self.offset}"
            self.full_loads.append(RegCall("LoadAlign", dtype.name, (r, at), kind=LOAD))
            self.tail_loads.append(
                RegCall(
                    "LoadAlign",
                    dtype.name,
                    (r, at, "1u", "mask"),
                    f"{dtype.cpp}, AscendC::Reg::DataCopyMode::DATA_BLOCK_COPY",
                    kind=LOAD,
                    block=True,
                )
            )
        elif self.bytes_unpacked and dtype.itemsize == 1:
            self.instr(
                "LoadAlign",
                dtype,
                r,
                f"{ptr} + {self.offset}",
                template=f"{dtype.cpp}, AscendC::Reg::LoadDist::DIST_UNPACK_B8",
                mask=None,
                kind=LOAD,
                elements=self.lanes,
            )
        elif self.bytes_quartered and dtype.itemsize == 1:
            self.instr(
                "LoadAlign",
                dtype,
                r,
                f"{ptr} + {self.offset}",
                template=f"{dtype.cpp}, AscendC::Reg::LoadDist::DIST_UNPACK4_B8",
                mask=None,
                kind=LOAD,
                elements=self.lanes,
            )
        elif self.mixed and dtype.itemsize == 2:
            self.instr(
                "LoadAlign",
                dtype,
                r,
                f"{ptr} + {self.offset}",
                template=f"{dtype.cpp}, AscendC::Reg::LoadDist::DIST_UNPACK_B16",
                mask=None,
                kind=LOAD,
                elements=self.lanes,
            )
        else:
            self.instr("LoadAlign", dtype, r, f"{ptr} + {self.offset}", mask=None, kind=LOAD)
        self.regs[tensor] = r

    def _load_unaligned(self, r: str, dtype: dt.DType, ptr: str) -> None:
        """A reduce's load of a group row / group vector that may not start on a 32-byte block.

        ``LoadUnAlign`` splices the register from the 32-byte block its ``UnalignRegForLoad`` holds and the
        256 bytes after it, and leaves the block of the address 256 bytes on in the register. Over the
        innermost axis a group's vectors follow one another, so one ``LoadUnAlignPre`` per group and input
        (each input its own register, at most :data:`UNALIGN_REGS`) serves all of them; otherwise (kept inner
        width: the next load is another group row) each load has its own ``LoadUnAlignPre`` into one shared
        register. Unmasked: the lanes past the data hold the bytes after it (the tile's padding,
        :meth:`VfChainRegApiCall.read_past_tiles`), which the masked instructions never read."""
        assert self.reduce is not None
        per_group = sympy.sympify(self.reduce.inner) == 1 and len(self.call.node.inputs) <= UNALIGN_REGS
        at = f"{ptr} + {self.offset}"
        if per_group:
            u = f"u{len(self.uregs)}"
            self.uregs.append(u)
            row = f"{ptr} + t * src_pitch + a * group"
            self.row_pres.append(_load_pre(u, dtype, row))
        else:
            if not self.uregs:
                self.uregs.append("u0")
            u = self.uregs[0]
            self.unaligned_loads.append(_load_pre(u, dtype, at))
        self.unaligned_loads.append(RegCall("LoadUnAlign", dtype.name, (r, u, at), kind=LOAD))

    def _mask_bytes(self, what: str) -> int:
        """Bytes of the bit-mask tile one vector step covers (one bit per element), refused where no mask
        move is generated (a reduce function; a store of 8-byte elements' masks)."""
        if self.reduce is not None:
            raise CodegenError(f"node '{self.call.node.name}': {REDUCE_MASK_LOAD}")
        size = VECTOR_BYTES // self.lanes
        steps = step_signatures(self.call.node.attrs["steps"], self.call.dtype_of)
        if run_step_size(steps) != size:
            raise CodegenError(
                f"node '{self.call.node.name}': the function steps by {size}-byte elements but its ops by "
                f"{run_step_size(steps)}-byte ones; the {what} would not match the fusion's plan"
            )
        return self.lanes // 8

    def load_mask(self, tensor: str, ptr: str) -> None:
        """A predicate made outside the function, read from its bit-mask tile (one bit per element) into a
        mask register of the step's element size, as the 3510 memory Select reads its condition: 1-byte
        elements the 32 bytes of a step (``LoadAlign`` DIST_NORM), 2-byte ones 16 bytes each bit doubled
        (DIST_US); 4-byte ones 8 bytes, which start on no 16-byte boundary every other step, through a
        register (``LoadUnAlign``, ``MaskGenWithRegTensor`` of its first 8 bytes); 8-byte ones the first half
        of that mask unpacked (``UnPack``)."""
        per_step = self._mask_bytes(f"load of {tensor!r}")
        m = f"m{len(self.masks)}"
        self.masks[tensor] = m
        if per_step >= 16:
            dist = "DIST_NORM" if per_step == 32 else "DIST_US"
            at = f"{ptr} + i * {per_step}"
            template = f"uint8_t, AscendC::Reg::MaskDist::{dist}"
            self.write(
                RegCall(
                    "LoadAlign", dt.uint8.name, (m, at), template, kind=LOAD, elements=per_step, of_mask=True
                )
            )
            return
        if self.uload is None:
            self.uload = "uload"
            self.before.append("AscendC::Reg::UnalignRegForLoad uload;")
        words = per_step // 4  # uint32 words of the tile one step covers
        at = f"(__ubuf__ uint32_t*){ptr} + i" + (f" * {words}" if words > 1 else "")
        r = self.reg(dt.uint32)
        u32 = dt.uint32.name
        self.instr("LoadUnAlignPre", u32, self.uload, at, mask=None, kind=LOAD, elements=8)
        self.instr("LoadUnAlign", u32, r, self.uload, at, mask=None, kind=LOAD)
        target = m if per_step == 8 else f"m{len(self.masks)}b"
        self.instr("MaskGenWithRegTensor", u32, target, r, template="uint32_t, 0", mask=None, kind=MASK)
        if per_step == 4:
            self.masks[f"#bits{len(self.masks)}"] = target
            self.instr("UnPack", u32, m, target, mask=None, kind=MASK)

    def store_mask(self, tensor: str, ptr: str) -> None:
        """A predicate the function makes for a reader outside it, written to its bit-mask tile (one bit
        per element), as the 3510 memory Compare writes one: 1-byte elements' mask the 32 bytes of a step
        (``StoreAlign`` DIST_NORM), 2-byte ones' 16 bytes (DIST_PACK: every other bit); 4-byte ones' 8 bytes,
        which start on no 16-byte boundary every other step, through an ``UnalignRegForStore`` that
        ``StoreUnAlign`` fills and the ``StoreUnAlignPost`` after the loop empties."""
        per_step = self._mask_bytes(f"store of {tensor!r}")
        m = self.masks[tensor]
        if per_step >= 16:
            dist = "DIST_NORM" if per_step == 32 else "DIST_PACK"
            at = f"{ptr} + i * {per_step}"
            template = f"uint8_t, AscendC::Reg::MaskDist::{dist}"
            self.write(
                RegCall(
                    "StoreAlign",
                    dt.uint8.name,
                    (at, m),
                    template,
                    kind=STORE,
                    elements=per_step,
                    of_mask=True,
                )
            )
            return
        if per_step != 8:
            raise CodegenError(f"node '{self.call.node.name}': {B64_MASK_STORE}")
        n = len(self.before)
        bits, ureg = f"bits{n}", f"ustore{n}"
        self.before += [
            f"__ubuf__ uint32_t* {bits} = (__ubuf__ uint32_t*){ptr};",
            f"AscendC::Reg::UnalignRegForStore {ureg};",
        ]
        u32 = dt.uint32.name
        self.write(RegCall("StoreUnAlign", u32, (bits, m, ureg), kind=STORE, of_mask=True))
        post = "uint32_t, AscendC::Reg::PostLiteral::POST_MODE_NORMAL"
        self.after.append(RegCall("StoreUnAlignPost", u32, (bits, ureg, "0"), post, kind=STORE, of_mask=True))

    def store(self, tensor: str, ptr: str) -> None:
        if tensor in self.masks:
            self.store_mask(tensor, ptr)
            return
        dtype = self.call.dtype_of(tensor)
        r = self.regs[tensor]
        if tensor in self.words:
            # 64 values as low / high words, interleaved by the dual store (mask ignored)
            low, high = self.words[tensor]
            self.instr(
                "StoreAlign",
                _I32,
                f"(__ubuf__ int32_t*)({ptr} + {self.offset})",
                low,
                high,
                template="int32_t, AscendC::Reg::StoreDist::DIST_INTLV_B32",
                kind=STORE,
                elements=2 * self.lanes,
            )
            return
        if tensor in self.low_bytes:
            wide = self.low_bytes[tensor]
            self.instr(
                "StoreAlign",
                wide,
                f"(__ubuf__ {wide.cpp}*)({ptr} + {self.offset})",
                r,
                template=f"{wide.cpp}, AscendC::Reg::StoreDist::DIST_PACK4_B32",
                kind=STORE,
            )
            return
        if self.bytes_quartered and dtype.itemsize == 1:
            raise CodegenError(
                f"node '{self.call.node.name}': {tensor!r} holds 1-byte values next to 4-byte ones; no store of "
                "that layout is generated"
            )
        if self.bytes_unpacked and dtype.itemsize == 1:
            self.instr(
                "StoreAlign",
                dtype,
                f"{ptr} + {self.offset}",
                r,
                template=f"{dtype.cpp}, AscendC::Reg::StoreDist::DIST_PACK_B16",
                kind=STORE,
                elements=self.lanes,
            )
        elif self.mixed and dtype.itemsize == 2:
            self.instr(
                "StoreAlign",
                dtype,
                f"{ptr} + {self.offset}",
                r,
                template=f"{dtype.cpp}, AscendC::Reg::StoreDist::DIST_PACK_B32",
                kind=STORE,
                elements=self.lanes,
            )
        else:
            self.instr("StoreAlign", dtype, f"{ptr} + {self.offset}", r, kind=STORE)

    def cast(self, src: str, to: dt.DType, frm: dt.DType, mode: str) -> str:
        found = _cast_trait(to, frm, mode)
        if found is None:
            raise CodegenError(
                f"node '{self.call.node.name}': no register Cast {frm.name} -> {to.name} ({mode})"
            )
        trait, text = found
        # definitions are emitted in key order: "AfChainVf_-..." sorts before every "AfChainVf_<hex>" function
        self.call.define(f"AfChainVf_-{trait}", text)
        dst = self.reg(to)
        mask = "mask"
        if frm.itemsize == 1 and self.bytes_quartered:
            # a 1 -> 2-byte Cast of the quartered bytes: the mask of the 2-byte lanes they widen into
            if not self.halves:
                self.halves = True
                self.write(
                    RegCall("UpdateMask", dt.uint16.name, ("halves",), "uint16_t", kind=MASK, result="mask16")
                )
            mask = "mask16"
        self.instr("Cast", to, dst, src, template=f"{to.cpp}, {frm.cpp}, {trait}", mask=mask, src=frm)
        return dst

    def apply(self, op: str, srcs: list[str], dtype: dt.DType, value: object) -> str:
        api = REG_API[op]
        dst = self.reg(dtype)
        if op in BINARY or op in BITWISE_BINARY:
            self.instr(api, dtype, dst, srcs[0], srcs[1])
        elif op in TRUNCATE:
            self.instr(api, dtype, dst, srcs[0], template=f"{dtype.cpp}, AscendC::RoundMode::{TRUNCATE[op]}")
        elif op in TENSOR_SCALAR:
            scalar = -1.0 if op == "Neg" else TENSOR_SCALAR[op][1] * float(value)  # type: ignore[arg-type]
            self.instr(api, dtype, dst, srcs[0], scalar_literal(scalar, dtype))
        else:
            self.instr(api, dtype, dst, srcs[0])
        return dst

    def widened_bytes(
        self, op: str, srcs: list[str], ins: list[dt.DType], out: dt.DType, value: object
    ) -> str:
        """An 8-bit Mul / Muls (:func:`_widened_bytes`): each operand cast up exactly (uint8 through uint16
        read as int16), the op in int16, the product's low byte (uint16 -> uint8, NO_SAT), read as ``out``:
        the bits of the memory path's Cast up, op, ``Ands`` 255 and Cast down."""
        wide = []
        for src, frm in zip(srcs, ins):
            if frm == dt.int8:
                wide.append(self.cast(src, _I16, frm, "CAST_NONE"))
            else:
                wide.append(_view(self.cast(src, _U16, frm, "CAST_NONE"), _I16))
        product = self.apply(op, wide, _I16, value)
        low = self.cast(_view(product, _U16), dt.uint8, _U16, "CAST_NONE")
        return low if out == dt.uint8 else _view(low, out)

    def pair_cast(self, tensor: str) -> str:
        """float32 of the int64 tile ``tensor`` (its RegTraitNumTwo register): the register Cast of the pair
        with CAST_RINT (:data:`PAIR_FLOAT`)."""
        pair = self.pairs.get(tensor)
        if pair is None:
            raise CodegenError(
                f"node '{self.call.node.name}': the int64 value {tensor!r} is not a loaded register pair; a Cast "
                "from int64 to a float reads a tile"
            )
        trait, text = _trait("ZERO", "UNKNOWN", "CAST_RINT")
        self.call.define(f"AfChainVf_-{trait}", text)
        dst = self.reg(_F32)
        self.instr("Cast", _F32, dst, pair, template=f"float, int64_t, {trait}", src=dt.int64)
        return dst

    def sign_words(self, low: str) -> str:
        """The high words of int32 ``low`` sign-extended to int64: -1 below 0, else 0 (``Mins`` with 0, then
        ``Maxs`` with -1)."""
        high = self.reg(_I32)
        self.instr("Mins", _I32, high, low, "0")
        self.instr("Maxs", _I32, high, high, "-1")
        return high

    def float_words(self, x: str) -> tuple[str, str]:
        """The low and high int32 words of float32 ``x`` truncated to int64 as the memory Cast computes it
        (``trunc``, saturated at the int64 range, NaN -> 0), in float32 and int32 registers only.

        ``t = trunc(x)`` is an integer. Below 2^31 in magnitude (and NaN) its int32 Cast is the low words and
        their sign the high words. Otherwise ``t`` is a multiple of 2^8 and ``h = floor(t / 2^32)`` and
        ``l = t - h * 2^32`` are exact in float32 (the scaling is by a power of two, and ``l`` keeps a subset
        of ``t``'s 24 significant bits): ``h`` is the high words (the saturating Cast gives INT32_MAX / MIN
        past 2^63) and ``l``, in [0, 2^32), the low words, cast as ``l - 2^31`` and moved back by a wrapping
        ``Adds`` of INT32_MIN. Past 2^63 the low words are all ones, below -2^63 zero."""
        f32, i32 = _F32.name, _I32.name

        def fl(value: str) -> str:
            return f"static_cast<float>({value})"

        def compares(mode: str, bound: str) -> str:
            """A new mask register: ``t`` against the float ``bound`` (comparison ``mode``)."""
            m = f"m{len(self.masks)}"
            self.masks[f"#words{len(self.masks)}"] = m
            self.instr(
                "Compares", f32, m, t, fl(bound), template=f"float, AscendC::CMPMODE::{mode}", mode=mode
            )
            return m

        t = self.reg(_F32)
        self.instr("Truncate", f32, t, x, template="float, AscendC::RoundMode::CAST_TRUNC")
        low_small = self.cast(t, _I32, _F32, "CAST_TRUNC")
        high_small = self.sign_words(low_small)
        h = self.reg(_F32)
        self.instr("Muls", f32, h, t, fl("2.3283064365386962890625e-10"))
        self.instr("Truncate", f32, h, h, template="float, AscendC::RoundMode::CAST_FLOOR")
        high_big = self.cast(h, _I32, _F32, "CAST_TRUNC")
        rest = self.reg(_F32)
        self.instr("Muls", f32, rest, h, fl("4294967296.0"))
        self.instr("Sub", f32, rest, t, rest)
        self.instr("Adds", f32, rest, rest, fl("-2147483648.0"))
        low_big = self.cast(rest, _I32, _F32, "CAST_TRUNC")
        self.instr("Adds", i32, low_big, low_big, "static_cast<int32_t>(-2147483647 - 1)")
        above, below = compares("GE", "2147483648.0"), compares("LT", "-2147483648.0")
        big = f"m{len(self.masks)}"
        self.masks[f"#words{len(self.masks)}"] = big
        self.instr("Or", self.mask_dtype, big, above, below, kind=MASK)
        low, high = self.reg(_I32), self.reg(_I32)
        self.instr("Select", i32, low, low_big, low_small, mask=big)
        self.instr("Select", i32, high, high_big, high_small, mask=big)
        over, under = compares("GE", "9223372036854775808.0"), compares("LT", "-9223372036854775808.0")
        ones, zeros = self.reg(_I32), self.reg(_I32)
        self.instr("Duplicate", i32, ones, "static_cast<int32_t>(-1)")
        self.instr("Duplicate", i32, zeros, "static_cast<int32_t>(0)")
        self.instr("Select", i32, low, ones, low, mask=over)
        self.instr("Select", i32, low, zeros, low, mask=under)
        return low, high

    def b64_unary(self, api: str, src: str, dtype: dt.DType) -> str:
        """A 64-bit op computed by a register instruction other than its memory form's (:func:`b64_api`:
        int64 Neg as the register ``Neg``)."""
        dst = self.reg(dtype)
        self.instr(api, dtype, dst, src)
        return dst

    def compare(self, step: ChainStep) -> None:
        """A comparison into a mask register, under the step mask (lanes past the tail are off)."""
        op = step.op
        src_t = self.call.dtype_of(step.inputs[0])
        srcs = [self.regs[t] for t in step.inputs]
        m = f"m{len(self.masks)}"
        self.masks[step.output] = m
        exact = src_t
        if self.mixed and src_t.itemsize == 2:
            # a run of 2- and 4-byte values: every mask is one of 4-byte elements; the 2-byte values are
            # compared widened exactly (a comparison of 2-byte floats keeps its float rules: NaN, -0 == 0)
            src_t = _WIDE_COMPARE[exact.name]
            srcs = [self.cast(r, src_t, exact, "CAST_NONE") for r in srcs]
        if op in COMPARE:
            mode = COMPARE[op]
            self.instr(
                "Compare",
                src_t,
                m,
                srcs[0],
                srcs[1],
                template=f"{src_t.cpp}, AscendC::CMPMODE::{mode}",
                mode=mode,
            )
            return
        mode = COMPARE_SCALAR[op]
        value = float(step.value)  # type: ignore[arg-type]
        scalar = (
            # the scalar the memory path compares the 2-byte values with: a value of that type (or NaN)
            f"static_cast<{src_t.cpp}>({compare_scalar(mode, value, exact)})"
            if src_t.is_float
            else scalar_literal(value, exact)
        )
        self.instr(
            "Compares",
            src_t,
            m,
            srcs[0],
            scalar,
            template=f"{src_t.cpp}, AscendC::CMPMODE::{mode}",
            mode=mode,
        )

    def select(self, step: ChainStep) -> None:
        """Where as a register Select by the mask its condition's comparison made in this function."""
        cond, *data = step.inputs
        if cond not in self.masks:
            raise CodegenError(
                f"node '{self.call.node.name}': Where '{step.name}' reads the condition {cond!r}, which "
                "no comparison of this function makes"
            )
        out = self.call.dtype_of(step.output)
        if self.mixed and out.itemsize == 2:
            # a mask of 4-byte elements selects the 2-byte values' bits as int16 widened to int32, narrowed back
            # (NO_SAT: the low 16 bits) into the even 2-byte lanes the run holds them in
            wide = [self.cast(_view(self.regs[t], _I16), _I32, _I16, "CAST_NONE") for t in data]
            r = self.reg(_I32)
            self.instr("Select", _I32, r, wide[0], wide[1], mask=self.masks[cond])
            narrow = self.cast(r, _I16, _I32, "CAST_NONE")
            self.regs[step.output] = narrow if out == _I16 else _view(narrow, out)
            return
        r = self.reg(out)
        self.instr("Select", out, r, self.regs[data[0]], self.regs[data[1]], mask=self.masks[cond])
        self.regs[step.output] = r

    def exp2(self, x: str) -> str:
        """2^x of a float32 register, the memory path's steps (``VecElementwiseRegApiCall._composite``) one
        register instruction each: k = clamp(floor(x), -126, 127) by a saturating Cast (CAST_FLOOR) and
        Maxs / Mins in int32, f = Exp((x - float(k)) * ln 2), 2^k built from its exponent bits
        ((k + 127) * 2^23 in int32, read as float: the register reinterpretation ``(RegTensor<float>&)`` the
        3510 implementation itself uses), and f * 2^k. Every step is the memory path's instruction on the
        same values (float(k) is exact, so the Cast back takes CAST_RINT where the memory Cast takes
        CAST_NONE), so both give the same bits."""
        i32, f32 = _I32.name, _F32.name
        k = self.cast(x, _I32, _F32, "CAST_FLOOR")
        self.instr("Maxs", i32, k, k, "static_cast<int32_t>(-126)")
        self.instr("Mins", i32, k, k, "static_cast<int32_t>(127)")
        f = self.cast(k, _F32, _I32, "CAST_RINT")
        self.instr("Sub", f32, f, x, f)
        ln2 = f"static_cast<float>({literal(math.log(2.0))})"
        self.instr("Muls", f32, f, f, ln2)
        self.instr("Exp", f32, f, f)
        self.instr("Adds", i32, k, k, "static_cast<int32_t>(127)")
        self.instr("Muls", i32, k, k, "static_cast<int32_t>(8388608)")
        r = self.reg(_F32)
        self.instr("Mul", f32, r, f, f"(AscendC::Reg::RegTensor<float>&){k}")
        return r

    def logical(self, step: ChainStep) -> None:
        """A logical op of predicates as the register And / Or / Xor / Not on mask registers, under the step
        mask: a lane past the tail is off in the result (zeroing), as in the comparisons it reads."""
        op = step.op
        missing = [t for t in step.inputs if t not in self.masks]
        if missing:
            raise CodegenError(
                f"node '{self.call.node.name}': {op} '{step.name}' reads {missing[0]!r}, which no "
                "comparison or logical op of this function makes"
            )
        m = f"m{len(self.masks)}"
        srcs = ", ".join(self.masks[t] for t in step.inputs)
        self.masks[step.output] = m
        api = LOGICAL[op]
        self.instr(api, self.mask_dtype, m, srcs, kind=MASK)

    def step(self, step: ChainStep) -> None:
        """One step of the run in registers: a comparison or a logical op into a mask register, a Where as a
        Select by one, any other op into the register of its output."""
        op = step.op
        if _compares(op):
            self.compare(step)
        elif op == "Where":
            self.select(step)
        elif op in LOGICAL:
            self.logical(step)
        else:
            self.regs[step.output] = self._value(self._operands(step))

    def _operands(self, step: ChainStep) -> _StepOperands:
        """The dtypes, input registers and memory-path form of a value step, read once for its register code."""
        call = self.call
        ins = [call.dtype_of(t) for t in step.inputs]
        out = call.dtype_of(step.output)
        srcs = [self.regs[t] for t in step.inputs]
        return _StepOperands(step, step.op, call_form(call, step), ins, out, srcs)

    def _value(self, s: _StepOperands) -> str:
        """The register of a value step's result, the same bits as its memory form computes (the module
        docstring lists the forms): the ``emit`` of its form's row of :data:`REGISTER_FORMS` -- the table
        :meth:`VfChainRegApiCall.rejection` asks too, so a form without a row has neither legality nor code.
        Reciprocal / Rsqrt (no register instruction of their own) come before the row's code; the ``direct``
        row's own code then takes a float16 / bfloat16 op the registers compute in float32 before a 64-bit op
        whose register instruction is not its memory form's (:meth:`_direct`)."""
        row = REGISTER_FORMS.get(s.kind)
        if row is None:
            raise self._no_register_form(s)
        if s.op in RECIPROCALS:
            return self._reciprocal(s)
        return row.emit(self, s)

    def _no_register_form(self, s: _StepOperands) -> CodegenError:
        """The error for a step whose memory-path form has no register code here."""
        return CodegenError(
            f"node '{self.call.node.name}': step {s.op} ({s.kind.value}) has no register form"
        )

    def _direct(self, s: _StepOperands) -> str:
        """``direct``: the instruction in the op's dtype -- in float32 for a float16 / bfloat16 op of
        :data:`ROUNDS_ONCE` whose instruction takes no such dtype or in a run with 4-byte values, and the
        64-bit op's own register instruction (:func:`b64_api`) where it differs from the memory form's."""
        op, out = s.op, s.out
        if _promotable(op, out) and (self.mixed or not reg_accepts(REG_API[op], out)):
            return self._in_float32(s)
        if out.itemsize == 8 and b64_api(op, out) != REG_API.get(op):
            return self.b64_unary(b64_api(op, out), s.srcs[0], out)
        return self._in_own_type(s)

    def _to_float32(self, src: str, dtype: dt.DType) -> str:
        """``src`` of ``dtype`` as a float32 register (itself when it is one; the Cast up is exact)."""
        return src if dtype == _F32 else self.cast(src, _F32, dtype, "CAST_NONE")

    def _from_float32(self, src: str, dtype: dt.DType) -> str:
        """The float32 register ``src`` as ``dtype`` (itself for float32), rounded once (CAST_RINT)."""
        return src if dtype == _F32 else self.cast(src, dtype, _F32, "CAST_RINT")

    def _reciprocal(self, s: _StepOperands) -> str:
        """Reciprocal (and Rsqrt, after a Sqrt) as a Div of a register of ones, in float32."""
        x = self._to_float32(s.srcs[0], s.out)
        t = self.reg(_F32)
        one = self.reg(_F32)
        if s.op == "Rsqrt":
            self.instr("Sqrt", _F32, t, x)
            x = t
        self.instr("Duplicate", _F32, one, "static_cast<float>(1)")
        self.instr("Div", _F32, t, one, x)
        return self._from_float32(t, s.out)

    def _in_float32(self, s: _StepOperands) -> str:
        """The op in float32: the inputs cast up (exact), the result cast back with CAST_RINT (``promote``,
        and the ``direct`` ops of ROUNDS_ONCE)."""
        wide = [self.cast(src, _F32, d, "CAST_NONE") for src, d in zip(s.srcs, s.ins)]
        return self.cast(self.apply(s.op, wide, _F32, s.value), s.out, _F32, "CAST_RINT")

    def _in_own_type(self, s: _StepOperands) -> str:
        """The register instruction in the op's dtype (``direct``, ``bits``, :data:`UNSIGNED_FORMS`)."""
        return self.apply(s.op, s.srcs, s.out, s.value)

    def _widen(self, s: _StepOperands) -> str:
        """An 8-bit op the memory path computes in int16: int8 Neg as the register Neg in its own type
        (:func:`_neg_in_own_type`), 8-bit Mul / Muls in int16 lanes (:func:`_widened_bytes`)."""
        if _neg_in_own_type(s.op, s.out):
            r = self.reg(s.out)
            self.instr("Neg", s.out, r, s.srcs[0])
            return r
        if _widened_bytes(s.op, s.form, s.out):
            return self.widened_bytes(s.op, s.srcs, s.ins, s.out, s.value)
        raise self._no_register_form(s)

    def _relu_maxs(self, s: _StepOperands) -> str:
        """Relu as the memory path computes it: Maxs with 0."""
        r = self.reg(s.out)
        self.instr("Maxs", s.out, r, s.srcs[0], f"static_cast<{s.out.cpp}>(0)")
        return r

    def _cast_route(self, s: _StepOperands) -> str:
        """A Cast as the register steps of its route (:func:`register_route`); the route's special modes
        leave the value in a register the function already holds, or in a pair of word registers."""
        route = register_route(s.form)
        if isinstance(route, str):
            raise CodegenError(f"node '{self.call.node.name}': {route}")
        output = s.step.output
        r = s.srcs[0]
        for to, frm, mode in route:
            if mode == LOW_BYTE:  # the 4-byte register itself; its store keeps the low bytes
                self.low_bytes[output] = frm
                continue
            if mode == LOW_WORDS:  # the source's register holds its low words already (dual load)
                continue
            if mode == PAIR_FLOAT:  # the tile's register pair, converted by the pair's Cast
                r = self.pair_cast(s.step.inputs[0])
                continue
            if mode == FLOAT_WORDS:  # both words of the truncated float, stored as a pair
                low, high = self.float_words(r)
                self.words[output] = (low, high)
                r = low
                continue
            if mode == SIGN_WORDS:  # r is the low words; the high words are its sign; stored as a pair
                self.words[output] = (r, self.sign_words(r))
                continue
            if mode == "VIEW" and output in self.words:
                continue  # int64 -> uint64 of the words: the same bits
            r = _view(r, to) if mode == "VIEW" else self.cast(r, to, frm, mode)
        return r

    def _composite(self, s: _StepOperands) -> str:
        """Sigmoid and Exp2, the memory path's composite forms, in float32."""
        if s.op == "Sigmoid":
            return self._from_float32(self._sigmoid(self._to_float32(s.srcs[0], s.out)), s.out)
        if s.op == "Exp2":
            return self._from_float32(self.exp2(self._to_float32(s.srcs[0], s.out)), s.out)
        raise self._no_register_form(s)

    def _sigmoid(self, x: str) -> str:
        """1 / (1 + exp(-x)) of a float32 register, the reciprocal as a Div of a register of ones."""
        t = self.reg(_F32)
        one = self.reg(_F32)
        f32 = _F32.name
        self.instr("Muls", f32, t, x, "static_cast<float>(-1)")
        self.instr("Exp", f32, t, t)
        self.instr("Adds", f32, t, t, "static_cast<float>(1)")
        self.instr("Duplicate", f32, one, "static_cast<float>(1)")
        self.instr("Div", f32, t, one, t)
        return t

    def _declarations(self, *masks: str) -> str:
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
            + self._declarations(*(["mask16"] if self.halves else []))
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

    def _reduce_body(self, whole: str, indent: str) -> str:
        """The loads (contiguous when ``whole``, the C++ condition that the step's vector is all data, else
        block-masked) and the steps of one vector of a reduce."""
        what = "reduce function"
        loads = (
            [f"if ({whole}) {{"]
            + [f"    {line}" for line in self.lines(self.full_loads, what)]
            + ["} else {"]
            + [f"    {line}" for line in self.lines(self.tail_loads, what)]
            + ["}"]
            if self.full_loads
            else []
        )
        lines = [*loads, *self.lines(self.unaligned_loads, what), *self.lines(self.body, what)]
        return "\n".join(f"{indent}{line}" for line in lines)

    def _ureg_declarations(self) -> str:
        """The ``UnalignRegForLoad`` registers of an unaligned reduce's loads."""
        return "".join(f"    AscendC::Reg::UnalignRegForLoad {u};\n" for u in self.uregs)

    def reduce_text(self, reduce: ChainReduce) -> str:
        """The function body of a run ending in a reduce over a kept inner width (:func:`reduce_steps`)."""
        kind = reduce.kind
        dtype = self.call.dtype_of(reduce.output)
        value = self.regs[reduce.input]
        acc = self.reg(dtype)
        start, fold_in = _reduce_calls(kind, dtype, acc, value)
        lanes = self.lanes
        inner = self._reduce_body(f"(c + 1u) * {self.lanes}u <= inner", " " * 16)
        out = _Writer(self)
        out.code(
            "{\n"
            + self._declarations()
            + self._ureg_declarations()
            + f"    const uint32_t chunks = (inner + {lanes - 1}u) / {lanes}u;\n"
            + "    for (uint32_t t = 0; t < tiles; ++t) {\n"
            + "    for (uint32_t a = 0; a < rows; ++a) {\n"
            + "        uint32_t left = inner;\n"
            + "        for (uint32_t c = 0; c < chunks; ++c) {\n"
        )
        out.calls("chunk", " " * 12, self._update_mask("mask", "left"))
        out.code(
            "            for (uint32_t g = 0; g < group; ++g) {\n"
            + f"                const uint32_t o = t * src_pitch + (a * group + g) * inner + c * {lanes}u;\n"
            + inner
            + "\n                if (g == 0) {\n"
        )
        out.calls("first", " " * 20, start)
        out.code("                } else {\n")
        out.calls("fold", " " * 20, fold_in)
        out.code("                }\n" + "            }\n")
        if kind == "Mean":
            out.calls("chunk", " " * 12, RegCall("Muls", dtype.name, (acc, acc, "scale", "mask")))
        at = f"dst0 + t * dst_pitch + a * inner + c * {lanes}u"
        out.calls("chunk", " " * 12, RegCall("StoreAlign", dtype.name, (at, acc, "mask"), kind=STORE))
        out.code("        }\n" + "    }\n" + "    }\n" + "}\n")
        return out.text()

    def horizontal_text(self, reduce: ChainReduce) -> str:
        """The function body of a run ending in a reduce over the innermost axis (:func:`horizontal_steps`)."""
        kind = reduce.kind
        dtype = self.call.dtype_of(reduce.output)
        value = self.regs[reduce.input]
        acc, tmp, res = self.reg(dtype), self.reg(dtype), self.reg(dtype)
        start, fold_in = _horizontal_calls(kind, dtype, acc, tmp, value)
        lanes = self.lanes
        inner = self._reduce_body(f"(c + 1u) * {self.lanes}u <= group", " " * 12)
        out = _Writer(self)
        out.code("{\n" + self._declarations("full") + self._ureg_declarations())
        one = RegCall(
            "CreateMask",
            self.mask_dtype,
            (),
            f"{self.mask_type}, AscendC::Reg::MaskPattern::VL1",
            kind=MASK,
            result="AscendC::Reg::MaskReg one",
        )
        out.calls("launch", " " * 4, one)
        out.code(
            f"    const uint32_t chunks = (group + {lanes - 1}u) / {lanes}u;\n"
            + "    for (uint32_t t = 0; t < tiles; ++t) {\n"
            + "    for (uint32_t a = 0; a < rows; ++a) {\n"
            + "        uint32_t head = group;\n"
        )
        out.calls("row", " " * 8, self._update_mask("full", "head"))
        for pre in self.row_pres:
            out.calls("row", " " * 8, pre)
        out.code("        uint32_t left = group;\n" + "        for (uint32_t c = 0; c < chunks; ++c) {\n")
        out.calls("chunk", " " * 12, self._update_mask("mask", "left"))
        out.code(
            f"            const uint32_t o = t * src_pitch + a * group + c * {lanes}u;\n"
            + inner
            + "\n            if (c == 0) {\n"
        )
        out.calls("first", " " * 16, start)
        out.code("            } else {\n")
        out.calls("fold", " " * 16, *fold_in)
        out.code("            }\n" + "        }\n")
        reducer = f"AscendC::Reg::ReduceType::{_REDUCE_TYPE[kind]}"
        out.calls("row", " " * 8, RegCall("Reduce", dtype.name, (res, acc, "full"), reducer))
        if kind == "Mean":
            out.calls("row", " " * 8, RegCall("Muls", dtype.name, (res, res, "scale", "one")))
        first = f"{dtype.cpp}, AscendC::Reg::StoreDist::DIST_FIRST_ELEMENT_B{8 * dtype.itemsize}"
        store = RegCall(
            "StoreAlign", dtype.name, ("dst0 + t * dst_pitch + a", res, "one"), first, kind=STORE, elements=1
        )
        out.calls("row", " " * 8, store)
        out.code("    }\n" + "    }\n" + "}\n")
        return out.text()

    def _update_mask(self, mask: str, count: str) -> RegCall:
        """``mask = UpdateMask<T>(count)``: the mask of the next ``count`` elements of the function's step
        type."""
        return RegCall("UpdateMask", self.mask_dtype, (count,), self.mask_type, kind=MASK, result=mask)


@attrs.frozen
class RegisterForm:
    """One register form of a memory-path form kind: whether an op of that kind joins a run and the code
    that computes it there. :meth:`VfChainRegApiCall.rejection` (and the run planning) ask ``accepts`` /
    ``wide``; :meth:`_Function._value` writes ``emit``: both read the row, so the two cannot drift apart."""

    #: (op, form, input dtypes, output dtype) -> why the form has no register code for them (no 64-bit
    #: value among them), or None
    accepts: _Accepts
    #: the register code of one value step of this form, returning the register of its result
    emit: Callable[[_Function, _StepOperands], str]
    #: the same question when a 64-bit value is among the dtypes; None: no 64-bit form
    wide: _Accepts | None = None
    #: computed in float32 registers whatever the op's dtype (the run then holds 4-byte values)
    float32: bool = False
    #: the instruction in the op's own dtype: a 2-byte op fills whole 2-byte registers (unless in float32)
    own_lanes: bool = False


#: Every memory-path form kind that has a register form, and how (the module docstring describes each). A
#: kind missing here (``reject``) has none: :meth:`VfChainRegApiCall.rejection` says why, and the function
#: refuses a step of it (:meth:`_Function._no_register_form`).
REGISTER_FORMS: dict[FormKind, RegisterForm] = {
    FormKind.DIRECT: RegisterForm(
        _direct_accepts, _Function._direct, wide=_b64_pair_rejection, own_lanes=True
    ),
    FormKind.PROMOTE: RegisterForm(_promote_accepts, _Function._in_float32, float32=True),
    FormKind.BITS: RegisterForm(
        _bits_accepts, _Function._in_own_type, wide=_b64_pair_rejection, own_lanes=True
    ),
    **{
        kind: RegisterForm(_unsigned_accepts, _Function._in_own_type, own_lanes=True)
        for kind in UNSIGNED_FORMS
    },
    FormKind.WIDEN: RegisterForm(_widen_accepts, _Function._widen),
    FormKind.RELU_MAXS: RegisterForm(_relu_maxs_accepts, _Function._relu_maxs, own_lanes=True),
    FormKind.CAST: RegisterForm(_cast_accepts, _Function._cast_route, wide=_b64_cast_rejection),
    FormKind.COMPOSITE: RegisterForm(_composite_accepts, _Function._composite, float32=True),
}


#: Memory forms a 64-bit op of a run may take over a register pair: the instruction in its dtype (``direct``)
#: or a bitwise op (``bits``: the memory path's calls on the int16 view of the same bytes; the register And /
#: Or / Xor / Not in the 64-bit type give the same bits) -- the rows whose 64-bit legality is
#: :func:`_b64_pair_rejection`.
B64_FORMS = tuple(kind for kind, row in REGISTER_FORMS.items() if row.wide is _b64_pair_rejection)


def _computes_in_float32(form: Form) -> bool:
    """Whether a form's row computes it in float32 registers (``promote``, ``composite``)."""
    row = REGISTER_FORMS.get(form_kind(form))
    return row is not None and row.float32


def _in_own_lanes(form: Form) -> bool:
    """Whether a form's row computes it in its own dtype's lanes (``direct``, ``relu_maxs``, ``bits``,
    :data:`UNSIGNED_FORMS`)."""
    row = REGISTER_FORMS.get(form_kind(form))
    return row is not None and row.own_lanes


def horizontal_steps(kind: str, dtype: dt.DType, acc: str, tmp: str, value: str) -> tuple[str, str, str]:
    """(first, fold, reduce) of a reduce over the innermost axis, one group of ``group`` elements.

    The group is walked in vectors: vector 0 starts the accumulator (as in :func:`reduce_steps`), each
    later vector ``c`` is folded in lane by lane under its mask and a ``Select`` keeps the lanes past a
    tail, so lane ``j`` holds ``x[j] op x[j + L] op x[j + 2L] ...`` (``L`` lanes, left to right); then
    ``Reg::Reduce`` folds the lanes into lane 0. For Max / Min and integer sums the order does not change
    the result. A float sum is therefore summed in this order -- per lane along the group, then the
    binary tree the official Reduce page documents (lanes (0, 1), (2, 3), ... first) -- which is not the
    memory path's (a ``ReduceSum`` of the group, or a scalar fold when the group does not fill 32-byte
    blocks); the twin emulates exactly this order and the result stays within the contract's tolerance of
    the reference."""
    first, fold = _horizontal_calls(kind, dtype, acc, tmp, value)
    reducer = f"AscendC::Reg::Reduce<AscendC::Reg::ReduceType::{_REDUCE_TYPE[kind]}>"
    return first.text(), " ".join(c.text() for c in fold), reducer


def _horizontal_calls(
    kind: str, dtype: dt.DType, acc: str, tmp: str, value: str
) -> tuple[RegCall, tuple[RegCall, RegCall]]:
    """The calls of :func:`horizontal_steps`' first (:func:`reduce_steps`' first) and fold (the op into
    ``tmp``, then a Select of it into ``acc`` under the vector's mask)."""
    first, _fold = _reduce_calls(kind, dtype, acc, value)
    op = "Add" if kind in ("Sum", "Mean") else kind
    return first, (
        RegCall(op, dtype.name, (tmp, acc, value, "mask")),
        RegCall("Select", dtype.name, (acc, tmp, acc, "mask")),
    )


def reduce_steps(kind: str, dtype: dt.DType, acc: str, value: str) -> tuple[str, str]:
    """(first, fold): the instruction that starts the accumulator ``acc`` from the group's row 0 and the one
    that folds each later row into it.

    ``out[r, i] = x[r, 0, i] op x[r, 1, i] op ... op x[r, group - 1, i]``, left to right, each op the
    register Add / Max / Min of the tile's dtype -- the order and the per-element rules of the memory path's
    accumulate (``AfReduceRows`` with a kept inner width: DataCopy of row 0, then one Add / Max / Min per
    row), so both give the same bits. Row 0 is copied as ``x + (-0.0)`` for float sums (exact for every
    value, -0 and NaN included), ``x + 0`` for integer sums and ``max(x, x)`` / ``min(x, x)`` otherwise; a
    Mean then scales the sum by ``1 / group`` in float32, as the memory path's Muls does."""
    first, fold = _reduce_calls(kind, dtype, acc, value)
    return first.text(), fold.text()


def _reduce_calls(kind: str, dtype: dt.DType, acc: str, value: str) -> tuple[RegCall, RegCall]:
    """The calls of :func:`reduce_steps`' first and fold."""
    if kind in ("Sum", "Mean"):
        zero = "static_cast<float>(-0.0)" if dtype.is_float else f"static_cast<{dtype.cpp}>(0)"
        return (
            RegCall("Adds", dtype.name, (acc, value, zero, "mask")),
            RegCall("Add", dtype.name, (acc, acc, value, "mask")),
        )
    return RegCall(kind, dtype.name, (acc, value, value, "mask")), RegCall(
        kind, dtype.name, (acc, acc, value, "mask")
    )


def call_form(call: VfChainRegApiCall | _Source, step: ChainStep) -> Form:
    """The memory-path form of one step, which its register code mirrors."""
    dtype_of = call.dtype_of if isinstance(call, _Source) else call._dtype
    ins = tuple(dtype_of(t) for t in step.inputs)
    return op_form(step.op, ins, dtype_of(step.output))
