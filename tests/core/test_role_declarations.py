"""A class filling a role whose tiles the schedulers pad must say itself how far it reads past a tile.

The ApiCall base answers ``read_past_tiles`` with 0 ("nothing is read past a tile"); a gather or chain
class that forgot the method would make that memory-safety claim by omission, and the scheduler would
size its tiles by it. ``api_call_for`` refuses such a class, naming it, its plugin, the role and the
method; a template asking for it is rejected with that plugin error as its reason.
"""

from __future__ import annotations

from typing import ClassVar

import fake_backend
import pytest
from fake_backend import FakeLanesGather, FakeLoadRows, FakeStoreRows
from fake_backend.graphs import offset_chain

from af_core.autofuser import Autofuser
from af_core.backend import (
    ROLE_DECLARATIONS,
    ROLE_PROTOCOLS,
    GatherMode,
    Role,
    RoleCall,
    _members,
    api_call_for,
    undeclared,
)
from af_core.codegen.api_call import ApiCall
from af_core.errors import PluginError, ScheduleError
from af_core.registry import get_registry


class SilentGather(FakeLanesGather):
    """The fake lane gather, but answering ``read_past_tiles`` from the base (as a forgetful author would)."""

    name: ClassVar[str] = "SilentGather"
    read_past_tiles = ApiCall.read_past_tiles


class PerTileGather(SilentGather):
    """Declares the per-tile question only: that is an answer too."""

    name: ClassVar[str] = "PerTileGather"

    @classmethod
    def read_past_tile(cls, node, impl, tensor) -> int:
        return 32


def test_the_base_answers_are_marked_and_a_subclass_answer_is_not():
    assert undeclared(SilentGather, Role.GATHER) == ["read_past_tile or read_past_tiles"]
    assert undeclared(SilentGather, Role.VECTOR_CHAIN) == ["read_past_tile or read_past_tiles"]
    assert undeclared(FakeLanesGather, Role.GATHER) == []
    assert undeclared(PerTileGather, Role.GATHER) == []


@pytest.mark.parametrize("role", sorted(set(Role) - set(ROLE_DECLARATIONS)))
def test_roles_whose_tiles_are_not_padded_need_no_declaration(role):
    assert undeclared(SilentGather, role) == []


def test_api_call_for_refuses_a_class_that_inherits_the_claim():
    with fake_backend.installed(api_calls=(SilentGather, FakeLoadRows, FakeStoreRows)):
        with pytest.raises(PluginError) as info:
            api_call_for(Role.GATHER, GatherMode.LANES)
    text = str(info.value)
    for part in (
        "'SilentGather'",
        f"'{fake_backend.PLUGIN}'",
        fake_backend.DIST,
        "'gather'",
        "read_past_tile",
    ):
        assert part in text


def test_a_template_asking_for_such_a_class_is_rejected_with_the_plugin_error():
    with fake_backend.installed(api_calls=(SilentGather, FakeLoadRows, FakeStoreRows)):
        with pytest.raises(ScheduleError, match="template raised PluginError: ApiCall 'SilentGather'"):
            Autofuser().schedule(offset_chain())


def test_a_class_that_answers_per_tile_is_chosen():
    with fake_backend.installed(api_calls=(PerTileGather, FakeLoadRows, FakeStoreRows)):
        assert api_call_for(Role.GATHER, GatherMode.LANES) is PerTileGather


class BareGather:
    """A gather class written without the ApiCall base: it answers one of the gather role's questions."""

    name: ClassVar[str] = "BareGather"
    roles: ClassVar[frozenset[Role]] = frozenset({Role.GATHER})
    gather_modes: ClassVar[frozenset[GatherMode]] = frozenset({GatherMode.LANES})
    priority: ClassVar[int] = 0

    @classmethod
    def read_past_tiles(cls, node, impl) -> int:
        return 0

    def generate(self, node, ctx) -> str:
        return ""


def test_api_call_for_refuses_a_class_missing_its_roles_questions_naming_them():
    with fake_backend.installed(api_calls=(BareGather, FakeLoadRows, FakeStoreRows)):
        with pytest.raises(PluginError) as info:
            api_call_for(Role.GATHER, GatherMode.LANES)
    text = str(info.value)
    assert "'BareGather'" in text and fake_backend.DIST in text and "'gather'" in text
    assert "has no form_note, gather_scratch, predicted_counters, read_past_tile (GatherCall" in text


def test_the_api_call_base_answers_every_question_of_every_role_protocol():
    """The base documents each answer; a class deriving from it lacks none (only the declarations of
    ROLE_DECLARATIONS must be its own)."""
    for role, protocol in ROLE_PROTOCOLS.items():
        assert _members(RoleCall) <= _members(protocol), role
        assert all(hasattr(ApiCall, m) for m in _members(protocol)), role
    for groups in ROLE_DECLARATIONS.values():
        for group in groups:
            assert any(m in _members(RoleCall) for m in group)


def test_every_installed_api_call_answers_what_its_roles_need():
    """Whatever this environment installs (nothing in ``core``, every back end in ``integration``)."""
    for entry in get_registry().api_calls.entries():
        for role in sorted(entry.value.roles):
            assert undeclared(entry.value, role) == [], (entry.name, role)
            protocol = ROLE_PROTOCOLS.get(role, RoleCall)
            assert all(hasattr(entry.value, m) for m in _members(protocol)), (entry.name, role)
