"""Size expressions: sympy integers (static shapes) or products of size symbols.

Size symbols are positive integers, so sympy can prove simple facts such as
``s1*s2 > 0`` without help. Expressions are parsed back from text with an
explicit symbol table, never with ``eval`` of user text.
"""

from __future__ import annotations

import re
import tokenize
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


_ALLOWED = re.compile(r"^[A-Za-z0-9_+\-*/(), ]*$")
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_FUNCTIONS = {"Max", "Min", "Mod", "floor", "ceiling"}


def parse(text: str, symbols: Mapping[str, sympy.Symbol]) -> Expr:
    """Parse an expression text using only the given size symbols.

    The text is checked against a small grammar first (names, integers,
    ``+ - * /``, parentheses and a few functions): graph files are data, and
    nothing in them is ever evaluated as Python. Unknown names become
    positive integer symbols too, so a JSON graph that mentions a size it
    never declared still parses; validation reports it. Raises ValueError.
    """
    if not isinstance(text, str) or not text.strip() or not _ALLOWED.match(text) or "__" in text:
        raise ValueError(f"not a size expression: {text!r}")
    for name in _CALL.findall(text):
        if name not in _FUNCTIONS:
            raise ValueError(f"size expression {text!r} calls '{name}', which is not allowed")
    local = dict(symbols)
    try:
        expr = sympy.parse_expr(text, local_dict=local, evaluate=True)
    except (SyntaxError, TypeError, sympy.SympifyError, tokenize.TokenError) as exc:
        raise ValueError(f"cannot parse size expression {text!r}: {exc}") from None
    if not isinstance(expr, sympy.Expr):
        raise ValueError(f"size expression {text!r} is not a number or formula")
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
