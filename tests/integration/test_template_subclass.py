"""A template that subclasses a built-in one under another name schedules, generates code and runs.

Code generation dispatches on what a case asks for (the gather mode of its
IndirectLoad node, the roles of its ApiCalls), never on the template's name,
so a renamed subclass is a first-class template.
"""

from __future__ import annotations

import types

import pytest

from af_core import hookimpl
from af_core.autofuser import AutofuserOptions
from af_core.hookspecs import CONTRACT_VERSION
from af_core.plugin_manager import AfPluginManager
from af_core.registry import Registry, use_registry
from af_core.testing import chain_graph
from af_core.twin import TwinSession

simd = pytest.importorskip("af_indirect_load_simd.template")
sklike = pytest.importorskip("af_indirect_load_sklike.template")
simt = pytest.importorskip("af_indirect_load_simt.template")
pytestmark = pytest.mark.twin


def _renamed(base: type, name: str) -> object:
    return type(f"Renamed{base.__name__}", (base,), {"name": name})()


@pytest.fixture
def renamed_templates():
    """Three plugins' templates again, each under a new name, in a registry beside the installed ones."""
    module = types.ModuleType("my_rows_plugin")
    module.AF_CONTRACT_VERSION = CONTRACT_VERSION
    templates = [
        _renamed(simd.SimdTemplate, "my_rows"),
        _renamed(sklike.SkLikeTemplate, "my_stages"),
        _renamed(simt.SimtTemplate, "my_lanes"),
    ]

    @hookimpl
    def af_register_templates(register):
        for template in templates:
            register(template)

    module.af_register_templates = af_register_templates
    with use_registry(Registry(AfPluginManager(extra_plugins=(("my_rows", module, "my-rows"),)))):
        yield [t.name for t in templates]


@pytest.mark.parametrize("name", ["my_rows", "my_stages", "my_lanes"])
def test_renamed_builtin_compiles_and_matches_the_reference(renamed_templates, name):
    graph = chain_graph(rank=3, dim=1, dtype="float32", post=("Abs",))
    session = TwinSession(graph, AutofuserOptions(force_template=name))
    assert {c.template for c in session.scheduled.cases} == {name}
    for seed, sizes in enumerate(
        (
            {"a0": 6, "a1": 40, "a2": 16, "b0": 6, "b1": 9, "b2": 16},
            {"a0": 3, "a1": 7, "a2": 5, "b0": 3, "b1": 30, "b2": 5},
        )
    ):
        run = session.check(sizes, seed=seed, core_num=8)
        assert run.ok, run.describe()
        assert session.scheduled.case(run.twin.tiling_key).template == name
