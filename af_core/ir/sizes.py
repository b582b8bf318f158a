"""Size expressions: sympy integers (static shapes) or products of size symbols.

Size symbols are positive integers, so sympy can prove simple facts such as
``s1*s2 > 0`` without help. Texts (JSON graphs, string strides) are read by
:func:`parse`, a small hand-written grammar that builds the sympy objects from
tokens with an explicit symbol table: no text ever reaches ``eval`` or sympy's
own parser. :func:`to_text` prints what :func:`parse` reads back.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeAlias

import sympy
from sympy.core.sorting import default_sort_key
from sympy.printing.precedence import precedence
from sympy.printing.str import StrPrinter

from af_core.naming import demangle, size_ident

# sympy ships no type information, so to the checker this alias is Any; it still documents intent
Expr: TypeAlias = sympy.Expr
#: A size, an extent or a pitch: an expression over the graph's sizes and tiling fields, or a plain int.
Size: TypeAlias = Expr | int


def size_symbol(name: str) -> sympy.Symbol:
    """The symbol of a dynamic size; positive integer by construction.

    The symbol's name is the size's C++ identifier (:func:`af_core.naming.size_ident`:
    ``s0`` stays ``s0``, ``class``, ``tile`` or ``core_num`` are escaped), so formulas,
    host tiling and kernels can use symbol names directly and a size never
    shares a name with a platform symbol or generated variable. Graph-facing
    text (:func:`to_text`, reports) shows the graph's own name.
    """
    return sympy.Symbol(size_ident(name), integer=True, positive=True)


def size_name(symbol: sympy.Symbol) -> str:
    """The graph's name of a size symbol (inverse of :func:`size_symbol`)."""
    return demangle(symbol.name)


def as_expr(value: object, symbols: Mapping[str, sympy.Symbol] | None = None) -> Expr:
    """Convert an int, a sympy expression or an expression text to a size expression."""
    if isinstance(value, sympy.Basic):
        return value
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


#: Bounds of what :func:`parse` accepts: text length, operator nesting, literal magnitude.
MAX_TEXT = 4096
MAX_DEPTH = 64
MAX_LITERAL = (1 << 63) - 1

_FUNCTIONS: dict[str, tuple[int, int | None]] = {  # name -> (min args, max args)
    "Max": (1, None),
    "Min": (1, None),
    "Mod": (2, 2),
    "floor": (1, 1),
    "ceiling": (1, 1),
}
_SPACE = frozenset(" \t\r\n")
_BINARY = {"+": 1, "-": 1, "*": 2, "/": 2}  # precedence; all left-associative
_UNARY_PREC = 3


def _tokens(text: str) -> Iterator[tuple[str, Any, int]]:
    """(kind, value, position) for every token: int, name, op, '(', ')', ','.

    The value is an int for an int token and the token's text otherwise (the parser reads it by kind).
    """
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in _SPACE:
            i += 1
        elif "0" <= ch <= "9":
            j = i
            while j < n and "0" <= text[j] <= "9":
                j += 1
            if j - i > 19 or int(text[i:j]) > MAX_LITERAL:
                raise ValueError(f"integer literal at position {i} exceeds {MAX_LITERAL}")
            if j < n and ("_" + text[j]).isidentifier():
                raise ValueError(f"a name cannot start with a digit (position {i})")
            yield "int", int(text[i:j]), i
            i = j
        elif ch.isidentifier():
            j = i + 1
            while j < n and ("_" + text[j]).isidentifier():
                j += 1
            yield "name", text[i:j], i
            i = j
        elif ch in _BINARY:
            if ch == "*" and text[i + 1 : i + 2] == "*":
                raise ValueError(f"'**' (power) at position {i} is not allowed in a size expression")
            yield "op", ch, i
            i += 1
        elif ch in "(),":
            yield ch, ch, i
            i += 1
        else:
            raise ValueError(f"character {ch!r} at position {i} is not allowed in a size expression")


def _apply(op: str, args: list[Expr]) -> Expr:
    if op == "neg":
        return -args[0]
    if op == "pos":
        return args[0]
    a, b = args
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b.is_zero:
        raise ValueError("division by zero")
    return a / b


def _call(name: str, args: list[Expr]) -> Expr:
    low, high = _FUNCTIONS[name]
    if len(args) < low or (high is not None and len(args) > high):
        count = str(low) if low == high else f"at least {low}"
        raise ValueError(f"{name} takes {count} argument(s), got {len(args)}")
    if name == "Max":
        return sympy.Max(*args)
    if name == "Min":
        return sympy.Min(*args)
    if name == "Mod":
        if args[1].is_zero:
            raise ValueError("Mod by zero")
        return sympy.Mod(*args)
    if name == "floor":
        return sympy.floor(args[0])
    return sympy.ceiling(args[0])


#: An entry of the operator stack: ("op", sym, prec) a binary operator, ("unary", "neg"|"pos", prec),
#: ("(", "", 0) a grouping, ("call", name, 0) an open function call (its argument count is on ``argc``).
_StackEntry: TypeAlias = tuple[str, str, int]


class _ShuntingYard:
    """The state of one :func:`_parse`: the token list, the operand and operator stacks, and whether the
    next token must start an operand.

    Every nesting level is an entry of an explicit stack (bounded by ``MAX_DEPTH``), never a Python call,
    so no text can exhaust the interpreter's recursion limit.
    """

    def __init__(self, text: str, symbols: Mapping[str, sympy.Symbol]) -> None:
        self.symbols = symbols
        self.tokens = list(_tokens(text))  # tokenized first: a bad character is reported before the grammar
        self.next = 0  # index of the next token
        self.values: list[Expr] = []
        self.ops: list[_StackEntry] = []
        self.argc: list[int] = []
        self.expect_operand = True

    def parse(self) -> Expr:
        """The expression of the whole text."""
        while self.next < len(self.tokens):
            kind, value, pos = self.tokens[self.next]
            self.next += 1
            if self.expect_operand:
                self._operand(kind, value, pos)
            elif kind == "op":
                self._binary(value)
            elif kind in (")", ","):
                self._close(kind, value, pos)
            else:
                raise ValueError(f"expected an operator, ')' or ',' at position {pos}")
        return self._finish()

    def _push(self, entry: _StackEntry) -> None:
        if len(self.ops) >= MAX_DEPTH:
            raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
        self.ops.append(entry)

    def _reduce_one(self) -> None:
        """Apply the operator on top of the stack to the operands on top of theirs."""
        kind, op, _prec = self.ops.pop()
        if kind == "unary":
            self.values.append(_apply(op, [self.values.pop()]))
        else:
            b = self.values.pop()
            a = self.values.pop()
            self.values.append(_apply(op, [a, b]))

    def _reduce_operators(self, above: int = 0) -> None:
        """Apply the pending unary and binary operators of precedence ``above`` or more (every precedence is
        at least 1, so all of them by default)."""
        while self.ops and self.ops[-1][0] in ("op", "unary") and self.ops[-1][2] >= above:
            self._reduce_one()

    def _operand(self, kind: str, value: Any, pos: int) -> None:
        """A token where an operand starts: a number, a name, a call, a '(' or a unary sign."""
        if kind == "int":
            self.values.append(sympy.Integer(value))
            self.expect_operand = False
        elif kind == "name" and self.next < len(self.tokens) and self.tokens[self.next][0] == "(":
            self._open_call(value)
        elif kind == "name":
            symbol = self.symbols.get(value)
            self.values.append(symbol if symbol is not None else size_symbol(value))
            self.expect_operand = False
        elif kind == "(":
            self._push(("(", "", 0))
        elif kind == "op" and value in "+-":
            self._push(("unary", "neg" if value == "-" else "pos", _UNARY_PREC))
        else:
            raise ValueError(f"expected a number, a name or '(' at position {pos}")

    def _open_call(self, name: str) -> None:
        """``name(``: a call of an allowed function, its first argument next."""
        if name not in _FUNCTIONS:
            raise ValueError(
                f"calls '{name}', which is not allowed (functions: {', '.join(sorted(_FUNCTIONS))})"
            )
        self._push(("call", name, 0))
        self.argc.append(1)
        self.next += 1  # the call's '('

    def _binary(self, op: str) -> None:
        """A binary operator after an operand: the pending ones binding at least as tightly go first (all
        operators are left-associative)."""
        prec = _BINARY[op]
        self._reduce_operators(prec)
        self._push(("op", op, prec))
        self.expect_operand = True

    def _close(self, kind: str, value: str, pos: int) -> None:
        """A ')' or ',' after an operand: it completes the operand of the innermost group or call."""
        self._reduce_operators()
        if not self.ops:
            raise ValueError(f"unbalanced {value!r} at position {pos}")
        if kind == ",":
            if self.ops[-1][0] != "call":
                raise ValueError(f"',' outside a function call at position {pos}")
            self.argc[-1] += 1
            self.expect_operand = True
            return
        entry = self.ops.pop()
        if entry[0] == "call":
            count = self.argc.pop()
            args = self.values[len(self.values) - count :]
            del self.values[len(self.values) - count :]
            self.values.append(_call(entry[1], args))

    def _finish(self) -> Expr:
        """The end of the text: it must end an operand, and every '(' must be closed."""
        if self.expect_operand:
            raise ValueError("the text ends where a number or a name is expected")
        while self.ops:
            if self.ops[-1][0] not in ("op", "unary"):
                raise ValueError("unbalanced '('")
            self._reduce_one()
        return self.values[0]


def _parse(text: str, symbols: Mapping[str, sympy.Symbol]) -> Expr:
    """Shunting-yard over :func:`_tokens`; explicit stacks, no recursion."""
    return _ShuntingYard(text, symbols).parse()


def parse(text: str, symbols: Mapping[str, sympy.Symbol]) -> Expr:
    """Parse a size expression text using the given size symbols; nothing is evaluated as code.

    Grammar: integers (at most ``MAX_LITERAL``), names (any identifier; a name
    in ``symbols`` is that symbol, any other becomes a size symbol of that name
    that validation then reports), ``+ - * /`` with the usual precedence and
    unary ``+``/``-``, parentheses and the calls ``Max(a, ...)``, ``Min(a, ...)``,
    ``Mod(a, b)``, ``floor(a)``, ``ceiling(a)``. ``/`` is exact (rational)
    division, as in sympy. No ``**``, no other calls, no attribute access:
    the sympy objects are built here from the tokens, so no text ever reaches
    a Python or sympy evaluator. Length (``MAX_TEXT``) and nesting
    (``MAX_DEPTH``) are bounded. Raises ValueError naming the problem.
    """
    if not isinstance(text, str):
        raise ValueError(f"a size expression text must be a str, got {type(text).__name__}")
    shown = text if len(text) <= 80 else text[:77] + "..."
    if len(text) > MAX_TEXT:
        raise ValueError(f"size expression {shown!r} is longer than {MAX_TEXT} characters")
    if not text.strip():
        raise ValueError("empty size expression")
    try:
        expr = _parse(text, symbols)
    except ValueError as exc:
        raise ValueError(f"not a size expression: {shown!r}: {exc}") from None
    if expr.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        raise ValueError(f"size expression {shown!r} is not finite")
    return expr


#: the first entry of a symbol's class key (sympy sorts by it first): atoms are at most this, every
#: call, sum, product or power is above it
_SYMBOL_CLASS_RANK = sympy.Symbol.class_key()[0]


def _polynomial_term_order(expr: sympy.Add, order: str | None) -> list[Expr] | None:
    """The terms of ``expr`` in the order ``expr.as_ordered_terms(order)`` gives them, for the sums a
    compile prints most: rational multiples of products of integer powers of generators, each a plain
    symbol (of a name no other has) or a call or sum that is not a number (``floor``, ``Max``,
    ``AlignUp``, ``tiles - 1``), no two terms on one monomial. None for any other sum, and for any order
    but sympy's default (``None``) and ``"lex"``.

    sympy orders terms by their exponent vectors over the generators, highest power first, with the
    generators in its default sort order: symbols first (their class key comes first), by name, then
    the others. Its general path computes the sort key of every generator, asks each factor whether it
    is a number and converts each coefficient to ``complex``, which is most of what printing a sum
    costs the first time. For these sums the exponent vectors are all its key tells apart, so the same
    order comes out of a plain sort, and sympy's sort key is computed only to order two or more
    generators that are not symbols. ``tests/core/test_expr_text.py`` checks the order against sympy's
    and the texts against ``str()``'s.
    """
    if order not in (None, "lex"):
        return None
    args = expr.args
    if order is None and len(args) == 2:
        # sympy's special case: a positive number before a negative multiple of one factor (``1 - s0``)
        const, other = args if args[0].is_Number else args[::-1]
        if (
            const.is_Number
            and other.is_Mul
            and len(other.args) == 2
            and other.args[0].is_Number
            and const.is_positive
            and other.args[0].is_negative
        ):
            return [const, other]
    powers: list[dict[Expr, int]] = []
    symbols: set[sympy.Symbol] = set()
    others: set[Expr] = set()
    for term in args:
        coeff, rest = term.as_coeff_Mul()
        if not coeff.is_Rational:
            return None
        exps: dict[Expr, int] = {}
        for factor in rest.args if rest.is_Mul else () if rest is sympy.S.One else (rest,):
            if factor.is_Rational:
                continue  # a number in an unevaluated product: part of the coefficient, as in sympy
            if factor.is_Pow:
                base, exp = factor.args
                if not exp.is_Integer:
                    return None
            else:
                base, exp = factor, sympy.S.One
                if factor.as_base_exp() != (factor, exp):
                    return None  # exp(x), say: sympy splits it further
            if base in exps or base.is_commutative is not True:
                return None
            if type(base) is sympy.Symbol:
                symbols.add(base)
            elif base.is_Atom or base.is_number or base.class_key()[0] <= _SYMBOL_CLASS_RANK:
                return None
            else:
                others.add(base)
            exps[base] = int(exp)
        powers.append(exps)
    gens: list[Expr] = sorted(symbols, key=lambda sym: sym.name)
    if len({sym.name for sym in gens}) != len(gens):
        return None  # two symbols of one name: sympy's own order is not defined by the names
    gens += sorted(others, key=default_sort_key) if len(others) > 1 else others
    keys = [tuple(-exps.get(gen, 0) for gen in gens) for exps in powers]
    if len(set(keys)) != len(keys):
        return None  # two terms on one monomial (an unevaluated product): sympy compares coefficients
    return [term for _, term in sorted(zip(keys, args), key=lambda pair: pair[0])]


class _FastTermOrder(StrPrinter):
    """A str printer that orders a sum's terms with :func:`_polynomial_term_order` where it applies."""

    def _as_ordered_terms(self, expr: Any, order: str | None = None) -> list[Any]:
        order = order or self.order
        if isinstance(expr, sympy.Add):
            terms = _polynomial_term_order(expr, order)
            if terms is not None:
                return terms
        return super()._as_ordered_terms(expr, order=order)


class _SizePrinter(_FastTermOrder):
    """sympy's str printer, with graph names and without ``**`` (so :func:`parse` reads it back)."""

    def _print_Symbol(self, expr: sympy.Symbol) -> str:  # noqa: N802 - sympy printer protocol
        return demangle(expr.name)

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:  # noqa: N802
        base, exp = expr.as_base_exp()
        if exp.is_Integer and exp != 0:
            b = self.parenthesize(base, precedence(sympy.Mul(2, 3, evaluate=False)) + 1)
            power = "*".join([b] * abs(int(exp)))
            return f"({power})" if exp > 0 else f"1/({power})"
        return super()._print_Pow(expr, rational)


def to_text(expr: Expr) -> str:
    """Canonical text of a size expression (stable across runs; :func:`parse` reads it back)."""
    return _SizePrinter({"order": "lex"}).doprint(expr)


class _MemoStrPrinter(_FastTermOrder):
    """sympy's ``str()`` printer that looks every sub-expression up in a shared table first.

    The text of a sub-expression does not depend on where it occurs (a parent
    adds the parentheses around it), except for a Float, whose digits depend on
    the nesting level: Floats are printed every time. Each call gets its own
    printer (printers count their nesting level), the table is shared.
    """

    def __init__(self, memo: dict[tuple[type, sympy.Basic], str]) -> None:
        super().__init__()
        self._memo = memo

    def _print(self, expr: Any, **kwargs: Any) -> str:
        if kwargs or not isinstance(expr, sympy.Basic) or isinstance(expr, sympy.Float):
            return super()._print(expr, **kwargs)
        key = (type(expr), expr)
        text = self._memo.get(key)
        if text is None:
            text = self._memo[key] = super()._print(expr)
        return text


#: Texts of the sub-expressions printed so far (:func:`expr_text`); emptied when it holds more.
_TEXTS: dict[tuple[type, sympy.Basic], str] = {}
_TEXTS_LIMIT = 65536


def expr_text(value: object) -> str:
    """``str(value)``, the same text, with each distinct sympy sub-expression printed once.

    sympy prints a formula by printing all of its arguments, and a compile
    prints many formulas that share their arguments (sizes, tile counts,
    products of both): the proto, the ImplGraph dumps and the guards go
    through here. Not sympy values print with ``str``.
    """
    if not isinstance(value, sympy.Basic):
        return str(value)
    if len(_TEXTS) > _TEXTS_LIMIT:
        _TEXTS.clear()
    return _MemoStrPrinter(_TEXTS).doprint(value)


#: a polynomial as {monomial: coefficient}; a monomial is a frozenset of (symbol, exponent) pairs
_Terms = dict[frozenset[tuple[sympy.Symbol, int]], sympy.Rational]
#: the highest integer power :func:`expand_polynomial` multiplies out itself
_MAX_POWER = 8


def _terms(expr: Expr) -> _Terms | None:
    """``expr`` multiplied out, or None when it is not a polynomial with rational coefficients."""
    if expr.is_Rational:
        return {frozenset(): expr}
    if expr.is_Symbol:
        return {frozenset({(expr, 1)}): sympy.Integer(1)}
    if expr.is_Add:
        total: _Terms = {}
        for arg in expr.args:
            part = _terms(arg)
            if part is None:
                return None
            for mono, coeff in part.items():
                total[mono] = total.get(mono, sympy.Integer(0)) + coeff
        return total
    if expr.is_Mul:
        result: _Terms = {frozenset(): sympy.Integer(1)}
        for arg in expr.args:
            factor = _terms(arg)
            if factor is None:
                return None
            result = _times(result, factor)
        return result
    if expr.is_Pow and expr.exp.is_Integer and 1 <= expr.exp <= _MAX_POWER:
        base = _terms(expr.base)
        if base is None:
            return None
        power = base
        for _ in range(int(expr.exp) - 1):
            power = _times(power, base)
        return power
    return None


def _times(a: _Terms, b: _Terms) -> _Terms:
    out: _Terms = {}
    for mono_a, ca in a.items():
        for mono_b, cb in b.items():
            exps = dict(mono_a)
            for sym, e in mono_b:
                exps[sym] = exps.get(sym, 0) + e
            mono = frozenset(exps.items())
            out[mono] = out.get(mono, sympy.Integer(0)) + ca * cb
    return out


def expand_polynomial(expr: Expr) -> Expr:
    """``sympy.expand(expr)``, the same expression, for the polynomials sizes and spans are.

    A sum, product or small integer power of symbols and rational numbers is
    multiplied out directly (sympy's canonical Add and Mul then order it as
    ``expand`` does), skipping ``expand``'s walk of every hint over the tree,
    which was most of a new graph's guard time. Anything else (Max, floor,
    Floats, ...) goes to ``sympy.expand``.
    """
    expr = sympy.sympify(expr)
    terms = _terms(expr)
    if terms is None:
        return sympy.expand(expr)
    return sympy.Add(
        *(sympy.Mul(coeff, *(sym**e for sym, e in mono)) for mono, coeff in terms.items() if coeff != 0)
    )


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


def storage_elements(sizes: Sequence[Expr] | Sequence[int], strides: Sequence[Expr] | Sequence[int]) -> Expr:
    """Elements a strided view spans in its storage: ``1 + sum((size - 1) * stride)``.

    The one formula behind input buffers, the int64 guards of tensors, the
    overflow validation and the kernel's GM tensor lengths. It counts the
    element a view of no elements would start at too (callers that allow an
    empty view say so themselves).
    """
    return sympy.Integer(1) + sum(((s - 1) * st for s, st in zip(sizes, strides)), sympy.Integer(0))


def contiguous_strides(sizes: list[Expr] | tuple[Expr, ...]) -> list[Expr]:
    """Row-major strides for the given sizes, in elements."""
    strides: list[Expr] = []
    acc: Expr = sympy.Integer(1)
    for s in reversed(sizes):
        strides.append(acc)
        acc = acc * s
    return list(reversed(strides))
