"""Helpers for tests and benchmarks that compare a register form with the memory-based calls it replaces.

A register form claims the memory path's bits; the way to check that is to compile the same graph twice,
once with the ops in question kept memory-based calls. :func:`memory_calls` does that for the vector
chain's ops without touching anything else, so a test needs no access to the ApiCall's internals and no
pytest fixture (benchmarks use it too).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs

from af_core.template_api import (
    AutofuserOptions,
    CaseRef,
    GraphInputs,
    GraphRun,
    HintGraph,
    TwinSession,
    solve,
    twin_counters,
)
from af_v35_regbase.api_calls.vf_chain import VfChainRegApiCall

#: The reason a refused op gives (``afc explain`` shows it under the vector chains).
KEPT = "kept a memory call by the test"


@contextmanager
def memory_calls(ops: set[str] | frozenset[str]) -> Iterator[None]:
    """While the block runs, the vector chain refuses the op types ``ops`` (:data:`KEPT`): they stay
    memory-based calls, and so do the bools they read or make. Kernels must be generated inside the block."""
    original = VfChainRegApiCall.__dict__["rejection"]
    ask = original.__func__

    def refuse(cls, op_type, in_dtypes, out_dtype):
        return KEPT if op_type in ops else ask(cls, op_type, in_dtypes, out_dtype)

    VfChainRegApiCall.rejection = classmethod(refuse)  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        VfChainRegApiCall.rejection = original  # type: ignore[method-assign]


def memory_session(graph: HintGraph, template: str, ops: set[str] | frozenset[str]) -> TwinSession:
    """``graph`` compiled with ``template`` forced and the op types ``ops`` kept memory-based calls."""
    with memory_calls(ops):
        return TwinSession(
            graph, AutofuserOptions(force_template=template)
        )  # generated here, under the refusal


@attrs.frozen
class CaseRun:
    """One case of a session run on the twin: the run, its counters as the cost model names them, and the
    resources the cost model predicts for it."""

    label: str
    run: GraphRun
    counted: dict[str, int]
    predicted: dict[str, Any]


def run_every_case(session: TwinSession, inputs: GraphInputs, core_num: int) -> list[CaseRun]:
    """Every case of ``session`` that fits ``inputs`` on ``core_num`` cores, run on the twin (forced by its
    tiling key) and checked against the reference; each case's predicted register instructions and cycles
    must be the twin's exactly (AssertionError naming the case otherwise). At least one case must fit."""
    sch = session.scheduled
    refs = [CaseRef.of(c) for c in sch.cases]
    evs = solve(refs, sch.size_names, inputs.sizes, core_num, sch.platform.ub_size, sch.guards).evaluations
    out = []
    for case, ev in zip(sch.cases, evs):
        if not ev.fits:
            continue
        run = session.check(inputs=inputs, core_num=core_num, tiling_key=case.tiling_key)
        assert run.ok, (case.label, run.describe())
        counted = twin_counters(run.twin.counters)
        for name in ("reg_instructions", "reg_cycles"):
            assert ev.resources[name] == counted[name], (case.label, name, ev.resources[name], counted[name])
        out.append(CaseRun(case.label, run, counted, dict(ev.resources)))
    assert out, "no case fits the inputs"
    return out
