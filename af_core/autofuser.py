"""``Autofuser``: schedule a HintGraph into template cases, then generate code.

The pyautofuse surface (``Autofuser(AutofuserOptions(...))``,
``fuser.schedule(graph)``, ``fuser.codegen(impl_graphs)``) over the plugin
framework: every installed template proposes cases or rejects with a reason,
and codegen stitches the cases into one tiling-key-dispatched kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from af_core.collector import paused
from af_core.ir.graph import HintGraph
from af_core.options import AutofuserOptions
from af_core.platform import Platform, current_platform
from af_core.registry import Registry, get_registry

if TYPE_CHECKING:  # both import the heavy libraries; Autofuser loads them on first use
    from af_core.codegen.codegen import CodegenResult
    from af_core.schedule.scheduler import ScheduleResult

__all__ = ["Autofuser", "AutofuserOptions"]


class Autofuser:
    """Schedules graphs and generates code with the installed plugins.

    ``registry`` is the set of plugins it compiles with (default: the registry in force when it is made,
    :func:`af_core.registry.get_registry`); an Autofuser built on its own registry, say with a plugin
    disabled or an extra one added, compiles with that one whatever the process's is, and the options'
    selection policy must be one of its policies."""

    def __init__(self, options: AutofuserOptions | None = None, registry: Registry | None = None) -> None:
        self.options = options or AutofuserOptions()
        with paused():  # the first one loads the plugins
            self.registry = get_registry() if registry is None else registry
            self.registry.policy(self.options.selection)  # PolicyError naming the installed ones

    @property
    def platform(self) -> Platform:
        return self.options.platform or current_platform()

    def schedule(self, graph: HintGraph) -> ScheduleResult:
        """Validate ``graph`` and collect every template's cases (a ScheduleResult)."""
        with paused():  # af_core.collector: a compile's objects die young, mostly without cycles
            from af_core.schedule.scheduler import schedule

            return schedule(graph, self.options, self.platform, self.registry)

    def generate(self, scheduled: ScheduleResult) -> CodegenResult:
        """The full :class:`CodegenResult` (proto, tiling_data, tiling, kernel, infer_shape)."""
        with paused():
            from af_core.codegen.codegen import Codegen

            return Codegen(kernel_name=self.options.kernel_name).generate(scheduled)

    def codegen(self, scheduled: ScheduleResult) -> tuple[str, str, str]:
        """pyautofuse's triple: (tiling_def, host_tiling, op_kernel)."""
        result = self.generate(scheduled)
        return result.tiling_data, result.tiling, result.kernel

    def compile(self, graph: HintGraph) -> CodegenResult:
        """schedule + generate in one call."""
        return self.generate(self.schedule(graph))
