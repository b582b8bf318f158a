"""Why a template was chosen: one row per candidate for a concrete shape.

Like the autotuning table of Inductor's ``select_algorithm``: candidate,
template, tiling key, score, UB / workspace / DCache bytes, modelled cost,
and whether it was chosen, or why not. Rejections made at schedule time are
listed too, with the plugin that made them.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from af_core.errors import TilingError
from af_core.naming import demangle, markdown
from af_core.schedule.scheduler import ScheduleResult
from af_core.tiling.solve import evaluate_case, solve_scheduled


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


@attrs.frozen
class ExplainReport:
    graph: str
    sizes: dict[str, int]
    core_num: int
    ub_size: int
    rows: tuple[ExplainRow, ...]
    chosen: int | None
    error: str | None = None
    policy: str = "seed"

    def markdown(self) -> str:
        """The report as Markdown; names and reasons are user text and are escaped."""
        shape = ", ".join(f"{markdown(k)}={v}" for k, v in self.sizes.items())
        head = (f"### {markdown(self.graph)} at {shape} "
                f"({self.core_num} cores, UB {self.ub_size} B, selection policy {self.policy})\n\n")
        lines = ["| key | template | plugin | status | score | cost | UB B | workspace B | DCache B | cores | reason |",
                 "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in self.rows:
            cells = [r.tiling_key, r.template, r.plugin, r.status, r.score, r.cost, r.ub_bytes, r.workspace_bytes,
                     r.dcache_bytes, r.block_dim, r.reason]
            lines.append("| " + " | ".join("-" if c is None else markdown(str(c)) for c in cells) + " |")
        tail = f"\n\n{markdown(self.error)}\n" if self.error else "\n"
        return head + "\n".join(lines) + tail


def explain(scheduled: ScheduleResult, sizes: Mapping[str, int], core_num: int | None = None,
            ub_size: int | None = None) -> ExplainReport:
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
    rows = []
    from af_core.tiling.solve import CaseRef

    policy = getattr(scheduled.options, "selection", "seed")
    for case in scheduled.cases:
        ev = evaluate_case(CaseRef.of(case), env)
        res = ev.resources
        if ev.tiling_key == chosen:
            if policy == "cost":
                status, reason = "chosen", "lowest modelled cost"
            else:
                status, reason = "chosen", "highest score" + (", lowest cost among equals"
                                                              if _ties(scheduled, env, ev) else "")
        elif ev.fits:
            status, reason = "candidate", "higher cost" if policy == "cost" else "lower score or higher cost"
        else:
            status, reason = "dropped", ev.reason or ""
        rows.append(ExplainRow(case.tiling_key, case.label, case.plugin, status, ev.score, ev.cost,
                               res.get("ub_bytes"), res.get("workspace_bytes"), res.get("dcache_bytes"),
                               ev.block_dim, reason))
    for rej in scheduled.rejections:
        rows.append(ExplainRow(None, rej.template, rej.plugin, "rejected", None, None, None, None, None, None,
                               f"at {rej.stage}: {rej.reason}"))
    return ExplainReport(scheduled.graph.name, {demangle(n): int(sizes[n]) for n in scheduled.size_names}, core_num,
                         ub_size, tuple(rows), chosen, error, policy)


def _ties(scheduled: ScheduleResult, env, chosen_ev) -> bool:
    from af_core.tiling.solve import CaseRef

    for case in scheduled.cases:
        if case.tiling_key == chosen_ev.tiling_key:
            continue
        ev = evaluate_case(CaseRef.of(case), env)
        if ev.fits and ev.score == chosen_ev.score:
            return True
    return False
