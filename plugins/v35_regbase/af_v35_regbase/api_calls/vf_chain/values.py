"""The code of value steps: the function each row of :data:`forms.REGISTER_FORMS` names as its ``emit`` --
``(fn, operands) -> register``, writing a step's register instructions the way its memory-path form
computes it -- and the instruction sequences those share (:func:`apply`, :func:`exp2`, :func:`reciprocal`).

These sit below the table, so the table can name them as plain functions, and above the Casts and 64-bit
words they are built from; the function's core knows no op at all.
"""

from __future__ import annotations

import math

import attrs

from af_core.template_api import ChainStep, CodegenError, literal
from af_core.template_api import dtypes as dt
from af_v35_regbase.api_calls.legalize import BINARY, TENSOR_SCALAR, TRUNCATE, Form
from af_v35_regbase.api_calls.vector import scalar_literal
from af_v35_regbase.api_calls.vf_chain.b64 import b64_unary, float_words, pair_cast, sign_words
from af_v35_regbase.api_calls.vf_chain.casts import cast, from_float32, to_float32, view
from af_v35_regbase.api_calls.vf_chain.function import _Function
from af_v35_regbase.api_calls.vf_chain.ops import (
    _F32,
    _I16,
    _I32,
    _U16,
    BITWISE_BINARY,
    REG_API,
    FormKind,
    _neg_in_own_type,
    _promotable,
    _widened_bytes,
    b64_api,
    form_kind,
)
from af_v35_regbase.api_calls.vf_chain.routes import (
    FLOAT_WORDS,
    LOW_BYTE,
    LOW_WORDS,
    PAIR_FLOAT,
    SIGN_WORDS,
    register_route,
)
from af_v35_regbase.api_dtypes import reg_accepts


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
        """The kind of the step's memory-path form: its row of :data:`forms.REGISTER_FORMS`."""
        return form_kind(self.form)


def no_register_form(fn: _Function, s: _StepOperands) -> CodegenError:
    """The error for a step whose memory-path form has no register code here."""
    return fn.error(f"step {s.op} ({s.kind.value}) has no register form")


# -- instruction sequences the rows share ---------------------------------------------
def apply(fn: _Function, op: str, srcs: list[str], dtype: dt.DType, value: object) -> str:
    """A new register of ``dtype``: ``op``'s register instruction (:data:`ops.REG_API`) on ``srcs`` -- with
    the RoundMode of a Floor / Ceil / Round, the scalar of a tensor-scalar op (-1 for Neg)."""
    api = REG_API[op]
    dst = fn.reg(dtype)
    if op in BINARY or op in BITWISE_BINARY:
        fn.instr(api, dtype, dst, srcs[0], srcs[1])
    elif op in TRUNCATE:
        fn.instr(api, dtype, dst, srcs[0], template=f"{dtype.cpp}, AscendC::RoundMode::{TRUNCATE[op]}")
    elif op in TENSOR_SCALAR:
        scalar = -1.0 if op == "Neg" else TENSOR_SCALAR[op][1] * float(value)  # type: ignore[arg-type]
        fn.instr(api, dtype, dst, srcs[0], scalar_literal(scalar, dtype))
    else:
        fn.instr(api, dtype, dst, srcs[0])
    return dst


def widened_bytes(
    fn: _Function, op: str, srcs: list[str], ins: list[dt.DType], out: dt.DType, value: object
) -> str:
    """An 8-bit Mul / Muls (:func:`ops._widened_bytes`): each operand cast up exactly (uint8 through uint16
    read as int16), the op in int16, the product's low byte (uint16 -> uint8, NO_SAT), read as ``out``:
    the bits of the memory path's Cast up, op, ``Ands`` 255 and Cast down."""
    wide = []
    for src, frm in zip(srcs, ins):
        if frm == dt.int8:
            wide.append(cast(fn, src, _I16, frm, "CAST_NONE"))
        else:
            wide.append(view(cast(fn, src, _U16, frm, "CAST_NONE"), _I16))
    product = apply(fn, op, wide, _I16, value)
    low = cast(fn, view(product, _U16), dt.uint8, _U16, "CAST_NONE")
    return low if out == dt.uint8 else view(low, out)


def exp2(fn: _Function, x: str) -> str:
    """2^x of a float32 register, the memory path's steps (``VecElementwiseRegApiCall._composite``) one
    register instruction each: k = clamp(floor(x), -126, 127) by a saturating Cast (CAST_FLOOR) and
    Maxs / Mins in int32, f = Exp((x - float(k)) * ln 2), 2^k built from its exponent bits
    ((k + 127) * 2^23 in int32, read as float: the register reinterpretation ``(RegTensor<float>&)`` the
    3510 implementation itself uses), and f * 2^k. Every step is the memory path's instruction on the
    same values (float(k) is exact, so the Cast back takes CAST_RINT where the memory Cast takes
    CAST_NONE), so both give the same bits."""
    i32, f32 = _I32.name, _F32.name
    k = cast(fn, x, _I32, _F32, "CAST_FLOOR")
    fn.instr("Maxs", i32, k, k, "static_cast<int32_t>(-126)")
    fn.instr("Mins", i32, k, k, "static_cast<int32_t>(127)")
    f = cast(fn, k, _F32, _I32, "CAST_RINT")
    fn.instr("Sub", f32, f, x, f)
    ln2 = f"static_cast<float>({literal(math.log(2.0))})"
    fn.instr("Muls", f32, f, f, ln2)
    fn.instr("Exp", f32, f, f)
    fn.instr("Adds", i32, k, k, "static_cast<int32_t>(127)")
    fn.instr("Muls", i32, k, k, "static_cast<int32_t>(8388608)")
    r = fn.reg(_F32)
    fn.instr("Mul", f32, r, f, f"(AscendC::Reg::RegTensor<float>&){k}")
    return r


def sigmoid(fn: _Function, x: str) -> str:
    """1 / (1 + exp(-x)) of a float32 register, the reciprocal as a Div of a register of ones."""
    t = fn.reg(_F32)
    one = fn.reg(_F32)
    f32 = _F32.name
    fn.instr("Muls", f32, t, x, "static_cast<float>(-1)")
    fn.instr("Exp", f32, t, t)
    fn.instr("Adds", f32, t, t, "static_cast<float>(1)")
    fn.instr("Duplicate", f32, one, "static_cast<float>(1)")
    fn.instr("Div", f32, t, one, t)
    return t


def reciprocal(fn: _Function, s: _StepOperands) -> str:
    """Reciprocal (and Rsqrt, after a Sqrt) as a Div of a register of ones, in float32."""
    x = to_float32(fn, s.srcs[0], s.out)
    t = fn.reg(_F32)
    one = fn.reg(_F32)
    if s.op == "Rsqrt":
        fn.instr("Sqrt", _F32, t, x)
        x = t
    fn.instr("Duplicate", _F32, one, "static_cast<float>(1)")
    fn.instr("Div", _F32, t, one, x)
    return from_float32(fn, t, s.out)


# -- the ``emit`` of each row of the table --------------------------------------------------
def direct(fn: _Function, s: _StepOperands) -> str:
    """``direct``: the instruction in the op's dtype -- in float32 for a float16 / bfloat16 op of
    :data:`ops.ROUNDS_ONCE` whose instruction takes no such dtype or in a run with 4-byte values, and the
    64-bit op's own register instruction (:func:`ops.b64_api`) where it differs from the memory form's."""
    op, out = s.op, s.out
    if _promotable(op, out) and (fn.mixed or not reg_accepts(REG_API[op], out)):
        return in_float32(fn, s)
    if out.itemsize == 8 and b64_api(op, out) != REG_API.get(op):
        return b64_unary(fn, b64_api(op, out), s.srcs[0], out)
    return in_own_type(fn, s)


def in_float32(fn: _Function, s: _StepOperands) -> str:
    """The op in float32: the inputs cast up (exact), the result cast back with CAST_RINT (``promote``,
    and the ``direct`` ops of ROUNDS_ONCE)."""
    wide = [cast(fn, src, _F32, d, "CAST_NONE") for src, d in zip(s.srcs, s.ins)]
    return cast(fn, apply(fn, s.op, wide, _F32, s.value), s.out, _F32, "CAST_RINT")


def in_own_type(fn: _Function, s: _StepOperands) -> str:
    """The register instruction in the op's dtype (``direct``, ``bits``, :data:`forms.UNSIGNED_FORMS`)."""
    return apply(fn, s.op, s.srcs, s.out, s.value)


def widen(fn: _Function, s: _StepOperands) -> str:
    """An 8-bit op the memory path computes in int16: int8 Neg as the register Neg in its own type
    (:func:`ops._neg_in_own_type`), 8-bit Mul / Muls in int16 lanes (:func:`ops._widened_bytes`)."""
    if _neg_in_own_type(s.op, s.out):
        r = fn.reg(s.out)
        fn.instr("Neg", s.out, r, s.srcs[0])
        return r
    if _widened_bytes(s.op, s.form, s.out):
        return widened_bytes(fn, s.op, s.srcs, s.ins, s.out, s.value)
    raise no_register_form(fn, s)


def relu_maxs(fn: _Function, s: _StepOperands) -> str:
    """Relu as the memory path computes it: Maxs with 0."""
    r = fn.reg(s.out)
    fn.instr("Maxs", s.out, r, s.srcs[0], f"static_cast<{s.out.cpp}>(0)")
    return r


def cast_route(fn: _Function, s: _StepOperands) -> str:
    """A Cast as the register steps of its route (:func:`routes.register_route`); the route's special modes
    leave the value in a register the function already holds, or in a pair of word registers."""
    route = register_route(s.form)
    if isinstance(route, str):
        raise fn.error(route)
    output = s.step.output
    r = s.srcs[0]
    for to, frm, mode in route:
        if mode == LOW_BYTE:  # the 4-byte register itself; its store keeps the low bytes
            fn.low_bytes[output] = frm
            continue
        if mode == LOW_WORDS:  # the source's register holds its low words already (dual load)
            continue
        if mode == PAIR_FLOAT:  # the tile's register pair, converted by the pair's Cast
            r = pair_cast(fn, s.step.inputs[0])
            continue
        if mode == FLOAT_WORDS:  # both words of the truncated float, stored as a pair
            low, high = float_words(fn, r)
            fn.words[output] = (low, high)
            r = low
            continue
        if mode == SIGN_WORDS:  # r is the low words; the high words are its sign; stored as a pair
            fn.words[output] = (r, sign_words(fn, r))
            continue
        if mode == "VIEW" and output in fn.words:
            continue  # int64 -> uint64 of the words: the same bits
        r = view(r, to) if mode == "VIEW" else cast(fn, r, to, frm, mode)
    return r


def composite(fn: _Function, s: _StepOperands) -> str:
    """Sigmoid and Exp2, the memory path's composite forms, in float32."""
    if s.op == "Sigmoid":
        return from_float32(fn, sigmoid(fn, to_float32(fn, s.srcs[0], s.out)), s.out)
    if s.op == "Exp2":
        return from_float32(fn, exp2(fn, to_float32(fn, s.srcs[0], s.out)), s.out)
    raise no_register_form(fn, s)
