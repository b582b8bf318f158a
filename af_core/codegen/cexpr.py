"""sympy expressions -> C++ int64 expressions.

Symbols are renamed through a mapping (a size ``s0`` becomes ``t.s0`` in a
kernel and ``s0`` in host tiling; a tiling field ``tile_rows`` becomes
``t.c3_tile_rows``). Integer helpers (``AfCeilDiv``...) are defined by the
generated files themselves, so the output needs no other header.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import sympy
from sympy.printing.c import C99CodePrinter

from af_core.errors import CodegenError

#: C++ definitions of the integer helpers the printed expressions use.
INT_HELPERS = """\
static inline int64_t AfCeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t AfFloorDiv(int64_t a, int64_t b) { return a / b; }
static inline int64_t AfAlignUp(int64_t a, int64_t b) { return (a + b - 1) / b * b; }
static inline int64_t AfMin(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t AfMax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t AfMod(int64_t a, int64_t b) { return a % b; }
"""


class CxxIntPrinter(C99CodePrinter):
    """Prints integer formulas with int64 semantics (no floating point)."""

    def __init__(self, rename: Callable[[str], str]) -> None:
        super().__init__({"strict": False})
        self._rename = rename

    def _print_Symbol(self, expr):  # noqa: N802 - sympy printer protocol
        return self._rename(expr.name)

    def _print_Integer(self, expr):  # noqa: N802
        value = int(expr)
        if -(1 << 31) <= value < (1 << 31):
            return str(value)
        return f"INT64_C({value})"

    def _print_Rational(self, expr):  # noqa: N802
        raise CodegenError(f"integer formula contains the fraction {expr}; use CeilDiv/FloorDiv")

    def _print_Float(self, expr):  # noqa: N802
        raise CodegenError(f"integer formula contains the float {expr}")

    def _print_Mul(self, expr):  # noqa: N802
        coeff, rest = expr.as_coeff_Mul()
        if coeff.is_Rational and not coeff.is_Integer:
            raise CodegenError(f"integer formula contains the fraction {coeff} in {expr}")
        factors = [self._print(a) for a in expr.as_ordered_factors()]
        return "(" + " * ".join(f"({f})" if "+" in f or "-" in f[1:] else f for f in factors) + ")"

    def _print_Add(self, expr):  # noqa: N802
        terms = expr.as_ordered_terms()
        out = self._print(terms[0])
        for term in terms[1:]:
            text = self._print(term)
            if text.startswith("-"):
                out += " - " + text[1:]
            else:
                out += " + " + text
        return f"({out})"

    def _print_Pow(self, expr):  # noqa: N802
        base, exp = expr.as_base_exp()
        if exp.is_Integer and int(exp) > 0:
            b = self._print(base)
            return "(" + " * ".join([b] * int(exp)) + ")"
        raise CodegenError(f"integer formula contains the power {expr}")

    def _print_CeilDiv(self, expr):  # noqa: N802
        a, b = expr.args
        return f"AfCeilDiv({self._print(a)}, {self._print(b)})"

    def _print_FloorDiv(self, expr):  # noqa: N802
        a, b = expr.args
        return f"AfFloorDiv({self._print(a)}, {self._print(b)})"

    def _print_AlignUp(self, expr):  # noqa: N802
        a, b = expr.args
        return f"AfAlignUp({self._print(a)}, {self._print(b)})"

    def _print_Mod(self, expr):  # noqa: N802
        a, b = expr.args
        return f"AfMod({self._print(a)}, {self._print(b)})"

    def _minmax(self, name: str, args) -> str:
        args = sorted(args, key=sympy.default_sort_key)
        text = self._print(args[0])
        for arg in args[1:]:
            text = f"{name}({text}, {self._print(arg)})"
        return text

    def _print_Min(self, expr):  # noqa: N802
        return self._minmax("AfMin", expr.args)

    def _print_Max(self, expr):  # noqa: N802
        return self._minmax("AfMax", expr.args)

    def _print_Piecewise(self, expr):  # noqa: N802
        parts = list(expr.args)
        text = self._print(parts[-1][0]) if parts[-1][1] == sympy.true else "0"
        for value, cond in reversed(parts[:-1] if parts[-1][1] == sympy.true else parts):
            text = f"(({self._print(cond)}) ? ({self._print(value)}) : ({text}))"
        return text

    def _print_BooleanTrue(self, expr):  # noqa: N802
        return "true"

    def _print_BooleanFalse(self, expr):  # noqa: N802
        return "false"

    def _print_Relational(self, expr):  # noqa: N802
        return f"({self._print(expr.lhs)} {expr.rel_op} {self._print(expr.rhs)})"

    def _print_And(self, expr):  # noqa: N802
        return "(" + " && ".join(self._print(a) for a in sorted(expr.args, key=sympy.default_sort_key)) + ")"

    def _print_Or(self, expr):  # noqa: N802
        return "(" + " || ".join(self._print(a) for a in sorted(expr.args, key=sympy.default_sort_key)) + ")"

    def _print_Not(self, expr):  # noqa: N802
        return f"(!{self._print(expr.args[0])})"

    def _print_floor(self, expr):  # noqa: N802
        raise CodegenError(f"use FloorDiv instead of floor in {expr}")

    def _print_ceiling(self, expr):  # noqa: N802
        raise CodegenError(f"use CeilDiv instead of ceiling in {expr}")


class CppFormatter:
    """A reusable printer (building sympy printers is expensive) with a result cache.

    ``rename`` may depend on state (loop variables); pass ``state`` to
    :meth:`__call__` so cached texts are keyed by it.
    """

    def __init__(self, rename: Callable[[str], str]) -> None:
        self._printer = CxxIntPrinter(rename)
        self._cache: dict[tuple, str] = {}

    def __call__(self, expr: sympy.Basic, state: tuple = ()) -> str:
        key = (expr, state)
        text = self._cache.get(key)
        if text is None:
            text = self._printer.doprint(sympy.sympify(expr))
            self._cache[key] = text
        return text


def to_cpp(expr: sympy.Basic, rename: Mapping[str, str] | Callable[[str], str] | None = None) -> str:
    """C++ text of an integer (or boolean) formula."""
    if rename is None:
        fn = lambda n: n  # noqa: E731
    elif callable(rename):
        fn = rename
    else:

        def fn(name: str) -> str:
            try:
                return rename[name]
            except KeyError:
                raise CodegenError(f"no C++ name for symbol '{name}' in {expr}") from None

    return CxxIntPrinter(fn).doprint(sympy.sympify(expr))
