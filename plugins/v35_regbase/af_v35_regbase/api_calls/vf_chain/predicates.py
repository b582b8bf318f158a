"""The steps of a function that make or read predicates in mask registers: comparisons (``Compare`` /
``Compares`` into a ``MaskReg``), Where (``Select`` by one) and the logical ops on them.

These steps have no row of the table of register forms -- their legality is the mask rules of
:mod:`legality` -- so they are written here, beside the value steps rather than among them.
"""

from __future__ import annotations

from af_core.template_api import ChainStep
from af_v35_regbase.api_calls.legalize import COMPARE, COMPARE_SCALAR, LOGICAL
from af_v35_regbase.api_calls.vector import compare_scalar, scalar_literal
from af_v35_regbase.api_calls.vf_chain.casts import cast, view
from af_v35_regbase.api_calls.vf_chain.function import _Function
from af_v35_regbase.api_calls.vf_chain.ops import _I16, _I32
from af_v35_regbase.api_calls.vf_chain.routes import _WIDE_COMPARE
from af_v35_regbase.reg_cost import MASK


def compare(fn: _Function, step: ChainStep) -> None:
    """A comparison into a mask register, under the step mask (lanes past the tail are off)."""
    op = step.op
    src_t = fn.source.dtype_of(step.inputs[0])
    srcs = [fn.regs[t] for t in step.inputs]
    m = f"m{len(fn.masks)}"
    fn.masks[step.output] = m
    exact = src_t
    if fn.mixed and src_t.itemsize == 2:
        # a run of 2- and 4-byte values: every mask is one of 4-byte elements; the 2-byte values are
        # compared widened exactly (a comparison of 2-byte floats keeps its float rules: NaN, -0 == 0)
        src_t = _WIDE_COMPARE[exact.name]
        srcs = [cast(fn, r, src_t, exact, "CAST_NONE") for r in srcs]
    if op in COMPARE:
        mode = COMPARE[op]
        fn.instr(
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
    fn.instr(
        "Compares",
        src_t,
        m,
        srcs[0],
        scalar,
        template=f"{src_t.cpp}, AscendC::CMPMODE::{mode}",
        mode=mode,
    )


def select(fn: _Function, step: ChainStep) -> None:
    """Where as a register Select by the mask its condition's comparison made in this function."""
    cond, *data = step.inputs
    if cond not in fn.masks:
        raise fn.error(
            f"Where '{step.name}' reads the condition {cond!r}, which no comparison of this function makes"
        )
    out = fn.source.dtype_of(step.output)
    if fn.mixed and out.itemsize == 2:
        # a mask of 4-byte elements selects the 2-byte values' bits as int16 widened to int32, narrowed back
        # (NO_SAT: the low 16 bits) into the even 2-byte lanes the run holds them in
        wide = [cast(fn, view(fn.regs[t], _I16), _I32, _I16, "CAST_NONE") for t in data]
        r = fn.reg(_I32)
        fn.instr("Select", _I32, r, wide[0], wide[1], mask=fn.masks[cond])
        narrow = cast(fn, r, _I16, _I32, "CAST_NONE")
        fn.regs[step.output] = narrow if out == _I16 else view(narrow, out)
        return
    r = fn.reg(out)
    fn.instr("Select", out, r, fn.regs[data[0]], fn.regs[data[1]], mask=fn.masks[cond])
    fn.regs[step.output] = r


def logical(fn: _Function, step: ChainStep) -> None:
    """A logical op of predicates as the register And / Or / Xor / Not on mask registers, under the step
    mask: a lane past the tail is off in the result (zeroing), as in the comparisons it reads."""
    op = step.op
    missing = [t for t in step.inputs if t not in fn.masks]
    if missing:
        raise fn.error(
            f"{op} '{step.name}' reads {missing[0]!r}, which no comparison or logical op of this function "
            "makes"
        )
    m = f"m{len(fn.masks)}"
    srcs = ", ".join(fn.masks[t] for t in step.inputs)
    fn.masks[step.output] = m
    api = LOGICAL[op]
    fn.instr(api, fn.mask_dtype, m, srcs, kind=MASK)
