"""Hook implementations of the elementwise plugin."""

from __future__ import annotations

from af_core import hookimpl
from af_core.codegen.api_source import ApiSource
from af_elementwise.ops import OPS, SCALAR_SOURCE
from af_elementwise.samples import SAMPLES

# The af_core hook contract this plugin is written against (af_core.hookspecs.CONTRACT_VERSION).
AF_CONTRACT_VERSION = 1


@hookimpl
def af_register_ops(register):
    for op in OPS:
        register(op)


@hookimpl
def af_register_api_sources(register):
    register(ApiSource.from_package(SCALAR_SOURCE, "af_elementwise", "af_scalar_ops.h"))


@hookimpl
def af_register_samples(register):
    for sample in SAMPLES:
        register(sample)
