"""The example third-party template, installed beside the built-in ones, takes part in dispatch."""

from __future__ import annotations

import pytest

from af_core.options import AutofuserOptions
from af_core.registry import get_registry
from af_core.testing import chain_graph
from af_core.twin import TwinSession

pytest.importorskip("af_template_scalar")
pytestmark = pytest.mark.twin


def test_discovered_scored_dispatched_and_correct():
    assert get_registry().entry("template", "scalar_loop").distribution == "af-template-scalar"
    # its score claims tiny outputs: the seed policy (highest score first) honours the claim
    session = TwinSession(
        chain_graph(rank=3, dim=2, dtype="float16", post=("Abs",)), AutofuserOptions(selection="seed")
    )
    keys = {c.label: c.tiling_key for c in session.scheduled.cases}
    assert {"scalar_loop", "simt", "simd/db", "sklike"} <= set(keys)
    tiny = {"a0": 2, "a1": 3, "a2": 9, "b0": 2, "b1": 3, "b2": 4}
    run = session.check(tiny, seed=1, core_num=48)
    assert run.ok, run.describe()
    assert run.twin.tiling_key == keys["scalar_loop"]
    assert f"TILING_KEY_IS({keys['scalar_loop']})" in session.result.kernel
    bigger = {"a0": 40, "a1": 3, "a2": 64, "b0": 40, "b1": 3, "b2": 64}
    run = session.check(bigger, seed=2, core_num=48)
    assert run.ok and run.twin.tiling_key != keys["scalar_loop"]
