"""AutofuserOptions.index_distribution and afc --index-distribution: the cases predict repeated rows from
the declared distribution, a session draws its values from it, and a bad name is refused by name."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.builders import GraphBuilder, embedding
from af_core.errors import UsageError
from af_core.explain import explain
from af_core.ir.serialize import to_json
from af_core.schedule.cost import COUNTER_NAMES
from af_core.twin import TwinSession

SIZES: dict[str, int] = {}


def _table_lookup():
    g = GraphBuilder("zipf_lookup")
    table = g.data("table", [50000, 32], "float32")
    g.output(embedding(table, g.data("ids", [8192], "int64")), "y")
    return g.build()


def _predicted(options: AutofuserOptions) -> dict[str, int]:
    report = explain(Autofuser(options).schedule(_table_lookup()), SIZES, 48)
    row = next(r for r in report.counters if r.case == "simt")
    return dict(zip(COUNTER_NAMES, row.values))


def test_a_skewed_distribution_predicts_fewer_hbm_bytes_and_fills_than_uniform_values():
    uniform = _predicted(AutofuserOptions(index_distribution="uniform"))
    skewed = _predicted(AutofuserOptions(index_distribution="zipf1.2"))
    assert skewed["hbm_bytes"] < 0.7 * uniform["hbm_bytes"], (skewed, uniform)
    assert skewed["line_fills"] < 0.7 * uniform["line_fills"], (skewed, uniform)
    assert skewed["write_bytes"] == uniform["write_bytes"]


def test_the_session_draws_the_declared_distribution_and_the_twin_agrees_with_the_prediction():
    session = TwinSession(
        _table_lookup(), AutofuserOptions(index_distribution="repeat4", force_template="simt")
    )
    inputs = session.inputs({}, seed=2)
    ids = np.asarray(inputs.logical["ids"]).reshape(-1)
    assert (ids[0::4] == ids[3::4]).all()  # runs of four equal values: repeat4, not uniform
    run = session.check(inputs=inputs)
    assert run.ok, run.describe()
    predicted = _predicted(AutofuserOptions(index_distribution="repeat4", force_template="simt"))
    from af_core.schedule.cost import twin_counters

    measured = twin_counters(run.twin.counters)
    for name in ("hbm_bytes", "l2_core_bytes"):
        assert predicted[name] == pytest.approx(measured[name], rel=0.25), (name, predicted, measured)


def test_a_bad_name_is_refused_naming_it(tmp_path):
    with pytest.raises(UsageError, match="zipf_1.2"):
        AutofuserOptions(index_distribution="zipf_1.2")
    path = tmp_path / "g.json"
    path.write_text(to_json(_table_lookup()))
    proc = subprocess.run(
        [sys.executable, "-m", "af_core", "explain", str(path), "--index-distribution", "zipf_1.2"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 2 and "zipf_1.2" in proc.stderr, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
