"""``expr_text`` gives exactly ``str()``'s text, whatever it printed before."""

from __future__ import annotations

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from af_core.ir.evaluate import AlignUp, CeilDiv
from af_core.ir.sizes import _polynomial_term_order, expand_polynomial, expr_text, parse, size_symbol, to_text

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


s0, s1 = SIZES[:2]
#: the calls a size formula multiplies: tile counts, clamps, remainders
CALLS = [
    sympy.floor(s0 / 4),
    sympy.ceiling(s1 / 3),
    sympy.Max(s0, s1),
    sympy.Min(s0, 8),
    sympy.Mod(s1, 5),
    sympy.floor((s0 + s1) / 7),
    sympy.Piecewise((s0, sympy.Ge(s1, 2, evaluate=False)), (s1, True)),
    AlignUp(s0 * s1, 16),
    CeilDiv(AlignUp(s1, 8) * PLAIN[1], 64),
    PLAIN[1] - 1,  # a sum as a factor: (tiles - 1)*tile
    s0 + s1 + 3,
]
monomials = st.tuples(
    st.tuples(st.integers(-9, 9), st.integers(1, 4)).map(lambda t: sympy.Rational(*t)),
    st.lists(
        st.tuples(st.sampled_from(SIZES + PLAIN + CALLS), st.sampled_from([1, 1, 2, 3, -1, -2])), max_size=3
    ),
).map(lambda t: t[0] * sympy.Mul(*(sym**k for sym, k in t[1])))
#: sums the fast term order takes: rational multiples of products of integer powers of plain symbols and calls
polynomials = st.lists(monomials, min_size=2, max_size=6).map(lambda ts: sympy.Add(*ts))


@EXAMPLES
@given(polynomials)
def test_polynomial_sums_print_in_sympys_term_order_without_its_general_path(expr):
    if not isinstance(expr, sympy.Add):
        return  # the terms cancelled
    for order in (None, "lex"):
        terms = _polynomial_term_order(expr, order)
        assert terms is not None  # the fast order took it
        assert terms == expr.as_ordered_terms(order=order)
    assert expr_text(expr) == str(expr)
    if not expr.has(sympy.Piecewise, AlignUp, CeilDiv):  # not in the size grammar
        back = parse(to_text(expr), {to_text(s): s for s in SIZES + PLAIN})
        assert sympy.expand(back - expr) == 0  # the same value (sympy versions group a product differently)


def test_sums_the_fast_order_does_not_take_fall_back_to_sympys():
    twin = sympy.Symbol(s0.name)  # same name, other assumptions: sympy's order is not by name alone
    for expr in (
        s0 + sympy.exp(s1),  # a call whose base is not itself
        s0 + sympy.sqrt(2) * s1,
        s0 + s1 ** sympy.Rational(1, 2),
        s0 + twin + 1,
    ):
        assert isinstance(expr, sympy.Add)
        assert _polynomial_term_order(expr, None) is None
        assert expr_text(expr) == str(expr)
    assert _polynomial_term_order(s0 + s1, "grlex") is None
    # an unevaluated product puts two terms on one monomial: sympy tells them apart by coefficient
    x = AlignUp(s0, 16)
    split = sympy.Add(sympy.Mul(-1, 4, x, evaluate=False), 3 * x, s1, evaluate=False)
    assert _polynomial_term_order(split, None) is None
    assert expr_text(split) == str(split)
    folded = s1 + sympy.Mul(-1, 4, x, evaluate=False) + 7
    assert _polynomial_term_order(folded, None) == folded.as_ordered_terms()
    # sympy's special case: a positive number first, then a negative multiple of one factor
    assert _polynomial_term_order(1 - s0, None) == [sympy.Integer(1), -s0] == (1 - s0).as_ordered_terms()
    assert _polynomial_term_order(1 - s0, "lex") == (1 - s0).as_ordered_terms(order="lex")
