"""The example template is discovered, scored, dispatched by tiling key and correct on the twin."""

from __future__ import annotations

import numpy as np
import pytest

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.errors import ScheduleError
from af_core.explain import explain
from af_core.registry import get_registry
from af_core.testing import chain_graph, gather_sizes
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin


def test_discovered_from_its_distribution():
    entry = get_registry().entry("template", "scalar_loop")
    assert entry is not None and entry.distribution == "af-template-scalar"
    assert get_registry().entry("api_call", "ScalarLoopApiCall").distribution == "af-template-scalar"


@pytest.mark.parametrize(
    "kw",
    [
        dict(rank=3, dim=1),
        dict(rank=2, dim=0, dtype="float16", index_dtype="int64", post=("Exp", "Mul(side)")),
        dict(
            rank=3,
            dim=2,
            dtype="bfloat16",
            index_pre=("Maxs(0)",),
            need_check_negative=True,
            need_check_bound=True,
        ),
    ],
)
def test_forced_runs_match_the_reference(kw):
    s = TwinSession(chain_graph(**kw), AutofuserOptions(force_template="scalar_loop"))
    rng = np.random.default_rng(7)
    for k in range(3):
        sizes = gather_sizes(rng, kw["rank"], kw["dim"])
        run = s.check(
            sizes,
            seed=k,
            core_num=(1, 48, 3)[k],
            negative_indices=kw.get("need_check_negative", False),
            out_of_range=0.2 if kw.get("need_check_bound") else 0.0,
        )
        assert run.ok, run.describe()
        assert run.template == "scalar_loop"


def test_chosen_by_dispatch_for_tiny_outputs_only():
    """Its score claims tiny outputs: the seed policy (highest score first) honours the claim."""
    s = TwinSession(chain_graph(rank=2, dim=1, post=("Relu",)), AutofuserOptions(selection="seed"))
    labels = {c.tiling_key: c.label for c in s.scheduled.cases}
    assert "scalar_loop" in labels.values()
    tiny = {"a0": 2, "a1": 5, "b0": 2, "b1": 3}
    run = s.check(tiny, seed=1, core_num=8)
    assert run.ok and labels[run.twin.tiling_key] == "scalar_loop"
    report = explain(s.scheduled, tiny, 8)
    assert next(r for r in report.rows if r.status == "chosen").score == 3
    big = {"a0": 200, "a1": 50, "b0": 200, "b1": 40}
    run = s.check(big, seed=2, core_num=8)
    assert run.ok and labels[run.twin.tiling_key] != "scalar_loop"


def test_rejects_what_it_cannot_do():
    with pytest.raises(ScheduleError, match="does not implement reduces"):
        Autofuser(AutofuserOptions(force_template="scalar_loop")).schedule(
            chain_graph(rank=2, dim=1, reduce=("Sum", (1,)))
        )
