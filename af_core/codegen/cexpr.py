"""sympy expressions -> C++ int64 expressions.

Symbols are renamed through a mapping (a size ``s0`` becomes ``t.s0`` in a
kernel and ``s0`` in host tiling; a tiling field ``tile_rows`` becomes
``t.c3_tile_rows``). Integer helpers (``AfCeilDiv``...) are defined by the
generated files themselves, so the output needs no other header.

Two forms are printed from the same lowered program
(:func:`af_core.tiling.int64.lower`):

* plain (kernels, infer_shape): ordinary operators; the helpers divide with
  floored semantics and never wrap internally, so every value that fits int64
  is computed exactly (the graph guards keep kernel offsets inside int64);
* checked (host tiling): every ``+ - *``, division and modulo is a call of a
  checked helper that clears a flag (``af_ok``) instead of overflowing, in the
  order Python's :func:`af_core.tiling.int64.run` evaluates it, so both sides
  agree on every value and on every failure.

Printing walks the program, never recursing, so deep expressions print.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import sympy

from af_core.errors import CodegenError
from af_core.tiling.int64 import INT64_MIN, Op, Program, lower

#: The flag the checked helpers clear; declared by the generated host tiling.
CHECK_FLAG = "af_ok"

#: C++ definitions of the integer helpers the plain expressions use (floored division, no wrapping).
INT_HELPERS = """\
static inline int64_t AfFloorDiv(int64_t a, int64_t b) { const int64_t q = a / b; const int64_t r = a % b; \
return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q; }
static inline int64_t AfCeilDiv(int64_t a, int64_t b) { const int64_t q = a / b; const int64_t r = a % b; \
return (r != 0 && ((r < 0) == (b < 0))) ? q + 1 : q; }
static inline int64_t AfAlignUp(int64_t a, int64_t b) { return AfCeilDiv(a, b) * b; }
static inline int64_t AfMin(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t AfMax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t AfMod(int64_t a, int64_t b) { const int64_t r = a % b; \
return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
static inline int64_t AfIntAbs(int64_t a) { return a < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : a; }
"""

#: Checked helpers of host tiling: on overflow or a zero divisor they clear ``ok`` and return 0.
CHECKED_HELPERS = """\
static inline int64_t AfMin(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t AfMax(int64_t a, int64_t b) { return a > b ? a : b; }
static inline bool AfAll(bool a, bool b) { return a && b; }
static inline bool AfAny(bool a, bool b) { return a || b; }
static inline int64_t AfSelect(bool c, int64_t a, int64_t b) { return c ? a : b; }
static inline int64_t AfFail(bool& ok) { ok = false; return 0; }
static inline int64_t AfCkAdd(int64_t a, int64_t b, bool& ok) {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? AfFail(ok) : r;
}
static inline int64_t AfCkSub(int64_t a, int64_t b, bool& ok) {
    int64_t r;
    return __builtin_sub_overflow(a, b, &r) ? AfFail(ok) : r;
}
static inline int64_t AfCkMul(int64_t a, int64_t b, bool& ok) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? AfFail(ok) : r;
}
static inline int64_t AfCkAbs(int64_t a, bool& ok) { return a == INT64_MIN ? AfFail(ok) : (a < 0 ? -a : a); }
// floored quotient and remainder, as Python's // and %; b == 0 and INT64_MIN / -1 fail
static inline int64_t AfCkFloorDiv(int64_t a, int64_t b, bool& ok) {
    if (b == 0 || (a == INT64_MIN && b == -1)) {
        return AfFail(ok);
    }
    const int64_t q = a / b;
    const int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t AfCkCeilDiv(int64_t a, int64_t b, bool& ok) {
    if (b == 0 || (a == INT64_MIN && b == -1)) {
        return AfFail(ok);
    }
    const int64_t q = a / b;
    const int64_t r = a % b;
    return (r != 0 && ((r < 0) == (b < 0))) ? q + 1 : q;
}
static inline int64_t AfCkAlignUp(int64_t a, int64_t b, bool& ok) { return AfCkMul(AfCkCeilDiv(a, b, ok), b, ok); }
static inline int64_t AfCkMod(int64_t a, int64_t b, bool& ok) {
    if (b == 0) {
        return AfFail(ok);
    }
    if (b == -1) {
        return 0;
    }
    const int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
"""

_RELATION_TEXT = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_CHECKED_CALL = {
    "floordiv": "AfCkFloorDiv",
    "ceildiv": "AfCkCeilDiv",
    "alignup": "AfCkAlignUp",
    "mod": "AfCkMod",
}
_PLAIN_CALL = {"floordiv": "AfFloorDiv", "ceildiv": "AfCeilDiv", "alignup": "AfAlignUp", "mod": "AfMod"}


def _literal(value: int) -> str:
    if value == INT64_MIN:
        return "INT64_MIN"
    if -(1 << 31) <= value < (1 << 31):
        return str(value)
    return f"INT64_C({value})"


def _wrap(text: str) -> str:
    """Parenthesize a negative literal used as an operand (every other plain form is atomic)."""
    return f"({text})" if text.startswith("-") else text


#: The printer of one operation kind: (the operation, its operands' texts, whether to print the checked form,
#: the flag the checked helpers clear) -> the operation's C++ text.
_OpPrinter = Callable[[Op, list[str], bool, str], str]


def _fold(name: str, operands: list[str], tail: str = "") -> str:
    """``name(name(a, b)<tail>, c)<tail>``: a binary helper applied left to right over the operands.

    The checked form must fold in the order :func:`af_core.tiling.int64.run` evaluates, so that both sides
    check the same partial results; ``tail`` carries the flag argument of a checked helper.
    """
    text = operands[0]
    for operand in operands[1:]:
        text = f"{name}({text}, {operand}{tail})"
    return text


def _print_add(op: Op, a: list[str], checked: bool, flag: str) -> str:
    """A signed sum: checked, every partial sum is an ``AfCkAdd`` / ``AfCkSub`` (a leading minus subtracts
    from 0); plain, one parenthesized ``+ -`` chain."""
    signs = op.signs
    if checked:
        text = a[0] if signs[0] > 0 else f"AfCkSub(0, {a[0]}, {flag})"
        for sign, term in zip(signs[1:], a[1:]):
            helper = "AfCkAdd" if sign > 0 else "AfCkSub"
            text = f"{helper}({text}, {term}, {flag})"
        return text
    text = a[0] if signs[0] > 0 else f"-{_wrap(a[0])}"
    for sign, term in zip(signs[1:], a[1:]):
        text += f" {'+' if sign > 0 else '-'} {_wrap(term) if sign < 0 else term}"
    return f"({text})"


def _print_mul(op: Op, a: list[str], checked: bool, flag: str) -> str:
    """A product: checked, every partial product is an ``AfCkMul``; plain, one parenthesized ``*`` chain
    (a single factor, as ``x**1`` lowers, prints alone)."""
    if checked:
        return _fold("AfCkMul", a, f", {flag}")
    return a[0] if len(a) == 1 else "(" + " * ".join(_wrap(f) for f in a) + ")"


def _print_division(op: Op, a: list[str], checked: bool, flag: str) -> str:
    """Floored division, ceiling division, align-up and modulo: a call of the helper of that form."""
    if checked:
        return f"{_CHECKED_CALL[op.kind]}({a[0]}, {a[1]}, {flag})"
    return f"{_PLAIN_CALL[op.kind]}({a[0]}, {a[1]})"


def _print_extremum(op: Op, a: list[str], checked: bool, flag: str) -> str:
    """Min / Max of any number of operands, folded through the binary helper (it cannot overflow)."""
    return _fold("AfMin" if op.kind == "min" else "AfMax", a)


def _print_abs(op: Op, a: list[str], checked: bool, flag: str) -> str:
    """The absolute value; only the checked helper fails (``|INT64_MIN|`` is outside int64)."""
    return f"AfCkAbs({a[0]}, {flag})" if checked else f"AfIntAbs({a[0]})"


def _print_relation(op: Op, a: list[str], checked: bool, flag: str) -> str:
    """A comparison; it cannot fail, so both forms use the C++ operator."""
    return f"({a[0]} {_RELATION_TEXT[op.kind]} {a[1]})"


def _print_logic(op: Op, a: list[str], checked: bool, flag: str) -> str:
    """And / Or: checked, a call per operand so every operand is evaluated (no short-circuit, as in
    :func:`af_core.tiling.int64.run`); plain, the C++ operator."""
    if checked:
        return _fold("AfAll" if op.kind == "and" else "AfAny", a)
    return "(" + (" && " if op.kind == "and" else " || ").join(a) + ")"


def _print_select(op: Op, a: list[str], checked: bool, flag: str) -> str:
    """The branches of a Piecewise, the first true condition winning, the last operand the default:
    checked, nested ``AfSelect`` calls (every branch evaluated); plain, nested conditional operators."""
    text = a[-1]
    for k in reversed(range(op.number)):
        cond, value = a[2 * k], a[2 * k + 1]
        text = f"AfSelect({cond}, {value}, {text})" if checked else f"(({cond}) ? ({value}) : ({text}))"
    return text


#: The printer of each operation kind :func:`~af_core.tiling.int64.lower` emits but ``sym`` (a size
#: symbol, which :func:`print_program` renames).
_PRINTERS: dict[str, _OpPrinter] = {
    "int": lambda op, a, checked, flag: _literal(op.number),
    "bool": lambda op, a, checked, flag: "true" if op.payload else "false",
    "add": _print_add,
    "mul": _print_mul,
    **dict.fromkeys(_CHECKED_CALL, _print_division),
    "min": _print_extremum,
    "max": _print_extremum,
    "abs": _print_abs,
    **dict.fromkeys(_RELATION_TEXT, _print_relation),
    "and": _print_logic,
    "or": _print_logic,
    "not": lambda op, a, checked, flag: f"(!{a[0]})",
    "select": _print_select,
}


def print_program(
    program: Program, rename: Callable[[str], str], checked: bool = False, flag: str = CHECK_FLAG
) -> str:
    """C++ text of a lowered formula (see the module docstring for the two forms)."""
    texts: list[str] = []
    for op in program.ops:
        if op.kind == "sym":  # the one kind printed through the caller's names
            texts.append(rename(op.symbol))
            continue
        printer = _PRINTERS.get(op.kind)
        if printer is None:  # pragma: no cover - lower() emits only the kinds above
            raise CodegenError(f"no C++ form for the operation '{op.kind}'")
        texts.append(printer(op, [texts[i] for i in op.args], checked, flag))
    return texts[-1]


class CppFormatter:
    """A reusable printer with a result cache.

    ``rename`` may depend on state (loop variables); pass ``state`` to
    :meth:`__call__` so cached texts are keyed by it. ``checked`` selects the
    host tiling form.
    """

    def __init__(self, rename: Callable[[str], str], checked: bool = False) -> None:
        self._rename = rename
        self._checked = checked
        self._cache: dict[tuple, str] = {}

    def __call__(self, expr: sympy.Basic, state: tuple = ()) -> str:
        key = (expr, state)
        text = self._cache.get(key)
        if text is None:
            text = print_program(lower(sympy.sympify(expr)), self._rename, self._checked)
            self._cache[key] = text
        return text


def to_cpp(
    expr: sympy.Basic, rename: Mapping[str, str] | Callable[[str], str] | None = None, checked: bool = False
) -> str:
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

    return print_program(lower(sympy.sympify(expr)), fn, checked)
