"""Evaluate size expressions for concrete sizes, fast and exactly.

Expressions are compiled once with ``sympy.lambdify`` (cached per
expression) into integer Python code; no ``subs`` on hot paths. The integer
division helpers are floored for every sign, like the generated C++ helpers
(host tiling itself evaluates through :mod:`af_core.tiling.int64`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import sympy

from af_core.ir.sizes import Expr


class CeilDiv(sympy.Function):
    """ceil(a / b), exact for every sign (``AfCeilDiv`` in C++)."""

    is_integer = True

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:
        if a.is_Integer and b.is_Integer and b != 0:
            return sympy.Integer(-(-int(a) // int(b)))
        if b == 1:
            return a
        return None


class FloorDiv(sympy.Function):
    """floor(a / b), exact for every sign (``AfFloorDiv`` in C++)."""

    is_integer = True

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:
        if a.is_Integer and b.is_Integer and b != 0:
            return sympy.Integer(int(a) // int(b))
        if b == 1:
            return a
        return None


class AlignUp(sympy.Function):
    """The smallest multiple of b not below a (b > 0)."""

    is_integer = True

    @classmethod
    def eval(cls, a: Expr, b: Expr) -> Expr | None:
        if a.is_Integer and b.is_Integer and b != 0:
            return sympy.Integer(-(-int(a) // int(b)) * int(b))
        if b == 1:
            return a
        return None


def _py_ceil(a: int, b: int) -> int:
    return -(-int(a) // int(b))


def _py_floor(a: int, b: int) -> int:
    return int(a) // int(b)


def _py_align(a: int, b: int) -> int:
    return -(-int(a) // int(b)) * int(b)


_MODULES = [
    {
        "CeilDiv": _py_ceil,
        "FloorDiv": _py_floor,
        "AlignUp": _py_align,
        "Min": min,
        "Max": max,
        "floor": lambda v: int(v // 1),
        "ceiling": lambda v: -int((-v) // 1),
        "Abs": abs,
    },
    "math",
]


@functools.lru_cache(maxsize=4096)
def compile_expr(expr: Expr, names: tuple[str, ...]) -> Callable[..., Any]:
    """A Python callable of the named sizes (positional) for ``expr``.

    Symbols are matched by name and replaced by dummies before lambdify prints
    Python, so no symbol name (``Min``, ``math``, ``lambda``) can shadow a helper
    or break the generated code.
    """
    dummies = [sympy.Dummy(f"a{i}") for i in range(len(names))]
    slot = {n: d for n, d in zip(names, dummies)}
    renamed = expr.xreplace({s: slot[s.name] for s in expr.free_symbols if s.name in slot})
    return sympy.lambdify(dummies, renamed, modules=_MODULES)


def eval_int(expr: Expr, env: Mapping[str, int]) -> int:
    """The integer value of ``expr`` with every size symbol taken from ``env``."""
    if isinstance(expr, (int,)):
        return int(expr)
    if expr.is_Integer:
        return int(expr)
    names = tuple(sorted(s.name for s in expr.free_symbols))
    missing = [n for n in names if n not in env]
    if missing:
        raise KeyError(f"no value for size(s) {', '.join(missing)} in expression {expr}")
    fn = compile_expr(expr, names)
    value = fn(*(int(env[n]) for n in names))
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"size expression {expr} is not an integer for {dict(env)}: {value}")
        value = int(value)
    return int(value)


def eval_shape(sizes: Iterable[Expr | int], env: Mapping[str, int]) -> tuple[int, ...]:
    return tuple(eval_int(s, env) for s in sizes)
