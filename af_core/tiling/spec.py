"""What a case tells the host tiling: fields, constraints, resources, score and cost.

Every quantity is a sympy expression over the graph's size symbols, the
platform symbols ``core_num`` and ``ub_size``, and the case's earlier fields
(a field may use the fields before it). Integer arithmetic only: divisions
are :class:`CeilDiv` / :class:`FloorDiv`, so Python (lambdify) and the
generated C++ compute the same numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs
import sympy

from af_core.ir.evaluate import AlignUp, CeilDiv, FloorDiv
from af_core.ir.sizes import Expr

_FIELD_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

CORE_NUM = sympy.Symbol("core_num", integer=True, positive=True)
UB_SIZE = sympy.Symbol("ub_size", integer=True, positive=True)
PLATFORM_SYMBOLS = (CORE_NUM, UB_SIZE)

__all__ = [
    "AlignUp",
    "CORE_NUM",
    "CeilDiv",
    "Constraint",
    "FloorDiv",
    "Max",
    "Min",
    "TilingField",
    "TilingSpec",
    "UB_SIZE",
    "field",
]


def Max(*args: object) -> sympy.Basic:  # noqa: N802 - mirrors sympy.Max
    """sympy.Max without its simplification pass (slow on large formulas; the C++ needs none)."""
    values = [sympy.sympify(a) for a in args]
    if all(v.is_number for v in values):
        return sympy.Max(*values)
    return sympy.Max(*values, evaluate=False)


def Min(*args: object) -> sympy.Basic:  # noqa: N802 - mirrors sympy.Min
    """sympy.Min without its simplification pass."""
    values = [sympy.sympify(a) for a in args]
    if all(v.is_number for v in values):
        return sympy.Min(*values)
    return sympy.Min(*values, evaluate=False)


def field(name: str) -> sympy.Symbol:
    """The symbol other expressions use to refer to a tiling field."""
    return sympy.Symbol(name, integer=True)


@attrs.frozen
class TilingField:
    """One value the host tiling computes and the kernel reads (``t.c<key>_<name>``)."""

    name: str
    expr: Expr
    doc: str = ""

    @property
    def symbol(self) -> sympy.Symbol:
        return field(self.name)


@attrs.frozen
class Constraint:
    """A condition the case needs; when it fails the case is dropped with ``reason``."""

    expr: sympy.Basic  # a relational or boolean expression
    reason: str
    stage: str = "tiling"


@attrs.define
class TilingSpec:
    """Everything host tiling needs to know about one case."""

    fields: list[TilingField] = attrs.Factory(list)
    constraints: list[Constraint] = attrs.Factory(list)
    resources: dict[str, Expr] = attrs.Factory(dict)  # ub_bytes, workspace_bytes, dcache_bytes, ...
    score: Expr = sympy.Integer(0)
    cost: Expr = sympy.Integer(0)
    block_dim: Expr = sympy.Integer(1)
    workspace: Expr = sympy.Integer(0)
    #: The case cannot overlap its copies with its compute (single buffering): its cost adds the core
    #: time to the memory time. Read by ``afc explain`` and the benchmarks to time the case's runs.
    serialized: bool = False

    def add(self, name: str, expr: object, doc: str = "") -> sympy.Symbol:
        """Append a field and return its symbol for use in later expressions.

        ``name`` becomes part of C++ identifiers (``c<key>_<name>``), so it is
        letters, digits and ``_``, starting with a letter; it must not be the
        symbol name of a graph size either (the scheduler refuses such a case).
        """
        if not isinstance(name, str) or not _FIELD_NAME.fullmatch(name):
            raise ValueError(
                f"tiling field name {name!r} is not letters, digits and '_' starting with a letter"
            )
        if any(f.name == name for f in self.fields):
            raise ValueError(f"tiling field '{name}' defined twice")
        self.fields.append(TilingField(name, sympy.sympify(expr), doc))
        return field(name)

    def require(self, expr: sympy.Basic, reason: str) -> None:
        self.constraints.append(Constraint(expr, reason))

    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def expressions(self) -> Iterable[sympy.Basic]:
        yield from (f.expr for f in self.fields)
        yield from (c.expr for c in self.constraints)
        yield from self.resources.values()
        yield from (self.score, self.cost, self.block_dim, self.workspace)
