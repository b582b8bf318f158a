"""What ``afc compile`` writes beside the kernel: artifacts, pictures and a report."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from af_core.codegen.codegen import CodegenResult
from af_core.explain import explain
from af_core.ir.mermaid import to_mermaid
from af_core.naming import markdown
from af_core.output_dir import OwnedWrite, safe_component, write_owned_tree
from af_core.pictures import case_mermaid
from af_core.schedule.case import Case
from af_core.schedule.scheduler import ScheduleResult


def _code(value: object) -> str:
    """A formula as inline code; text that could end the code span is escaped instead."""
    text = str(value)
    if "`" in text or "|" in text or not text.isascii() or "\n" in text:
        return markdown(text)
    return f"`{text}`"


def report_markdown(scheduled: ScheduleResult, result: CodegenResult, sizes: Mapping[str, int] | None) -> str:
    size_names = [markdown(v.name) for v in scheduled.normalized.sizes()]
    lines = [
        f"# {markdown(result.kernel_name)}",
        "",
        f"Graph '{markdown(scheduled.graph.name)}', sizes {', '.join(size_names) or 'none (static)'}.",
        "",
        "## Candidates",
        "",
        "| key | template | plugin | score | cost | UB bytes |",
        "|---|---|---|---|---|---|",
    ]
    for c in scheduled.cases:
        lines.append(
            f"| {c.tiling_key} | {markdown(c.label)} | {markdown(c.plugin)} | {_code(c.tiling.score)} | "
            f"{_code(c.tiling.cost)} | {_code(c.tiling.resources.get('ub_bytes', 0))} |"
        )
    lines += ["", "## Rejections", ""]
    lines += [f"- {markdown(str(r))}" for r in scheduled.rejections] or ["- none"]
    m = scheduled.measures
    lines += [
        "",
        "## Selection measures (first seed)",
        "",
        f"- continuous bytes: {_code(m.continuous_bytes)}",
        f"- index outer product: {_code(m.index_outer)}",
        f"- Cache_thres {m.thresholds.cache_thres}, Core_thres {m.thresholds.core_thres}, "
        f"cacheline {m.thresholds.cacheline} B",
    ]
    lines += _policy_lines(scheduled)
    lines += _load_error_lines()
    lines += _official_check_lines()
    if sizes:
        lines += ["", "## Choice for the given shape", "", explain(scheduled, sizes).markdown()]
    return "\n".join(lines) + "\n"


def _policy_lines(scheduled: ScheduleResult) -> list[str]:
    """The selection policy and what plugins contributed to the cases (or failed to)."""
    policy = scheduled.policy
    lines = [
        "",
        "## Selection policy",
        "",
        f"- {_code(policy.name)}: {markdown(policy.describe())} ({markdown(policy.description)})",
    ]
    for case in scheduled.cases:
        lines += [
            f"- key {case.tiling_key} ({markdown(case.label)}): {a.kind} {_code(a.name)} = {_code(a.expr)} "
            f"from {markdown(a.distribution)}: {markdown(a.reason)}"
            for a in case.contributions
        ]
    lines += [f"- dropped contribution: {markdown(str(d))}" for d in scheduled.diagnostics]
    return lines


def _load_error_lines() -> list[str]:
    """A section naming every plugin that failed to load: the cases above may miss its templates."""
    from af_core.registry import get_registry

    errors = get_registry().load_errors
    if not errors:
        return []
    lines = ["", "## Plugin load errors", "", "What these plugins failed to provide is missing above.", ""]
    lines += [
        f"- {_code(e.plugin)} ({markdown(e.distribution)}): "
        f"{markdown(e.error.splitlines()[0]) if e.error else 'failed'}"
        for e in errors
    ]
    return lines


def _official_check_lines() -> list[str]:
    """A section saying that twin builds in this environment skip the official-header check, and why."""
    from af_core.ascendc.gate import skip_reason

    reason = skip_reason()
    if reason is None:
        return []
    return [
        "",
        "## Official AscendC check",
        "",
        f"Skipped: {markdown(reason)}. Kernels built on the CPU twin here are not type-checked "
        "against the official AscendC headers (docs/ascendc-check.md).",
    ]


def case_picture_name(case: Case) -> str:
    """File stem of a case's picture; the template name is plugin text, so it is made path-safe."""
    return safe_component(f"case{case.tiling_key}_{case.template}")


def write_artifacts(
    out: Path, scheduled: ScheduleResult, result: CodegenResult, sizes: Mapping[str, int] | None = None
) -> OwnedWrite:
    """Write every artifact into ``out`` (all or nothing per file) with af's manifest; the artifacts of
    an earlier compile into ``out`` that this one does not write (the pictures of cases the new kernel
    has not) are removed, nothing else (:func:`af_core.output_dir.write_owned_tree`)."""
    files = dict(result.files())
    files["report.md"] = report_markdown(scheduled, result, sizes)
    files["graph.mmd"] = to_mermaid(scheduled.graph, title=scheduled.graph.name)
    for case in scheduled.cases:
        files[f"{case_picture_name(case)}.mmd"] = case_mermaid(case)
    return write_owned_tree(out, files)
