"""Size expressions: sympy integers (static shapes) or products of size symbols.

Size symbols are positive integers, so sympy can prove simple facts such as
``s1*s2 > 0`` without help. Expressions are parsed back from text with an
explicit symbol table, never with ``eval`` of user text.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy

Expr = sympy.Expr


def size_symbol(name: str) -> sympy.Symbol:
    """The symbol of a dynamic size; positive integer by construction."""
    return sympy.Symbol(name, integer=True, positive=True)


def as_expr(value: object, symbols: Mapping[str, sympy.Symbol] | None = None) -> Expr:
    """Convert an int, a sympy expression or an expression text to a size expression."""
    if isinstance(value, sympy.Basic):
        return value  # type: ignore[return-value]
    if isinstance(value, bool):
        raise TypeError(f"a size cannot be a bool ({value!r})")
    if isinstance(value, int):
        return sympy.Integer(value)
    if isinstance(value, str):
        return parse(value, symbols or {})
    if hasattr(value, "__index__"):
        return sympy.Integer(int(value))  # numpy integers
    raise TypeError(f"cannot use {value!r} of type {type(value).__name__} as a size expression")


def SizeExpr(value: object = 0) -> Expr:  # noqa: N802 - pyautofuse spelling
    """``ascir.SizeExpr(1)``: a constant (or symbolic) size expression."""
    return as_expr(value)


def parse(text: str, symbols: Mapping[str, sympy.Symbol]) -> Expr:
    """Parse an expression text using only the given size symbols.

    Unknown names become positive integer symbols too, so a JSON graph that
    mentions a size it never declared still parses; validation reports it.
    """
    local = dict(symbols)
    expr = sympy.parse_expr(text, local_dict=local, evaluate=True)
    unknown = [s for s in expr.free_symbols if s.name not in symbols]
    if unknown:
        replace = {s: size_symbol(s.name) for s in unknown}
        expr = expr.xreplace(replace)
    return expr


def to_text(expr: Expr) -> str:
    """Canonical text of a size expression (stable across runs)."""
    return sympy.sstr(expr, order="lex")


def is_static(expr: Expr) -> bool:
    return not expr.free_symbols


def static_value(expr: Expr) -> int | None:
    """The integer value of a static expression, else None."""
    if expr.free_symbols:
        return None
    value = sympy.nsimplify(expr) if not isinstance(expr, sympy.Integer) else expr
    if value.is_Integer:
        return int(value)
    return None


def symbol_names(expr: Expr) -> list[str]:
    """Names of the size symbols an expression uses, sorted."""
    return sorted(s.name for s in expr.free_symbols)


def product(values: list[Expr] | tuple[Expr, ...]) -> Expr:
    result: Expr = sympy.Integer(1)
    for v in values:
        result = result * v
    return result


def contiguous_strides(sizes: list[Expr] | tuple[Expr, ...]) -> list[Expr]:
    """Row-major strides for the given sizes, in elements."""
    strides: list[Expr] = []
    acc: Expr = sympy.Integer(1)
    for s in reversed(sizes):
        strides.append(acc)
        acc = acc * s
    return list(reversed(strides))
