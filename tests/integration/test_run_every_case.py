"""af_v35_regbase.testing.run_every_case: every fitting case run, its register counters held to the prediction.

It needs the elementwise ops and the SIMD template, so it lives with the integration tests.
"""

from __future__ import annotations

import re

import af_v35_regbase.testing as helpers
import pytest

from af_core.autofuser import AutofuserOptions
from af_core.builders import GraphBuilder, gather
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin


def test_run_every_case_runs_the_fitting_cases_and_checks_their_register_counters(monkeypatch):
    """One CaseRun per case that fits, each run against the reference with its register counters the
    predicted ones; a twin counting one cycle more than predicted fails naming the case."""
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
