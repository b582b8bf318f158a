"""Register Casts in a function's code: one Cast step under its CastTrait (the trait defined once for the
kernel), a register read as another type of the same size, and the exact moves into and out of float32
that the steps computed in float32 share.

Every family that changes a value's type writes it through here -- the value steps, the comparisons of
2-byte values in a run of 4-byte ones, the 64-bit words -- so it sits just above the function's core and
knows none of them.
"""

from __future__ import annotations

from af_core.template_api import dtypes as dt
from af_v35_regbase.api_calls.vf_chain.function import RegCall, _Function
from af_v35_regbase.api_calls.vf_chain.ops import _F32
from af_v35_regbase.api_calls.vf_chain.routes import _cast_trait
from af_v35_regbase.reg_cost import MASK


def view(reg: str, to: dt.DType) -> str:
    """A register read as one of element type ``to`` (same size): ``(RegTensor<to>&)reg``, as the 3510
    implementation reinterprets registers; no instruction."""
    base = reg.rsplit(")", 1)[-1]
    return f"(AscendC::Reg::RegTensor<{to.cpp}>&){base}"


def define_trait(fn: _Function, name: str, text: str) -> str:
    """Define the CastTrait ``name`` (its C++ ``text``) for the kernel; returns its name."""
    # definitions are emitted in key order: "AfChainVf_-..." sorts before every "AfChainVf_<hex>" function
    fn.source.define(f"AfChainVf_-{name}", text)
    return name


def cast(fn: _Function, src: str, to: dt.DType, frm: dt.DType, mode: str) -> str:
    """A new register of ``to``: ``src`` (of ``frm``) by the register Cast with rounding ``mode``, under the
    step mask -- or, for a byte of a run of 4-byte values, the mask of the 2-byte lanes it widens into."""
    found = _cast_trait(to, frm, mode)
    if found is None:
        raise fn.error(f"no register Cast {frm.name} -> {to.name} ({mode})")
    trait = define_trait(fn, *found)
    dst = fn.reg(to)
    mask = "mask"
    if frm.itemsize == 1 and fn.bytes_quartered:
        # a 1 -> 2-byte Cast of the quartered bytes: the mask of the 2-byte lanes they widen into
        if not fn.halves:
            fn.halves = True
            fn.write(
                RegCall("UpdateMask", dt.uint16.name, ("halves",), "uint16_t", kind=MASK, result="mask16")
            )
        mask = "mask16"
    fn.instr("Cast", to, dst, src, template=f"{to.cpp}, {frm.cpp}, {trait}", mask=mask, src=frm)
    return dst


def to_float32(fn: _Function, src: str, dtype: dt.DType) -> str:
    """``src`` of ``dtype`` as a float32 register (itself when it is one; the Cast up is exact)."""
    return src if dtype == _F32 else cast(fn, src, _F32, dtype, "CAST_NONE")


def from_float32(fn: _Function, src: str, dtype: dt.DType) -> str:
    """The float32 register ``src`` as ``dtype`` (itself for float32), rounded once (CAST_RINT)."""
    return src if dtype == _F32 else cast(fn, src, dtype, _F32, "CAST_RINT")
