"""Which plugins a compilation uses is chosen at the API edge: ``Autofuser(registry=...)`` and
``TwinSession(registry=...)`` compile with the registry they are given, whatever the process's is, and a
:class:`ScheduleResult` carries it on to code generation and the twin. The role lookups the plugin contract
offers (``api_call_for(role)``, no registry argument) answer from it because the schedule and the code
generator run plugin code under :func:`use_registry`.

The fake back end is a registry of its own here; the process's registry (af-core alone in ``tox -e core``,
every plugin in ``tox -e integration``) is never replaced.
"""

from __future__ import annotations

import fake_backend
import numpy as np
import pytest
from fake_backend.graphs import offset_chain

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.policy import PolicyError, SelectionPolicy
from af_core.registry import Kind, get_registry, lookup_op, use_registry
from af_core.twin import TwinSession


@pytest.fixture(scope="module")
def fake():
    """The fake back end's registry, not put in force."""
    return fake_backend.fake_registry()


@pytest.fixture(autouse=True)
def _no_official_check(monkeypatch):
    # the fake kernels are not AscendC (see fake_backend's docstring)
    monkeypatch.setenv("AF_ASCENDC_CHECK", "0")


@pytest.fixture(scope="module")
def graph(fake):
    """The fake op ``FakeOffset`` is the fake registry's: the graph is built with that registry in force."""
    with use_registry(fake):
        return offset_chain()


def test_an_autofuser_compiles_with_its_own_registry_and_the_process_one_stays(fake, graph):
    process = get_registry()
    scheduled = Autofuser(registry=fake).schedule(graph)
    assert scheduled.registry is fake
    # the fake registry's templates only (the process's may hold simd, simt, ...): one proposes, one refuses
    assert {c.template for c in scheduled.cases} == {"fake_lanes"}
    assert {r.template for r in scheduled.rejections} == {"fake_refuser"}
    result = Autofuser(registry=fake).generate(scheduled)
    assert get_registry() is process
    assert lookup_op("FakeOffset") is process.ops.get("FakeOffset")  # not the fake one, unless installed
    # the same artifacts as with the fake registry put in force for the whole compilation
    with use_registry(fake):
        in_force = Autofuser().compile(graph)
    assert result.kernel == in_force.kernel
    assert result.tiling == in_force.tiling
    # the fake ApiCalls, found by role from inside the fake template, wrote the kernel
    calls = {n.api_call for case in scheduled.cases for stage in case.impl.stages for n in stage.nodes}
    assert fake_backend.FakeLanesGather.name in calls


def test_a_twin_session_builds_with_its_registrys_headers_and_matches_the_reference(fake, graph):
    session = TwinSession(graph, registry=fake)
    assert session.runner.registry is fake
    run = session.check({"a0": 5, "a1": 7, "b0": 4, "b1": 3}, seed=3)
    assert run.ok, run.describe()
    assert run.template.startswith("fake_lanes")
    np.testing.assert_array_equal(run.twin.outputs["y"], run.reference["y"])


def test_use_registry_nests_and_restores_the_previous_one_after_an_error(fake):
    process = get_registry()
    other = fake_backend.fake_registry()
    with use_registry(fake):
        assert get_registry() is fake
        with pytest.raises(RuntimeError), use_registry(other):
            assert get_registry() is other
            raise RuntimeError("inside")
        assert get_registry() is fake
    assert get_registry() is process


def test_the_options_policy_must_be_one_of_the_autofusers_registry(fake):
    mine = SelectionPolicy("mine", "cheapest first", [("cost", "min")])
    with pytest.raises(PolicyError, match=r"unknown selection policy 'mine' \(installed: cost, seed\)"):
        Autofuser(AutofuserOptions(), registry=fake).registry.policy(mine.name)
    assert Autofuser(AutofuserOptions(selection="cost"), registry=fake).registry is fake


def test_typed_tables_are_by_name_and_a_kind_is_named_by_its_enum(fake):
    assert fake.templates.names() == sorted(fake.templates.names())
    assert [e.name for e in fake.api_calls.entries()] == fake.api_calls.names()
    assert fake.get("api_call", "FakeLanesGather") is fake.api_calls.get("FakeLanesGather")
    assert fake.of_kind(Kind.TEMPLATE).names() == fake.templates.names()
    assert "FakeOffset" in fake.ops and fake.ops.lookup("FakeOffset") is fake.ops.get("FakeOffset")
    with pytest.raises(ValueError, match=r"no registration kind 'templates' \(kinds: op, api_call, "):
        fake.names("templates")
