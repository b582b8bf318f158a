"""Hook implementations of the SIMT template plugin."""

from __future__ import annotations

from af_core import hookimpl
from af_indirect_load_simt.template import SimtTemplate


@hookimpl
def af_register_templates(register):
    register(SimtTemplate())
