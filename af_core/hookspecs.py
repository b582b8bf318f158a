"""Hook specifications: the whole contract between af_core and its plugins.

Every hook here is documented in ``docs/hooks.md``; a test fails when one is
not. Registration hooks receive a ``register`` callback (the pattern of
``llm``'s ``register_models``): plugins hand over values, the core owns
validation, duplicate detection and bookkeeping of which distribution
registered what.

Hooks are called once per plugin, in load order (the core first, then
entry points sorted by name), so a failure can be pinned on one plugin.
"""

from __future__ import annotations

import pluggy

#: The version of this contract. A plugin module states the version it was written against as
#: ``AF_CONTRACT_VERSION = <int>``; the plugin manager refuses to load one that states another
#: version (or none), so an incompatible core and plugin fail at load with both named instead of
#: misbehaving later. Raised on any incompatible change to the hooks below or to what they pass.
CONTRACT_VERSION = 1

hookspec = pluggy.HookspecMarker("af_core")
hookimpl = pluggy.HookimplMarker("af_core")


@hookspec
def af_register_ops(register):
    """Register op definitions.

    Called once per plugin when the plugin manager is built.

    :param register: ``register(opdef)`` where ``opdef`` is an
        :class:`af_core.ops.opdef.OpDef`. Registering an op type that another
        distribution already registered raises ``DuplicateRegistrationError``
        naming both.
    :return: ignored.
    """


@hookspec
def af_register_api_calls(register):
    """Register ApiCall classes, the code generators of single nodes.

    Called once per plugin when the plugin manager is built.

    :param register: ``register(api_call_class)``; the class must subclass
        :class:`af_core.codegen.api_call.ApiCall` and set a unique ``name``,
        the name ImplGraph nodes refer to.
    :return: ignored.
    """


@hookspec
def af_register_api_sources(register):
    """Register AscendC API sources: C++ text inlined into generated kernels.

    Called once per plugin when the plugin manager is built.

    :param register: ``register(api_source)`` with an
        :class:`af_core.codegen.api_source.ApiSource` (unique name, C++ text,
        names of the sources it depends on). A kernel inlines each source it
        uses exactly once, dependencies first.
    :return: ignored.
    """


@hookspec
def af_register_templates(register):
    """Register IndirectLoad kernel templates.

    Called once per plugin when the plugin manager is built.

    :param register: ``register(template)`` with an object implementing
        :class:`af_core.schedule.template.Template` (a unique ``name``,
        ``propose(graph, node, ctx)`` returning cases or rejections).
    :return: ignored.
    """


@hookspec
def af_register_selection_policies(register):
    """Register selection policies: how the host tiling picks one case among those that fit.

    Called once per plugin when the plugin manager is built.

    :param register: ``register(policy)`` with an
        :class:`af_core.tiling.policy.SelectionPolicy` (a unique ``name``, a
        description and a lexicographic ``order`` of ``(quantity, direction)``
        pairs). The same order drives the Python tiling and the generated C++.
    :return: ignored.
    """


@hookspec
def af_case_contributions(case, ctx):
    """Contribute score terms and resource formulas to a case another plugin's template proposed.

    Called plugin by plugin, for every case, after every template proposed.

    :param case: the :class:`af_core.schedule.case.Case` (read it, do not change it).
    :param ctx: the :class:`af_core.schedule.scheduler.ScheduleContext`.
    :return: ``None`` or a list of :class:`af_core.schedule.contributions.ScoreTerm`
        (added to the case's score) and
        :class:`af_core.schedule.contributions.ResourceFormula` (a new
        resource of the case). Anything malformed, and an exception, is a
        diagnostic naming the plugin; its contribution to that case is dropped.
    """


@hookspec
def af_twin_include_dirs(platform):
    """Directories holding the CPU twin's headers for a platform.

    Called (all plugins, results concatenated in plugin order) whenever the
    twin runner builds a kernel.

    :param platform: the :class:`af_core.platform.Platform` the kernel targets.
    :return: a list of directory paths (``str`` or ``pathlib.Path``), or ``None``.
    """
