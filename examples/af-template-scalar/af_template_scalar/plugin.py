"""The plugin module the ``af_core`` entry point names: one template, one ApiCall."""

from __future__ import annotations

from af_core import hookimpl
from af_template_scalar.api_call import ScalarLoopApiCall
from af_template_scalar.template import ScalarLoopTemplate


@hookimpl
def af_register_templates(register):
    register(ScalarLoopTemplate())


@hookimpl
def af_register_api_calls(register):
    register(ScalarLoopApiCall)
