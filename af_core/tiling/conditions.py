"""Conditions in case formulas, built without asking sympy to decide them.

A template's constraints, scores and counters compare formulas of the graph's sizes and of tiling fields
(``rows > tile``, ``ub_bytes <= ub_size``) and pick values by them (``Piecewise``). sympy decides a
relation as it builds it, by asking its assumption system about the difference of the sides: a
millisecond or more per new formula in a fresh process, and for these formulas it settles nothing
beyond what a constant difference shows (tests/integration/test_spec_relations_corpus.py counts it on
the corpus workloads and the samples). A ``Piecewise`` decides its conditions again as it brings them
to its canonical form, and again whenever a substitution rebuilds it.

So the helpers here decide a relation only when its sides differ by a number and otherwise keep it
open; the host tiling decides it on the run's sizes, which means the same
(tests/core/test_spec_relations.py). :func:`Select` builds the ``Piecewise`` sympy would build, with the
canonical conditions sympy would give it, and :func:`substitute` replaces symbols as ``xreplace`` does,
both without the decisions; the differential tests hold their results equal to sympy's on the corpus.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy
from sympy.core.relational import Relational

#: the order relations the helpers build and :func:`Select` brings to canonical form itself
_ORDER = (sympy.LessThan, sympy.StrictLessThan, sympy.GreaterThan, sympy.StrictGreaterThan)

#: rounds of canonical form a condition gets at most (sympy's Piecewise repeats until nothing changes)
_ROUNDS = 4


def _relation(kind: type[Relational], lhs: object, rhs: object) -> sympy.Basic:
    """``kind(lhs, rhs)`` decided now when its sides differ by a number, kept open otherwise."""
    a, b = sympy.sympify(lhs), sympy.sympify(rhs)
    if (a.is_number and b.is_number) or (a - b).is_Number:
        return kind(a, b)
    return kind(a, b, evaluate=False)


def Le(lhs: object, rhs: object) -> sympy.Basic:  # noqa: N802 - mirrors sympy.Le
    """``lhs <= rhs``: decided when the sides differ by a number, kept for the host tiling otherwise."""
    return _relation(sympy.Le, lhs, rhs)


def Lt(lhs: object, rhs: object) -> sympy.Basic:  # noqa: N802 - mirrors sympy.Lt
    """``lhs < rhs``: decided when the sides differ by a number, kept for the host tiling otherwise."""
    return _relation(sympy.Lt, lhs, rhs)


def Ge(lhs: object, rhs: object) -> sympy.Basic:  # noqa: N802 - mirrors sympy.Ge
    """``lhs >= rhs``: decided when the sides differ by a number, kept for the host tiling otherwise."""
    return _relation(sympy.Ge, lhs, rhs)


def Gt(lhs: object, rhs: object) -> sympy.Basic:  # noqa: N802 - mirrors sympy.Gt
    """``lhs > rhs``: decided when the sides differ by a number, kept for the host tiling otherwise."""
    return _relation(sympy.Gt, lhs, rhs)


def _coefficient_form(rel: Relational) -> sympy.Basic | None:
    """``rel`` in the form a ``Piecewise`` gives its conditions: sympy's canonical relation (a number on
    the right, the sides in sympy's order, no leading minus sign), then the left side's constant term
    and rational coefficient carried to the right (``2*x + 1 < y`` -> ``x < y/2 - 1/2``). None for a
    relation this does not handle."""
    rel = rel.canonical
    if not isinstance(rel, _ORDER):
        return rel if rel in (sympy.true, sympy.false) else None
    constant, rest = rel.lhs.as_coeff_Add(rational=True)
    coefficient, lhs = rest.as_coeff_Mul(rational=True)
    if coefficient == 0:
        return None
    rhs = (rel.rhs - constant) / coefficient
    kind = rel.reversed.func if coefficient < 0 else rel.func
    return _relation(kind, lhs, rhs)


def _canonical_condition(cond: sympy.Basic) -> sympy.Basic | None:
    """``cond`` with every relation in :func:`_coefficient_form`, once; None when it holds anything but
    order relations joined by And / Or."""
    if cond in (sympy.true, sympy.false):
        return cond
    if isinstance(cond, _ORDER):
        return _coefficient_form(cond)
    if isinstance(cond, (sympy.And, sympy.Or)):
        args = [_canonical_condition(a) for a in cond.args]
        if any(a is None for a in args):
            return None
        return cond if list(cond.args) == args else cond.func(*args)
    return None


def _settled_condition(cond: sympy.Basic) -> sympy.Basic | None:
    """``cond`` brought to canonical form until it stops changing, as a ``Piecewise`` does; None when
    :func:`_canonical_condition` does not handle it or it keeps changing."""
    for _ in range(_ROUNDS):
        done = _canonical_condition(cond)
        if done is None or done == cond:
            return done
        cond = done
    return None


def Select(cond: object, then: object, otherwise: object) -> sympy.Basic:  # noqa: N802 - the C++'s AfSelect
    """``Piecewise((then, cond), (otherwise, True))`` as sympy builds it, without sympy deciding ``cond``.

    The condition gets the canonical form sympy's ``Piecewise`` gives it; a condition this module does not
    handle (an equality, a ``Not``, a nested ``Piecewise``), or a ``then`` or ``otherwise`` that is a
    ``Piecewise``, goes to ``sympy.Piecewise`` itself.
    """
    c = sympy.sympify(cond)
    then, otherwise = sympy.sympify(then), sympy.sympify(otherwise)
    if then == otherwise:
        return then
    settled = None
    if not any(isinstance(e, sympy.Piecewise) for e in (then, otherwise)) and not c.has(sympy.Piecewise):
        settled = _settled_condition(c)
    if settled is None:
        return sympy.Piecewise((then, c), (otherwise, True))
    if settled is sympy.true:
        return then
    if settled is sympy.false:
        return otherwise
    return sympy.Piecewise((then, settled), (otherwise, sympy.true), evaluate=False)


def _substituted(expr: sympy.Basic, mapping: Mapping[sympy.Basic, sympy.Basic]) -> tuple[sympy.Basic, bool]:
    if expr in mapping:
        return mapping[expr], True
    if not expr.args:
        return expr, False
    args = []
    changed = False
    for arg in expr.args:
        new, moved = _substituted(arg, mapping)
        args.append(new)
        changed = changed or moved
    if not changed:
        return expr, False
    if isinstance(expr, sympy.Piecewise) and len(args) == 2 and args[1].cond is sympy.true:
        return Select(args[0].cond, args[0].expr, args[1].expr), True
    if isinstance(expr, _ORDER):
        return _relation(type(expr), *args), True
    return expr.func(*args), True


def substitute(expr: sympy.Basic, mapping: Mapping[sympy.Basic, sympy.Basic]) -> sympy.Basic:
    """``expr.xreplace(mapping)``, rebuilding relations and two-way ``Piecewise`` formulas through
    :func:`_relation` and :func:`Select` instead of letting sympy decide their conditions again."""
    return _substituted(sympy.sympify(expr), mapping)[0]
