"""The plugin module the ``af_core`` entry point names: one template, one ApiCall.

Both are registered deferred (``af_core.deferred``): loading this module
imports none of the core's heavy layers; each is built when the core first
asks for it.
"""

from __future__ import annotations

from af_core import deferred, hookimpl

# The af_core hook contract this plugin is written against (af_core.hookspecs.CONTRACT_VERSION).
AF_CONTRACT_VERSION = 1


def _template():
    from af_template_scalar.template import ScalarLoopTemplate

    return ScalarLoopTemplate()


def _api_call():
    from af_template_scalar.api_call import ScalarLoopApiCall

    return ScalarLoopApiCall


@hookimpl
def af_register_templates(register):
    register(deferred("scalar_loop", _template))


@hookimpl
def af_register_api_calls(register):
    register(deferred("ScalarLoopApiCall", _api_call))
