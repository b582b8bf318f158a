"""The first seed's selection measures and thresholds (section 功能需求6).

``continuous_bytes`` walks the input's strides from the last axis toward the
first exactly as the seed's loop does — including its quirks: axis 0 is never
multiplied in, and the last stride is not required to be 1. With symbolic
shapes the stride comparison is structural (``strides[i-1] == repeats[i] *
strides[i]`` after expansion), so the measure is a sympy expression that the
host tiling evaluates with the real shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import attrs
import sympy

from af_core.ir.graph import HintGraph, Node
from af_core.ir.sizes import Expr, expand_polynomial, product
from af_core.tiling.conditions import Ge
from af_core.tiling.spec import CORE_NUM


def continuous_product(repeats: Sequence[Expr], strides: Sequence[Expr]) -> Expr:
    """The seed's loop, verbatim in structure."""
    result: Expr = sympy.Integer(1)
    rank = len(repeats)
    for i in range(rank - 1, 0, -1):
        if expand_polynomial(strides[i - 1] - repeats[i] * strides[i]) == 0:
            result = result * repeats[i]
        else:
            break
    return result


def index_outer_product(index_repeats: Sequence[Expr], dim: int) -> Expr:
    """Product of the index repeats before ``dim`` (the seed's second loop)."""
    return product(list(index_repeats[:dim]))


def main_input(graph: HintGraph, il: Node, *, stop: tuple[str, ...] = ("data",)) -> Node:
    """The input of an IndirectLoad whose layout the seed measures.

    Walks upstream from ``x1`` through each op's data input (``OpDef.data_port``)
    to the first node whose compute type is in ``stop``: the Data node by
    default; ``stop=("load", "broadcast")`` gives the view that reads it.
    """
    node = graph.producer(il, "x1")
    while node.op.compute_type not in stop:
        node = graph.producer(node, node.op.data_port)
    return node


@attrs.frozen
class Thresholds:
    cache_thres: Fraction
    core_thres: Fraction
    cacheline: int

    @classmethod
    def of(cls, cache_thres: float, core_thres: float, cacheline: int) -> Thresholds:
        def frac(v: float, what: str) -> Fraction:
            f = Fraction(str(v)).limit_denominator(10000)
            if f < 0:
                raise ValueError(f"{what} must be non-negative, got {v}")
            return f

        if cacheline <= 0:
            raise ValueError(f"cacheline must be positive, got {cacheline}")
        return cls(frac(cache_thres, "cache_thres"), frac(core_thres, "core_thres"), int(cacheline))


@attrs.frozen
class SelectionMeasures:
    """The two measures as formulas, and the seed's two conditions as relations.

    The core offers the conditions; each template builds its own region from
    them in its score (the seed's SIMD region is ``cache_ok() & core_ok()``), so
    the core names no template.
    """

    continuous_bytes: Expr
    index_outer: Expr
    thresholds: Thresholds

    @classmethod
    def of(cls, graph: HintGraph, il: Node, thresholds: Thresholds) -> SelectionMeasures:
        data = main_input(graph, il)
        cont = continuous_product(list(data.y.size), list(data.y.strides)) * data.y.dtype.itemsize
        outer = index_outer_product(list(il.y.size), int(il.attr.ir_attr.dim))
        return cls(expand_polynomial(cont), expand_polynomial(outer), thresholds)

    def cache_ok(self) -> sympy.Basic:
        """continuous_bytes >= cacheline * Cache_thres, in integers."""
        f = self.thresholds.cache_thres
        return Ge(self.continuous_bytes * f.denominator, self.thresholds.cacheline * f.numerator)

    def core_ok(self) -> sympy.Basic:
        """index_outer_product >= block_dim * Core_thres (block_dim = core count), in integers."""
        f = self.thresholds.core_thres
        return Ge(self.index_outer * f.denominator, CORE_NUM * f.numerator)
