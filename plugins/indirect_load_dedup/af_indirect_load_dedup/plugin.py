"""The plugin module the ``af_core`` entry point names: one template, two ApiCalls, their C++ source."""

from __future__ import annotations

from af_v35_regbase.row_select import ROW_SELECT_SOURCE

from af_core import hookimpl
from af_core.codegen.api_source import ApiSource
from af_indirect_load_dedup.api_call import DEDUP_SOURCE, DedupGatherApiCall, DedupStoreApiCall
from af_indirect_load_dedup.template import DedupGatherTemplate

# The af_core hook contract this plugin is written against (af_core.hookspecs.CONTRACT_VERSION).
AF_CONTRACT_VERSION = 1


@hookimpl
def af_register_templates(register):
    register(DedupGatherTemplate())


@hookimpl
def af_register_api_calls(register):
    register(DedupGatherApiCall)
    register(DedupStoreApiCall)


@hookimpl
def af_register_api_sources(register):
    register(
        ApiSource.from_package(
            DEDUP_SOURCE, "af_indirect_load_dedup", "af_dedup_gather.h", (ROW_SELECT_SOURCE,)
        )
    )
