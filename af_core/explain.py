"""Why a template was chosen: one row per candidate for a concrete shape.

Like the autotuning table of Inductor's ``select_algorithm``: candidate,
template, tiling key, score, UB / workspace / DCache bytes, modelled cost,
and whether it was chosen, or why not (the first quantity of the selection
policy's order on which it lost). Rejections made at schedule time are listed
too, with the plugin that made them, and so are the score terms and resource
formulas plugins contributed to cases, with their values at the shape, and the
contributions that were dropped.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from af_core.errors import TilingError
from af_core.naming import demangle, markdown
from af_core.policy import DEFAULT_POLICY, OrderTerm, SelectionPolicy
from af_core.schedule.cost import COUNTER_NAMES
from af_core.schedule.scheduler import ScheduleResult
from af_core.schedule.time_model import PS_PER_NS, TERMS, TimeEstimate, estimate
from af_core.tiling.int64 import Int64Failure, evaluate
from af_core.tiling.solve import CaseEvaluation, CaseRef, evaluate_case, solve, solve_scheduled


@attrs.frozen
class ExplainRow:
    tiling_key: int | None
    template: str
    plugin: str
    status: str  # chosen | candidate | dropped | rejected
    score: int | None
    cost: int | None
    ub_bytes: int | None
    workspace_bytes: int | None
    dcache_bytes: int | None
    block_dim: int | None
    reason: str

    def cells(self) -> tuple[object, ...]:
        """The row's values in the column order every view of the table uses (None: not known)."""
        return attrs.astuple(self, recurse=False)


@attrs.frozen
class ContributionRow:
    """A score term or resource formula a plugin contributed to a case (value None if undefined here)."""

    tiling_key: int
    case: str
    kind: str
    name: str
    value: int | None
    expr: str
    plugin: str
    reason: str


#: Column headers of the predicted-counter table (:attr:`ExplainReport.counters`).
COUNTER_HEADERS = (
    "key",
    "case",
    *COUNTER_NAMES,
    *(f"{term} ns" for term in TERMS),
    "estimated ns",
    "bound by",
)


@attrs.frozen
class CounterRow:
    """A fitting case's predicted counters at the shape (:data:`~af_core.schedule.cost.COUNTER_NAMES` order;
    None: the case does not predict that counter) and the terms of its estimated time
    (:mod:`af_core.schedule.time_model`; None when it predicts no counters: its cost is its own formula)."""

    tiling_key: int
    case: str
    values: tuple[int | None, ...]
    terms: TimeEstimate | None

    def cells(self) -> tuple[object, ...]:
        t = self.terms
        if t is None:
            return (self.tiling_key, self.case, *self.values, *(None,) * (len(TERMS) + 2))
        ns = tuple(f"{getattr(t, term) / PS_PER_NS:.1f}" for term in TERMS)
        return (self.tiling_key, self.case, *self.values, *ns, f"{t.total / PS_PER_NS:.1f}", t.bound_by())


@attrs.frozen
class ExplainReport:
    graph: str
    sizes: dict[str, int]
    core_num: int
    ub_size: int
    rows: tuple[ExplainRow, ...]
    chosen: int | None
    error: str | None = None
    policy: str = DEFAULT_POLICY
    order: str = ""
    contributions: tuple[ContributionRow, ...] = ()
    diagnostics: tuple[str, ...] = ()
    #: per case (tiling key, template): how its elementwise runs are computed -- which ops a back end fused
    #: into one pass (:attr:`~af_core.backend.Role.VECTOR_CHAIN`) and why the others stay single calls
    vector_chains: tuple[tuple[int, str, str], ...] = ()
    #: (policy, case label or None) for every other installed selection policy, by name
    other_picks: tuple[tuple[str, str | None], ...] = ()
    #: per fitting case, the counters its cost is made of (af_core.schedule.cost)
    counters: tuple[CounterRow, ...] = ()
    #: per case (tiling key, template): which instruction form moves its gathered tiles and why
    #: (:meth:`~af_core.codegen.api_call.ApiCall.form_note` of the gather role)
    gather_forms: tuple[tuple[int, str, str], ...] = ()

    def markdown(self) -> str:
        """The report as Markdown; names and reasons are user text and are escaped."""
        shape = ", ".join(f"{markdown(k)}={v}" for k, v in self.sizes.items())
        head = (
            f"### {markdown(self.graph)} at {shape} "
            f"({self.core_num} cores, UB {self.ub_size} B, selection policy {markdown(self.policy)})\n\n"
            f"Order: {markdown(self.order)}.\n\n"
        )
        if self.other_picks:
            picks = "; ".join(
                f"{markdown(name)} -> {markdown(label) if label else 'no case fits'}"
                for name, label in self.other_picks
            )
            head += f"Other selection policies would pick: {picks}.\n\n"
        lines = [
            "| key | template | plugin | status | score | cost | UB B | workspace B | DCache B | cores | reason |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in self.rows:
            lines.append("| " + " | ".join("-" if c is None else markdown(str(c)) for c in r.cells()) + " |")
        if self.counters:
            lines += [
                "",
                "Predicted counters and the estimated time they give (the modelled cost: launch + the largest "
                "of the HBM, L2 and core terms, or HBM/L2 + core for a single-buffered case):",
                "",
                "| " + " | ".join(COUNTER_HEADERS) + " |",
                "|" + "---|" * len(COUNTER_HEADERS),
            ]
            for row in self.counters:
                lines.append(
                    "| " + " | ".join("-" if x is None else markdown(str(x)) for x in row.cells()) + " |"
                )
        if self.contributions:
            lines += [
                "",
                "| key | case | contribution | name | value | formula | plugin | reason |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for c in self.contributions:
                cells = [c.tiling_key, c.case, c.kind, c.name, c.value, c.expr, c.plugin, c.reason]
                lines.append("| " + " | ".join("-" if x is None else markdown(str(x)) for x in cells) + " |")
        if self.diagnostics:
            lines += ["", "Dropped contributions:", ""] + [f"- {markdown(d)}" for d in self.diagnostics]
        if self.vector_chains:
            lines += ["", "Elementwise chains:", ""] + [
                f"- key {key} ({markdown(template)}): {markdown(note)}"
                for key, template, note in self.vector_chains
            ]
        if self.gather_forms:
            lines += ["", "Gather forms:", ""] + [
                f"- key {key} ({markdown(template)}): {markdown(note)}"
                for key, template, note in self.gather_forms
            ]
        tail = f"\n\n{markdown(self.error)}\n" if self.error else "\n"
        return head + "\n".join(lines) + tail


def explain(
    scheduled: ScheduleResult,
    sizes: Mapping[str, int],
    core_num: int | None = None,
    ub_size: int | None = None,
) -> ExplainReport:
    core_num = core_num or scheduled.platform.core_num
    ub_size = ub_size or scheduled.platform.ub_size
    sizes = scheduled.normalized.size_env(sizes)  # graph names -> symbol names
    env = {**{n: int(sizes[n]) for n in scheduled.size_names}, "core_num": core_num, "ub_size": ub_size}
    chosen = None
    error = None
    try:
        chosen = solve_scheduled(scheduled, sizes, core_num, ub_size).tiling_key
    except TilingError as exc:
        error = str(exc)
    policy = scheduled.policy
    evaluations = [evaluate_case(CaseRef.of(c), env, policy.resources) for c in scheduled.cases]
    best = next((ev for ev in evaluations if ev.tiling_key == chosen), None)
    rows = []
    for case, ev in zip(scheduled.cases, evaluations):
        res = ev.resources
        if best is not None and ev is best:
            status, reason = "chosen", _why_chosen(policy, best, evaluations)
        elif ev.fits and best is not None:
            status, reason = "candidate", _phrase(_decider(policy, best, ev), won=False)
        elif ev.fits:
            status, reason = "candidate", ""
        else:
            status, reason = "dropped", ev.reason or ""
        rows.append(
            ExplainRow(
                case.tiling_key,
                case.label,
                case.plugin,
                status,
                ev.score,
                ev.cost,
                res.get("ub_bytes"),
                res.get("workspace_bytes"),
                res.get("dcache_bytes"),
                ev.block_dim,
                reason,
            )
        )
    for rej in scheduled.rejections:
        rows.append(
            ExplainRow(
                None,
                rej.template,
                rej.plugin,
                "rejected",
                None,
                None,
                None,
                None,
                None,
                None,
                f"at {rej.stage}: {rej.reason}",
            )
        )
    return ExplainReport(
        scheduled.graph.name,
        {demangle(n): int(sizes[n]) for n in scheduled.size_names},
        core_num,
        ub_size,
        tuple(rows),
        chosen,
        error,
        policy.name,
        policy.describe(),
        _contributions(scheduled, evaluations, env),
        tuple(str(d) for d in scheduled.diagnostics),
        tuple(
            (case.tiling_key, case.template, str(note))
            for case in scheduled.cases
            for note in case.impl.meta.get("vector_chains", ())
        ),
        _other_picks(scheduled, sizes, core_num, ub_size),
        _counter_rows(scheduled, evaluations),
        tuple(
            (case.tiling_key, case.template, str(note))
            for case in scheduled.cases
            for note in case.impl.meta.get("gather_forms", ())
        ),
    )


def _counter_rows(scheduled: ScheduleResult, evaluations: list[CaseEvaluation]) -> tuple[CounterRow, ...]:
    """The predicted counters of every case that fits (a case predicting none of them is left out)."""
    rows = []
    for case, ev in zip(scheduled.cases, evaluations):
        values = tuple(ev.resources.get(name) for name in COUNTER_NAMES)
        if not ev.fits or all(v is None for v in values):
            continue
        rows.append(CounterRow(case.tiling_key, case.label, values, _terms(ev, case.tiling.serialized)))
    return tuple(rows)


def _terms(ev: CaseEvaluation, serialized: bool) -> TimeEstimate | None:
    """The terms of the case's estimated time at the shape; None when its cost is not the estimate of its
    counters (a template that sets its own cost formula)."""
    counters = {name: ev.resources.get(name) for name in COUNTER_NAMES}
    if any(v is None for v in counters.values()) or ev.block_dim is None:
        return None
    terms = estimate(counters, ev.block_dim, serialized)
    return terms if terms.total == ev.cost else None


def _other_picks(
    scheduled: ScheduleResult, sizes: Mapping[str, int], core_num: int, ub_size: int
) -> tuple[tuple[str, str | None], ...]:
    """What every installed policy other than the scheduled one would pick at these sizes."""
    refs = [CaseRef.of(c) for c in scheduled.cases]
    out: list[tuple[str, str | None]] = []
    for policy in scheduled.registry.policies.values():
        if policy.name == scheduled.policy.name:
            continue
        name = policy.name
        try:
            result = solve(refs, scheduled.size_names, sizes, core_num, ub_size, scheduled.guards, policy)
            out.append((name, result.chosen().label))
        except TilingError:
            out.append((name, None))
    return tuple(out)


_LABEL = {
    "score": "score",
    "cost": "modelled cost",
    "block_dim": "block_dim",
    "workspace": "workspace",
    "tiling_key": "tiling key",
}


def _phrase(term: OrderTerm, won: bool) -> str:
    """``highest score`` / ``lower score``: how a case stands on one quantity of the order."""
    label = _LABEL.get(term.quantity) or f"resource {term.resource}"
    if won:
        return f"{'highest' if term.direction == 'max' else 'lowest'} {label}"
    return f"{'lower' if term.direction == 'max' else 'higher'} {label}"


def _decider(policy: SelectionPolicy, best: CaseEvaluation, other: CaseEvaluation) -> OrderTerm:
    """The first quantity of the order on which ``other`` loses to ``best`` (tiling key on a full tie)."""
    a, b = best.quantities(), other.quantities()
    return next((t for t in policy.order if a[t.quantity] != b[t.quantity]), OrderTerm("tiling_key", "min"))


def _why_chosen(policy: SelectionPolicy, best: CaseEvaluation, evaluations: list[CaseEvaluation]) -> str:
    """``highest score``, plus the later quantities that broke ties against some candidate."""
    terms = [*policy.order, OrderTerm("tiling_key", "min")]
    decided = {_decider(policy, best, ev).quantity for ev in evaluations if ev.fits and ev is not best}
    later = [t for t in terms[1:] if t.quantity in decided]
    return ", ".join([_phrase(terms[0], won=True)] + [f"{_phrase(t, won=True)} among equals" for t in later])


def _contributions(
    scheduled: ScheduleResult, evaluations: list[CaseEvaluation], env: Mapping[str, int]
) -> tuple[ContributionRow, ...]:
    rows = []
    for case, ev in zip(scheduled.cases, evaluations):
        local = {**env, **ev.fields}
        for item in case.contributions:
            try:
                value: int | None = evaluate(item.expr, local, checked=False)
            except (Int64Failure, KeyError):  # undefined here, or a field the case did not reach (dropped)
                value = None
            rows.append(
                ContributionRow(
                    case.tiling_key,
                    case.label,
                    item.kind,
                    item.name,
                    value,
                    str(item.expr),
                    item.distribution,
                    item.reason,
                )
            )
    return tuple(rows)
