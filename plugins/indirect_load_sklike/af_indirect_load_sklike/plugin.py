"""Hook implementations of the SK-like template plugin."""

from __future__ import annotations

from af_core import hookimpl
from af_core.schedule.template import Rejected


class SKlikeTemplate:
    """The SK-like template (cases arrive with the template's own issue)."""

    name = "sklike"

    def propose(self, graph, node, ctx):
        return [Rejected(self.name, "the SK-like template does not generate cases yet")]


@hookimpl
def af_register_templates(register):
    register(SKlikeTemplate())
