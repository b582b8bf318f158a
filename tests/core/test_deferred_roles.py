"""Deferred ApiCalls that declare their roles are built only by a lookup for a role they fill.

``deferred(name, load, roles=...)``: ``installed(role)`` answers from the
declaration, ``api_call_for(role)`` builds only the entries that may fill the
role, and a class that does not fill exactly the declared roles is a
PluginError naming the plugin, the entry and both role sets.
"""

from __future__ import annotations

import types

import pytest
from fake_backend import DIST, PLUGIN
from fake_backend.api_calls import FakeBrokenGather, FakeLanesGather, FakeLoadRows

from af_core import deferred, hookimpl
from af_core.backend import Role, api_call_for, installed
from af_core.errors import PluginError
from af_core.hookspecs import CONTRACT_VERSION
from af_core.plugin_manager import AfPluginManager
from af_core.registry import Registry, use_registry


def registry_of(entries: list[tuple[type, object]], built: list[str]) -> Registry:
    """The core plus one plugin registering each class deferred with the given ``roles`` (``...``: none
    declared); ``built`` collects the names of the classes as they are built."""
    module = types.ModuleType("af_deferred_roles_plugin")
    module.AF_CONTRACT_VERSION = CONTRACT_VERSION

    def loader(cls):
        def load():
            built.append(cls.name)
            return cls

        return load

    @hookimpl
    def af_register_api_calls(register):
        for cls, roles in entries:
            kw = {} if roles is ... else {"roles": roles}
            register(deferred(cls.name, loader(cls), **kw))

    module.af_register_api_calls = af_register_api_calls
    manager = AfPluginManager(env={}, load_entry_points=False, extra_plugins=((PLUGIN, module, DIST),))
    return Registry(manager)


def test_a_lookup_by_role_builds_only_the_classes_declared_for_it():
    built: list[str] = []
    declared = [(FakeLanesGather, [Role.GATHER]), (FakeLoadRows, []), (FakeBrokenGather, [])]
    with use_registry(registry_of(declared, built)):
        assert installed(Role.GATHER)
        assert not installed(Role.VECTOR_CHAIN) and not installed(Role.STORE_ROWS)
        assert built == []  # answered from the declarations
        assert api_call_for(Role.GATHER) is FakeLanesGather
        assert built == ["FakeLanesGather"]  # the two declared without the role are not built


def test_undeclared_entries_are_built_by_any_lookup_by_role():
    built: list[str] = []
    undeclared = [(FakeLanesGather, [Role.GATHER]), (FakeLoadRows, ...), (FakeBrokenGather, ...)]
    with use_registry(registry_of(undeclared, built)):
        assert not installed(Role.STORE_ROWS)
        assert sorted(built) == ["FakeBrokenGather", "FakeLoadRows"]  # built to ask their classes
        assert api_call_for(Role.GATHER) is FakeLanesGather
        assert sorted(built) == ["FakeBrokenGather", "FakeLanesGather", "FakeLoadRows"]


def test_a_class_that_does_not_fill_its_declared_roles_is_refused():
    built: list[str] = []
    lying = [(FakeLoadRows, [Role.GATHER])]  # declared as a gather, fills no role
    with use_registry(registry_of(lying, built)), pytest.raises(PluginError) as info:
        api_call_for(Role.GATHER)
    text = str(info.value)
    assert "'FakeLoadRows'" in text and PLUGIN in text and DIST in text
    assert "filling roles ['gather'] but its class fills []" in text
