"""The plugin module the ``af_core`` entry point names: one template, one ApiCall, its C++ source."""

from __future__ import annotations

from af_v35_regbase.row_select import ROW_SELECT_SOURCE

from af_core import hookimpl
from af_core.codegen.api_source import ApiSource
from af_template_rowcopy.api_call import ROW_COPY_SOURCE, RowCopyApiCall
from af_template_rowcopy.template import RowCopyTemplate

# The af_core hook contract this plugin is written against (af_core.hookspecs.CONTRACT_VERSION).
AF_CONTRACT_VERSION = 1


@hookimpl
def af_register_templates(register):
    register(RowCopyTemplate())


@hookimpl
def af_register_api_calls(register):
    register(RowCopyApiCall)


@hookimpl
def af_register_api_sources(register):
    register(
        ApiSource.from_package(ROW_COPY_SOURCE, "af_template_rowcopy", "af_row_copy.h", (ROW_SELECT_SOURCE,))
    )
