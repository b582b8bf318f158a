"""A fake back end for the core's own tests: template, ApiCalls and twin headers, no plugin needed.

``tox -e core`` installs af-core alone, so the real back end (its ApiCalls
and the AscendC emulation headers of the twin) is absent there. This
package is a plugin written against the public hook contract only, and
registered through the real plugin manager, so that the core's scheduler,
code generation (kernel skeleton, scalar emitter, host tiling, infer-shape)
and twin runner (build, cache, harness, run, report parsing) run end to end
in that environment.

Its kernels are plain C++ for the small twin in ``include/``, not AscendC:
:func:`installed` therefore turns the official-header check
(``AF_ASCENDC_CHECK``, see docs/ascendc-check.md) off while the fake back
end is installed. That check guards what real back ends generate; its gate
is tested separately (``tests/core/test_fake_backend_errors.py`` shows it
still runs in front of every twin build when asked for).
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from af_core import hookimpl
from af_core.hookspecs import CONTRACT_VERSION
from af_core.plugin_manager import AfPluginManager
from af_core.registry import Registry, use_registry

from .api_calls import FakeBrokenGather, FakeLanesGather, FakeLoadRows, FakeStoreRows
from .ops import API_SOURCES, FAKE_OFFSET
from .template import FakeLanesTemplate, RefusingTemplate

__all__ = [
    "DIST",
    "INCLUDE_DIR",
    "PLUGIN",
    "FakeBrokenGather",
    "FakeLanesGather",
    "FakeLanesTemplate",
    "FakeLoadRows",
    "FakeStoreRows",
    "RefusingTemplate",
    "fake_registry",
    "installed",
    "plugin_module",
]

#: The minimal twin headers (kernel_operator.h) the fake kernels build against.
INCLUDE_DIR = Path(__file__).resolve().parent / "include"
#: The distribution name the fake plugin is registered under (shown in rejections and load errors).
DIST = "af-fake-backend"
#: Its plugin name.
PLUGIN = "fake_backend"

DEFAULT_API_CALLS = (FakeLanesGather, FakeLoadRows, FakeStoreRows, FakeBrokenGather)


def plugin_module(
    *,
    templates: Sequence[object] | None = None,
    api_calls: Sequence[type] = DEFAULT_API_CALLS,
    include_dirs: Sequence[object] | None = (INCLUDE_DIR,),
) -> types.ModuleType:
    """A plugin module implementing the registration hooks and ``af_twin_include_dirs``.

    It always registers the ``FakeOffset`` op and its API sources.

    ``templates`` default to the two-variant gather and the refusing
    template; ``include_dirs=None`` leaves the twin-header hook out.
    """
    module = types.ModuleType("af_fake_backend_plugin")
    module.AF_CONTRACT_VERSION = CONTRACT_VERSION
    chosen = list(templates) if templates is not None else [FakeLanesTemplate(), RefusingTemplate()]

    @hookimpl
    def af_register_templates(register):
        for template in chosen:
            register(template)

    @hookimpl
    def af_register_api_calls(register):
        for cls in api_calls:
            register(cls)

    @hookimpl
    def af_register_ops(register):
        register(FAKE_OFFSET)

    @hookimpl
    def af_register_api_sources(register):
        for source in API_SOURCES:
            register(source)

    module.af_register_templates = af_register_templates
    module.af_register_api_calls = af_register_api_calls
    module.af_register_ops = af_register_ops
    module.af_register_api_sources = af_register_api_sources
    if include_dirs is not None:
        dirs = list(include_dirs)

        @hookimpl
        def af_twin_include_dirs(platform):
            return dirs

        module.af_twin_include_dirs = af_twin_include_dirs
    return module


def fake_registry(**kw) -> Registry:
    """A registry of the core plus the fake plugin only (installed entry points are not loaded)."""
    manager = AfPluginManager(
        env={}, load_entry_points=False, extra_plugins=((PLUGIN, plugin_module(**kw), DIST),)
    )
    return Registry(manager)


@contextlib.contextmanager
def installed(**kw) -> Iterator[Registry]:
    """Put the fake back end's registry in force inside the block (official-header check off); the
    process's own registry is left as it was."""
    with pytest.MonkeyPatch.context() as patch:
        # the fake kernels are not AscendC: the official check does not apply (see the module docstring)
        patch.setenv("AF_ASCENDC_CHECK", "0")
        with use_registry(fake_registry(**kw)) as registry:
            yield registry
