"""Long elementwise chains: every walk over a chain is iterative, so chain length has no recursion limit."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.testing import chain_graph
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin


def long_chain(length: int):
    """x -(length/2 ops)-> gather -(length/2 ops)-> y, with a side input every few ops."""
    ops = tuple(["Abs", "Neg", "Add(side)", "Neg", "Abs"] * (length // 5 + 1))[:length]
    half = length // 2
    return chain_graph(rank=2, dim=0, pre=ops[:half], post=ops[half:], name="deep")


def test_a_2000_op_chain_schedules_and_generates_every_case():
    assert sys.getrecursionlimit() <= 3000  # no test raised it: a recursive walk would fail here
    graph = long_chain(2000)
    fuser = Autofuser(AutofuserOptions())
    scheduled = fuser.schedule(graph)
    templates = {c.template for c in scheduled.cases}
    assert {"simt", "simd"} <= templates, templates
    result = fuser.generate(scheduled)
    for case in scheduled.cases:
        assert f"TILING_KEY_IS({case.tiling_key})" in result.kernel
    # the SIMT lane computes every op of the chain once: each Neg's scalar form appears in its code
    negs = [n for n in graph.nodes() if n.type == "Neg"]
    assert len(negs) == 800
    prefix = negs[0].op.scalar_cpp.split("{x}")[0] + "static_cast<float>("
    assert result.kernel.count(prefix) >= len(negs)


@pytest.mark.parametrize("template", ["simt", "simd"])
def test_a_500_op_chain_runs_on_the_twin_like_the_reference(template):
    session = TwinSession(long_chain(500), AutofuserOptions(force_template=template))
    assert {c.template for c in session.scheduled.cases} == {template}
    rng = np.random.default_rng(5)
    sizes = {"a0": 13, "a1": 6, "b0": 21, "b1": int(rng.integers(1, 7))}
    run = session.check(sizes, seed=4, core_num=4)
    assert run.ok, run.describe()
    assert run.template.split("/")[0] == template
