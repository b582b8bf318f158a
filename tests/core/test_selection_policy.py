"""Selection policies: the data, its registration through the hook, option validation, the Python choice."""

from __future__ import annotations

import types

import pytest
import sympy

from af_core import hookimpl
from af_core.autofuser import AutofuserOptions
from af_core.errors import TilingError
from af_core.plugin_manager import AfPluginManager
from af_core.policy import COST, SEED, OrderTerm, PolicyError, SelectionPolicy, better_than_best
from af_core.registry import Registry, get_registry, reset_registry
from af_core.tiling.solve import CaseRef, solve
from af_core.tiling.spec import CORE_NUM, TilingSpec

FEWEST = SelectionPolicy(
    "fewest_cores",
    "least cores, then the smallest UB footprint",
    [("block_dim", "min"), ("resource:ub_bytes", "min")],
)


def plugin(*policies) -> types.ModuleType:
    module = types.ModuleType("af_policy_plugin")

    @hookimpl
    def af_register_selection_policies(register):
        for p in policies:
            register(p)

    module.af_register_selection_policies = af_register_selection_policies
    return module


@pytest.fixture
def with_policies():
    """The process registry with one extra plugin registering ``policies`` (restored afterwards)."""
    previous = reset_registry()

    def install(*policies, dist: str = "af-policies") -> Registry:
        manager = AfPluginManager(
            env={}, load_entry_points=False, extra_plugins=(("policies", plugin(*policies), dist),)
        )
        reset_registry(Registry(manager))
        return get_registry()

    yield install
    reset_registry(previous)


@pytest.mark.parametrize(
    ("order", "message"),
    [
        ([("speed", "max")], "order quantity 'speed'"),
        ([("score", "up")], "direction 'up'"),
        ([("resource:ub bytes", "min")], "resource:<identifier>"),
        ([("cost", "min"), ("cost", "max")], "names cost more than once"),
        ([], "order needs 1 to 16"),
        ("score", "not 'score'"),
        ([("score",)], "not a (quantity, direction) pair"),
    ],
)
def test_a_malformed_order_is_refused_with_what_is_wrong(order, message):
    with pytest.raises(PolicyError) as info:
        SelectionPolicy("p", "d", order)
    assert message in str(info.value)


def test_a_policy_name_must_be_an_identifier():
    with pytest.raises(PolicyError, match="not an identifier"):
        SelectionPolicy("fast policy", "d", [("cost", "min")])


def test_the_builtin_orders_and_their_description():
    assert SEED.order == (OrderTerm("score", "max"), OrderTerm("cost", "min"))
    assert COST.order == (OrderTerm("cost", "min"),)
    assert SEED.describe() == "max score, then min cost, then min tiling_key"
    assert FEWEST.resources == ("ub_bytes",)


def test_the_core_registers_seed_and_cost():
    registry = Registry(AfPluginManager(env={}, load_entry_points=False))
    assert registry.names("selection_policy") == ["cost", "seed"]
    assert {e.distribution for e in registry.entries("selection_policy")} == {"af-core"}
    assert registry.get("selection_policy", "seed") is SEED


def test_a_plugin_policy_is_registered_with_its_distribution_and_selectable(with_policies):
    registry = with_policies(FEWEST)
    assert registry.entry("selection_policy", "fewest_cores").distribution == "af-policies"
    assert AutofuserOptions(selection="fewest_cores").selection == "fewest_cores"


def test_an_unknown_policy_is_an_error_listing_the_installed_ones(with_policies):
    with_policies(FEWEST)
    with pytest.raises(
        PolicyError,
        match=r"unknown selection policy 'fastest' \(installed: cost, fewest_cores, "
        r"seed\)",
    ):
        AutofuserOptions(selection="fastest")
    options = AutofuserOptions()
    with pytest.raises(PolicyError, match="unknown selection policy"):
        options.selection = "fastest"  # assignment is validated too


def test_a_second_policy_of_the_same_name_is_a_load_error_naming_both(with_policies):
    registry = with_policies(SelectionPolicy("seed", "mine", [("cost", "max")]), dist="af-rival")
    assert registry.get("selection_policy", "seed") is SEED
    assert any("af-rival" in e.error and "af-core" in e.error for e in registry.load_errors)


def test_a_value_that_is_not_a_policy_is_a_load_error(with_policies):
    registry = with_policies({"name": "dict_policy"})
    assert "dict_policy" not in registry.names("selection_policy")
    assert any("is not a SelectionPolicy" in e.error for e in registry.load_errors)


def ref(key: int, score: int, cost: int, cores: int, **resources) -> CaseRef:
    spec = TilingSpec(
        score=sympy.Integer(score),
        cost=sympy.Integer(cost),
        block_dim=sympy.Integer(cores),
        resources={k: sympy.sympify(v) for k, v in resources.items()},
    )
    return CaseRef(key, f"t{key}", spec, f"t{key}")


def choose(cases, policy) -> int:
    return solve(cases, [], {}, 8, 1 << 18, (), policy).tiling_key


def test_python_choice_follows_the_order_and_ties_go_to_the_lowest_key():
    cases = [
        ref(0, 1, 50, 8, ub_bytes=100),
        ref(1, 2, 90, 4, ub_bytes=300),
        ref(2, 2, 70, 4, ub_bytes=300),
        ref(3, 0, 10, 4, ub_bytes=200),
    ]
    assert choose(cases, SEED) == 2  # highest score (1, 2), lower cost
    assert choose(cases, COST) == 3
    assert choose(cases, FEWEST) == 3  # 4 cores (1, 2, 3), least UB
    assert choose(cases, SelectionPolicy("tie", "d", [("block_dim", "min")])) == 1
    assert choose(cases, SelectionPolicy("last", "d", [("tiling_key", "max")])) == 3
    assert choose(cases, "cost") == 3  # a name is looked up among the installed policies


def test_a_case_without_a_ranked_resource_does_not_fit_under_that_policy():
    cases = [ref(0, 1, 50, 1), ref(1, 0, 60, 8, ub_bytes=500)]
    result = solve(cases, [], {}, 8, 1 << 18, (), FEWEST)
    assert result.tiling_key == 1
    assert "ranks by resource ub_bytes, which this case does not define" in result.evaluations[0].reason
    with pytest.raises(TilingError, match="which this case does not define"):
        choose(cases[:1], FEWEST)


def test_a_ranked_resource_that_leaves_int64_drops_the_case():
    cases = [ref(0, 1, 50, 1, ub_bytes=CORE_NUM * (1 << 61)), ref(1, 0, 60, 8, ub_bytes=5)]
    result = solve(cases, [], {}, 8, 1 << 18, (), FEWEST)
    assert result.tiling_key == 1 and "leaves int64" in result.evaluations[0].reason


def test_the_cpp_comparison_is_strict_and_lexicographic():
    order = SEED.order
    text = better_than_best(order, ["s", "c"], ["bs", "bc"])
    assert text == "((s > bs || (s == bs && c < bc)))"
    # the C++ keeps its pick unless strictly better, so a full tie keeps the lower key (visited first)
    assert better_than_best(COST.order, ["c"], ["bc"]) == "(c < bc)"
    three = SelectionPolicy("three", "d", [("score", "max"), ("cost", "min"), ("tiling_key", "max")]).order
    assert better_than_best(three, "xyz", "XYZ") == "((x > X || (x == X && (y < Y || (y == Y && z > Z)))))"
