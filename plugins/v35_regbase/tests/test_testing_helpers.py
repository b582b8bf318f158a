"""af_v35_regbase.testing: keeping ops memory-based calls for a comparison, and only inside the block."""

from __future__ import annotations

import re

import numpy as np
import pytest
from af_v35_regbase.api_calls.vf_chain import VfChainRegApiCall
from af_v35_regbase.testing import KEPT, memory_calls

from af_core.testing import same_bits


def test_the_refusal_holds_inside_the_block_only():
    assert VfChainRegApiCall.rejection("Abs", ("float32",), "float32") is None
    with memory_calls({"Abs"}):
        assert VfChainRegApiCall.rejection("Abs", ("float32",), "float32") == KEPT
        # other ops keep their own answer
        assert VfChainRegApiCall.rejection("Exp", ("float32",), "float32") is None
    assert VfChainRegApiCall.rejection("Abs", ("float32",), "float32") is None


def test_the_refusal_is_undone_when_the_block_fails():
    with pytest.raises(RuntimeError), memory_calls({"Abs"}):
        raise RuntimeError("boom")
    assert VfChainRegApiCall.rejection("Abs", ("float32",), "float32") is None


def test_same_bits_tells_nan_payloads_and_signed_zeros_apart():
    a = np.array([0.0, np.nan], dtype=np.float32)
    assert same_bits(a, a.copy())
    assert not same_bits(a, np.array([-0.0, np.nan], dtype=np.float32))
    assert not same_bits(a, a.astype(np.float64))
    payload = a.view(np.uint32).copy()
    payload[1] ^= 1
    assert not same_bits(a, payload.view(np.float32))


@pytest.mark.twin
def test_run_every_case_runs_the_fitting_cases_and_checks_their_register_counters(monkeypatch):
    """One CaseRun per case that fits, each run against the reference with its register counters the
    predicted ones; a twin counting one cycle more than predicted fails naming the case."""
    import af_v35_regbase.testing as helpers

    from af_core.autofuser import AutofuserOptions
    from af_core.builders import GraphBuilder, gather
    from af_core.twin import TwinSession

    g = GraphBuilder("helpers_every_case")
    y = gather(g.data("x", ["a0", "a1"], "float32"), 0, g.data("index", ["b0", "b1"], "int32"))
    g.output(g.op("Exp", g.op("Abs", y)), "y")
    session = TwinSession(g.build(), AutofuserOptions(force_template="simd"))
    inputs = session.inputs({"a0": 5, "a1": 300, "b0": 7, "b1": 300}, seed=1)
    cases = helpers.run_every_case(session, inputs, 2)
    assert cases and len({c.label for c in cases}) == len(cases)
    for c in cases:
        assert c.run.ok and c.counted["reg_cycles"] == c.predicted["reg_cycles"] > 0
    real = helpers.twin_counters

    def one_more(counters):
        out = dict(real(counters))
        out["reg_cycles"] += 1
        return out

    monkeypatch.setattr(helpers, "twin_counters", one_more)
    with pytest.raises(AssertionError, match=re.escape(cases[0].label)):
        helpers.run_every_case(session, inputs, 2)
