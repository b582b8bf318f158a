"""The int64 contract of host tiling: Python's checked evaluation and the C++ helpers agree op by op.

Every helper the printed formulas call is compiled into a small library and
compared with :func:`af_core.tiling.int64.evaluate` on operands of every sign,
including INT64_MIN, -1 and 0; deep formulas lower, print and evaluate without
recursion.
"""

from __future__ import annotations

import ctypes
import functools

import pytest
import sympy
from hypothesis import event, given, settings
from hypothesis import strategies as st

from af_core import toolchain
from af_core.codegen.cexpr import CHECKED_HELPERS, INT_HELPERS, to_cpp
from af_core.errors import CodegenError
from af_core.ir.evaluate import AlignUp, CeilDiv, FloorDiv
from af_core.tiling.int64 import INT64_MAX, INT64_MIN, MAX_DEPTH, Int64Failure, evaluate

A = sympy.Symbol("a", integer=True)
B = sympy.Symbol("b", integer=True)

# op code -> (formula, plain helper call or None when the plain form is an operator)
OPS = {
    0: A + B,
    1: A - B,
    2: A * B,
    3: FloorDiv(A, B),
    4: CeilDiv(A, B),
    5: AlignUp(A, B),
    6: sympy.Mod(A, B, evaluate=False),
    7: sympy.floor(A / B),
    8: sympy.ceiling(A / B),
    9: sympy.Max(A, B, evaluate=False),
    10: sympy.Min(A, B, evaluate=False),
    11: sympy.Abs(A, evaluate=False),
}
DIVISIONS = {3, 4, 5, 6, 7, 8}


def _ubsan_library(work, source: str, name: str, optimize: str):
    """``source`` as a shared library with the host tiling's flags and UBSan (any overflow aborts)."""
    flags = toolchain.HOST_TILING.replace(
        optimize=optimize, extra=("-fsanitize=undefined", "-fno-sanitize-recover=all", "-shared")
    )
    return toolchain.build_program([source], work / name, flags, what=name)


@functools.cache
def library(tmp_dir: str):
    if toolchain.compiler_path() is None:
        pytest.skip("no C++ compiler")
    cases_checked = "\n".join(f"        case {k}: return {to_cpp(e, checked=True)};" for k, e in OPS.items())
    cases_plain = "\n".join(f"        case {k}: return {to_cpp(e)};" for k, e in OPS.items())
    source = f"""#include <cstdint>
namespace checked {{
{CHECKED_HELPERS}
}}
namespace plain {{
{INT_HELPERS}
}}
extern "C" int64_t af_checked(int op, int64_t a, int64_t b, int* ok_out) {{
    using namespace checked;
    bool af_ok = true;
    const int64_t value = [&]() -> int64_t {{
        switch (op) {{
{cases_checked}
        }}
        return 0;
    }}();
    *ok_out = af_ok ? 1 : 0;
    return value;
}}
extern "C" int64_t af_plain(int op, int64_t a, int64_t b) {{
    using namespace plain;
    switch (op) {{
{cases_plain}
    }}
    return 0;
}}
"""
    from pathlib import Path

    work = Path(tmp_dir)
    (work / "ops.cpp").write_text(source)
    lib = ctypes.CDLL(str(_ubsan_library(work, "ops.cpp", "libops.so", "-O2")))
    lib.af_checked.restype = ctypes.c_int64
    lib.af_checked.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(ctypes.c_int)]
    lib.af_plain.restype = ctypes.c_int64
    lib.af_plain.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    return lib


@pytest.fixture(scope="module")
def ops_lib(tmp_path_factory):
    return library(str(tmp_path_factory.mktemp("int64")))


EDGES = [
    INT64_MIN,
    INT64_MIN + 1,
    -(1 << 32),
    -7,
    -2,
    -1,
    0,
    1,
    2,
    3,
    7,
    1 << 31,
    1 << 32,
    INT64_MAX - 1,
    INT64_MAX,
]
OPERAND = st.one_of(st.sampled_from(EDGES), st.integers(-50, 50), st.integers(INT64_MIN, INT64_MAX))


def python_value(op: int, a: int, b: int) -> int | None:
    try:
        return evaluate(OPS[op], {"a": a, "b": b})
    except Int64Failure:
        return None


def exact(op: int, a: int, b: int) -> int | None:
    """The mathematical value, independent of the lowering (None: undefined)."""
    if op in DIVISIONS and b == 0:
        return None
    value = {
        0: lambda: a + b,
        1: lambda: a - b,
        2: lambda: a * b,
        3: lambda: a // b,
        4: lambda: -(-a // b),
        5: lambda: -(-a // b) * b,
        6: lambda: a % b,
        7: lambda: a // b,
        8: lambda: -(-a // b),
        9: lambda: max(a, b),
        10: lambda: min(a, b),
        11: lambda: abs(a),
    }[op]()
    return value if INT64_MIN <= value <= INT64_MAX else None


@settings(max_examples=400, deadline=None, derandomize=True)
@given(op=st.sampled_from(sorted(OPS)), a=OPERAND, b=OPERAND)
def test_checked_helpers_match_python_for_every_sign(ops_lib, op, a, b):
    ok = ctypes.c_int(0)
    got = ops_lib.af_checked(op, a, b, ctypes.byref(ok))
    want = python_value(op, a, b)
    if not (op == 5 and a == INT64_MIN and b == -1):  # AlignUp's ceiling step alone leaves int64 there
        assert want == exact(op, a, b)
    if want is None:
        assert ok.value == 0, f"op {op}({a}, {b}): C++ gave {got} where the contract fails"
    else:
        assert ok.value == 1 and got == want, f"op {op}({a}, {b}): C++ {got} ok={ok.value}, Python {want}"
        if op not in (0, 1, 2, 11):  # the plain forms of + - * abs rely on the guards instead
            assert ops_lib.af_plain(op, a, b) == want


def test_guard_of_a_huge_product_fails_instead_of_wrapping():
    product = sympy.Le(2 * A * B, INT64_MAX)
    assert evaluate(product, {"a": 1 << 40, "b": 1 << 20}) == 1
    with pytest.raises(Int64Failure):
        evaluate(product, {"a": 1 << 61, "b": 1 << 61})  # the exact product is 2**123; int64 wraps to 0


def test_deep_formulas_lower_print_and_evaluate_without_recursion():
    expr = A
    steps = MAX_DEPTH // 2  # a CeilDiv step nests two levels (CeilDiv, Mul), an Add step one
    for k in range(steps):
        expr = expr + B if k % 2 else CeilDiv(expr * 3, 2)
    text = to_cpp(expr, checked=True)
    assert text.count("AfCkCeilDiv(") == steps // 2
    value = evaluate(expr, {"a": 1, "b": 5}, checked=False)
    assert value > 5
    with pytest.raises(Int64Failure):
        evaluate(expr, {"a": 1, "b": 5})  # (3/2)**1000 leaves int64
    for _ in range(MAX_DEPTH // 2):
        expr = CeilDiv(expr, 2)
    with pytest.raises(CodegenError, match="nests deeper than"):
        to_cpp(expr)


def test_literals_outside_int64_are_refused():
    with pytest.raises(CodegenError, match="outside int64"):
        to_cpp(A + (1 << 63))


def test_relations_sympy_divides_by_their_leading_coefficient_compare_in_integers():
    """Piecewise turns ``56*a*b >= 128`` into ``a*b >= 16/7``: the lowering compares ``7*a*b >= 16``,
    true exactly where the rational comparison is; a fraction that is not a relation's term still fails."""
    from fractions import Fraction

    region = sympy.Piecewise((2, sympy.Ge(56 * A * B, 128) & sympy.Lt(3 * A + 6, 4 * B)), (-1, True))
    conditions = [c for _, c in region.args if c is not sympy.true]
    assert any(r.rhs == sympy.Rational(16, 7) for r in conditions[0].args)  # sympy's canonical form
    text = to_cpp(region, checked=True)
    assert "16/7" not in text and "/" not in text.replace("//", "")
    for a in range(-6, 7):
        for b in range(-6, 7):
            want = 2 if Fraction(56 * a * b) >= 128 and Fraction(3 * a + 6) < 4 * b else -1
            assert evaluate(region, {"a": a, "b": b}) == want, (a, b)
    eq = sympy.Piecewise((1, sympy.Eq(3 * A, 2 * B + 1)), (0, True))
    assert [evaluate(eq, {"a": 1, "b": b}) for b in range(3)] == [0, 1, 0]
    with pytest.raises(CodegenError, match="fraction"):
        to_cpp(A / 7 + B)


C = sympy.Symbol("c", integer=True)


def random_formula(rng, depth: int) -> sympy.Basic:
    """A random integer formula of the kinds templates write (sums, products, divisions, Max, Piecewise...)."""
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([A, B, C, sympy.Integer(rng.choice([-3, -1, 1, 2, 7, 1 << 40]))])
    x, y = random_formula(rng, depth - 1), random_formula(rng, depth - 1)
    kind = rng.randrange(11)
    if kind == 0:
        return x + y
    if kind == 1:
        return x - y
    if kind == 2:
        return x * y
    if kind == 3:
        return FloorDiv(x, y)
    if kind == 4:
        return CeilDiv(x, y)
    if kind == 5:
        return AlignUp(x, y)
    if kind == 6:
        return sympy.Mod(x, y, evaluate=False)
    if kind == 7:
        return sympy.Max(x, y, evaluate=False)
    if kind == 8:
        return sympy.Min(x, y, evaluate=False)
    if kind == 9:
        cond = (
            sympy.And(sympy.Le(x, y), sympy.Gt(y, C))
            if rng.random() < 0.5
            else sympy.Or(sympy.Lt(x, 3), sympy.Ne(y, A))
        )
        return sympy.Piecewise((x, cond), (y, True))
    return sympy.floor(x / 4) + y


@functools.cache
def formulas() -> tuple[sympy.Basic, ...]:
    import random

    rng = random.Random(12)
    return tuple(random_formula(rng, 4) for _ in range(60))


@pytest.fixture(scope="module")
def formulas_lib(tmp_path_factory):
    if toolchain.compiler_path() is None:
        pytest.skip("no C++ compiler")
    cases = "\n".join(
        f"        case {k}: return {to_cpp(f, checked=True)};" for k, f in enumerate(formulas())
    )
    source = f"""#include <cstdint>
namespace {{
{CHECKED_HELPERS}
}}
extern "C" int64_t af_formula(int k, int64_t a, int64_t b, int64_t c, int* ok_out) {{
    bool af_ok = true;
    const int64_t value = [&]() -> int64_t {{
        switch (k) {{
{cases}
        }}
        return 0;
    }}();
    *ok_out = af_ok ? 1 : 0;
    return value;
}}
"""
    work = tmp_path_factory.mktemp("formulas")
    (work / "formulas.cpp").write_text(source)
    lib = ctypes.CDLL(str(_ubsan_library(work, "formulas.cpp", "libformulas.so", "-O1")))
    lib.af_formula.restype = ctypes.c_int64
    lib.af_formula.argtypes = [
        ctypes.c_int,
        ctypes.c_int64,
        ctypes.c_int64,
        ctypes.c_int64,
        ctypes.POINTER(ctypes.c_int),
    ]
    return lib


@settings(max_examples=300, deadline=None, derandomize=True)
@given(k=st.integers(0, 59), a=OPERAND, b=OPERAND, c=OPERAND)
def test_random_formulas_agree_on_value_and_failure(formulas_lib, k, a, b, c):
    ok = ctypes.c_int(0)
    got = formulas_lib.af_formula(k, a, b, c, ctypes.byref(ok))
    try:
        want = evaluate(formulas()[k], {"a": a, "b": b, "c": c})
    except Int64Failure:
        want = None
    event("fails" if want is None else "has a value")
    if want is None:
        assert ok.value == 0, f"{formulas()[k]} at a={a} b={b} c={c}: C++ {got}, Python fails"
    else:
        assert ok.value == 1 and got == want, (
            f"{formulas()[k]} at a={a} b={b} c={c}: C++ {got}, Python {want}"
        )
