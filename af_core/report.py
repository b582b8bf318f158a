"""What ``afc compile`` writes beside the kernel: artifacts, pictures and a report."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from af_core.codegen.codegen import CodegenResult
from af_core.explain import explain
from af_core.ir.mermaid import to_mermaid
from af_core.output_dir import safe_component, write_tree
from af_core.pictures import case_mermaid
from af_core.schedule.scheduler import ScheduleResult


def report_markdown(scheduled: ScheduleResult, result: CodegenResult, sizes: Mapping[str, int] | None) -> str:
    lines = [f"# {result.kernel_name}", "", f"Graph '{scheduled.graph.name}', "
             f"sizes {', '.join(scheduled.size_names) or 'none (static)'}.", "", "## Candidates", "",
             "| key | template | plugin | score | cost | UB bytes |", "|---|---|---|---|---|---|"]
    for c in scheduled.cases:
        lines.append(f"| {c.tiling_key} | {c.label} | {c.plugin} | `{c.tiling.score}` | `{c.tiling.cost}` | "
                     f"`{c.tiling.resources.get('ub_bytes', 0)}` |")
    lines += ["", "## Rejections", ""]
    lines += [f"- {r}" for r in scheduled.rejections] or ["- none"]
    m = scheduled.measures
    lines += ["", "## Selection measures (first seed)", "",
              f"- continuous bytes: `{m.continuous_bytes}`",
              f"- index outer product: `{m.index_outer}`",
              f"- Cache_thres {m.thresholds.cache_thres}, Core_thres {m.thresholds.core_thres}, "
              f"cacheline {m.thresholds.cacheline} B"]
    lines += _load_error_lines()
    if sizes:
        lines += ["", "## Choice for the given shape", "", explain(scheduled, sizes).markdown()]
    return "\n".join(lines) + "\n"


def _load_error_lines() -> list[str]:
    """A section naming every plugin that failed to load: the cases above may miss its templates."""
    from af_core.registry import get_registry

    errors = get_registry().load_errors
    if not errors:
        return []
    lines = ["", "## Plugin load errors", "", "What these plugins failed to provide is missing above.", ""]
    lines += [f"- `{e.plugin}` ({e.distribution}): {e.error.splitlines()[0] if e.error else 'failed'}"
              for e in errors]
    return lines


def case_picture_name(case) -> str:
    """File stem of a case's picture; the template name is plugin text, so it is made path-safe."""
    return safe_component(f"case{case.tiling_key}_{case.template}")


def write_artifacts(out: Path, scheduled: ScheduleResult, result: CodegenResult,
                    sizes: Mapping[str, int] | None = None) -> list[str]:
    """Write every artifact into ``out`` (all or nothing per file); returns the file names, sorted."""
    files = dict(result.files())
    files["report.md"] = report_markdown(scheduled, result, sizes)
    files["graph.mmd"] = to_mermaid(scheduled.graph, title=scheduled.graph.name)
    for case in scheduled.cases:
        files[f"{case_picture_name(case)}.mmd"] = case_mermaid(case)
    write_tree(out, files)
    return sorted(files)
