"""The table of register forms (:data:`REGISTER_FORMS`): for each kind of memory-path form that has one, the
legality of an op of that kind in a run (``accepts``, and ``wide`` on 64-bit data) and the code that computes
it there (``emit``, a function of :mod:`values`), with the facts of the row the run planning reads
(``float32``, ``own_lanes``).

Both trees read this one table -- :func:`legality.op_rejection` asks a row whether an op joins a run, the
builder (:func:`build.step`) asks the same row for its code -- so removing a row takes an op kind out of
both, and the two cannot drift apart. It sits above the value-step code it names and below every rule that
reads it.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from af_core.template_api import dtypes as dt
from af_v35_regbase.api_calls.legalize import Form
from af_v35_regbase.api_calls.vf_chain import values
from af_v35_regbase.api_calls.vf_chain.function import _Function
from af_v35_regbase.api_calls.vf_chain.ops import (
    _F32,
    _I16,
    COMPOSITE,
    RECIPROCALS,
    REG_API,
    FormKind,
    _neg_in_own_type,
    _promotable,
    _widened_bytes,
    b64_api,
    form_kind,
)
from af_v35_regbase.api_calls.vf_chain.routes import _word_route, register_route
from af_v35_regbase.api_calls.vf_chain.values import _StepOperands
from af_v35_regbase.api_dtypes import reg_accepts

# -- the legality of each register form (the ``accepts`` of :data:`REGISTER_FORMS`' rows) -----------------
#: ``accepts`` / ``wide`` of a row: (op, its memory form, input dtypes, output dtype) -> why the form has no
#: register code for them, or None.
_Accepts = Callable[[str, Form, tuple[dt.DType, ...], dt.DType], str | None]


def _own_type_rejection(op_type: str, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """What every form but ``cast`` / ``composite`` asks first: a register instruction for the op
    (:data:`ops.REG_API`) and inputs of the result's dtype."""
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
    """Whether the register ``api`` takes ``out`` -- or, for the ops of :data:`ops.ROUNDS_ONCE`, float32."""
    if not reg_accepts(api, out) and not _promotable(op_type, out):
        return f"the 3510 register {api} does not accept {out.name}"
    return None


def _direct_accepts(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """``direct``: the op's register instruction in its dtype (or float32, :func:`ops._promotable`)."""
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


def _unsigned_accepts(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """:data:`UNSIGNED_FORMS`: the register tensor-scalar instruction in the unsigned type."""
    return _own_type_rejection(op_type, ins, out) or _unsigned_rejection(op_type, out)


def _widen_accepts(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """``widen``: int8 Neg in its own type (:func:`ops._neg_in_own_type`), 8-bit Mul / Muls in int16 lanes
    (:func:`ops._widened_bytes`); any other widened op stays a memory call."""
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
    """``cast``: the route's register steps (:func:`routes.register_route`)."""
    route = register_route(form)
    return route if isinstance(route, str) else None


def _composite_accepts(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """``composite``: the float32 sequences of :data:`ops.COMPOSITE`."""
    if op_type not in COMPOSITE:
        return f"{op_type} takes a composite memory form with no register form here"
    return None


# -- 64-bit integer ops over a register pair (the ``wide`` of the rows) ---------------------------------
def _b64_reason(op_type: str, out: dt.DType) -> str:
    """Why a 64-bit op has no register form here (the reason :data:`legality.MEMORY_CALL_REASONS`
    ``gap: 64-bit op`` matches)."""
    return f"{op_type} on 64-bit data: the 3510 register {b64_api(op_type, out)} has no {out.name} form generated here"


def _b64_pair_rejection(op_type: str, form: Form, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """The 64-bit legality of the :data:`B64_FORMS` rows: the op's register instruction
    (:func:`ops.b64_api`) in its own 64-bit type, one sequence over a register pair."""
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


# -- the table ------------------------------------------------------------------------------------
@attrs.frozen
class RegisterForm:
    """One register form of a memory-path form kind: whether an op of that kind joins a run and the code
    that computes it there. :func:`legality.op_rejection` (and the run planning) ask ``accepts`` /
    ``wide``; :func:`build.step` writes ``emit``: both read the row, so the two cannot drift apart."""

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


#: Every memory-path form kind that has a register form, and how (the package docstring describes each). A
#: kind missing here (``reject``) has none: :func:`legality.op_rejection` says why, and the function
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
