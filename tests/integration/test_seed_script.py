"""The first seed's minimal script runs through codegen; its kernel matches the reference."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

from af_core.platform import current_platform
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin
SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "minimal_graph.py"


def random_sizes(rng):
    s = [int(v) for v in rng.integers(1, 7, 4)]
    s[2] = int(rng.integers(1, 12))
    idx = [int(rng.integers(1, s[i] + 1)) for i in range(4)]
    idx[2] = int(rng.integers(1, 9))
    out = {f"s{i}": v for i, v in enumerate(s)}
    out.update({f"s{i + 4}": v for i, v in enumerate(idx)})
    return out


def test_seed_script_codegen_and_twin_on_twenty_shapes():
    ns = runpy.run_path(str(SCRIPT))
    assert ns["tiling_def"] and ns["host_tiling"] and ns["op_kernel"]
    assert "TILING_KEY_IS(" in ns["op_kernel"] and "AutofuseTiling(" in ns["host_tiling"]
    assert current_platform().core_num == 1  # the script's set_platform("3510", 1, 245760)
    session = TwinSession(ns["graph"])
    executable = session.build.executable
    rng = np.random.default_rng(2024)
    for k in range(20):
        run = session.check(random_sizes(rng), seed=k, core_num=1 if k % 2 else 48)
        assert run.ok, run.describe()
    assert session.build.executable == executable  # one build served every shape
