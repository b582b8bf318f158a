"""Contributions: plugins add score terms and resource formulas to cases; junk and crashes are diagnostics."""

from __future__ import annotations

import types

import attrs
import pytest
import sympy

from af_core import hookimpl
from af_core.plugin_manager import AfPluginManager
from af_core.schedule.contributions import ResourceFormula, ScoreTerm, apply_contributions
from af_core.schedule.scheduler import limit_workspace
from af_core.tiling.spec import CORE_NUM, TilingSpec, field

N = sympy.Symbol("N", integer=True, positive=True)


@attrs.define
class FakeCase:
    """What apply_contributions reads of a case."""

    label: str
    tiling: TilingSpec
    contributions: list = attrs.Factory(list)


def case(label: str = "rows") -> FakeCase:
    spec = TilingSpec(score=sympy.Integer(2), resources={"ub_bytes": 64 * N})
    spec.add("tile", N * 2)
    return FakeCase(label, spec)


def manager(*answers) -> AfPluginManager:
    """One plugin per answer (plugin names p0, p1, ... in that order); an answer is a value or a callable."""
    plugins = []
    for i, answer in enumerate(answers):
        module = types.ModuleType(f"contrib{i}")

        @hookimpl
        def af_case_contributions(case, ctx, _answer=answer):
            return _answer(case) if callable(_answer) else _answer

        module.af_case_contributions = af_case_contributions
        plugins.append((f"p{i}", module, f"af-contrib-{i}"))
    return AfPluginManager(env={}, load_entry_points=False, extra_plugins=tuple(plugins))


def apply(cases, *answers):
    return apply_contributions(cases, None, manager(*answers), ["N"])


def test_score_terms_add_up_and_resources_are_merged_with_their_distribution():
    c = case()
    diagnostics = apply(
        [c],
        [ScoreTerm("l2_bonus", 3 * CORE_NUM, "fits L2")],
        [
            ScoreTerm("tile_bonus", field("tile"), "big tiles"),
            ResourceFormula("l2_bytes", 128 * N, "rows in L2"),
        ],
    )
    assert diagnostics == []
    assert sympy.expand(c.tiling.score - (2 + 3 * CORE_NUM + field("tile"))) == 0
    assert c.tiling.resources == {"ub_bytes": 64 * N, "l2_bytes": 128 * N}
    assert [(a.kind, a.name, a.plugin, a.distribution) for a in c.contributions] == [
        ("score", "l2_bonus", "p0", "af-contrib-0"),
        ("score", "tile_bonus", "p1", "af-contrib-1"),
        ("resource", "l2_bytes", "p1", "af-contrib-1"),
    ]


def test_an_int_is_accepted_and_none_contributes_nothing():
    c = case()
    assert apply([c], [ScoreTerm("one", 1, "why")], None) == []
    assert c.tiling.score == 3 and len(c.contributions) == 1


def boom(_case):
    raise RuntimeError("contributor crashed")


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (boom, "raised RuntimeError: contributor crashed"),
        ({"score": 1}, "returned dict, not a list"),
        (["bonus"], "returned str, not a ScoreTerm or ResourceFormula"),
        ([ScoreTerm("t", "N*2", "text")], "is a str, not a sympy expression"),
        ([ScoreTerm("t", sympy.Symbol("secret"), "r")], "uses secret, which are neither sizes"),
        ([ScoreTerm("t", N / 3, "r")], "has no int64 form"),
        ([ScoreTerm("t", sympy.sin(N), "r")], "has no int64 form"),
        ([ScoreTerm("bad name", 1, "r")], "is not an identifier"),
        ([ScoreTerm("t", 1, 7)], "non-text reason"),
        ([ResourceFormula("ub_bytes", N, "r")], "resource 'ub_bytes' is already defined"),
        ([ScoreTerm("t", 1, "r"), ScoreTerm("t", 2, "r")], "score contribution 't' twice"),
    ],
)
def test_junk_or_a_crash_is_a_diagnostic_naming_the_plugin_and_the_others_still_apply(answer, said):
    c = case("simd/db")
    good = [ScoreTerm("good", 5, "a well-formed term")]
    diagnostics = apply([c], answer, good)
    assert len(diagnostics) == 1
    d = diagnostics[0]
    assert (d.plugin, d.distribution, d.case) == ("p0", "af-contrib-0", "simd/db")
    assert said in d.reason and "p0 (af-contrib-0) on simd/db" in str(d)
    assert c.tiling.score == 7 and [a.name for a in c.contributions] == ["good"]  # p0's answer dropped whole


def test_a_partly_bad_answer_is_dropped_whole():
    c = case()
    diagnostics = apply([c], [ResourceFormula("l2_bytes", N, "ok"), ScoreTerm("t", "1", "text")])
    assert len(diagnostics) == 1 and c.contributions == [] and "l2_bytes" not in c.tiling.resources


def test_a_resource_two_plugins_contribute_is_kept_from_the_first():
    c = case()
    diagnostics = apply(
        [c], [ResourceFormula("l2_bytes", N, "first")], [ResourceFormula("l2_bytes", 2 * N, "2nd")]
    )
    assert c.tiling.resources["l2_bytes"] == N
    assert [d.plugin for d in diagnostics] == ["p1"] and "already defined" in diagnostics[0].reason


def test_each_case_is_asked():
    cases = [case("a"), case("b")]
    apply(cases, lambda c: [ScoreTerm("by_label", 10 if c.label == "b" else 0, "prefers b")])
    assert [c.tiling.score for c in cases] == [2, 12]


def test_the_workspace_limit_is_a_constraint_naming_the_option_only_where_it_can_fail():
    c = case()
    limit_workspace(c, 4096)
    assert c.tiling.constraints == []  # no workspace: the rule holds for every shape
    c.tiling.workspace = 16 * N
    limit_workspace(c, 4096)
    (rule,) = c.tiling.constraints
    assert rule.expr == sympy.Le(16 * N, 4096)
    assert rule.reason == "workspace exceeds AutofuserOptions.workspace_limit (4096 bytes)"
