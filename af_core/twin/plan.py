"""What a twin run is checked for before it allocates anything (:func:`plan_run`).

The size contract: a size is an integer from 0 to 2^63-1 (``--shape`` takes exactly those). A run
refuses, with :class:`af_core.errors.SizeError` naming the size, its value and the rule,

- a size that is missing, outside 0 .. 2^63-1, or above the maximum the graph declares for it;
- sizes that give a node a negative or fractional extent or stride;
- sizes at which a tensor's buffer would span more than 2^63-1 bytes (an int64 offset);
- sizes that break a shape relation of the graph (an index no larger than its input on the axes it
  does not gather along: the host tiling's guards);
- a size of 0 that leaves some output non-empty (a gather from an empty axis, a reduction over one).

A run whose every output is empty launches no kernel, as a framework does with empty tensors: its
outputs are the empty arrays, compared with the reference's. Then the host tiling, the Python twin
of the generated one, picks the case (no case fits: :class:`af_core.errors.TilingError`), and the
run's host memory (:mod:`af_core.twin.budget`) must stay under the limit
(:class:`af_core.errors.MemoryBudgetError`).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs
import sympy

from af_core.errors import SizeError
from af_core.ir.graph import HintGraph
from af_core.ir.sizes import Expr
from af_core.ir.validate import GraphInfo
from af_core.tiling.int64 import Int64Failure, evaluate
from af_core.tiling.solve import TilingResult, solve_scheduled
from af_core.twin.budget import (
    MemoryEstimate,
    MemoryLimit,
    TensorBytes,
    check_memory,
    estimate_memory,
    memory_limit,
    race_check_on,
)

if TYPE_CHECKING:
    from af_core.schedule.scheduler import ScheduleResult
    from af_core.tiling.solve import Guard

#: The largest size (sizes are int64 in the kernel, the host tiling and the tiling data).
MAX_SIZE = (1 << 63) - 1


@attrs.frozen
class RunPlan:
    """A run's sizes (keyed by symbol name), checked; whether a kernel is launched, the host tiling's
    result when one is, the memory estimate and the limit it was checked against."""

    sizes: dict[str, int]
    launch: bool
    tiling: TilingResult | None
    memory: MemoryEstimate
    limit: MemoryLimit


def show_sizes(graph: HintGraph, env: Mapping[str, int], symbols: Iterable[str] | None = None) -> str:
    """``V=100, B=4``: the graph's sizes (those among ``symbols``, by symbol name, when given)."""
    wanted = None if symbols is None else set(symbols)
    return ", ".join(
        f"{v.name}={env[v.symbol.name]}"
        for v in graph.sizes()
        if v.symbol.name in env and (wanted is None or v.symbol.name in wanted)
    )


def size_values(graph: HintGraph, sizes: Mapping[str, int]) -> dict[str, int]:
    """Every size of ``graph`` from ``sizes`` (keyed by graph or symbol name), checked against the range
    and the declared maxima; keyed by symbol name."""
    env = graph.size_env(sizes)
    values: dict[str, int] = {}
    for var in graph.sizes():
        if var.symbol.name not in env:
            raise SizeError(f"no value for size {var.name}")
        raw = env[var.symbol.name]
        try:
            value = operator.index(raw)
        except TypeError:
            raise SizeError(f"size {var.name} must be an integer, got {raw!r}") from None
        if isinstance(raw, bool) or not 0 <= value <= MAX_SIZE:
            raise SizeError(f"size {var.name}={raw!r} is outside 0 .. 2^63-1, the values a size may take")
        if var.max_value is not None and value > var.max_value:
            raise SizeError(
                f"size {var.name}={value} exceeds {var.max_value}, the maximum the graph declares for it"
            )
        values[var.symbol.name] = value
    return values


def _value(expr: Expr, env: Mapping[str, int], graph: HintGraph, node: str, what: str) -> int:
    """The exact integer value of a size expression of ``node``; fractions are refused."""
    expr = sympy.sympify(expr)
    free = expr.free_symbols
    value = expr.xreplace({s: sympy.Integer(env[s.name]) for s in free if s.name in env})
    if not value.is_Integer:
        shown = show_sizes(graph, env, (s.name for s in free))
        raise SizeError(f"sizes {shown}: the {what} {expr} of node '{node}' is {value}, not an integer")
    return int(value)


def tensor_bytes(graph: HintGraph, info: GraphInfo, env: Mapping[str, int]) -> list[TensorBytes]:
    """Every node of ``graph`` at the sizes ``env`` (symbol-keyed): elements and buffer, checked.

    Refuses a negative or fractional extent or stride and a buffer of more than 2^63-1 bytes.
    """
    tensors = []
    for name in info.order:
        ni = info[name]
        kind = graph.node(name).op.compute_type
        shape = [_value(e, env, graph, name, "size") for e in ni.sizes]
        strides = [_value(e, env, graph, name, "stride") for e in ni.strides]
        involved = {s.name for e in (*ni.sizes, *ni.strides) for s in sympy.sympify(e).free_symbols}
        where = show_sizes(graph, env, involved) or "(static)"
        bad = next((n for n in shape if n < 0), None)
        if bad is not None:
            raise SizeError(
                f"sizes {where}: node '{name}' would have the negative extent {bad} {tuple(shape)}"
            )
        if kind == "data" and any(st < 0 for st in strides):
            raise SizeError(
                f"sizes {where}: Data node '{name}' would have a negative stride {tuple(strides)}"
            )
        elements = 1
        for n in shape:
            elements *= n
        storage = elements
        if kind == "data" and elements:
            storage = 1 + sum((n - 1) * st for n, st in zip(shape, strides))
        itemsize = ni.dtype.itemsize
        nbytes = max(storage, elements) * itemsize
        if nbytes > MAX_SIZE:
            raise SizeError(
                f"sizes {where}: tensor '{name}' would span {nbytes} bytes, more than 2^63-1 (the int64 "
                "byte offsets of the kernel and the twin)"
            )
        tensors.append(TensorBytes(name, kind, elements, storage, itemsize))
    return tensors


def check_relations(graph: HintGraph, guards: Sequence[Guard], env: Mapping[str, int]) -> None:
    """The shape relations the host tiling checks (its guards), at ``env``: a broken one is refused."""
    for guard in guards:
        try:
            holds = bool(evaluate(guard.expr, env))
        except (Int64Failure, KeyError):
            holds = False
        if not holds:
            involved = (s.name for s in sympy.sympify(guard.expr).free_symbols)
            raise SizeError(f"sizes {show_sizes(graph, env, involved)}: {guard.message}")


def check_empty(graph: HintGraph, tensors: Sequence[TensorBytes], env: Mapping[str, int]) -> bool:
    """Whether the run launches a kernel: False when every output is empty (nothing to compute).

    A size of 0 that leaves an output non-empty is refused naming the sizes that are 0.
    """
    empty = next((t for t in tensors if t.elements == 0), None)
    if empty is None:
        return True
    full = next((t for t in tensors if t.kind == "output" and t.elements > 0), None)
    if full is None:
        return False
    zeros = [v.name for v in graph.sizes() if env.get(v.symbol.name) == 0]
    which = ", ".join(f"{n}=0" for n in zeros) or show_sizes(graph, env)
    raise SizeError(
        f"size {which}: tensor '{empty.name}' is empty while output '{full.name}' would hold "
        f"{full.elements} elements; a size of 0 may only leave every output empty (then no kernel is "
        "launched), not feed a non-empty one (a gather from an empty axis, a reduction over one)"
    )


def plan_run(
    scheduled: ScheduleResult,
    graph: HintGraph,
    sizes: Mapping[str, int] | None,
    *,
    core_num: int | None = None,
    ub_size: int | None = None,
    tiling_key: int | None = None,
    limit: int | MemoryLimit | None = None,
    held: int = 0,
    sanitize: bool = False,
) -> RunPlan:
    """Check a run of ``scheduled`` (the schedule of ``graph``) at ``sizes`` before anything is allocated.

    The size contract (this module's rules), the host tiling's pick (or the case of ``tiling_key``) on
    ``core_num`` cores, and the memory estimate against ``limit`` (:func:`af_core.twin.budget.memory_limit`);
    ``held`` bytes of input arrays the caller already holds count with the inputs; ``sanitize``: the
    twin is built with ASan and UBSan.
    """
    env = size_values(graph, sizes or {})
    tensors = tensor_bytes(graph, scheduled.info, env)
    check_relations(graph, scheduled.guards, env)
    launch = check_empty(graph, tensors, env)
    tiling = solve_scheduled(scheduled, env, core_num, ub_size, tiling_key=tiling_key) if launch else None
    memory = estimate_memory(
        tensors,
        workspace=tiling.workspace_size if tiling else 0,
        block_dim=tiling.block_dim if tiling else 0,
        launch=launch,
        race=race_check_on(),
        sanitize=sanitize,
        held=held,
        l2_lines=scheduled.platform.l2_size // scheduled.platform.l2_line,
    )
    chosen = memory_limit(limit)
    check_memory(memory, chosen, show_sizes(graph, env))
    return RunPlan(env, launch, tiling, memory, chosen)
