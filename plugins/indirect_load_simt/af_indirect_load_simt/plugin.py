"""Hook implementations of the SIMT template plugin.

The template is registered deferred (``af_core.deferred``): loading this
module imports none of the core's heavy layers, and the template's module
is imported when the scheduler first asks for the template.
"""

from __future__ import annotations

from af_core import deferred, hookimpl

# The af_core hook contract this plugin is written against (af_core.hookspecs.CONTRACT_VERSION).
AF_CONTRACT_VERSION = 1


def _template():
    from af_indirect_load_simt.template import SimtTemplate

    return SimtTemplate()


@hookimpl
def af_register_templates(register):
    register(deferred("simt", _template))
