"""Building the vector function of a chain node: the step layout chosen from its steps' forms
(:func:`step_layout`), the loads of its inputs, each step's code -- a value step through its row of the table
of register forms (:func:`step`), a predicate step through :mod:`predicates` -- and the stores of its
outputs (:func:`_build`).

This is where the table is read for code, above every family of code and the table itself, so none of
them needs the builder.
"""

from __future__ import annotations

from collections.abc import Sequence

from af_core.template_api import ChainReduce, ChainStep
from af_v35_regbase.api_calls.legalize import LOGICAL
from af_v35_regbase.api_calls.vf_chain.forms import REGISTER_FORMS, _computes_in_float32
from af_v35_regbase.api_calls.vf_chain.function import StepLayout, _Function, _Source
from af_v35_regbase.api_calls.vf_chain.moves import load, store
from af_v35_regbase.api_calls.vf_chain.ops import (
    RECIPROCALS,
    _compares,
    _f32_only,
    _widened_bytes,
    call_form,
    mask_tensors,
)
from af_v35_regbase.api_calls.vf_chain.predicates import compare, logical, select
from af_v35_regbase.api_calls.vf_chain.routes import PAIR_FLOAT, _modes, _route_sizes
from af_v35_regbase.api_calls.vf_chain.values import _StepOperands, no_register_form, reciprocal


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
