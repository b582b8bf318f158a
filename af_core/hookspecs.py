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
def af_twin_include_dirs(platform):
    """Directories holding the CPU twin's headers for a platform.

    Called (all plugins, results concatenated in plugin order) whenever the
    twin runner builds a kernel.

    :param platform: the :class:`af_core.platform.Platform` the kernel targets.
    :return: a list of directory paths (``str`` or ``pathlib.Path``), or ``None``.
    """


@hookspec
def af_register_commands(register):
    """Register ``afc`` subcommands.

    Called once per plugin, only when ``afc`` is run with a command word that
    is not one of its own (so ``afc --help`` and the built-in commands load no
    plugin for it). A plugin module implementing this hook should import its
    heavy libraries inside ``run``, not at import time.

    :param register: ``register(name, help, configure, run)``: ``name`` the
        command word (it may not shadow a built-in command or another
        plugin's), ``help`` one line for ``afc NAME --help``, ``configure(parser)``
        adds the command's arguments to an ``argparse`` parser, ``run(args)``
        executes it and returns the exit code (0 success, 1 a mismatch, 2 a user
        error; raise ``af_core.errors.UsageError`` for a one-line user error).
    :return: ignored.
    """
