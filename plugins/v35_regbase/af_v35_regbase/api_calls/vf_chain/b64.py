"""64-bit values in a function's code: a 64-bit op whose register instruction is not its memory form's,
the Cast of a ``RegTraitNumTwo`` register pair to float32 (:data:`routes.PAIR_FLOAT`), and the int32 words
of a Cast to int64 (:data:`routes.SIGN_WORDS`, :data:`routes.FLOAT_WORDS`) in a run of 4-byte values.

The Cast routes to and from 64 bits (:func:`values.cast_route`) and the ``direct`` row's 64-bit ops call
these; they are kept apart from the plain Casts because they are sequences of their own over words and
pairs.
"""

from __future__ import annotations

from af_core.template_api import dtypes as dt
from af_v35_regbase.api_calls.vf_chain.casts import cast, define_trait
from af_v35_regbase.api_calls.vf_chain.function import _Function
from af_v35_regbase.api_calls.vf_chain.ops import _F32, _I32
from af_v35_regbase.api_calls.vf_chain.routes import _trait
from af_v35_regbase.reg_cost import MASK


def b64_unary(fn: _Function, api: str, src: str, dtype: dt.DType) -> str:
    """A 64-bit op computed by a register instruction other than its memory form's (:func:`ops.b64_api`:
    int64 Neg as the register ``Neg``)."""
    dst = fn.reg(dtype)
    fn.instr(api, dtype, dst, src)
    return dst


def pair_cast(fn: _Function, tensor: str) -> str:
    """float32 of the int64 tile ``tensor`` (its RegTraitNumTwo register): the register Cast of the pair
    with CAST_RINT (:data:`routes.PAIR_FLOAT`)."""
    pair = fn.pairs.get(tensor)
    if pair is None:
        raise fn.error(
            f"the int64 value {tensor!r} is not a loaded register pair; a Cast from int64 to a float reads "
            "a tile"
        )
    trait = define_trait(fn, *_trait("ZERO", "UNKNOWN", "CAST_RINT"))
    dst = fn.reg(_F32)
    fn.instr("Cast", _F32, dst, pair, template=f"float, int64_t, {trait}", src=dt.int64)
    return dst


def sign_words(fn: _Function, low: str) -> str:
    """The high words of int32 ``low`` sign-extended to int64: -1 below 0, else 0 (``Mins`` with 0, then
    ``Maxs`` with -1)."""
    high = fn.reg(_I32)
    fn.instr("Mins", _I32, high, low, "0")
    fn.instr("Maxs", _I32, high, high, "-1")
    return high


def _mask_reg(fn: _Function) -> str:
    """A new mask register of the function's words, declared with its comparison masks."""
    m = f"m{len(fn.masks)}"
    fn.masks[f"#words{len(fn.masks)}"] = m
    return m


def float_words(fn: _Function, x: str) -> tuple[str, str]:
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
        m = _mask_reg(fn)
        fn.instr("Compares", f32, m, t, fl(bound), template=f"float, AscendC::CMPMODE::{mode}", mode=mode)
        return m

    t = fn.reg(_F32)
    fn.instr("Truncate", f32, t, x, template="float, AscendC::RoundMode::CAST_TRUNC")
    low_small = cast(fn, t, _I32, _F32, "CAST_TRUNC")
    high_small = sign_words(fn, low_small)
    h = fn.reg(_F32)
    fn.instr("Muls", f32, h, t, fl("2.3283064365386962890625e-10"))
    fn.instr("Truncate", f32, h, h, template="float, AscendC::RoundMode::CAST_FLOOR")
    high_big = cast(fn, h, _I32, _F32, "CAST_TRUNC")
    rest = fn.reg(_F32)
    fn.instr("Muls", f32, rest, h, fl("4294967296.0"))
    fn.instr("Sub", f32, rest, t, rest)
    fn.instr("Adds", f32, rest, rest, fl("-2147483648.0"))
    low_big = cast(fn, rest, _I32, _F32, "CAST_TRUNC")
    fn.instr("Adds", i32, low_big, low_big, "static_cast<int32_t>(-2147483647 - 1)")
    above, below = compares("GE", "2147483648.0"), compares("LT", "-2147483648.0")
    big = _mask_reg(fn)
    fn.instr("Or", fn.mask_dtype, big, above, below, kind=MASK)
    low, high = fn.reg(_I32), fn.reg(_I32)
    fn.instr("Select", i32, low, low_big, low_small, mask=big)
    fn.instr("Select", i32, high, high_big, high_small, mask=big)
    over, under = compares("GE", "9223372036854775808.0"), compares("LT", "-9223372036854775808.0")
    ones, zeros = fn.reg(_I32), fn.reg(_I32)
    fn.instr("Duplicate", i32, ones, "static_cast<int32_t>(-1)")
    fn.instr("Duplicate", i32, zeros, "static_cast<int32_t>(0)")
    fn.instr("Select", i32, low, ones, low, mask=over)
    fn.instr("Select", i32, low, zeros, low, mask=under)
    return low, high
