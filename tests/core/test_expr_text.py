"""``expr_text`` gives exactly ``str()``'s text, whatever it printed before."""

from __future__ import annotations

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from af_core.ir.sizes import expand_polynomial, expr_text, size_symbol

EXAMPLES = settings(max_examples=60, deadline=None, derandomize=True)
SIZES = [size_symbol(n) for n in ("s0", "s1", "class", "K")]
PLAIN = [sympy.Symbol("OT_start"), sympy.Symbol("tile")]

leaves = st.one_of(
    st.sampled_from(SIZES + PLAIN),
    st.integers(-(2**40), 2**40).map(sympy.Integer),
    st.tuples(st.integers(-9, 9), st.integers(1, 9)).map(lambda t: sympy.Rational(*t)),
    st.floats(-1e6, 1e6, allow_nan=False).map(sympy.Float),
)


def combine(children):
    pair = st.tuples(children, children)
    return st.one_of(
        pair.map(lambda p: p[0] + p[1]),
        pair.map(lambda p: p[0] - p[1]),
        pair.map(lambda p: p[0] * p[1]),
        st.tuples(children, st.integers(2, 9)).map(lambda p: p[0] / p[1]),
        pair.map(lambda p: sympy.Max(*p, evaluate=False)),
        pair.map(lambda p: sympy.Min(*p, evaluate=False)),
        children.map(lambda e: sympy.floor(e / 3, evaluate=False)),
    )


terms = st.recursive(leaves, combine, max_leaves=8)
#: formulas as the compiler prints them: terms, constraints on terms, case splits
formulas = st.one_of(
    terms,
    st.tuples(terms, terms).map(lambda p: sympy.Le(*p, evaluate=False)),
    st.tuples(terms, terms).map(
        lambda p: sympy.Piecewise((p[0], sympy.Ge(p[1], 2, evaluate=False)), (-p[1], True), evaluate=False)
    ),
)


@EXAMPLES
@given(st.lists(formulas, min_size=1, max_size=6))
def test_expr_text_is_str(exprs):
    for expr in exprs:  # later formulas reuse the sub-expressions earlier ones printed
        assert expr_text(expr) == str(expr)
    for expr in reversed(exprs):
        assert expr_text(expr) == str(expr)


def test_a_float_prints_as_str_prints_it_alone_and_nested():
    # alone a Float shows every digit of its precision, inside a formula the shortest form
    s = SIZES[0]
    for x in (sympy.Float("0.1"), sympy.Float("2.5")):
        for expr in (x * s, x, s + x, x, sympy.Max(x, s, evaluate=False)):
            assert expr_text(expr) == str(expr)
    assert expr_text(sympy.Float("0.1")) != expr_text(sympy.Float("0.1") * s).removesuffix("*s0")


def test_values_that_are_not_sympy_print_with_str():
    from fractions import Fraction

    for value in (3, "text", Fraction(1, 3), None, (1, 2)):
        assert expr_text(value) == str(value)


@EXAMPLES
@given(formulas)
def test_expand_polynomial_is_sympy_expand(expr):
    if isinstance(expr, sympy.Expr):
        assert expand_polynomial(expr) == sympy.expand(expr)
        assert sympy.srepr(expand_polynomial(expr)) == sympy.srepr(sympy.expand(expr))


@EXAMPLES
@given(st.lists(st.tuples(st.sampled_from(SIZES + PLAIN), st.integers(-3, 3)), min_size=1, max_size=5))
def test_expand_polynomial_multiplies_out_products_of_sums(factors):
    expr = sympy.Integer(1)
    for sym, k in factors:
        expr = expr * (sym + k) * sympy.Rational(k, 2) if k else expr * (sym - 1) ** 2
    assert sympy.srepr(expand_polynomial(expr)) == sympy.srepr(sympy.expand(expr))
