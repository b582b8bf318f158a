"""Whether ops join a register vector function, and why not: the rejection of one op (a row of the table of
register forms, or the mask rules for predicates and the 64-bit rules), the rules for ops sharing one
function's vector steps (element sizes, masks, unpacked bytes), for predicates crossing a run's edge, and
for a reduce ending a run -- with every reason an op stays a memory-based call
(:data:`MEMORY_CALL_REASONS`).

The scheduler asks these through :class:`api_call.VfChainRegApiCall` before any code exists; they read the
table (:mod:`forms`) and the Cast routes (:mod:`routes`) and write no code, so the code generation can ask
them too (:func:`run_step_size`) without the rules knowing the code.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence

import sympy

from af_core.template_api import dtypes as dt
from af_v35_regbase.api_calls.legalize import COMPARE, COMPARE_SCALAR, LOGICAL, Form, op_form
from af_v35_regbase.api_calls.vf_chain.forms import (
    REGISTER_FORMS,
    _b64_reason,
    _computes_in_float32,
    _in_own_lanes,
    _no_row_rejection,
)
from af_v35_regbase.api_calls.vf_chain.ops import (
    RECIPROCALS,
    FormKind,
    _f32_only,
    _promotable,
    _widened_bytes,
    form_kind,
)
from af_v35_regbase.api_calls.vf_chain.reduce_facts import (
    _REDUCE_TYPE,
    REDUCE_KINDS,
    REG_REDUCE,
    reduce_apis,
    stores_aligned,
)
from af_v35_regbase.api_calls.vf_chain.routes import (
    _MADE_WORDS,
    _WIDE_COMPARE,
    PAIR_FLOAT,
    _cast_trait,
    _low_byte,
    _route_modes,
    _route_sizes,
    _same_size_2b_cast,
    _widens_from_bytes,
    _word_route,
    register_route,
)
from af_v35_regbase.api_dtypes import reg_accepts

#: Why a run of 64-bit values keeps a predicate read outside it (:func:`edge_rejection`).
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
        "(:func:`moves.store_mask`, :func:`moves.load_mask`); a run of 64-bit values stores no such "
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
        ":func:`routes._widens_from_bytes`) and store a 4-byte integer's low bytes (StoreAlign "
        "DIST_PACK4_B32, :data:`routes.LOW_BYTE`); no elementwise op of the plugin's table falls in this gap "
        "today",
    ),
}


def memory_call_reason(reason: str) -> str | None:
    """The :data:`MEMORY_CALL_REASONS` kind whose pattern ``reason`` matches in full, or None."""
    for kind, (pattern, _why) in MEMORY_CALL_REASONS.items():
        if re.fullmatch(pattern, reason):
            return kind
    return None


# -- one op ---------------------------------------------------------------------------
def op_rejection(op_type: str, in_dtypes: Sequence[dt.DType | str], out_dtype: dt.DType | str) -> str | None:
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


def _b64_rejection(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """Why an op on 64-bit data cannot join a run, or None. A run of 64-bit values holds 32 elements a step
    (one RegTraitNumOne register); the 3510 register implementation computes Add / Sub / Mul, Adds / Muls
    (Duplicate + Add / Mul), Max / Min / Maxs / Mins, And / Or / Xor / Not (int64 and uint64) and Abs / Relu /
    Neg (int64) there as a sequence over a register pair (:data:`~af_v35_regbase.reg_cost.B64_SEQUENCES`),
    whose results are the memory path's 64-bit wrap-around values (Compare / Compares / Select of 64-bit data
    go through :func:`_mask_rejection`). A Cast between int64 and uint64 is a register view (the memory path
    copies the same bits); the other Casts to and from 64 bits hold the 64-bit values as int32 words or a
    RegTraitNumTwo register in a run of 4-byte values (:data:`routes._WORD_MODES`). Each is the 64-bit
    legality (``wide``) of its form's row of :data:`forms.REGISTER_FORMS`; a form with no such row has no
    64-bit form."""
    row = REGISTER_FORMS.get(form_kind(form))
    if row is None or row.wide is None:
        return _b64_reason(op_type, out)
    return row.wide(op_type, form, ins, out)


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


# -- logical ops on mask registers ----------------------------------------------
def _logical_rejection(op_type: str, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """Why a logical op cannot join a run, or None: LogicalAnd / Or / Xor / Not of predicates are the
    register ``And`` / ``Or`` / ``Xor`` / ``Not`` on mask registers (:func:`predicates.logical`)."""
    if not out.is_bool or not all(d.is_bool for d in ins):
        return f"{op_type} mixes dtypes {', '.join(d.name for d in ins)} -> {out.name}"
    return None


# -- the vector step of a run -------------------------------------------------------
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
    1 for a run of predicates alone -- what :func:`build.step_layout` chooses from the same ops' tiles."""
    sizes: set[int] = set()
    for op_type, ins, out in ops:
        sizes |= _run_facts(op_type, tuple(dt.get(d) for d in ins), dt.get(out))[1]
    return 4 if 4 in sizes else max(sizes, default=1)


def edge_rejection(
    ops: Sequence[tuple[str, Sequence[dt.DType], dt.DType]],
    dtype: dt.DType,
    *,
    stores: bool,
    reduces: bool,
) -> str | None:
    """Why a run of ``ops`` cannot store a predicate it makes (``stores``) or load one made outside it,
    or None. A predicate outside a run is the bit-mask tile the memory-based ops use (one bit per
    element, what the memory Compare writes and Select reads), so a run moves it to and from any other
    run or memory call: :func:`moves.store_mask` / :func:`moves.load_mask` by the run's mask
    size. A run of 64-bit values stores none (:data:`B64_MASK_STORE`); a run a reduce ends loads none
    (:data:`REDUCE_MASK_LOAD`; such a run stores nothing, a later node reading none of its values)."""
    if not dtype.is_bool:
        return f"a vector function keeps no {dtype.name} value in a register of its own"
    if reduces:
        return REDUCE_MASK_LOAD
    if stores and run_step_size(ops) == 8:
        return B64_MASK_STORE
    return None


def run_rejection(ops: Sequence[tuple[str, Sequence[dt.DType], dt.DType]]) -> str | None:
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
    (:data:`routes._WIDE_COMPARE`); a Where of 2-byte values selects their bits as int16 widened to int32 and
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


# -- bytes next to wider values -----------------------------------------------------------
def _byte_ops(
    ops: Sequence[tuple[str, Sequence[dt.DType], dt.DType]],
) -> Iterator[tuple[str, tuple[dt.DType, ...], dt.DType, Form]]:
    """The ops of a run that read or make 1-byte values: (op, input dtypes, output dtype, memory form)."""
    for op_type, ins, out in ops:
        ins_t = tuple(dt.get(d) for d in ins)
        out_t = dt.get(out)
        if any(d.itemsize == 1 for d in (*ins_t, out_t)):
            yield op_type, ins_t, out_t, op_form(op_type, ins_t, out_t)


def _byte_run_rejection(ops: Sequence[tuple[str, Sequence[dt.DType], dt.DType]]) -> str | None:
    """Why ops holding 1- and 2-byte values cannot share a run, or None. Such a run steps over 128
    elements: its 2-byte values fill whole registers, its 1-byte ones sit in the even byte lanes (loaded
    ``DIST_UNPACK_B8``, stored ``DIST_PACK_B16``), which only the register Casts between the two sizes
    (:func:`routes._byte_cast_trait`) and reinterpretations read: any other op on 1-byte data starts a new
    run."""
    for op_type, _ins, out_t, form in _byte_ops(ops):
        if form_kind(form) is not FormKind.CAST and not _widened_bytes(op_type, form, out_t):
            return (
                f"{op_type} on 1-byte data next to 2-byte values: the 1-byte values sit unpacked in the even "
                "byte lanes, which only a Cast (or an 8-bit Mul / Muls, cast up and back) reads"
            )
    return None


def _quarter_run_rejection(ops: Sequence[tuple[str, Sequence[dt.DType], dt.DType]]) -> str | None:
    """Why ops holding 1- and 4-byte values cannot share a run, or None. Such a run steps over 64 elements:
    its 1-byte values sit in every fourth byte lane (loaded ``DIST_UNPACK4_B8``), which only a Cast route
    widening them (:func:`routes._widens_from_bytes`) reads; the only byte made there is a 4-byte integer's
    low byte (:func:`routes._low_byte`), which stays in its 4-byte register until ``StoreAlign``
    ``DIST_PACK4_B32`` stores it, so no op of the run may read it (a run widening bytes makes none)."""
    reads = makes = False
    for op_type, ins_t, out_t, form in _byte_ops(ops):
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


# -- a reduce ending a run -------------------------------------------------------------------------
def reduce_rejection(
    kind: str,
    dtype: dt.DType | str,
    view: tuple[object, object, object],
    ops: Sequence[tuple[str, Sequence[dt.DType | str], dt.DType | str]],
) -> str | None:
    """Why a reduce of ``kind`` over ``dtype`` tiles viewed as ``view`` = ``(rows, group, inner)``
    cannot end a run of ``ops`` (empty: the reduce alone) in one vector function, or None when it can.

    Over a kept inner width the group rows are accumulated (:func:`reduce_text.reduce_steps`); over the
    innermost axis (``inner`` 1) the group is accumulated lane-wise and folded by ``Reg::Reduce``
    (:func:`reduce_text.horizontal_steps`). Group rows or groups known to start on 32-byte blocks are loaded
    with ``LoadAlign`` (block-masked for a tail, b8 / b16 / b32), the others with the unaligned
    ``LoadUnAlign`` (:func:`reduce_facts.starts_aligned`, :meth:`api_call.VfChainRegApiCall.read_past_tiles`);
    the run's vector step must be one register of ``dtype`` (no unpacked 2-byte values)."""
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
    for op_type, in_dtypes, out_dtype in ops:
        ins = tuple(dt.get(d) for d in in_dtypes)
        out = dt.get(out_dtype)
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
