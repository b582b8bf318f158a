"""Selection policies: how the host tiling picks one case among those that fit.

A policy is data, not code, so that one value drives both choosers: the
Python twin (:func:`af_core.tiling.solve.solve`) compares cases with
:meth:`SelectionPolicy.rank`, and codegen renders the same order into the C++
host tiling (:func:`better_than_best`). The order is lexicographic over
per-case quantities the host tiling computes anyway — ``score``, ``cost``,
``block_dim``, ``workspace``, ``tiling_key`` — or over a resource formula of
the case (``resource:<name>``). Whatever the order, a full tie goes to the
lowest tiling key (the C++ visits cases by increasing key and only replaces
its pick with a strictly better one).

Policies are registered through the ``af_register_selection_policies`` hook;
the core registers ``seed`` and ``cost`` itself. The default is ``cost``
(:data:`DEFAULT_POLICY`): once the cost model predicts the twin's counters,
the lowest modelled cost lands within 10% of the best case on more of the
workload corpus than the seed's scores (BENCHMARKS.md, "Selection on the
corpus: every policy's pick").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

import attrs

from af_core.errors import AfError

#: The policy ``AutofuserOptions.selection`` and ``afc --selection`` use when none is named.
DEFAULT_POLICY = "cost"
#: Quantities every case has, whatever its template.
QUANTITIES = ("score", "cost", "block_dim", "workspace", "tiling_key")
#: Prefix of a quantity naming one of the case's resource formulas.
RESOURCE = "resource:"
DIRECTIONS = ("max", "min")
MAX_ORDER = 16
_RESOURCE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")


class PolicyError(AfError, ValueError):
    """A selection policy that cannot be rendered into C++ nor evaluated, or one that is not installed."""


@attrs.frozen
class OrderTerm:
    """One key of the lexicographic order: a quantity and whether more (``max``) or less (``min``) wins."""

    quantity: str
    direction: str

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.quantity, str) or not (
            self.quantity in QUANTITIES
            or (self.quantity.startswith(RESOURCE) and _RESOURCE_NAME.match(self.quantity[len(RESOURCE) :]))
        ):
            raise PolicyError(
                f"order quantity {self.quantity!r} is none of {', '.join(QUANTITIES)} "
                f"nor '{RESOURCE}<identifier>'"
            )
        if self.direction not in DIRECTIONS:
            raise PolicyError(
                f"order direction {self.direction!r} of '{self.quantity}' is not 'max' or 'min'"
            )

    @property
    def resource(self) -> str | None:
        """The resource name when the quantity is a resource formula, else None."""
        return self.quantity[len(RESOURCE) :] if self.quantity.startswith(RESOURCE) else None

    def __str__(self) -> str:
        return f"{self.direction} {self.quantity}"


def _order(value: Iterable) -> tuple[OrderTerm, ...]:
    if isinstance(value, (str, bytes)):
        raise PolicyError(f"order must be a sequence of (quantity, direction) pairs, not {value!r}")
    terms = []
    for item in value:
        if isinstance(item, OrderTerm):
            terms.append(item)
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            terms.append(OrderTerm(item[0], item[1]))
        else:
            raise PolicyError(f"order term {item!r} is not a (quantity, direction) pair")
    if not terms or len(terms) > MAX_ORDER:
        raise PolicyError(f"order needs 1 to {MAX_ORDER} (quantity, direction) pairs, got {len(terms)}")
    quantities = [t.quantity for t in terms]
    repeated = sorted({q for q in quantities if quantities.count(q) > 1})
    if repeated:
        raise PolicyError(f"order names {', '.join(repeated)} more than once")
    return tuple(terms)


@attrs.frozen
class SelectionPolicy:
    """A named lexicographic order over the quantities of the cases that fit.

    ``order`` is a sequence of ``(quantity, direction)`` pairs, most important
    first; ``SelectionPolicy("cost", "...", [("cost", "min")])`` picks the
    lowest modelled cost. A case that does not define a resource the order
    names does not fit under this policy.
    """

    name: str
    description: str
    order: tuple[OrderTerm, ...] = attrs.field(converter=_order)

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.name, str) or not _RESOURCE_NAME.match(self.name):
            raise PolicyError(f"policy name {self.name!r} is not an identifier")
        if not isinstance(self.description, str):
            raise PolicyError(f"policy '{self.name}' has a non-text description")

    @property
    def resources(self) -> tuple[str, ...]:
        """Resource names the order ranks by (each case must define them)."""
        return tuple(t.resource for t in self.order if t.resource is not None)

    def describe(self) -> str:
        """The order as text, e.g. ``max score, then min cost, then min tiling_key``."""
        parts = [str(t) for t in self.order]
        if not any(t.quantity == "tiling_key" for t in self.order):
            parts.append("min tiling_key")
        return ", then ".join(parts)

    def rank(self, values: Mapping[str, int]) -> tuple[int, ...]:
        """A key that sorts the better case higher: ``values`` maps each quantity of the order (and
        ``tiling_key``) to its value for one case."""
        key = [values[t.quantity] if t.direction == "max" else -values[t.quantity] for t in self.order]
        key.append(-values["tiling_key"])
        return tuple(key)


def cpp_names(order: Sequence[OrderTerm]) -> list[tuple[str, str]]:
    """C++ variable names (this case's value, the best so far) per order term.

    Letters only: a graph size keeps its own name only with a digit or a capital in it
    (:func:`af_core.naming.size_ident`), so these never meet a size.
    """
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [(f"rank_{letters[i]}", f"best_rank_{letters[i]}") for i in range(len(order))]


def better_than_best(order: Sequence[OrderTerm], value: Sequence[str], best: Sequence[str]) -> str:
    """A C++ boolean expression: the case's quantities ``value[i]`` beat the best so far ``best[i]``.

    Strictly better only, so among full ties the first case visited (the lowest tiling key) stays.
    """
    expr = ""
    for term, v, b in reversed(list(zip(order, value, best))):
        op = ">" if term.direction == "max" else "<"
        expr = f"({v} {op} {b} || ({v} == {b} && {expr}))" if expr else f"{v} {op} {b}"
    return f"({expr})"


SEED = SelectionPolicy(
    "seed",
    "the design's rule: highest score, ties by the lowest modelled cost",
    [("score", "max"), ("cost", "min")],
)
COST = SelectionPolicy(
    "cost", "lowest modelled cost among the cases that fit, scores ignored", [("cost", "min")]
)
