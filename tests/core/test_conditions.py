"""af_core.tiling.conditions: relations, Select and substitute, held to what sympy builds.

- Le / Lt / Ge / Gt decide a relation whose sides differ by a number and keep any other open. An open
  relation must mean what sympy's evaluated one means: the host tiling (``evaluate_case``, the Python side
  of the generated C++) decides it on the run's sizes.
- Select and substitute must build exactly what ``sympy.Piecewise`` and ``xreplace`` build, except where
  sympy settles a relation they keep open; there the two must still agree on every size.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import pytest
import sympy
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sympy.core.relational import Relational

from af_core.ir.evaluate import AlignUp, CeilDiv
from af_core.tiling.conditions import Ge, Gt, Le, Lt, Select, substitute
from af_core.tiling.solve import CaseRef, evaluate_case
from af_core.tiling.spec import TilingSpec

S, T = sympy.symbols("S T", integer=True, positive=True)  # graph sizes
F, G = sympy.symbols("F G", integer=True)  # tiling fields: integers of unknown sign
RELATIONS = [
    (Le, sympy.Le, operator.le),
    (Lt, sympy.Lt, operator.lt),
    (Ge, sympy.Ge, operator.ge),
    (Gt, sympy.Gt, operator.gt),
]
IDS = ["Le", "Lt", "Ge", "Gt"]
PLATFORM = {"core_num": 8, "ub_size": 1024}


@pytest.mark.parametrize(("ours", "theirs", "op"), RELATIONS, ids=IDS)
@pytest.mark.parametrize(("a", "b"), [(3, 4), (4, 4), (5, 4), (sympy.Integer(-2), sympy.Rational(7, 2))])
def test_numbers_are_decided_as_sympy_decides_them(ours, theirs, op, a, b):
    decided = ours(a, b)
    assert decided is (sympy.true if op(a, b) else sympy.false)
    assert decided == theirs(a, b)


@pytest.mark.parametrize(("ours", "theirs", "op"), RELATIONS, ids=IDS)
@pytest.mark.parametrize(
    ("lhs", "rhs"), [(S, S), (S * T + 3, S * T), (AlignUp(S, 32) - 1, AlignUp(S, 32) + 1)]
)
def test_sides_that_differ_by_a_number_are_decided(ours, theirs, op, lhs, rhs):
    decided = ours(lhs, rhs)
    assert decided is (sympy.true if op(lhs - rhs, 0) else sympy.false)
    assert decided == theirs(lhs, rhs)


@pytest.mark.parametrize(("ours", "theirs", "op"), RELATIONS, ids=IDS)
def test_a_formula_stays_open_even_where_sympy_would_settle_it(ours, theirs, op):
    """``S <= 2*S`` holds for every size, and sympy says so; the helpers leave it to the host tiling."""
    lhs, rhs = S, 2 * S
    assert theirs(lhs, rhs) in (sympy.true, sympy.false)
    kept = ours(lhs, rhs)
    assert isinstance(kept, Relational)
    assert (kept.lhs, kept.rhs) == (lhs, rhs)
    assert kept.rel_op == theirs(T, S).rel_op


def _host_decides(relation: sympy.Basic, sizes: dict[str, int]) -> bool:
    """Whether the host tiling keeps a case constrained by ``relation`` (scored 1 when it holds)."""
    spec = TilingSpec()
    spec.add("used_cores", 1)
    spec.block_dim = 1
    spec.score = Select(relation, 1, 0)
    spec.require(relation, "the relation fails")
    ev = evaluate_case(CaseRef(0, "probe", spec), {**sizes, **PLATFORM})
    assert ev.fits == (ev.score == 1)
    return ev.fits


FORMULAS = [S, 4 * S + 7, AlignUp(3 * S, 32), CeilDiv(S * T, 5) + T, 2 * S * T - 3 * T]


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(RELATIONS),
    st.sampled_from(FORMULAS),
    st.sampled_from([*FORMULAS, sympy.Integer(40), sympy.Integer(1024)]),
    st.integers(1, 300),
    st.integers(1, 300),
)
def test_an_open_relation_is_decided_at_run_time_as_sympy_decides_it_on_the_sizes(rel, lhs, rhs, s, t):
    ours, theirs, _ = rel
    values = {S: s, T: t}
    expected = bool(theirs(lhs.xreplace(values), rhs.xreplace(values)))
    assert _host_decides(ours(lhs, rhs), {"S": s, "T": t}) is expected


# -- Select and substitute against sympy.Piecewise and xreplace ------------------------------------------

SYMBOLS = [S, T, F, G]


def _formulas(atoms: list[sympy.Basic]) -> st.SearchStrategy[sympy.Expr]:
    """Sums of up to three integer multiples of ``atoms`` and a constant."""
    terms = st.tuples(st.integers(-4, 4).filter(bool), st.sampled_from(atoms))
    return st.builds(
        lambda ts, c: sum((k * x for k, x in ts), sympy.Integer(c)),
        st.lists(terms, min_size=0, max_size=3),
        st.integers(-9, 9),
    )


# the two sides of a relation share no atom, as a template's sizes against its limits or fields: sympy's
# own Piecewise flips a relation with a term on both sides back and forth without end
# (``2*G - 4*S*T >= S - 4*S*T``), and Select leaves such a condition to it
left_sides = _formulas([S, T, S * T, AlignUp(S, 32)])
right_sides = _formulas([F, G, F * G, CeilDiv(F, 3)])
formulas = _formulas([S, T, F, G, S * T, F * S, AlignUp(S, 32), CeilDiv(T, 3)])
relations = st.builds(lambda rel, a, b: rel[0](a, b), st.sampled_from(RELATIONS), left_sides, right_sides)
conditions = st.one_of(
    relations,
    st.builds(sympy.And, relations, relations),
    st.builds(sympy.Or, relations, relations),
    st.builds(lambda a, b, c: sympy.And(a, sympy.Or(b, c)), relations, relations, relations),
)
points = st.fixed_dictionaries(
    {S: st.integers(1, 200), T: st.integers(1, 200), F: st.integers(-200, 200), G: st.integers(-200, 200)}
)


def _open_relations(expr: sympy.Basic) -> int:
    return len(expr.atoms(Relational))


def _sympy_or_nothing(build: Callable[[], sympy.Basic]) -> sympy.Basic:
    """What sympy builds; an example it cannot build is not one to compare with.

    sympy's Piecewise brings some conditions to canonical form and back without end (a relation such as
    ``2*F - CeilDiv(F, 3) <= 0``) until the recursion limit; Select hands a condition it cannot settle in
    a few rounds to sympy, so it fails the same way there (and so does building such an example).
    """
    try:
        return build()
    except RecursionError:
        assume(False)
        raise


def _same_or_settled_by_sympy(ours: sympy.Basic, theirs: sympy.Basic, sample: list[dict]) -> None:
    """Equal, or sympy settled a relation ours keeps open, and the two agree on every sampled point."""
    if ours == theirs:
        return
    assert _open_relations(theirs) < _open_relations(ours), (ours, theirs)
    for point in sample:
        assert ours.xreplace(point) == theirs.xreplace(point), (ours, theirs, point)


@settings(max_examples=300, deadline=None)
@given(conditions, formulas, formulas, st.lists(points, min_size=3, max_size=3))
def test_select_builds_the_piecewise_sympy_builds(cond, then, otherwise, sample):
    theirs = _sympy_or_nothing(lambda: sympy.Piecewise((then, cond), (otherwise, True)))
    _same_or_settled_by_sympy(Select(cond, then, otherwise), theirs, sample)


@pytest.mark.parametrize(
    "cond",
    [
        Ge(2 * S * T, 4 * F),  # a common coefficient leaves the left side: S*T >= 2*F
        Lt(-3 * F + 1, G),  # a leading minus sign flips the relation
        sympy.And(Gt(F, S), Le(2 * G + 6, T)),
        sympy.Or(Lt(S * T, 1024), Ge(F, AlignUp(S, 32))),
    ],
    ids=["coefficient", "minus", "and", "or"],
)
def test_select_gives_a_condition_sympys_canonical_form(cond):
    ours = Select(cond, S, T)
    assert ours == sympy.Piecewise((S, cond), (T, True))
    assert isinstance(ours, sympy.Piecewise)


def test_select_of_a_decided_condition_or_equal_branches_is_the_branch():
    assert Select(Le(3, 4), S, T) == S
    assert Select(Gt(S, S), S, T) == T
    assert Select(Le(F, G), S + 1, 1 + S) == S + 1


def test_select_leaves_what_it_does_not_handle_to_sympy():
    """An equality, a Not and a nested Piecewise go to sympy.Piecewise unchanged."""
    for cond in (
        sympy.Eq(F, G),
        sympy.Not(sympy.Eq(F, 2 * G)),
        sympy.Piecewise((Le(F, G), Ge(S, T)), (True, True)),
    ):
        assert Select(cond, S, T) == sympy.Piecewise((S, cond), (T, True))
    nested = Select(Le(F, G), S, T)
    assert Select(Ge(S, F), nested, 1) == sympy.Piecewise((nested, Ge(S, F)), (1, True))


# a symbol and a formula of the same side's atoms to put in its place, with a limit from the other side
replacements = st.one_of(
    st.tuples(st.sampled_from([S, T]), left_sides, right_sides),
    st.tuples(st.sampled_from([F, G]), right_sides, left_sides),
)


@settings(max_examples=200, deadline=None)
@given(conditions, formulas, formulas, formulas, replacements, st.lists(points, min_size=3, max_size=3))
def test_substitute_builds_what_xreplace_builds(cond, then, otherwise, outer, replacement, sample):
    symbol, value, limit = replacement
    expr = _sympy_or_nothing(
        lambda: outer * Select(cond, then, otherwise) + Select(Gt(symbol, limit), then, 0)
    )
    mapping = {symbol: value}
    theirs = _sympy_or_nothing(lambda: expr.xreplace(mapping))
    _same_or_settled_by_sympy(substitute(expr, mapping), theirs, sample)


def test_substitute_keeps_a_formula_without_the_symbols_as_it_is():
    expr = S * Select(Le(F, 2 * S), T, 1)
    assert substitute(expr, {G: 5}) is expr
    assert substitute(expr, {F: G + 1}) == expr.xreplace({F: G + 1})
