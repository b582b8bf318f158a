"""The plugin module the ``af_core`` entry point names: one template, two ApiCalls, their C++ source.

The template and the ApiCalls are registered deferred (``af_core.deferred``):
loading this module imports none of the core's heavy layers.
"""

from __future__ import annotations

from functools import partial

from af_v35_regbase.row_select import ROW_SELECT_SOURCE

from af_core import deferred, hookimpl
from af_core.template_api import ApiSource

# The af_core hook contract this plugin is written against (af_core.hookspecs.CONTRACT_VERSION).
AF_CONTRACT_VERSION = 1

#: The API source both ApiCalls inline.
DEDUP_SOURCE = "af_dedup_gather"


def _template():
    from af_indirect_load_dedup.template import DedupGatherTemplate

    return DedupGatherTemplate()


def _api_call(name: str):
    from af_indirect_load_dedup import api_call

    return getattr(api_call, name)


@hookimpl
def af_register_templates(register):
    register(deferred("dedup", _template))


@hookimpl
def af_register_api_calls(register):
    for name in ("DedupGatherApiCall", "DedupStoreApiCall"):  # the template names them: they fill no role
        register(deferred(name, partial(_api_call, name), roles=()))


@hookimpl
def af_register_api_sources(register):
    register(
        ApiSource.from_package(
            DEDUP_SOURCE, "af_indirect_load_dedup", "af_dedup_gather.h", (ROW_SELECT_SOURCE,)
        )
    )
