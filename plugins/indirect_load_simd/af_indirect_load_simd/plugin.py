"""Hook implementations of the SIMD template plugin."""

from __future__ import annotations

from af_core import hookimpl
from af_indirect_load_simd.template import SimdTemplate


@hookimpl
def af_register_templates(register):
    register(SimdTemplate())
