"""Hook implementations of the SIMD template plugin."""

from __future__ import annotations

from af_core import hookimpl
from af_core.schedule.template import Rejected


class SIMDTemplate:
    """The SIMD template (cases arrive with the template's own issue)."""

    name = "simd"

    def propose(self, graph, node, ctx):
        return [Rejected(self.name, "the SIMD template does not generate cases yet")]


@hookimpl
def af_register_templates(register):
    register(SIMDTemplate())
