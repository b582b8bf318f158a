"""Reuse of gathered rows: how many distinct lines the index values select, and the line fills they cost a
core's data cache, under the index distribution the caller declares.

Why a module of its own: with a shared L2, the bytes HBM delivers are the distinct lines a kernel reads,
and a core's data-cache fills shrink when its values repeat. Sizes alone do not say how often values
repeat; the distribution does (``AutofuserOptions.index_distribution``, the corpus's ``distribution``).
So a template asks here, with the gather's sizes, and gets:

- :func:`expected_distinct`: the integer formula for uniform values, usable with symbolic sizes (the host
  tiling evaluates it; the same rows serve the dedup template's chunks);
- :func:`gather_reuse`: numbers for concrete sizes and a declared distribution: the distinct lines of all
  values (the L2 misses, so the HBM bytes) and the fills of every core's data cache (LRU, by Che's
  approximation, item by item), or ``None`` when the sizes are symbolic or the table too large to model.

The row probabilities follow the twin's drawing (:mod:`af_core.inputs`): zipf ranks clipped at the last
row, the ranks mapped to rows by a permutation (a fixed one here: the expectation over permutations is
what a prediction wants, and a fixed seed keeps it identical in every process).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import attrs
import sympy

from af_core.index_distribution import DistributionKind, IndexDistribution
from af_core.tiling.spec import CeilDiv, Max, Min

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np

#: Largest table (rows) modelled row by row; a larger one falls back to the sizes-only formulas.
MAX_MODELLED_ROWS = 1 << 22
LINE_BYTES = 128
#: Seed of the fixed rank -> row permutation (any fixed value; the twin's draws use their own).
_PERMUTATION_SEED = 20261207


def expected_distinct(draws: sympy.Expr | int, population: sympy.Expr | int) -> sympy.Expr:
    """Expected distinct values among ``draws`` uniform draws from ``population`` values, as an integer
    formula: ``2 d p / (2 p + d)`` (the Pade form of ``p (1 - exp(-d / p))``), at most ``min(d, p)`` and
    at least 1. It is at most one below the expectation and high by up to 16% (where ``d`` is about
    twice ``p``), by up to 6% while ``d <= p``, plus the one rounding up adds; its products stay inside
    int64 for sizes up to a billion."""
    return Max(1, Min(draws, population, CeilDiv(2 * draws * population, 2 * population + draws)))


@attrs.frozen
class GatherReuse:
    """Expected figures for one gather: distinct lines over all values, and data-cache fills summed over
    the cores (each core takes an equal share of the values)."""

    distinct_lines: int
    core_fills: int


def _hit_probabilities(
    rows: int, draws: int, d: IndexDistribution, total: int | None = None
) -> tuple[np.ndarray, np.ndarray, float]:
    """Per row: the probability one draw selects it, and the probability ``draws`` draws select it at
    least once; and the draws that can miss a cache (a ``repeat<k>`` value's copies follow each other).
    ``total``: the draws of the whole index when ``draws`` are a part of it (the pool ``duplicates``
    draws from is a quarter of the whole index)."""
    import numpy as np

    kind = d.kind
    effective = float(draws)
    if kind is DistributionKind.ZIPF:
        ranks = np.arange(1, rows + 1, dtype=np.float64)
        mass = ranks ** (-d.alpha) / _zeta(d.alpha)
        mass[-1] = max(0.0, 1.0 - float(mass[:-1].sum()))
        mass = mass[np.random.default_rng(_PERMUTATION_SEED).permutation(rows)]
    elif kind is DistributionKind.DUPLICATES:
        pool = max(1, (draws if total is None else total) // 4)
        pooled = int(round(rows * -math.expm1(pool * math.log1p(-1.0 / rows)))) if rows > 1 else 1
        mass = np.zeros(rows)
        mass[np.random.default_rng(_PERMUTATION_SEED).permutation(rows)[: max(1, pooled)]] = 1.0 / max(
            1, pooled
        )
    else:
        mass = np.full(rows, 1.0 / rows)
        if kind is DistributionKind.REPEAT:
            effective = draws / d.repeat
    if kind in (DistributionKind.UNIQUE, DistributionKind.UNIQUE_PER_ROW):
        hit = np.full(rows, min(1.0, draws / rows))
    else:
        hit = _touched(mass, effective)
    return mass, hit, effective


def _touched(mass: np.ndarray, draws: float) -> np.ndarray:
    """Per item: the probability that ``draws`` independent draws with these masses select it."""
    import numpy as np

    return -np.expm1(draws * np.log1p(-np.minimum(mass, 1.0 - 1e-16)))


def _least_reaching(f: Callable[[float], float], target: float, hi: float) -> float:
    """The least ``x`` in ``[0, hi]`` (``hi`` doubled until it is enough) with ``f(x) >= target``, for an
    increasing ``f``, by bisection."""
    while f(hi) < target:
        hi *= 2
    lo = 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return hi


def _concrete(*values: object) -> tuple[int, ...] | None:
    """The values as positive ints, or None when one is symbolic or not positive."""
    exprs = [sympy.sympify(v) for v in values]
    if not all(v.is_Integer and int(v) > 0 for v in exprs):
        return None
    return tuple(int(v) for v in exprs)


@functools.lru_cache(maxsize=64)
def _zeta(alpha: float) -> float:
    """Riemann zeta(alpha) for alpha > 1 (numpy's zipf normalisation): a partial sum and its integral tail."""
    import numpy as np

    n = 100_000
    head = float((np.arange(1, n, dtype=np.float64) ** (-alpha)).sum())
    return head + n ** (1 - alpha) / (alpha - 1) + 0.5 * n ** (-alpha)


def _line_items(rows: int, row_bytes: int, stride_bytes: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(first line, last line) of every row, and the line count of the table's span."""
    import numpy as np

    start = np.arange(rows, dtype=np.int64) * stride_bytes
    return (
        start // LINE_BYTES,
        (start + row_bytes - 1) // LINE_BYTES,
        int((start[-1] + row_bytes - 1) // LINE_BYTES) + 1,
    )


def _distinct_lines(first: np.ndarray, last: np.ndarray, hit: np.ndarray, lines: int) -> float:
    """Expected lines touched: a line is missed only when every row on it is (rows taken as independent)."""
    import numpy as np

    spans = last - first + 1
    if int(spans.min()) > 2:  # rows of several lines: the shared boundary lines are a small share
        return float((hit * spans).sum())
    missed = np.zeros(lines)
    log_miss = np.log1p(-np.minimum(hit, 1.0 - 1e-16))
    np.add.at(missed, first, log_miss)
    two = last != first
    np.add.at(missed, last[two], log_miss[two])
    return float((-np.expm1(missed)).sum())


def _che_fills(mass: np.ndarray, size: int, draws: float, cache_lines: int) -> float:
    """Line fills of one LRU cache of ``cache_lines`` lines for ``draws`` draws over items of ``mass``
    (``size`` lines each). While the expected distinct items fit, every fill is a first touch. Past the
    draw ``n0`` at which they fill the cache, each draw misses with Che's steady-state probability: the
    characteristic time ``T`` solves ``sum(1 - exp(-m T)) = capacity``, and an item misses with
    probability ``exp(-m T)``."""
    import numpy as np

    live = mass[mass > 0]

    def distinct(n: float) -> float:
        return float(_touched(live, n).sum())

    capacity = cache_lines / size
    if distinct(draws) <= capacity:
        return distinct(draws) * size
    warm = _least_reaching(distinct, capacity, draws)  # n0: the draws whose distinct items fill the cache
    horizon = _least_reaching(lambda t: float((-np.expm1(-live * t)).sum()), capacity, 1.0)  # Che's T
    miss = float((live * np.exp(-live * horizon)).sum())
    return min(draws, capacity + miss * (draws - warm)) * size


@functools.lru_cache(maxsize=256)
def _gather_reuse(
    values: int,
    rows: int,
    row_bytes: int,
    stride_bytes: int,
    cores: int,
    cache_bytes: int,
    distribution: IndexDistribution,
) -> GatherReuse:
    import numpy as np

    mass, hit, effective = _hit_probabilities(rows, values, distribution)
    first, last, lines = _line_items(rows, row_bytes, stride_bytes)
    distinct = _distinct_lines(first, last, hit, lines)
    spans = last - first + 1
    per_core = effective / cores
    cache_lines = cache_bytes // LINE_BYTES
    if int(spans.max()) >= 2 and row_bytes >= LINE_BYTES:
        fills = _che_fills(mass, int(round(float(spans.mean()))), per_core, cache_lines)
    else:  # rows share lines: the cached items are lines, each with the mass of its rows
        line_mass = np.zeros(lines)
        np.add.at(line_mass, first, mass)
        fills = _che_fills(line_mass, 1, per_core, cache_lines)
    return GatherReuse(int(round(distinct)), int(round(fills * cores)))


@functools.lru_cache(maxsize=256)
def _distinct_rows(draws: int, rows: int, distribution: IndexDistribution, total: int) -> int:
    _mass, hit, _effective = _hit_probabilities(rows, draws, distribution, total)
    return max(1, int(round(float(hit.sum()))))


def distinct_rows(
    draws: object, rows: object, distribution: IndexDistribution | None, total: object | None = None
) -> int | None:
    """Expected distinct rows among ``draws`` index values (a part of ``total``, all of them by
    default) over a table of ``rows`` rows; ``None`` without a distribution or with a symbolic size."""
    concrete = _concrete(draws, rows, draws if total is None else total)
    if distribution is None or concrete is None or concrete[1] > MAX_MODELLED_ROWS:
        return None
    return _distinct_rows(*concrete[:2], distribution, concrete[2])


def gather_reuse(
    values: object,
    rows: object,
    row_bytes: object,
    stride_bytes: object,
    cores: int,
    cache_bytes: int,
    distribution: IndexDistribution | None,
) -> GatherReuse | None:
    """Expected distinct lines and data-cache fills of ``values`` index values over a table of ``rows``
    rows (``row_bytes`` read per value, rows ``stride_bytes`` apart, the table line-aligned), split over
    ``cores`` cores with ``cache_bytes`` of data cache each; ``None`` without a distribution, with a
    symbolic size, or beyond :data:`MAX_MODELLED_ROWS` rows."""
    concrete = _concrete(values, rows, row_bytes, stride_bytes)
    if distribution is None or concrete is None or concrete[1] > MAX_MODELLED_ROWS:
        return None
    n_values, n_rows, run, stride = concrete
    return _gather_reuse(
        n_values, n_rows, run, max(stride, run), max(1, min(cores, n_values)), cache_bytes, distribution
    )
