"""Hook implementations of the elementwise plugin.

The samples are registered deferred (``af_core.deferred``): building one
needs the core's graph builders (sympy), which loading the plugin does not
import.
"""

from __future__ import annotations

from functools import partial

from af_core import deferred, hookimpl
from af_core.template_api import ApiSource
from af_elementwise.ops import OPS, SCALAR_SOURCE

#: The samples ``af_elementwise.samples`` defines, by name.
SAMPLE_NAMES = ("embedding_post", "gather_rows")

# The af_core hook contract this plugin is written against (af_core.hookspecs.CONTRACT_VERSION).
AF_CONTRACT_VERSION = 1


@hookimpl
def af_register_ops(register):
    for op in OPS:
        register(op)


@hookimpl
def af_register_api_sources(register):
    register(ApiSource.from_package(SCALAR_SOURCE, "af_elementwise", "af_scalar_ops.h"))


def _sample(name: str):
    from af_elementwise.samples import SAMPLES

    return next((s for s in SAMPLES if s.name == name), None)


@hookimpl
def af_register_samples(register):
    for name in SAMPLE_NAMES:
        register(deferred(name, partial(_sample, name)))
