"""Hook implementations of the v35 RegBase plugin: ApiCalls, API sources, twin headers."""

from __future__ import annotations

import importlib
from functools import partial
from pathlib import Path

from af_core import deferred, hookimpl
from af_core.template_api import ApiSource, Role

TWIN_INCLUDE = Path(__file__).parent / "twin" / "include"

#: ApiCall name -> the module of ``af_v35_regbase.api_calls`` that defines it and the roles the class
#: fills (registered deferred: loading this plugin imports none of the core's heavy layers, a module is
#: imported on first use, and a lookup by role imports only the classes that fill it)
API_CALLS = {
    "IndirectLoadRegApiCall": ("indirect_load", Role.GATHER),
    "LoadRowsRegApiCall": ("tile_io", Role.LOAD_ROWS),
    "ReduceRegApiCall": ("reduce", Role.REDUCE),
    "StoreRegApiCall": ("datacopy", Role.STORE_ROWS),
    "VecElementwiseRegApiCall": ("vector", Role.VECTOR_OP),
    "VfChainRegApiCall": ("vf_chain", Role.VECTOR_CHAIN),
}
API_SOURCES = (
    ("af_simt_common", "af_simt_common.h", ()),
    ("af_reduce", "af_reduce.h", ()),
    ("af_tile_io", "af_tile_io.h", ()),
    ("af_gather", "af_gather.h", ("af_tile_io",)),
    ("af_row_select", "af_row_select.h", ()),
)

# The af_core hook contract this plugin is written against (af_core.hookspecs.CONTRACT_VERSION).
AF_CONTRACT_VERSION = 1


def _api_call(name: str):
    module = importlib.import_module(f"af_v35_regbase.api_calls.{API_CALLS[name][0]}")
    return getattr(module, name)


@hookimpl
def af_register_api_calls(register):
    for name, (_module, role) in API_CALLS.items():
        register(deferred(name, partial(_api_call, name), roles=[role]))


@hookimpl
def af_register_api_sources(register):
    for name, filename, requires in API_SOURCES:
        register(ApiSource.from_package(name, "af_v35_regbase.api", filename, requires))


@hookimpl
def af_twin_include_dirs(platform):
    if platform.soc != "3510":
        return None
    return [TWIN_INCLUDE]
