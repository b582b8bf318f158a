"""The int64 contract of host tiling, shared by the Python solver and the generated C++.

A tiling formula (a sympy expression over sizes, platform symbols and earlier
fields) is lowered once into a flat :class:`Program`: a list of integer
operations in a fixed order. Python evaluates that program here; the C++
printer (:mod:`af_core.codegen.cexpr`) prints the very same operations as
calls of checked helpers. Both sides follow one rule:

* every operation of an expression is evaluated (``And``, ``Or`` and
  ``Piecewise`` included: no short-circuit inside one expression);
* ``+ - *`` fold left to right over the printed operand order, and each
  partial result must lie in int64;
* ``FloorDiv``, ``CeilDiv``, ``AlignUp``, ``Mod``, ``floor(a/b)`` and
  ``ceiling(a/b)`` have the exact mathematical (floored) meaning for every
  sign, as Python's ``//`` and ``%``; a zero divisor or a result outside int64
  is a failure;
* a failure anywhere in an expression fails the whole expression: a failing
  guard rejects the sizes, a failing case expression drops the case;
* a relation whose sides have fractional term coefficients is compared with
  both sides times the least common denominator (see :func:`_integral_sides`).

Lowering and evaluation use explicit stacks, so expression depth is bounded
only by :data:`MAX_DEPTH` (a clear error beyond it), never by Python's
recursion limit.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import TypeAlias, cast

import attrs
import sympy
from sympy.core.relational import Relational

from af_core.errors import CodegenError
from af_core.ir.evaluate import AlignUp, CeilDiv, FloorDiv

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

#: Deepest expression nesting lowered (the C++ compiler's parser is recursive too).
MAX_DEPTH = 2000
#: Largest exponent of ``x**k`` lowered as repeated multiplication.
MAX_POWER = 64

_RELATIONS = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


class Int64Failure(ArithmeticError):
    """An operation of a checked evaluation left int64 (or divided by zero)."""


@attrs.frozen
class Op:
    """One operation: ``kind`` with ``payload`` applied to the results of ``args`` (indices)."""

    kind: str
    payload: bool | int | str | tuple[int, ...] | None
    args: tuple[int, ...]

    # The payload's type follows from ``kind`` (see _decompose), a relation the type checker cannot
    # see; these views name it where an evaluator or printer reads the payload.
    @property
    def symbol(self) -> str:
        """The size symbol's name of a ``sym`` op."""
        return cast(str, self.payload)

    @property
    def number(self) -> int:
        """The literal of an ``int`` op, the branch count of a ``select`` op."""
        return cast(int, self.payload)

    @property
    def signs(self) -> tuple[int, ...]:
        """The term signs (+1/-1) of an ``add`` op."""
        return cast(tuple[int, ...], self.payload)


@attrs.frozen
class Program:
    """The operations of one formula in evaluation order; the last one is the result."""

    ops: tuple[Op, ...]


#: What an op's payload holds, by kind (see :class:`Op`).
_Payload: TypeAlias = bool | int | str | tuple[int, ...] | None
#: (kind, payload, operand expressions) of one sympy node, the operands in printing order.
_Decomposition: TypeAlias = tuple[str, _Payload, list]

#: The operation of each division-like node type (looked up by exact type).
_DIVISIONS = {CeilDiv: "ceildiv", FloorDiv: "floordiv", AlignUp: "alignup", sympy.Mod: "mod"}


def _no_int64_form(expr: sympy.Basic) -> CodegenError:
    """The error for a node the int64 contract has no operation for."""
    return CodegenError(f"integer formula contains {type(expr).__name__} ({expr}), which has no int64 form")


def _decompose_leaf(expr: sympy.Basic) -> _Decomposition | None:
    """A boolean, a size symbol or an int64 literal; None when ``expr`` is none of those.

    A fraction or a float is refused here: the contract is integer arithmetic, and a literal outside
    int64 could not be printed as one.
    """
    if expr is sympy.true or expr is sympy.false:
        return "bool", expr is sympy.true, []
    if isinstance(expr, sympy.Symbol):
        return "sym", expr.name, []
    if expr.is_Integer:
        value = int(expr)
        if not INT64_MIN <= value <= INT64_MAX:
            raise CodegenError(f"integer formula contains the literal {value}, outside int64")
        return "int", value, []
    if expr.is_Rational:
        raise CodegenError(f"integer formula contains the fraction {expr}; use CeilDiv/FloorDiv")
    if expr.is_Float:
        raise CodegenError(f"integer formula contains the float {expr}")
    return None


def _decompose_add(expr: sympy.Basic) -> _Decomposition:
    """A sum as its terms with their signs: a term sympy holds as a negative one (``-b`` of ``a - b``) is
    subtracted as its negation, so ``a - b`` evaluates and prints as a subtraction, not as ``a + (-1)*b``."""
    signs, terms = [], []
    for term in expr.args:
        negative = term.could_extract_minus_sign()
        signs.append(-1 if negative else 1)
        terms.append(-term if negative else term)
    return "add", tuple(signs), terms


def _decompose_mul(expr: sympy.Basic) -> _Decomposition:
    """A product of its factors; a fractional coefficient has no integer meaning."""
    coeff, _rest = expr.as_coeff_Mul()
    if coeff.is_Rational and not coeff.is_Integer:
        raise CodegenError(f"integer formula contains the fraction {coeff} in {expr}")
    return "mul", None, list(expr.args)


def _decompose_pow(expr: sympy.Basic) -> _Decomposition:
    """``x**k`` for a small positive ``k`` as the product of ``k`` factors (C++ has no integer power)."""
    base, exp = expr.as_base_exp()
    if exp.is_Integer and 0 < int(exp) <= MAX_POWER:
        return "mul", None, [base] * int(exp)
    raise CodegenError(f"integer formula contains the power {expr}")


def _decompose_division(expr: sympy.Basic) -> _Decomposition:
    """CeilDiv, FloorDiv, AlignUp and Mod: each its own operation of two operands."""
    return _DIVISIONS[type(expr)], None, list(expr.args)


def _decompose_rounding(expr: sympy.Basic) -> _Decomposition:
    """``floor(a/b)`` / ``ceiling(a/b)`` as a floored / ceiling division of the fraction's two sides (the
    identity when the argument has no denominator)."""
    numer, denom = sympy.fraction(sympy.together(expr.args[0]))
    if denom == 1:
        return "mul", None, [numer]
    return ("floordiv" if isinstance(expr, sympy.floor) else "ceildiv"), None, [numer, denom]


def _decompose_extremum(expr: sympy.Basic) -> _Decomposition:
    """Min / Max over all their arguments."""
    return ("min" if isinstance(expr, sympy.Min) else "max"), None, list(expr.args)


def _decompose_abs(expr: sympy.Basic) -> _Decomposition:
    """The absolute value of the one argument."""
    return "abs", None, [expr.args[0]]


def _decompose_relation(expr: sympy.Basic) -> _Decomposition:
    """A comparison, both sides scaled to integer coefficients (:func:`_integral_sides`)."""
    if expr.rel_op not in _RELATIONS:
        raise _no_int64_form(expr)
    return _RELATIONS[expr.rel_op], None, list(_integral_sides(expr.lhs, expr.rhs))


def _decompose_logic(expr: sympy.Basic) -> _Decomposition:
    """And / Or over all their arguments (each evaluated: no short-circuit)."""
    return ("and" if isinstance(expr, sympy.And) else "or"), None, list(expr.args)


def _decompose_not(expr: sympy.Basic) -> _Decomposition:
    """The negation of the one argument."""
    return "not", None, [expr.args[0]]


def _decompose_ite(expr: sympy.Basic) -> _Decomposition:
    """sympy's boolean if-then-else (a Piecewise simplifies into it): a select of one branch."""
    return "select", 1, list(expr.args)


def _decompose_piecewise(expr: sympy.Basic) -> _Decomposition:
    """A select over the (condition, value) branches, the default last: the ``True`` branch, or 0 when
    there is none (no branch taken: 0 on both sides)."""
    parts = list(expr.args)
    if parts[-1][1] == sympy.true:
        default, parts = parts[-1][0], parts[:-1]
    else:
        default = sympy.Integer(0)
    operands = []
    for value, cond in parts:
        operands += [cond, value]
    return "select", len(parts), [*operands, default]


#: The decomposer of each compound node type, tried in this order: the first entry whose types ``expr`` is
#: an instance of decides.
_COMPOUND_FORMS: tuple[tuple[type | tuple[type, ...], Callable[[sympy.Basic], _Decomposition]], ...] = (
    (sympy.Add, _decompose_add),
    (sympy.Mul, _decompose_mul),
    (sympy.Pow, _decompose_pow),
    ((CeilDiv, FloorDiv, AlignUp, sympy.Mod), _decompose_division),
    ((sympy.floor, sympy.ceiling), _decompose_rounding),
    ((sympy.Min, sympy.Max), _decompose_extremum),
    (sympy.Abs, _decompose_abs),
    (Relational, _decompose_relation),
    ((sympy.And, sympy.Or), _decompose_logic),
    (sympy.Not, _decompose_not),
    (sympy.ITE, _decompose_ite),
    (sympy.Piecewise, _decompose_piecewise),
)


def _decompose(expr: sympy.Basic) -> _Decomposition:
    """(kind, payload, operand expressions) of one sympy node, in printing order.

    Operands keep sympy's canonical ``args`` order (sorted at construction, independent
    of hash seeds); sympy's own sort keys recurse and fail on deep formulas.
    """
    leaf = _decompose_leaf(expr)
    if leaf is not None:
        return leaf
    for types, decompose in _COMPOUND_FORMS:
        if isinstance(expr, types):
            return decompose(expr)
    raise _no_int64_form(expr)


def _integral_sides(lhs: sympy.Basic, rhs: sympy.Basic) -> tuple[sympy.Basic, sympy.Basic]:
    """The two sides of a relation, times the least common denominator of their terms' coefficients.

    sympy writes a ``Piecewise`` condition with its leading coefficient divided out:
    a template's ``56*L*M >= 128`` comes back as ``L*M >= 16/7``. Multiplying both sides by
    a positive integer keeps every relation's truth for all values and brings the
    coefficients back to integers (``7*L*M >= 16``). The scale divides the coefficient
    sympy divided by, so no product grows beyond the formula the template wrote.
    A fraction deeper in a side (inside a Min, say) is left for :func:`_decompose` to refuse.
    """
    scale = 1
    for side in (lhs, rhs):
        for term in sympy.Add.make_args(side):
            coeff = term.as_coeff_Mul()[0]
            if coeff.is_Rational:
                scale = math.lcm(scale, int(coeff.q))
    if scale == 1:
        return lhs, rhs
    factor = sympy.Integer(scale)
    lhs, rhs = (sympy.Add(*(factor * term for term in sympy.Add.make_args(side))) for side in (lhs, rhs))
    return lhs, rhs


@functools.lru_cache(maxsize=8192)
def lower(expr: sympy.Basic) -> Program:
    """The program of ``expr``; shared subexpressions are evaluated once."""
    expr = sympy.sympify(expr)
    ops: list[Op] = []
    index: dict[sympy.Basic, int] = {}
    # frames: (node, depth, decomposition or None); children are pushed before their parent is emitted
    stack: list[tuple[sympy.Basic, int, tuple | None]] = [(expr, 0, None)]
    while stack:
        node, depth, parts = stack.pop()
        if node in index and parts is None:
            continue
        if parts is None:
            if depth > MAX_DEPTH:
                raise CodegenError(
                    f"integer formula nests deeper than {MAX_DEPTH} levels; "
                    f"simplify the graph's size expressions"
                )
            parts = _decompose(node)
            stack.append((node, depth, parts))
            for child in reversed(parts[2]):
                if child not in index:
                    stack.append((child, depth + 1, None))
            continue
        if node in index:
            continue
        kind, payload, children = parts
        ops.append(Op(kind, payload, tuple(index[c] for c in children)))
        index[node] = len(ops) - 1
    return Program(tuple(ops))


def _check(value: int) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise Int64Failure(f"{value} is outside int64")
    return value


def _divisor(b: int) -> int:
    if b == 0:
        raise Int64Failure("division by zero")
    return b


#: The evaluator of one operation kind: (the operation, its operands' values, the int64 check) -> its value.
_Evaluator: TypeAlias = Callable[[Op, list[int], Callable[[int], int]], int]


def _run_add(op: Op, a: list[int], check: Callable[[int], int]) -> int:
    """A signed sum folded left to right, each partial sum checked (as the C++ ``AfCkAdd`` / ``AfCkSub``)."""
    value = check(a[0] * op.signs[0])
    for sign, term in zip(op.signs[1:], a[1:]):
        value = check(value + term if sign > 0 else value - term)
    return value


def _run_mul(op: Op, a: list[int], check: Callable[[int], int]) -> int:
    """A product folded left to right, each partial product checked (as the C++ ``AfCkMul``)."""
    value = a[0]
    for factor in a[1:]:
        value = check(value * factor)
    return value


def _run_select(op: Op, a: list[int], check: Callable[[int], int]) -> int:
    """The value of the first branch whose condition holds, else the default (the last operand)."""
    for k in range(op.number):
        if a[2 * k]:
            return a[2 * k + 1]
    return a[-1]


#: The evaluator of each operation kind :func:`_decompose` emits but ``sym`` (a size, which :func:`run`
#: reads from its environment). Min, Max, Mod, the relations and the logical ops cannot leave int64.
_EVALUATORS: dict[str, _Evaluator] = {
    "int": lambda op, a, check: op.number,
    "bool": lambda op, a, check: int(op.payload is True),
    "add": _run_add,
    "mul": _run_mul,
    "floordiv": lambda op, a, check: check(a[0] // _divisor(a[1])),
    "ceildiv": lambda op, a, check: check(-(-a[0] // _divisor(a[1]))),
    "alignup": lambda op, a, check: check(check(-(-a[0] // _divisor(a[1]))) * a[1]),
    "mod": lambda op, a, check: a[0] % _divisor(a[1]),
    "min": lambda op, a, check: min(a),
    "max": lambda op, a, check: max(a),
    "abs": lambda op, a, check: check(abs(a[0])),
    "eq": lambda op, a, check: int(a[0] == a[1]),
    "ne": lambda op, a, check: int(a[0] != a[1]),
    "lt": lambda op, a, check: int(a[0] < a[1]),
    "le": lambda op, a, check: int(a[0] <= a[1]),
    "gt": lambda op, a, check: int(a[0] > a[1]),
    "ge": lambda op, a, check: int(a[0] >= a[1]),
    "and": lambda op, a, check: int(all(a)),
    "or": lambda op, a, check: int(any(a)),
    "not": lambda op, a, check: int(not a[0]),
    "select": _run_select,
}


def run(program: Program, env: Mapping[str, int], checked: bool = True) -> int:
    """The value of ``program`` (booleans as 0/1); :class:`Int64Failure` when the contract fails.

    ``checked=False`` computes exact integers (no int64 bound) for reporting only;
    a zero divisor still fails.
    """
    check: Callable[[int], int] = _check if checked else int
    values: list[int] = []
    for op in program.ops:
        if op.kind == "sym":  # the one kind read from the caller's environment
            values.append(int(env[op.symbol]))
            continue
        evaluator = _EVALUATORS.get(op.kind)
        if evaluator is None:  # pragma: no cover - _decompose emits only the kinds above
            raise AssertionError(op.kind)
        values.append(evaluator(op, [values[i] for i in op.args], check))
    return values[-1]


def evaluate(expr: sympy.Basic, env: Mapping[str, int], checked: bool = True) -> int:
    """``run(lower(expr), env)``: the checked int64 value of a formula."""
    return run(lower(sympy.sympify(expr)), env, checked)
