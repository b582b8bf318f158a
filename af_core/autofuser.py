"""``Autofuser``: schedule a HintGraph into template cases, then generate code.

The pyautofuse surface (``Autofuser(AutofuserOptions(...))``,
``fuser.schedule(graph)``, ``fuser.codegen(impl_graphs)``) over the plugin
framework: every installed template proposes cases or rejects with a reason.
"""

from __future__ import annotations

import attrs

from af_core.errors import ScheduleError
from af_core.ir.graph import HintGraph
from af_core.ir.validate import normalized_copy, validate
from af_core.platform import Platform, current_platform
from af_core.registry import get_registry
from af_core.schedule.template import Rejected


@attrs.define
class AutofuserOptions:
    """Options of a fuser; the first two exist for pyautofuse compatibility."""

    tiling_lib_path: str = ""
    tiling_lib_codegen_symbol: str = ""
    platform: Platform | None = None


class Autofuser:
    def __init__(self, options: AutofuserOptions | None = None) -> None:
        self.options = options or AutofuserOptions()

    @property
    def platform(self) -> Platform:
        return self.options.platform or current_platform()

    def schedule(self, graph: HintGraph):
        info = validate(graph)
        norm, info = normalized_copy(graph, info)
        registry = get_registry()
        entries = registry.entries("template")
        nodes = norm.nodes_of_type("IndirectLoad")
        cases: list = []
        rejections: list[Rejected] = []
        for entry in entries:
            for node in nodes:
                try:
                    results = entry.value.propose(norm.copy(), node, None)
                except Exception as exc:  # a template bug must not stop the others
                    rejections.append(
                        Rejected(entry.name, f"template raised {type(exc).__name__}: {exc}",
                                 plugin=entry.distribution)
                    )
                    continue
                for item in results:
                    if isinstance(item, Rejected):
                        rejections.append(attrs.evolve(item, plugin=item.plugin or entry.distribution))
                    else:
                        cases.append(item)
        if not cases:
            detail = "; ".join(str(r) for r in rejections) or "no template plugin is installed"
            raise ScheduleError(
                f"no template plugin proposed a case for graph '{graph.name}': {detail}",
                rejections,
            )
        return cases
