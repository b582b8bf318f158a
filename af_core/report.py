"""What ``afc compile`` writes beside the kernel: artifacts, pictures and a report."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from af_core.codegen.codegen import CodegenResult
from af_core.explain import explain
from af_core.ir.mermaid import to_mermaid
from af_core.naming import markdown
from af_core.pictures import case_mermaid
from af_core.schedule.scheduler import ScheduleResult


def _code(value: object) -> str:
    """A formula as inline code; text that could end the code span is escaped instead."""
    text = str(value)
    if "`" in text or "|" in text or not text.isascii() or "\n" in text:
        return markdown(text)
    return f"`{text}`"


def report_markdown(scheduled: ScheduleResult, result: CodegenResult, sizes: Mapping[str, int] | None) -> str:
    size_names = [markdown(v.name) for v in scheduled.normalized.sizes()]
    lines = [f"# {markdown(result.kernel_name)}", "", f"Graph '{markdown(scheduled.graph.name)}', "
             f"sizes {', '.join(size_names) or 'none (static)'}.", "", "## Candidates", "",
             "| key | template | plugin | score | cost | UB bytes |", "|---|---|---|---|---|---|"]
    for c in scheduled.cases:
        lines.append(f"| {c.tiling_key} | {markdown(c.label)} | {markdown(c.plugin)} | {_code(c.tiling.score)} | "
                     f"{_code(c.tiling.cost)} | {_code(c.tiling.resources.get('ub_bytes', 0))} |")
    lines += ["", "## Rejections", ""]
    lines += [f"- {markdown(str(r))}" for r in scheduled.rejections] or ["- none"]
    m = scheduled.measures
    lines += ["", "## Selection measures (first seed)", "",
              f"- continuous bytes: `{m.continuous_bytes}`",
              f"- index outer product: `{m.index_outer}`",
              f"- Cache_thres {m.thresholds.cache_thres}, Core_thres {m.thresholds.core_thres}, "
              f"cacheline {m.thresholds.cacheline} B"]
    if sizes:
        lines += ["", "## Choice for the given shape", "", explain(scheduled, sizes).markdown()]
    return "\n".join(lines) + "\n"


def write_artifacts(out: Path, scheduled: ScheduleResult, result: CodegenResult,
                    sizes: Mapping[str, int] | None = None) -> list[str]:
    """Write every artifact into ``out``; returns the file names, sorted."""
    out.mkdir(parents=True, exist_ok=True)
    files = dict(result.files())
    files["report.md"] = report_markdown(scheduled, result, sizes)
    files["graph.mmd"] = to_mermaid(scheduled.graph, title=scheduled.graph.name)
    for case in scheduled.cases:
        files[f"case{case.tiling_key}_{case.template}.mmd"] = case_mermaid(case)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    return sorted(files)
