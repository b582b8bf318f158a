"""The plugin module the ``af_core`` entry point names: one template, one ApiCall."""

from __future__ import annotations

from af_core import hookimpl
from af_template_scalar.api_call import ScalarLoopApiCall
from af_template_scalar.template import ScalarLoopTemplate

# The af_core hook contract this plugin is written against (af_core.hookspecs.CONTRACT_VERSION).
AF_CONTRACT_VERSION = 1


@hookimpl
def af_register_templates(register):
    register(ScalarLoopTemplate())


@hookimpl
def af_register_api_calls(register):
    register(ScalarLoopApiCall)
