"""The reuse model (af_core.schedule.reuse) against index values drawn as the twin draws them.

Differential: the values come from af_core.inputs' own drawing functions; a few lines of Python count the
distinct 128-byte lines they touch and the fills of one LRU cache per core (each core takes an equal,
contiguous share of the values, as the SIMT template splits its output). The model's expectations must
land near those counts for every distribution the corpus uses.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import sympy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from af_core import dtypes as dt
from af_core.index_distribution import parse_distribution
from af_core.inputs import _index_values
from af_core.schedule.reuse import expected_distinct, gather_reuse

LINE = 128
CACHE = 32 * 1024


def _lines(values: np.ndarray, row_bytes: int, stride: int) -> list[list[int]]:
    first = values * stride // LINE
    last = (values * stride + row_bytes - 1) // LINE
    return [list(range(int(a), int(b) + 1)) for a, b in zip(first, last)]


def _counted(values: np.ndarray, row_bytes: int, stride: int, cores: int) -> tuple[int, int]:
    """(distinct lines, LRU fills summed over the cores) of the values, counted one by one."""
    touched = _lines(values, row_bytes, stride)
    distinct = len({line for lines in touched for line in lines})
    fills = 0
    for share in np.array_split(np.arange(len(values)), cores):
        cache: OrderedDict[int, None] = OrderedDict()
        for i in share:
            for line in touched[i]:
                if line in cache:
                    cache.move_to_end(line)
                    continue
                fills += 1
                cache[line] = None
                if len(cache) > CACHE // LINE:
                    cache.popitem(last=False)
    return distinct, fills


def _draw(name: str, count: int, rows: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return _index_values(rng, count, rows, (count,), dt.int64, parse_distribution(name), False, 0.0)


@pytest.mark.parametrize("name", ["uniform", "zipf1.15", "zipf1.09", "repeat2", "duplicates", "unique"])
@pytest.mark.parametrize("row_bytes", [64, 256, 512])
def test_expected_lines_and_fills_match_the_drawn_values(name, row_bytes):
    rows, count, cores = 20000, 8192, 8
    values = _draw(name, count, rows, seed=3)
    distinct, fills = _counted(values, row_bytes, row_bytes, cores)
    model = gather_reuse(count, rows, row_bytes, row_bytes, cores, CACHE, parse_distribution(name))
    assert model is not None
    assert model.distinct_lines == pytest.approx(distinct, rel=0.06), (model, distinct)
    assert model.core_fills == pytest.approx(fills, rel=0.15), (model, fills)


@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(64, 50000),
    count=st.integers(16, 6000),
    row_bytes=st.sampled_from([32, 64, 128, 384, 1024]),
    alpha=st.sampled_from([1.05, 1.15, 1.5]),
)
def test_skew_never_selects_more_lines_than_uniform_values(rows, count, row_bytes, alpha):
    """Repeats only remove lines: zipf values select at most the lines uniform ones do, and neither more
    than the values read nor than the table holds."""
    uniform = gather_reuse(count, rows, row_bytes, row_bytes, 4, CACHE, parse_distribution("uniform"))
    zipf = gather_reuse(count, rows, row_bytes, row_bytes, 4, CACHE, parse_distribution(f"zipf{alpha}"))
    assert uniform is not None and zipf is not None
    per_value = -(-row_bytes // LINE) + 1
    table_lines = (rows * row_bytes + LINE - 1) // LINE
    assert zipf.distinct_lines <= uniform.distinct_lines * 1.01 + 1
    assert uniform.distinct_lines <= min(count * per_value, table_lines) + 1
    assert zipf.core_fills >= zipf.distinct_lines * 0.99 - 1  # each distinct line is filled at least once


def test_the_same_figures_in_every_call_and_none_without_what_it_needs():
    zipf = parse_distribution("zipf1.15")
    assert gather_reuse(5000, 9000, 64, 64, 8, CACHE, zipf) == gather_reuse(
        5000, 9000, 64, 64, 8, CACHE, zipf
    )
    k = sympy.Symbol("K", integer=True, positive=True)
    assert gather_reuse(k, 9000, 64, 64, 8, CACHE, zipf) is None  # a symbolic size: the formulas decide
    assert gather_reuse(5000, 9000, 64, 64, 8, CACHE, None) is None  # no declared distribution


@given(draws=st.integers(1, 10**7), population=st.integers(1, 10**7))
@example(draws=3, population=3)  # few rows: below the expectation by a fraction of a row
@example(draws=17, population=10)  # d about twice p: the formula's largest excess
def test_the_uniform_formula_is_within_its_stated_error(draws, population):
    """At most one below the expectation (few rows: the formula follows p (1 - exp(-d / p)), which is low
    by a fraction of a row), above it by at most 16% (6% while draws <= population), plus the one the
    rounding up adds."""
    exact = population * -np.expm1(draws * np.log1p(-1 / population)) if population > 1 else 1.0
    value = int(expected_distinct(draws, population))
    assert 1 <= value <= min(draws, population)
    assert exact - 1 <= value <= 1.16 * exact + 1
    if draws <= population:
        assert value <= 1.06 * exact + 1
