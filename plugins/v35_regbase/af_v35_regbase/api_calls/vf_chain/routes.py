"""Cast routes in registers: the register CastTrait of each Cast step (:func:`_cast_trait`), the register
steps of a ``cast`` form's route (:func:`register_route`), and the route steps that hold a 64-bit value as
int32 words or a register pair, or a byte in a 4-byte register (:data:`LOW_BYTE` ... :data:`PAIR_FLOAT`).

Both sides read this: the legality rules ask whether a route has register steps and which element sizes
it holds, the code generation writes those steps. It knows no register form but ``cast`` and writes no
code, so it sits below both.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from af_core.template_api import dtypes as dt
from af_v35_regbase.api_calls.legalize import Form, op_form
from af_v35_regbase.api_calls.vf_chain.ops import (
    _F32,
    _I16,
    _I32,
    _NARROW_FLOATS,
    _U16,
    _U32,
    FormKind,
    form_kind,
)

_TO_INT_MODES = ("CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC")


# -- register CastTraits -------------------------------------------------------------
def _cast_trait(dst: dt.DType, src: dt.DType, mode: str) -> tuple[str, str] | None:
    """(name, C++ definition) of the register CastTrait for one Cast step, or None when there is none."""
    if dst == _F32 and src.name in _NARROW_FLOATS and mode == "CAST_NONE":
        layout, sat, rnd = "ZERO", "UNKNOWN", "UNKNOWN"
    elif src == _F32 and dst.name in _NARROW_FLOATS and mode not in ("CAST_NONE",):
        layout, sat, rnd = "ZERO", "NO_SAT", mode
    elif (
        dst == _F32
        and src == _I32
        and mode in ("CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC")
    ):
        layout, sat, rnd = "UNKNOWN", "UNKNOWN", mode
    elif (
        dst == _I32
        and src == _F32
        and mode in ("CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC")
    ):
        layout, sat, rnd = "UNKNOWN", "SAT", mode
    else:
        found = _two_byte_cast_trait(dst, src, mode) or _byte_cast_trait(dst, src, mode)
        if found is None:
            return None
        layout, sat, rnd = found
    return _trait(layout, sat, rnd)


def _trait(layout: str, sat: str, rnd: str) -> tuple[str, str]:
    """(name, C++ definition) of the register CastTrait with these fields and MaskMergeMode::ZEROING."""
    name = f"kAfRegCast_{layout}_{sat}_{rnd}"
    text = (
        f"constexpr AscendC::Reg::CastTrait {name} = {{AscendC::Reg::RegLayout::{layout}, "
        f"AscendC::Reg::SatMode::{sat}, AscendC::Reg::MaskMergeMode::ZEROING, AscendC::RoundMode::{rnd}}};\n"
    )
    return name, text


# -- Cast pairs with 2-byte integers, float16 <-> bfloat16 ------------------------------------------
def _two_byte_cast_trait(dst: dt.DType, src: dt.DType, mode: str) -> tuple[str, str, str] | None:
    """(RegLayout, SatMode, RoundMode) of a register Cast with a 2-byte integer or between float16 and
    bfloat16, as the 3510 CastImpl groups the pairs (the trait fields each takes), chosen so the register
    Cast gives the memory Cast's bits (af_twin ``CastValue``): float / float16 -> int16 saturate (``SAT``,
    NaN -> 0), 4-byte -> 2-byte integers keep the low 16 bits (``NO_SAT``), bfloat16 -> float16 overflows to
    infinity (``NO_SAT``); widening from a 2-byte integer is exact. None for any other pair (those with
    1-byte types among them: their values would need 1-byte lanes unpacked, which vector functions do not
    generate)."""
    rounds = mode in _TO_INT_MODES
    if src == _I16 and dst == _F32 and mode == "CAST_NONE":
        return "ZERO", "UNKNOWN", "UNKNOWN"
    if (src, dst) in ((_I16, _I32), (_U16, _U32)) and mode == "CAST_NONE":
        return "ZERO", "UNKNOWN", "UNKNOWN"
    if src == _F32 and dst == _I16 and rounds:
        return "ZERO", "SAT", mode
    if src in (_I32, _U32) and dst in (_I16, _U16) and mode == "CAST_NONE":
        return "ZERO", "NO_SAT", "UNKNOWN"
    if (src, dst) in ((_I16, dt.float16), (dt.float16, dt.bfloat16)) and rounds:
        return "UNKNOWN", "UNKNOWN", mode
    if src == dt.float16 and dst == _I16 and rounds:
        return "UNKNOWN", "SAT", mode
    if src == dt.bfloat16 and dst == dt.float16 and rounds:
        return "UNKNOWN", "NO_SAT", mode
    return None


def _byte_cast_trait(dst: dt.DType, src: dt.DType, mode: str) -> tuple[str, str, str] | None:
    """(RegLayout, SatMode, RoundMode) of a register Cast between a 1-byte and a 2-byte type, the 1-byte
    values in the even byte lanes (``RegLayout::ZERO``, where ``LoadAlign`` ``DIST_UNPACK_B8`` puts them
    and from where ``StoreAlign`` ``DIST_PACK_B16`` stores them): int8 -> int16, uint8 -> uint16 and
    int8 / uint8 -> float16 (exact), float16 -> int8 / uint8 (``SAT``: saturating, NaN -> 0, as the memory
    Cast), int16 / uint16 -> uint8 (``NO_SAT``: the low byte, as the memory Cast). None for other pairs
    (a byte widened to 4 bytes takes two of these steps, :data:`_BYTE_WIDENING`)."""
    i8, u8 = dt.int8, dt.uint8
    if (src, dst) in ((i8, _I16), (u8, _U16), (i8, dt.float16), (u8, dt.float16)) and mode == "CAST_NONE":
        return "ZERO", "UNKNOWN", "UNKNOWN"
    if src == dt.float16 and dst in (i8, u8) and mode in _TO_INT_MODES:
        return "ZERO", "SAT", mode
    if src in (_I16, _U16) and dst == u8 and mode == "CAST_NONE":
        return "ZERO", "NO_SAT", "UNKNOWN"
    return None


#: 2-byte type -> the 4-byte type its values widen to exactly (a register Cast, RegLayout::ZERO: element j of
#: the unpacked 2-byte lanes to 4-byte lane j), in which a run holding 2- and 4-byte values compares them.
_WIDE_COMPARE = {"float16": _F32, "bfloat16": _F32, "int16": _I32, "uint16": dt.uint32}


# -- the register steps of a route -------------------------------------------------------
#: A route step that keeps a 4-byte integer register as the uint8 of its low byte: the memory Cast's
#: CAST_NONE keeps the low bits, which ``StoreAlign`` ``DIST_PACK4_B32`` stores (no instruction before it).
LOW_BYTE = "LOW_BYTE"
#: The route step int64 -> int32 (the memory Cast keeps the low 32 bits): the low words of the int64 tile,
#: which a run of 4-byte values loads with the dual ``LoadAlign`` ``DIST_DINTLV_B32`` (64 values, 512 bytes a
#: step: low words into one register, high words into another); no instruction of its own.
LOW_WORDS = "LOW_WORDS"
#: The route step int32 -> int64 (the memory Cast sign-extends): the int32 register is the low words, the
#: high words its sign (``Mins`` with 0, ``Maxs`` with -1: -1 below 0, else 0), and the pair is stored by the
#: dual ``StoreAlign`` ``DIST_INTLV_B32`` (64 values, 512 bytes a step) -- no 8-byte register; no op of the
#: run reads the 64-bit value.
SIGN_WORDS = "SIGN_WORDS"
#: The route step float32 -> int64 with CAST_TRUNC (the memory Cast truncates and saturates, NaN -> 0): the
#: int64's low and high words computed in float32 and int32 registers (:func:`b64.float_words`), stored
#: as :data:`SIGN_WORDS`' pair is -- no 8-byte register.
FLOAT_WORDS = "FLOAT_WORDS"
#: The route step int64 -> float32 with CAST_RINT: the int64 tile loaded into a ``RegTraitNumTwo`` register
#: (its ``LoadAlign`` is the dual load ``DIST_DINTLV_B32``: 64 values, 512 bytes a step) and converted by the
#: register ``Cast<float, int64_t>`` of the pair (the 3510 sequence MaskInterleave, Interleave, two vcvt
#: s642f32, DeInterleave: the exact 64-bit value rounded once, as the memory Cast) -- no 8-byte register of
#: the run's lanes.
PAIR_FLOAT = "PAIR_FLOAT"
#: Exact integer widenings to int32 a route to 64 bits starts with (the memory path goes through float32,
#: which holds these values exactly, and truncates: the same value).
_TO_INT32 = {
    dt.int8: ((dt.int16, dt.int8, "CAST_NONE"), (dt.int32, dt.int16, "CAST_NONE")),
    dt.uint8: (
        (dt.uint16, dt.uint8, "CAST_NONE"),
        (dt.uint32, dt.uint16, "CAST_NONE"),
        (dt.int32, dt.uint32, "VIEW"),
    ),
    dt.int16: ((dt.int32, dt.int16, "CAST_NONE"),),
    dt.uint16: ((dt.uint32, dt.uint16, "CAST_NONE"), (dt.int32, dt.uint32, "VIEW")),
    dt.int32: (),
}


#: Route steps that hold a 64-bit value as two int32 registers of words.
_WORD_MODES = (LOW_WORDS, SIGN_WORDS, FLOAT_WORDS, PAIR_FLOAT)
#: Route steps that make a 64-bit value as two int32 registers (stored by the dual store): no register pair
#: of the ``RegTraitNumTwo`` type, which :data:`PAIR_FLOAT` reads, holds it.
_MADE_WORDS = (SIGN_WORDS, FLOAT_WORDS)
#: int8 -> int32 and uint8 -> uint32 in two register Casts through the 2-byte integer of their sign.
_BYTE_WIDENING = {(dt.int32, dt.int8): dt.int16, (dt.uint32, dt.uint8): dt.uint16}


def register_route(form: Form) -> tuple[tuple[dt.DType, dt.DType, str], ...] | str:
    """The register steps of a ``cast`` form's route, or why it has none. A step is a register Cast
    (:func:`_cast_trait`), a same-width integer reinterpretation (``VIEW``: the register read as the other
    type, no instruction -- the memory path copies the same bits), or float16 / bfloat16 -> int32 with a
    rounding mode as the exact Cast up to float and the Cast to int32 with that mode (the same value
    rounded, saturated, NaN -> 0)."""
    words = _sign_words_route(form)
    if words is not None:
        return words
    out: list[tuple[dt.DType, dt.DType, str]] = []
    for to, frm, mode in form.steps:
        if mode == "VIEW" or _cast_trait(to, frm, mode) is not None:
            out.append((to, frm, mode))
        elif to == _I32 and frm.name in _NARROW_FLOATS and mode in _TO_INT_MODES:
            out += [(_F32, frm, "CAST_NONE"), (_I32, _F32, mode)]
        elif to == _I32 and frm == dt.int64 and mode == "CAST_NONE":
            out.append((to, frm, LOW_WORDS))  # the low words of the dual load: no instruction
        elif to == dt.int64 and frm == _I32 and mode == "CAST_NONE":
            out.append((to, frm, SIGN_WORDS))  # the sign words beside it, the pair stored by the dual store
        elif to == dt.int64 and frm == _F32 and mode == "CAST_TRUNC":
            out.append((to, frm, FLOAT_WORDS))  # both words computed in registers, stored as the pair
        elif to == _F32 and frm == dt.int64 and mode == "CAST_RINT":
            out.append((to, frm, PAIR_FLOAT))  # the tile loaded as a register pair, the pair's register Cast
        elif to == dt.uint8 and frm in (dt.int32, _U32) and mode == "CAST_NONE":
            out.append((to, frm, LOW_BYTE))  # stored by StoreAlign DIST_PACK4_B32: no instruction
        elif (to, frm) in _BYTE_WIDENING and mode == "CAST_NONE":
            mid = _BYTE_WIDENING[to, frm]  # sign / zero extension in two exact steps
            out += [(mid, frm, "CAST_NONE"), (to, mid, "CAST_NONE")]
        else:
            return f"Cast {frm.name} -> {to.name} ({mode}) has no register Cast here"
    sizes = {d.itemsize for step in out for d in step[:2]}
    if {1, 4} <= sizes and not _widens_from_bytes(out) and not _low_byte(out):
        return (
            f"Cast {form.steps[0][1].name} -> {form.steps[-1][0].name} narrows 4-byte values to bytes, which "
            "no vector step holds together"
        )
    return tuple(out)


def _sign_words_route(form: Form) -> tuple[tuple[dt.DType, dt.DType, str], ...] | None:
    """The register route of an integer Cast to int64 / uint64 whose memory route goes through floats that
    hold the integer exactly (an 8-bit one through float16 / float32, a 16-bit one through float32) and
    truncates: a sign or zero extension. None for any other route (int32 -> int64 and the integer widenings
    before it are steps :func:`register_route` maps one by one). The integer widened to int32 exactly
    (:data:`_TO_INT32`), then :data:`SIGN_WORDS` (and the view as uint64)."""
    steps = form.steps
    tail: tuple = ()
    if steps and steps[-1] == (dt.uint64, dt.int64, "VIEW"):
        steps, tail = steps[:-1], steps[-1:]
    if len(steps) < 2 or steps[-1] != (dt.int64, _F32, "CAST_TRUNC"):
        return None
    src = steps[0][1]
    floats = [to for to, _frm, mode in steps[:-1] if mode == "CAST_NONE" and to.is_float]
    if src not in _TO_INT32 or len(floats) != len(steps) - 1:
        return None
    if dt.float16 in floats and src.itemsize != 1:  # float16 holds every 8-bit integer, not every 16-bit one
        return None
    return (*_TO_INT32[src], (dt.int64, dt.int32, SIGN_WORDS), *tail)


def _low_byte(route: Sequence[tuple[dt.DType, dt.DType, str]]) -> bool:
    """Whether a route is a 4-byte integer's low byte alone (:data:`LOW_BYTE`): a value only a store reads."""
    return len(route) == 1 and route[0][2] == LOW_BYTE


def _widens_from_bytes(route: Sequence[tuple[dt.DType, dt.DType, str]]) -> bool:
    """Whether a route starts from a 1-byte value and only widens (or views) from there: what a vector step
    of 4-byte values holds, the 1-byte values in every fourth byte lane (``LoadAlign`` ``DIST_UNPACK4_B8``),
    widened by a 1 -> 2-byte Cast into the even 2-byte lanes, where a 2 -> 4-byte Cast reads them."""
    return (
        bool(route) and route[0][1].itemsize == 1 and all(to.itemsize >= frm.itemsize for to, frm, _ in route)
    )


# -- what a route holds ---------------------------------------------------------------
def _modes(form: Form) -> frozenset[str]:
    """The modes of a ``cast`` form's register route (empty for other forms or a route with no register
    form)."""
    if form_kind(form) is not FormKind.CAST:
        return frozenset()
    route = register_route(form)
    return frozenset() if isinstance(route, str) else frozenset(mode for _to, _frm, mode in route)


@functools.lru_cache(maxsize=4096)
def _route_modes(op_type: str, ins: tuple, out) -> frozenset[str]:
    """:func:`_modes` of an op on these dtypes; cached as :func:`legality._run_facts` is."""
    ins_t, out_t = tuple(dt.get(d) for d in ins), dt.get(out)
    if out_t.is_bool or any(d.is_bool for d in ins_t):
        return frozenset()
    return _modes(op_form(op_type, ins_t, out_t))


def _word_route(form: Form) -> bool:
    """Whether a ``cast`` form's register route holds 64-bit values only as int32 words or a RegTraitNumTwo
    register (:data:`_WORD_MODES`): in a run of 4-byte values, with no 8-byte register of its lanes."""
    return not _modes(form).isdisjoint(_WORD_MODES)


def _route_sizes(form: Form) -> frozenset[int]:
    """Element sizes the register steps of a ``cast`` form hold (its intermediates too, e.g. the float32 of
    int16 -> float32 -> bfloat16); empty for other forms or a route with no register form."""
    if form_kind(form) is not FormKind.CAST or not form.steps:
        return frozenset()
    route = register_route(form)
    if isinstance(route, str):
        return frozenset()
    sizes = frozenset(d.itemsize for step in route for d in step[:2])
    # 64-bit values of a word route are two int32 registers (loaded or stored as words), never an 8-byte one
    return sizes - {8} if _word_route(form) else sizes


def _same_size_2b_cast(form: Form) -> bool:
    """Whether a ``cast`` form holds a register Cast between two 2-byte types (int16 <-> float16, float16 <->
    bfloat16): it takes a mask and registers of 2-byte lanes, so its run holds no unpacked 2-byte values."""
    if form_kind(form) is not FormKind.CAST or not form.steps:
        return False
    route = register_route(form)
    return not isinstance(route, str) and any(
        mode != "VIEW" and to.itemsize == frm.itemsize == 2 for to, frm, mode in route
    )
