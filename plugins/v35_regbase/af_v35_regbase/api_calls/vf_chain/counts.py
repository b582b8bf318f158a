"""What the cost model counts of a chain node's vector function: the register instructions of one launch and
their cycles (:func:`function_counts`), and the mix of one vector step (:func:`chain_mix`).

Each is read from the function code generation builds (:func:`_counted`, the same build with the
definitions discarded), so the counts are of the instructions the kernel holds. They take a node and its
graph, not an ApiCall bound to a kernel's context: the cost model asks them while it plans, before any
kernel is written (:meth:`api_call.VfChainRegApiCall.predicted_counters` forwards here).
"""

from __future__ import annotations

import sympy

from af_core.template_api import Expr, ImplGraph, ImplNode
from af_v35_regbase import reg_cost
from af_v35_regbase.api_calls.vf_chain.build import _build
from af_v35_regbase.api_calls.vf_chain.function import _Function, _Source
from af_v35_regbase.api_calls.vf_chain.reduce_text import (
    horizontal_text,
    loop_counts,
    reduce_parts,
    reduce_text,
)


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
