"""The plugin module the ``af_core`` entry point names: one template, one ApiCall, its C++ source.

The template and the ApiCall are registered deferred (``af_core.deferred``):
loading this module imports none of the core's heavy layers; each is built
when the core first asks for it.
"""

from __future__ import annotations

from af_v35_regbase.row_select import ROW_SELECT_SOURCE

from af_core import deferred, hookimpl
from af_core.template_api import ApiSource

# The af_core hook contract this plugin is written against (af_core.hookspecs.CONTRACT_VERSION).
AF_CONTRACT_VERSION = 1

#: The API source of the row copy (``af_row_copy.h``).
ROW_COPY_SOURCE = "af_row_copy"


def _template():
    from af_template_rowcopy.template import RowCopyTemplate

    return RowCopyTemplate()


def _api_call():
    from af_template_rowcopy.api_call import RowCopyApiCall

    return RowCopyApiCall


@hookimpl
def af_register_templates(register):
    register(deferred("rowcopy", _template))


@hookimpl
def af_register_api_calls(register):
    register(deferred("RowCopyApiCall", _api_call))


@hookimpl
def af_register_api_sources(register):
    register(
        ApiSource.from_package(ROW_COPY_SOURCE, "af_template_rowcopy", "af_row_copy.h", (ROW_SELECT_SOURCE,))
    )
