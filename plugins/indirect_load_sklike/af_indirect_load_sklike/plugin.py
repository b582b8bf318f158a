"""Hook implementations of the SK-like template plugin."""

from __future__ import annotations

from af_core import hookimpl
from af_indirect_load_sklike.template import SkLikeTemplate


@hookimpl
def af_register_templates(register):
    register(SkLikeTemplate())
