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
  register instruction each (:func:`values.exp2`), the same bits.

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
Select reads one (:func:`store_mask`, :func:`load_mask`:
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
``Reg::LoadUnAlignPre`` (:func:`_load_unaligned`) in the same order
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
import re
from collections.abc import Callable, Sequence

import attrs
import sympy

from af_core.template_api import (
    ApiCall,
    ChainReduce,
    ChainStep,
    CodegenError,
    Expr,
    ImplGraph,
    ImplNode,
    Role,
)
from af_core.template_api import dtypes as dt
from af_v35_regbase import reg_cost
from af_v35_regbase.api_calls.legalize import (
    COMPARE,
    COMPARE_SCALAR,
    LOGICAL,
    Form,
    op_form,
)
from af_v35_regbase.api_calls.vf_chain import values
from af_v35_regbase.api_calls.vf_chain.function import RegCall, StepLayout, _Function, _Source
from af_v35_regbase.api_calls.vf_chain.ops import (
    _F32,
    _I16,
    _I32,
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
from af_v35_regbase.api_calls.vf_chain.predicates import compare, logical, select
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
from af_v35_regbase.api_calls.vf_chain.reduce_text import horizontal_steps as horizontal_steps
from af_v35_regbase.api_calls.vf_chain.reduce_text import (
    horizontal_text,
    loop_counts,
    reduce_parts,
    reduce_text,
)
from af_v35_regbase.api_calls.vf_chain.reduce_text import reduce_steps as reduce_steps
from af_v35_regbase.api_calls.vf_chain.routes import (
    _MADE_WORDS,
    _WIDE_COMPARE,
    PAIR_FLOAT,
    _cast_trait,
    _low_byte,
    _modes,
    _route_modes,
    _route_sizes,
    _same_size_2b_cast,
    _widens_from_bytes,
    _word_route,
    register_route,
)
from af_v35_regbase.api_calls.vf_chain.routes import FLOAT_WORDS as FLOAT_WORDS
from af_v35_regbase.api_calls.vf_chain.routes import LOW_BYTE as LOW_BYTE
from af_v35_regbase.api_calls.vf_chain.routes import LOW_WORDS as LOW_WORDS
from af_v35_regbase.api_calls.vf_chain.routes import SIGN_WORDS as SIGN_WORDS
from af_v35_regbase.api_calls.vf_chain.values import _StepOperands, no_register_form, reciprocal
from af_v35_regbase.api_dtypes import reg_accepts
from af_v35_regbase.reg_cost import LOAD, MASK, STORE

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
        "(:func:`store_mask`, :func:`load_mask`); a run of 64-bit values stores no such "
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
    at 4 bytes already. So every mask of the run is one of 4-byte elements (:func:`predicates.compare`,
    :func:`predicates.select`)."""
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
    register ``And`` / ``Or`` / ``Xor`` / ``Not`` on mask registers (:func:`predicates.logical`)."""
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
        run or memory call: :func:`store_mask` / :func:`load_mask` by the run's mask
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
            body = horizontal_text(fn, reduce)
        else:
            body = reduce_text(fn, reduce)
        digest = hashlib.sha256((signature + body).encode()).hexdigest()[:12]
        func = f"AfChainVf_{digest}"
        what = "; ".join([*(str(s.op) for s in steps), *([reduce.kind] if reduce else [])])
        head = f"// register vector function: {self.ctx.comment(what)}\n__simd_vf__ inline void {func}"
        self.ctx.define(func, head + signature + body)
        return func


@attrs.frozen
class RegisterForm:
    """One register form of a memory-path form kind: whether an op of that kind joins a run and the code
    that computes it there. :meth:`VfChainRegApiCall.rejection` (and the run planning) ask ``accepts`` /
    ``wide``; :func:`_value` writes ``emit``: both read the row, so the two cannot drift apart."""

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
#: refuses a step of it (:func:`values.no_register_form`).
REGISTER_FORMS: dict[FormKind, RegisterForm] = {
    FormKind.DIRECT: RegisterForm(_direct_accepts, values.direct, wide=_b64_pair_rejection, own_lanes=True),
    FormKind.PROMOTE: RegisterForm(_promote_accepts, values.in_float32, float32=True),
    FormKind.BITS: RegisterForm(_bits_accepts, values.in_own_type, wide=_b64_pair_rejection, own_lanes=True),
    **{kind: RegisterForm(_unsigned_accepts, values.in_own_type, own_lanes=True) for kind in UNSIGNED_FORMS},
    FormKind.WIDEN: RegisterForm(_widen_accepts, values.widen),
    FormKind.RELU_MAXS: RegisterForm(_relu_maxs_accepts, values.relu_maxs, own_lanes=True),
    FormKind.CAST: RegisterForm(_cast_accepts, values.cast_route, wide=_b64_cast_rejection),
    FormKind.COMPOSITE: RegisterForm(_composite_accepts, values.composite, float32=True),
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


def call_form(call: VfChainRegApiCall | _Source, step: ChainStep) -> Form:
    """The memory-path form of one step, which its register code mirrors."""
    dtype_of = call.dtype_of if isinstance(call, _Source) else call._dtype
    ins = tuple(dtype_of(t) for t in step.inputs)
    return op_form(step.op, ins, dtype_of(step.output))


# -- the loads and stores of a function ---------------------------------------
def load(fn: _Function, tensor: str, ptr: str) -> None:
    """The load of input ``tensor`` (at pointer ``ptr``) into its register, in the form the function's step
    layout holds it: a predicate from its bit-mask tile (:func:`load_mask`), 64-bit values as a register pair
    or as int32 words, a reduce's loads by vector and tail, 1- and 2-byte values unpacked next to wider ones."""
    if tensor in fn.mask_reads:
        load_mask(fn, tensor, ptr)
        return
    dtype = fn.source.dtype_of(tensor)
    if tensor in fn.pair_reads and fn.lanes == VECTOR_BYTES // 4 and fn.reduce is None:
        # 64-bit values a Cast to float32 reads (PAIR_FLOAT): a RegTraitNumTwo register, whose LoadAlign is
        # the dual load; its reg[0] holds the low words a Cast to int32 (LOW_WORDS) reads
        pair = f"r{len(fn.decls)}"
        fn.decls.append(f"AscendC::Reg::RegTensor<{dtype.cpp}, AscendC::Reg::RegTraitNumTwo> {pair};")
        fn.instr(
            "LoadAlign",
            _I32,
            pair,
            f"{ptr} + {fn.offset}",
            mask=None,
            kind=LOAD,
            elements=2 * fn.lanes,
        )
        fn.pairs[tensor] = pair
        fn.regs[tensor] = f"(AscendC::Reg::RegTensor<int32_t>&){pair}.reg[0]"
        return
    if dtype.itemsize == 8 and fn.lanes == VECTOR_BYTES // 4 and fn.reduce is None:
        # 64-bit values in a run of 4-byte ones (read only by int64 -> int32, LOW_WORDS): the dual load
        # splits a step's 64 values into their low words (the value's register) and high words
        low, high = fn.reg(_I32), fn.reg(_I32)
        fn.instr(
            "LoadAlign",
            _I32,
            low,
            high,
            f"(__ubuf__ int32_t*)({ptr} + {fn.offset})",
            template="int32_t, AscendC::Reg::LoadDist::DIST_DINTLV_B32",
            mask=None,
            kind=LOAD,
            elements=2 * fn.lanes,
        )
        fn.regs[tensor] = low
        return
    r = fn.reg(dtype)
    if fn.unaligned:
        _load_unaligned(fn, r, dtype, ptr)
    elif fn.reduce is not None:
        # a whole vector of data: the contiguous load; a tail: only the 32-byte blocks the mask reaches
        # (nothing past the data), at the documented half rate of the block-strided load
        at = f"{ptr} + {fn.offset}"
        fn.full_loads.append(RegCall("LoadAlign", dtype.name, (r, at), kind=LOAD))
        fn.tail_loads.append(
            RegCall(
                "LoadAlign",
                dtype.name,
                (r, at, "1u", "mask"),
                f"{dtype.cpp}, AscendC::Reg::DataCopyMode::DATA_BLOCK_COPY",
                kind=LOAD,
                block=True,
            )
        )
    elif fn.bytes_unpacked and dtype.itemsize == 1:
        _load_dist(fn, r, dtype, ptr, "DIST_UNPACK_B8")
    elif fn.bytes_quartered and dtype.itemsize == 1:
        _load_dist(fn, r, dtype, ptr, "DIST_UNPACK4_B8")
    elif fn.mixed and dtype.itemsize == 2:
        _load_dist(fn, r, dtype, ptr, "DIST_UNPACK_B16")
    else:
        fn.instr("LoadAlign", dtype, r, f"{ptr} + {fn.offset}", mask=None, kind=LOAD)
    fn.regs[tensor] = r


def _load_dist(fn: _Function, r: str, dtype: dt.DType, ptr: str, dist: str) -> None:
    """A load of narrow values unpacked by ``dist`` into the lanes of the step's wider ones (one step's
    elements)."""
    fn.instr(
        "LoadAlign",
        dtype,
        r,
        f"{ptr} + {fn.offset}",
        template=f"{dtype.cpp}, AscendC::Reg::LoadDist::{dist}",
        mask=None,
        kind=LOAD,
        elements=fn.lanes,
    )


def _load_unaligned(fn: _Function, r: str, dtype: dt.DType, ptr: str) -> None:
    """A reduce's load of a group row / group vector that may not start on a 32-byte block.

    ``LoadUnAlign`` splices the register from the 32-byte block its ``UnalignRegForLoad`` holds and the
    256 bytes after it, and leaves the block of the address 256 bytes on in the register. Over the
    innermost axis a group's vectors follow one another, so one ``LoadUnAlignPre`` per group and input
    (each input its own register, at most :data:`reduce_facts.UNALIGN_REGS`) serves all of them; otherwise
    (kept inner width: the next load is another group row) each load has its own ``LoadUnAlignPre`` into one
    shared register. Unmasked: the lanes past the data hold the bytes after it (the tile's padding,
    :meth:`api_call.VfChainRegApiCall.read_past_tiles`), which the masked instructions never read."""
    assert fn.reduce is not None
    per_group = sympy.sympify(fn.reduce.inner) == 1 and len(fn.source.node.inputs) <= UNALIGN_REGS
    at = f"{ptr} + {fn.offset}"
    if per_group:
        u = f"u{len(fn.uregs)}"
        fn.uregs.append(u)
        row = f"{ptr} + t * src_pitch + a * group"
        fn.row_pres.append(_load_pre(u, dtype, row))
    else:
        if not fn.uregs:
            fn.uregs.append("u0")
        u = fn.uregs[0]
        fn.unaligned_loads.append(_load_pre(u, dtype, at))
    fn.unaligned_loads.append(RegCall("LoadUnAlign", dtype.name, (r, u, at), kind=LOAD))


def _load_pre(u: str, dtype: dt.DType, at: str) -> RegCall:
    """The ``LoadUnAlignPre`` of ``u`` at address ``at``: the 32-byte block holding it."""
    return RegCall("LoadUnAlignPre", dtype.name, (u, at), kind=LOAD, elements=32 // dtype.itemsize)


def store(fn: _Function, tensor: str, ptr: str) -> None:
    """The store of output ``tensor`` (at pointer ``ptr``) from its register: a predicate into its bit-mask
    tile (:func:`store_mask`), 64-bit words as the interleaved pair, a 4-byte register's low bytes, 1- and
    2-byte values packed from the lanes of wider ones."""
    if tensor in fn.masks:
        store_mask(fn, tensor, ptr)
        return
    dtype = fn.source.dtype_of(tensor)
    r = fn.regs[tensor]
    if tensor in fn.words:
        # 64 values as low / high words, interleaved by the dual store (mask ignored)
        low, high = fn.words[tensor]
        fn.instr(
            "StoreAlign",
            _I32,
            f"(__ubuf__ int32_t*)({ptr} + {fn.offset})",
            low,
            high,
            template="int32_t, AscendC::Reg::StoreDist::DIST_INTLV_B32",
            kind=STORE,
            elements=2 * fn.lanes,
        )
        return
    if tensor in fn.low_bytes:
        wide = fn.low_bytes[tensor]
        fn.instr(
            "StoreAlign",
            wide,
            f"(__ubuf__ {wide.cpp}*)({ptr} + {fn.offset})",
            r,
            template=f"{wide.cpp}, AscendC::Reg::StoreDist::DIST_PACK4_B32",
            kind=STORE,
        )
        return
    if fn.bytes_quartered and dtype.itemsize == 1:
        raise fn.error(
            f"{tensor!r} holds 1-byte values next to 4-byte ones; no store of that layout is generated"
        )
    if fn.bytes_unpacked and dtype.itemsize == 1:
        _store_dist(fn, r, dtype, ptr, "DIST_PACK_B16")
    elif fn.mixed and dtype.itemsize == 2:
        _store_dist(fn, r, dtype, ptr, "DIST_PACK_B32")
    else:
        fn.instr("StoreAlign", dtype, f"{ptr} + {fn.offset}", r, kind=STORE)


def _store_dist(fn: _Function, r: str, dtype: dt.DType, ptr: str, dist: str) -> None:
    """A store of narrow values packed by ``dist`` from the lanes of the step's wider ones (one step's
    elements)."""
    fn.instr(
        "StoreAlign",
        dtype,
        f"{ptr} + {fn.offset}",
        r,
        template=f"{dtype.cpp}, AscendC::Reg::StoreDist::{dist}",
        kind=STORE,
        elements=fn.lanes,
    )


# -- predicates moved between mask registers and bit-mask tiles ----------------------
def _mask_bytes(fn: _Function, what: str) -> int:
    """Bytes of the bit-mask tile one vector step covers (one bit per element), refused where no mask
    move is generated (a reduce function; a store of 8-byte elements' masks)."""
    if fn.reduce is not None:
        raise fn.error(REDUCE_MASK_LOAD)
    size = VECTOR_BYTES // fn.lanes
    steps = step_signatures(fn.source.node.attrs["steps"], fn.source.dtype_of)
    if run_step_size(steps) != size:
        raise fn.error(
            f"the function steps by {size}-byte elements but its ops by {run_step_size(steps)}-byte ones; the "
            f"{what} would not match the fusion's plan"
        )
    return fn.lanes // 8


def load_mask(fn: _Function, tensor: str, ptr: str) -> None:
    """A predicate made outside the function, read from its bit-mask tile (one bit per element) into a
    mask register of the step's element size, as the 3510 memory Select reads its condition: 1-byte
    elements the 32 bytes of a step (``LoadAlign`` DIST_NORM), 2-byte ones 16 bytes each bit doubled
    (DIST_US); 4-byte ones 8 bytes, which start on no 16-byte boundary every other step, through a
    register (``LoadUnAlign``, ``MaskGenWithRegTensor`` of its first 8 bytes); 8-byte ones the first half
    of that mask unpacked (``UnPack``)."""
    per_step = _mask_bytes(fn, f"load of {tensor!r}")
    m = f"m{len(fn.masks)}"
    fn.masks[tensor] = m
    if per_step >= 16:
        dist = "DIST_NORM" if per_step == 32 else "DIST_US"
        at = f"{ptr} + i * {per_step}"
        template = f"uint8_t, AscendC::Reg::MaskDist::{dist}"
        fn.write(
            RegCall("LoadAlign", dt.uint8.name, (m, at), template, kind=LOAD, elements=per_step, of_mask=True)
        )
        return
    if fn.uload is None:
        fn.uload = "uload"
        fn.before.append("AscendC::Reg::UnalignRegForLoad uload;")
    words = per_step // 4  # uint32 words of the tile one step covers
    at = f"(__ubuf__ uint32_t*){ptr} + i" + (f" * {words}" if words > 1 else "")
    r = fn.reg(dt.uint32)
    u32 = dt.uint32.name
    fn.instr("LoadUnAlignPre", u32, fn.uload, at, mask=None, kind=LOAD, elements=8)
    fn.instr("LoadUnAlign", u32, r, fn.uload, at, mask=None, kind=LOAD)
    target = m if per_step == 8 else f"m{len(fn.masks)}b"
    fn.instr("MaskGenWithRegTensor", u32, target, r, template="uint32_t, 0", mask=None, kind=MASK)
    if per_step == 4:
        fn.masks[f"#bits{len(fn.masks)}"] = target
        fn.instr("UnPack", u32, m, target, mask=None, kind=MASK)


def store_mask(fn: _Function, tensor: str, ptr: str) -> None:
    """A predicate the function makes for a reader outside it, written to its bit-mask tile (one bit
    per element), as the 3510 memory Compare writes one: 1-byte elements' mask the 32 bytes of a step
    (``StoreAlign`` DIST_NORM), 2-byte ones' 16 bytes (DIST_PACK: every other bit); 4-byte ones' 8 bytes,
    which start on no 16-byte boundary every other step, through an ``UnalignRegForStore`` that
    ``StoreUnAlign`` fills and the ``StoreUnAlignPost`` after the loop empties."""
    per_step = _mask_bytes(fn, f"store of {tensor!r}")
    m = fn.masks[tensor]
    if per_step >= 16:
        dist = "DIST_NORM" if per_step == 32 else "DIST_PACK"
        at = f"{ptr} + i * {per_step}"
        template = f"uint8_t, AscendC::Reg::MaskDist::{dist}"
        fn.write(
            RegCall(
                "StoreAlign", dt.uint8.name, (at, m), template, kind=STORE, elements=per_step, of_mask=True
            )
        )
        return
    if per_step != 8:
        raise fn.error(B64_MASK_STORE)
    n = len(fn.before)
    bits, ureg = f"bits{n}", f"ustore{n}"
    fn.before += [
        f"__ubuf__ uint32_t* {bits} = (__ubuf__ uint32_t*){ptr};",
        f"AscendC::Reg::UnalignRegForStore {ureg};",
    ]
    u32 = dt.uint32.name
    fn.write(RegCall("StoreUnAlign", u32, (bits, m, ureg), kind=STORE, of_mask=True))
    post = "uint32_t, AscendC::Reg::PostLiteral::POST_MODE_NORMAL"
    fn.after.append(RegCall("StoreUnAlignPost", u32, (bits, ureg, "0"), post, kind=STORE, of_mask=True))


# -- building a function -----------------------------------------------------------
def step_layout(source: _Source, steps: Sequence[ChainStep], reduce: ChainReduce | None = None) -> StepLayout:
    """How the function of ``steps`` (and the reduce ending them) holds its values in one vector step: a
    register of 4-byte values when any value or computation is 4 bytes wide (2- and 1-byte values then sit
    unpacked next to them), else one of its largest element size -- 2 when an 8-bit Mul / Muls computes in
    int16 lanes (its bytes unpacked) -- as :func:`legality.run_step_size` predicts from the same ops."""
    made, reads = mask_tensors(steps)
    dtypes = {source.dtype_of(t) for s in steps for t in (*s.inputs, s.output) if t not in made | reads}
    if reduce is not None:
        dtypes.add(source.dtype_of(reduce.output))
    forms = [call_form(source, s) for s in steps]
    in_f32 = any(
        _computes_in_float32(f)
        or s.op in RECIPROCALS
        or _f32_only(s.op, f, source.dtype_of(s.output))
        or 4 in _route_sizes(f)
        for s, f in zip(steps, forms)
    )
    wide = any(d.itemsize == 4 for d in dtypes) or in_f32
    # an 8-bit Mul / Muls computes in int16 lanes: a run of 1-byte values then holds them unpacked
    widened = any(_widened_bytes(s.op, f, source.dtype_of(s.output)) for s, f in zip(steps, forms))
    size = 4 if wide else max((d.itemsize for d in dtypes), default=1) if not widened else 2
    return StepLayout(
        size,
        mixed=wide and any(d.itemsize == 2 for d in dtypes),
        bytes_unpacked=not wide and ({1, 2} <= {d.itemsize for d in dtypes} or widened),
        bytes_quartered=wide and any(d.itemsize == 1 for d in dtypes),
        pair_reads=frozenset(s.inputs[0] for s, f in zip(steps, forms) if PAIR_FLOAT in _modes(f)),
    )


def _build(source: _Source, steps: Sequence[ChainStep], reduce: ChainReduce | None = None) -> _Function:
    """The vector function of a chain node: its loads, each step's instructions, its stores (none when a
    reduce ends the run: :func:`reduce_text.reduce_text` / :func:`reduce_text.horizontal_text` store it)."""
    fn = _Function(source, steps, reduce, step_layout(source, steps, reduce))
    for i, name in enumerate(source.node.inputs):
        load(fn, name, f"src{i}")
    for s in steps:
        step(fn, s)
    if reduce is None:
        for j, name in enumerate(source.node.outputs):
            store(fn, name, f"dst{j}")
    return fn


def step(fn: _Function, step: ChainStep) -> None:
    """One step of the run in registers: a comparison or a logical op into a mask register, a Where as a
    Select by one, any other op into the register of its output."""
    op = step.op
    if _compares(op):
        compare(fn, step)
    elif op == "Where":
        select(fn, step)
    elif op in LOGICAL:
        logical(fn, step)
    else:
        fn.regs[step.output] = _value(fn, _operands(fn, step))


def _operands(fn: _Function, step: ChainStep) -> _StepOperands:
    """The dtypes, input registers and memory-path form of a value step, read once for its register code."""
    source = fn.source
    ins = [source.dtype_of(t) for t in step.inputs]
    out = source.dtype_of(step.output)
    srcs = [fn.regs[t] for t in step.inputs]
    return _StepOperands(step, step.op, call_form(source, step), ins, out, srcs)


def _value(fn: _Function, s: _StepOperands) -> str:
    """The register of a value step's result, the same bits as its memory form computes (the package
    docstring lists the forms): the ``emit`` of its form's row of :data:`forms.REGISTER_FORMS` -- the table
    :func:`legality.op_rejection` asks too, so a form without a row has neither legality nor code.
    Reciprocal / Rsqrt (no register instruction of their own) come before the row's code; the ``direct``
    row's own code then takes a float16 / bfloat16 op the registers compute in float32 before a 64-bit op
    whose register instruction is not its memory form's (:func:`values.direct`)."""
    row = REGISTER_FORMS.get(s.kind)
    if row is None:
        raise no_register_form(fn, s)
    if s.op in RECIPROCALS:
        return reciprocal(fn, s)
    return row.emit(fn, s)


# -- what the cost model counts ----------------------------------------------------
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
    reduce's loops (:func:`reduce_text.loop_counts`)."""
    fn = _counted(node, impl)
    reduce = node.attrs.get("reduce")
    if reduce is None:
        steps = reg_cost.vector_steps(node.attrs["count"], fn.lanes)
        return reg_cost.launch_counters(reg_cost.mix(fn.instrs), steps, once=reg_cost.mix(fn.after_instrs))
    if sympy.sympify(reduce.inner) == 1:
        horizontal_text(fn, reduce)
    else:
        reduce_text(fn, reduce)
    loops = loop_counts(fn, reduce)
    return reg_cost.loop_counters([(loops[loop], reg_cost.mix(instrs)) for loop, instrs in reduce_parts(fn)])


def chain_mix(node: ImplNode, impl: ImplGraph) -> tuple[reg_cost.RegMix, int]:
    """(register instructions of one vector step, elements per step) of the function a chain node
    generates: the same build as code generation, with the definitions discarded."""
    fn = _counted(node, impl)
    return reg_cost.mix(fn.instrs), fn.lanes
