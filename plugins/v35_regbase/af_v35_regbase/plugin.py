"""Hook implementations of the v35 RegBase plugin: ApiCalls, API sources, twin headers."""

from __future__ import annotations

from pathlib import Path

from af_core import hookimpl
from af_core.codegen.api_source import ApiSource
from af_v35_regbase.api_calls.datacopy import StoreRegApiCall
from af_v35_regbase.api_calls.indirect_load import IndirectLoadRegApiCall
from af_v35_regbase.api_calls.reduce import ReduceRegApiCall
from af_v35_regbase.api_calls.tile_io import LoadRowsRegApiCall
from af_v35_regbase.api_calls.vector import VecElementwiseRegApiCall
from af_v35_regbase.api_calls.vf_chain import VfChainRegApiCall

TWIN_INCLUDE = Path(__file__).parent / "twin" / "include"

API_CALLS = (
    IndirectLoadRegApiCall,
    LoadRowsRegApiCall,
    ReduceRegApiCall,
    StoreRegApiCall,
    VecElementwiseRegApiCall,
    VfChainRegApiCall,
)
API_SOURCES = (
    ("af_simt_common", "af_simt_common.h", ()),
    ("af_reduce", "af_reduce.h", ()),
    ("af_tile_io", "af_tile_io.h", ()),
    ("af_gather", "af_gather.h", ("af_tile_io",)),
    ("af_row_select", "af_row_select.h", ()),
)

# The af_core hook contract this plugin is written against (af_core.hookspecs.CONTRACT_VERSION).
AF_CONTRACT_VERSION = 1


@hookimpl
def af_register_api_calls(register):
    for cls in API_CALLS:
        register(cls)


@hookimpl
def af_register_api_sources(register):
    for name, filename, requires in API_SOURCES:
        register(ApiSource.from_package(name, "af_v35_regbase.api", filename, requires))


@hookimpl
def af_twin_include_dirs(platform):
    if platform.soc != "3510":
        return None
    return [TWIN_INCLUDE]
