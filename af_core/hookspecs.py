"""Hook specifications: the whole contract between af_core and its plugins.

Every hook here is documented in ``docs/hooks.md``; a test fails when one is
not. Registration hooks receive a ``register`` callback (the pattern of
``llm``'s ``register_models``): plugins hand over values, the core owns
validation, duplicate detection and bookkeeping of which distribution
registered what.

Hooks are called once per plugin, in load order (the core first, then
entry points sorted by name), so a failure can be pinned on one plugin.
Because the core calls each implementation itself, pluggy's ordering and
wrapping options (``tryfirst``, ``trylast``, ``wrapper``, ``hookwrapper``)
would have no effect: the plugin manager refuses a plugin that uses them,
with a load error naming the plugin and the hook.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import argparse

    from af_core.ops.opdef import OpDef
    from af_core.platform import Platform
    from af_core.policy import SelectionPolicy

# Typing of the hooks. pluggy checks an implementation's argument names against these specs, and the type
# checker never relates the two, so the annotations here are documentation. The classes several hooks pass
# (ApiCall, ApiSource, Template, Sample, Case, ScheduleContext, ScoreTerm, ResourceFormula) belong to the
# schedule, the code generator and the sample graphs, layers above this module that reach it at run time
# through the plugin manager; naming them here, even for the type checker alone, would tie the layers into
# one import cycle (tools/check_layers.py counts type-only imports). So those hooks annotate what this layer
# sees -- any object -- and each docstring names the class the core passes or expects; the registry checks
# every registered value's shape and names the plugin when it is wrong.

#: ``register(value)``: hands one value (or an ``af_core.deferred`` entry) to the core's registry
Register = Callable[[Any], None]

#: The version of this contract. A plugin module states the version it was written against as
#: ``AF_CONTRACT_VERSION = <int>``; the plugin manager refuses one that does not fit (af_core.contract:
#: another version, or none, except one version behind when no change since touches the plugin), so an
#: incompatible core and plugin fail at load with both named instead of misbehaving later. Raised on any
#: incompatible change to the hooks below, to what they pass, to a core module plugins import or to a
#: default they rely on; each raise adds its entry to ``af_core.contract.CHANGES``.
CONTRACT_VERSION = 1

hookspec = pluggy.HookspecMarker("af_core")
hookimpl = pluggy.HookimplMarker("af_core")


@hookspec
def af_register_ops(register: Callable[[OpDef], None]) -> None:
    """Register op definitions.

    Called once per plugin when the plugin manager is built.

    :param register: ``register(opdef)`` where ``opdef`` is an
        :class:`af_core.ops.opdef.OpDef`. Registering an op type that another
        distribution already registered raises ``DuplicateRegistrationError``
        naming both.
    :return: ignored.
    """


@hookspec
def af_register_api_calls(register: Register) -> None:
    """Register ApiCall classes, the code generators of single nodes.

    Called once per plugin when the plugin manager is built.

    :param register: ``register(api_call_class)``; the class must subclass
        :class:`af_core.codegen.api_call.ApiCall` and set a unique ``name``,
        the name ImplGraph nodes refer to. A class that fills back-end roles
        for the schedulers lists them in ``roles``
        (:class:`af_core.backend.Role`) and answers the capability
        classmethods of :class:`~af_core.codegen.api_call.ApiCall`.
    :return: ignored.
    """


@hookspec
def af_register_api_sources(register: Register) -> None:
    """Register AscendC API sources: C++ text inlined into generated kernels.

    Called once per plugin when the plugin manager is built.

    :param register: ``register(api_source)`` with an
        :class:`af_core.codegen.api_source.ApiSource` (unique name, C++ text,
        names of the sources it depends on). A kernel inlines each source it
        uses exactly once, dependencies first.
    :return: ignored.
    """


@hookspec
def af_register_templates(register: Register) -> None:
    """Register IndirectLoad kernel templates.

    Called once per plugin when the plugin manager is built.

    :param register: ``register(template)`` with an object implementing
        :class:`af_core.schedule.template.Template` (a unique ``name``,
        ``propose(graph, node, ctx)`` returning cases or rejections).
    :return: ignored.
    """


@hookspec
def af_register_samples(register: Register) -> None:
    """Register sample graphs: what ``afc demo`` compiles and runs, and what docs and tests show.

    Called once per plugin when the plugin manager is built; samples keep the
    order of registration, after the core's own.

    :param register: ``register(sample)`` with an :class:`af_core.samples.Sample`
        (a unique ``name``, a description, a function building the graph and
        the concrete shapes it is shown with). A plugin registers the samples
        that use its own ops.
    :return: ignored.
    """


@hookspec
def af_register_selection_policies(register: Callable[[SelectionPolicy], None]) -> None:
    """Register selection policies: how the host tiling picks one case among those that fit.

    Called once per plugin when the plugin manager is built.

    :param register: ``register(policy)`` with an
        :class:`af_core.policy.SelectionPolicy` (a unique ``name``, a
        description and a lexicographic ``order`` of ``(quantity, direction)``
        pairs). The same order drives the Python tiling and the generated C++.
    :return: ignored.
    """


@hookspec
def af_case_contributions(case: Any, ctx: Any) -> Sequence[Any] | None:
    """Contribute score terms and resource formulas to a case another plugin's template proposed.

    Called plugin by plugin, for every case, after every template proposed.

    :param case: the :class:`af_core.schedule.case.Case` (read it, do not change it).
    :param ctx: the :class:`af_core.schedule.template.ScheduleContext`.
    :return: ``None`` or a list of :class:`af_core.schedule.contributions.ScoreTerm`
        (added to the case's score) and
        :class:`af_core.schedule.contributions.ResourceFormula` (a new
        resource of the case). Anything malformed, and an exception, is a
        diagnostic naming the plugin; its contribution to that case is dropped.
    """


@hookspec
def af_twin_include_dirs(platform: Platform) -> Sequence[str | os.PathLike[str]] | None:
    """Directories holding the CPU twin's headers for a platform.

    Called (all plugins, results concatenated in plugin order) whenever the
    twin runner builds a kernel.

    :param platform: the :class:`af_core.platform.Platform` the kernel targets.
    :return: a list of directory paths (``str`` or ``pathlib.Path``), or ``None``.
    """


@hookspec
def af_register_commands(
    register: Callable[
        [str, str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]], None
    ],
) -> None:
    """Register ``afc`` subcommands.

    Called once per plugin, only when ``afc`` is run with a command word that
    is not one of its own (so ``afc --help`` and the built-in commands load no
    plugin for it). A plugin module implementing this hook should import its
    heavy libraries inside ``run``, not at import time.

    :param register: ``register(name, help, configure, run)``: ``name`` the
        command word (it may not shadow a built-in command or another
        plugin's), ``help`` one line for ``afc NAME --help``, ``configure(parser)``
        adds the command's arguments to an ``argparse`` parser, ``run(args)``
        executes it and returns the exit code (None or 0 success, 1 a mismatch,
        2 a user error, 3 an internal error; raise ``af_core.errors.UsageError``
        for a one-line user error). ``run`` is isolated: any other exception, a
        ``SystemExit`` whose code is not None or 0 to 3, another return value or
        a failing ``configure`` is printed as one line naming the plugin, its
        distribution and the command, and ``afc`` exits 3.
    :return: ignored.
    """
