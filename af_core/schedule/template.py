"""The template contract: what a template plugin registers.

A template looks at a validated, normalized HintGraph and its IndirectLoad
node and returns candidates (:class:`Case`) or reasons it cannot handle the
graph (:class:`Rejected`). A template never raises for a graph it does not
support; if it does raise, the scheduler turns the exception into a
rejection naming the plugin, so one broken template cannot stop the others.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import attrs


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


@runtime_checkable
class Template(Protocol):
    """Implemented by template plugins and registered with ``af_register_templates``."""

    name: str

    def propose(self, graph: Any, node: Any, ctx: Any) -> list[Any]:
        """Cases (or :class:`Rejected`) for ``graph``'s IndirectLoad ``node``."""
        ...
