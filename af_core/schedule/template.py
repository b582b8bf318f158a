"""The template contract: what a template plugin registers and what it is given.

A template looks at a validated, normalized HintGraph and its IndirectLoad
node and returns candidates (:class:`~af_core.schedule.case.Case`) or reasons
it cannot handle the graph (:class:`Rejected`). To say "cannot handle" from
anywhere inside ``propose`` (a helper deep in the row-tile machinery
included) it raises :class:`af_core.errors.Unsupported`; the scheduler turns
that into a rejection naming the template. Any other exception, or a return
value that is not a list of Case / Rejected, is reported as a bug of the
plugin, and the other templates still run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import attrs

from af_core.ir.graph import HintGraph, Node
from af_core.options import AutofuserOptions
from af_core.platform import Platform
from af_core.schedule.analysis import FusionAnalysis, analyze
from af_core.schedule.case import Case
from af_core.schedule.measures import SelectionMeasures


@attrs.frozen
class Rejected:
    """Why a template produced no case; kept in reports and in the proto."""

    template: str
    reason: str
    stage: str = "schedule"  # schedule | tiling | codegen
    plugin: str = ""

    def __str__(self) -> str:
        who = f"{self.template} ({self.plugin})" if self.plugin else self.template
        return f"{who} rejected at {self.stage}: {self.reason}"


@attrs.frozen
class ScheduleContext:
    """What a template gets besides the graph: platform, the user's options, shared measures."""

    platform: Platform
    options: AutofuserOptions
    measures: SelectionMeasures
    graph_name: str

    def analyze(self, graph: HintGraph) -> FusionAnalysis:
        """The fusion analysis (chains, loads by role, reduce) of ``graph`` — a template's rewritten copy."""
        return analyze(graph)


@runtime_checkable
class Template(Protocol):
    """Implemented by template plugins and registered with ``af_register_templates``."""

    #: The template's registered name: unique among installed templates, shown in reports,
    #: the first part of every case label and of the kernel function names.
    name: str

    def propose(self, graph: HintGraph, node: Node, ctx: ScheduleContext) -> Sequence[Case | Rejected]:
        """Cases (or :class:`Rejected`) for ``graph``'s IndirectLoad ``node``.

        ``graph`` is a private copy: rewrite it freely. Raise
        :class:`af_core.errors.Unsupported` to reject the whole graph.
        """
        ...
