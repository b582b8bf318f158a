"""The vocabulary of register vector functions: the register instruction of each ASCIR op a run may hold,
the kinds of memory-path form an op takes (:class:`FormKind`), and the facts about one op or one chain step
that depend on nothing but the op and its dtypes.

Every other module of the package reads these names and this module reads none of theirs, so the table of
register forms, the legality rules and the code generation spell each op, kind and dtype the same way
without importing one another.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Protocol

from af_core.template_api import ChainStep
from af_core.template_api import dtypes as dt
from af_v35_regbase.api_calls.legalize import (
    BINARY,
    BITWISE,
    COMPARE,
    COMPARE_SCALAR,
    LOGICAL,
    TENSOR_SCALAR,
    TRUNCATE,
    UNARY,
    Form,
    op_form,
)
from af_v35_regbase.api_dtypes import reg_accepts

#: Bytes of one vector register.
VECTOR_BYTES = 256
#: ASCIR op -> register instruction, for the ops a run may hold (Neg is Muls by -1 as on the memory path).
REG_API = {
    **{op: api for op, api in UNARY.items() if op != "Rsqrt"},
    **BINARY,
    **{op: api for op, (api, _sign) in TENSOR_SCALAR.items()},
    **{op: "Truncate" for op in TRUNCATE},
    **BITWISE,
}
#: Bitwise ops of two operands (a register And / Or / Xor in the tile's own integer type: the bits the
#: memory path computes on the int16 view of the same bytes).
BITWISE_BINARY = frozenset(op for op in BITWISE if op != "BitwiseNot")
#: Composite ops a run may hold (computed in float32; Exp2 also in int32 registers, :func:`values.exp2`).
COMPOSITE = {"Sigmoid", "Exp2"}
#: Ops with no register instruction that a run computes in float32 from ones that exist: Reciprocal as a
#: Div of a register of ones, Rsqrt as Sqrt then that Div (the memory path's Reciprocal / Rsqrt in float).
RECIPROCALS = {"Reciprocal", "Rsqrt"}
#: Ops whose float16 / bfloat16 ``direct`` memory form a vector function may compute in float32 registers
#: (Cast up, the op, Cast back with CAST_RINT): each float32 result is correctly rounded or exact, and
#: float32 holds more than twice the 2-byte types' precision plus two bits, so the second rounding gives
#: the same bits as the op rounded once in the 2-byte type -- what the memory path computes.
ROUNDS_ONCE = frozenset(
    {"Add", "Sub", "Mul", "Div", "Maximum", "Minimum", "Abs", "Sqrt", "Neg", "Relu", "Floor", "Ceil", "Round"}
)
_F32, _I32 = dt.float32, dt.int32
_I16, _U16, _U32 = dt.int16, dt.uint16, dt.uint32
_NARROW_FLOATS = ("float16", "bfloat16")


class FormKind(enum.Enum):
    """The kinds of memory-path form :func:`~af_v35_regbase.api_calls.legalize.op_form` gives an op (its
    ``Form.kind`` strings, which the memory path keeps), named once here so the register code matches on
    members rather than on spelled-out strings; each kind with a register form has a row of
    :data:`forms.REGISTER_FORMS`."""

    DIRECT = "direct"
    PROMOTE = "promote"
    WIDEN = "widen"
    REINTERPRET = "reinterpret"
    SPLAT = "splat"
    RELU_MAXS = "relu_maxs"
    CAST = "cast"
    BITS = "bits"
    COMPOSITE = "composite"
    REJECT = "reject"


def form_kind(form: Form) -> FormKind:
    """The :class:`FormKind` of a memory-path form (a kind ``op_form`` does not make is an error here, not a
    silent miss of every table row)."""
    return FormKind(form.kind)


# -- one op on its dtypes ----------------------------------------------------------
def _promotable(op_type: str, out: dt.DType) -> bool:
    """Whether a ``direct`` op on ``out`` may run in float32 registers with the same bits (ROUNDS_ONCE)."""
    return out.name in _NARROW_FLOATS and op_type in ROUNDS_ONCE and reg_accepts(REG_API[op_type], _F32)


def _f32_only(op_type: str, form: Form, out: dt.DType) -> bool:
    """Whether a ``direct`` op has a register form in float32 only (e.g. Neg on bfloat16: register Muls
    takes no bfloat16)."""
    return (
        form_kind(form) is FormKind.DIRECT
        and _promotable(op_type, out)
        and not reg_accepts(REG_API[op_type], out)
    )


def _neg_in_own_type(op_type: str, out: dt.DType) -> bool:
    """Whether an 8-bit op the memory path widens to int16 is the register ``Neg`` in its own type: int8 Neg
    (memory: ``Muls(-1)`` in int16, the low byte kept), which the 3510 register ``Neg`` takes -- the
    wrap-around negation, the same bits (-(-128) is -128 both ways). 8-bit Mul / Muls stay memory calls:
    the register ``Mul`` / ``Muls`` take no 8-bit type."""
    return op_type == "Neg" and out.itemsize == 1 and reg_accepts("Neg", out)


def _widened_bytes(op_type: str, form: Form, out: dt.DType) -> bool:
    """Whether ``op_type`` is an 8-bit Mul / Muls, which runs in registers as the memory path computes it
    (``widen``): the bytes cast up exactly to 2-byte lanes (int8 -> int16, uint8 -> uint16 read as int16),
    the op in int16, the product's low byte cast back (uint16 -> uint8, ``NO_SAT``), in a run whose 1-byte
    values sit unpacked in the even byte lanes next to the 2-byte ones (``DIST_UNPACK_B8`` /
    ``DIST_PACK_B16``). Only the even byte lanes are read and written (``RegLayout::ZERO``), so no
    narrowing Cast's other byte lanes matter."""
    return form_kind(form) is FormKind.WIDEN and op_type in ("Mul", "Muls") and out.itemsize == 1


def b64_api(op_type: str, out: dt.DType) -> str:
    """The register instruction of a 64-bit op: its :data:`REG_API` one, except Neg on int64 -- the register
    ``Neg`` (NegImpl takes int64: Duplicate of 0 and the pair Sub, five calls) rather than the memory path's
    ``Muls`` by -1 (Duplicate and the pair Mul, seven); both are the wrap-around negation, the same bits."""
    if op_type == "Neg" and reg_accepts("Neg", out):
        return "Neg"
    return REG_API.get(op_type, op_type)


# -- the steps of a chain ----------------------------------------------------------
def _compares(op: str) -> bool:
    """Whether a step is a comparison (a tensor one or a scalar one)."""
    return op in COMPARE or op in COMPARE_SCALAR


def _makes_mask(op: str) -> bool:
    """Whether a step's result is a predicate in a mask register (a comparison or a logical op)."""
    return _compares(op) or op in LOGICAL


def bool_inputs(step: ChainStep) -> list[str]:
    """The tensors a step reads as predicates: a Where's condition, a logical op's operands."""
    if step.op == "Where":
        return [step.inputs[0]]
    return list(step.inputs) if step.op in LOGICAL else []


def mask_tensors(steps: Sequence[ChainStep]) -> tuple[set[str], set[str]]:
    """(the predicates the steps make, those they read that no step makes: bit-mask tiles made outside)."""
    made = {s.output for s in steps if _makes_mask(s.op)}
    return made, {t for s in steps for t in bool_inputs(s)} - made


def step_signatures(steps: Sequence[ChainStep], dtype_of: Callable[[str], dt.DType]) -> list:
    """``(op, input dtypes, output dtype)`` of each step as the fusion saw it: a predicate (a comparison's or
    logical op's result, a Where's condition) as ``bool``, every other value its tile's dtype."""
    out = []
    for s in steps:
        flags = set(bool_inputs(s))
        ins = tuple(dt.bool_ if t in flags else dtype_of(t) for t in s.inputs)
        out.append((s.op, ins, dt.bool_ if _makes_mask(s.op) else dtype_of(s.output)))
    return out


class Typed(Protocol):
    """What knows the dtypes of a chain node's tensors: the ApiCall generating it, or the source of a
    function built without one."""

    def dtype_of(self, tensor: str) -> dt.DType:
        """The dtype of one of the node's tensors."""
        ...


def call_form(call: Typed, step: ChainStep) -> Form:
    """The memory-path form of one step, which its register code mirrors."""
    ins = tuple(call.dtype_of(t) for t in step.inputs)
    return op_form(step.op, ins, call.dtype_of(step.output))
