"""Hook implementations of the SK-like template plugin."""

from __future__ import annotations

from af_core import hookimpl
from af_indirect_load_sklike.template import SkLikeTemplate

# The af_core hook contract this plugin is written against (af_core.hookspecs.CONTRACT_VERSION).
AF_CONTRACT_VERSION = 1


@hookimpl
def af_register_templates(register):
    register(SkLikeTemplate())
