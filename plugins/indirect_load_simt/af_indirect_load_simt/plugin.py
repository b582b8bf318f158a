"""Hook implementations of the SIMT template plugin."""

from __future__ import annotations

from af_core import hookimpl
from af_core.schedule.template import Rejected


class SIMTTemplate:
    """The SIMT template (cases arrive with the template's own issue)."""

    name = "simt"

    def propose(self, graph, node, ctx):
        return [Rejected(self.name, "the SIMT template does not generate cases yet")]


@hookimpl
def af_register_templates(register):
    register(SIMTTemplate())
