"""The time model (af_core.schedule.time_model): the formula the host tiling evaluates gives the integer
estimate of the same counters, and each term answers to the counter it is made of."""

from __future__ import annotations

import sympy
from hypothesis import given
from hypothesis import strategies as st

from af_core.schedule.cost import COUNTER_NAMES, CounterModel, counted_cost
from af_core.schedule.time_model import DEFAULT_CONSTANTS, PS_PER_NS, estimate
from af_core.tiling.int64 import evaluate

counts = st.integers(0, 10**10)


def _counters(draw_values: list[int]) -> dict[str, int]:
    return dict(zip(COUNTER_NAMES, draw_values))


@given(
    values=st.lists(counts, min_size=len(COUNTER_NAMES), max_size=len(COUNTER_NAMES)),
    cores=st.integers(1, 64),
)
def test_the_formula_and_the_integers_agree(values, cores):
    """The symbolic estimate (what the host tiling and the Python solver evaluate, in int64) equals the
    estimate of the same counters as integers."""
    counters = _counters(values)
    symbols = {name: sympy.Symbol(name, integer=True, nonnegative=True) for name in COUNTER_NAMES}
    core_symbol = sympy.Symbol("used_cores", integer=True, positive=True)
    for serialized in (False, True):
        formula = sympy.sympify(counted_cost(symbols, core_symbol, serialized))
        env = {**counters, "used_cores": cores}
        assert evaluate(formula, env) == counted_cost(counters, cores, serialized)


@given(
    values=st.lists(counts, min_size=len(COUNTER_NAMES), max_size=len(COUNTER_NAMES)),
    cores=st.integers(1, 64),
)
def test_each_term_is_its_counter_at_its_rate(values, cores):
    c = _counters(values)
    t = estimate(c, cores)
    assert t.hbm == -(-c["hbm_bytes"] * PS_PER_NS // DEFAULT_CONSTANTS.hbm_bytes_per_ns)
    assert t.l2 == -(
        -(c["l2_core_bytes"] + c["write_bytes"]) * PS_PER_NS // DEFAULT_CONSTANTS.l2_bytes_per_ns
    )
    cycles = (
        c["reg_cycles"]
        + DEFAULT_CONSTANTS.api_call_cycles * c["api_calls"]
        + -(-c["scalar_accesses"] // DEFAULT_CONSTANTS.lane_accesses_per_cycle)
    )
    assert t.core == -(-cycles * DEFAULT_CONSTANTS.ps_per_cycle // cores)
    assert t.total == t.launch + max(t.hbm, t.l2, t.core)
    assert estimate(c, cores, serialized=True).total == t.launch + max(t.hbm, t.l2) + t.core
    assert t.bound_by() in ("hbm", "l2", "core")


def test_a_counter_model_derives_l2_bytes_and_defaults_hbm_to_no_reuse():
    r = CounterModel(read_bytes=1000, write_bytes=256, line_fills=3).resources()
    assert r["l2_core_bytes"] == 1000 + 3 * 128
    assert r["hbm_bytes"] == 1000 + 3 * 128 + 256
    assert CounterModel(read_bytes=1000, hbm_bytes=77).resources()["hbm_bytes"] == 77


def test_more_cores_never_take_longer_and_more_bytes_never_take_less():
    c = dict.fromkeys(COUNTER_NAMES, 0)
    c.update(hbm_bytes=10**6, l2_core_bytes=10**6, api_calls=10**4, scalar_accesses=10**6)
    assert counted_cost(c, 48) <= counted_cost(c, 8)
    assert counted_cost({**c, "hbm_bytes": 10**8}, 48) > counted_cost(c, 48)


def test_apply_records_whether_the_case_overlaps_copies_and_compute():
    """spec.serialized is the one record of single buffering: the cost applied it, and the benchmarks and
    afc explain time the case's runs with it."""
    from af_core.tiling.spec import TilingSpec

    model = CounterModel(read_bytes=10**6, api_calls=10**4)
    for serialized in (False, True):
        spec = TilingSpec()
        spec.block_dim = sympy.Integer(4)
        model.apply(spec, serialized=serialized)
        assert spec.serialized is serialized
        assert spec.cost == counted_cost(model.resources(), 4, serialized)
    assert counted_cost(model.resources(), 4, True) > counted_cost(model.resources(), 4, False)
