"""Twin counters repeat bit for bit across processes.

Every twin run is its own process (the harness executable, started by
``TwinRunner.run``), so two runs of one build place the GM buffers wherever that
process' heap puts them. On a machine with address-space randomisation on
(``/proc/sys/kernel/randomize_va_space`` is 2 here, full randomisation; the test
reads it and names it in its failure message), the host addresses differ from
run to run: before the data-cache model used device addresses, these workloads
counted different data-cache misses in two runs (``tbe_default_bag20`` simt 20934
against 20922, ``sim_L54000_k50_ta`` simt/lanes 11805 against 11585). The
workloads are corpus cases with data-cache traffic: zipf bags (SIMT and SIMT
lanes), a sparse per-row gather with SIMT lanes and a zipf embedding.

The shared-L2 counters (``hbm_*``, ``l2_*``) are compared too: the cores run on
threads at the same time, and the L2 model replays their logged accesses in a
fixed order after the launch, so thread timing cannot change them either.

With randomisation off the runs would share their addresses and this test could
not tell; the program test of the twin headers
(``plugins/v35_regbase/tests/test_twin_device_addresses.py``) moves the host
addresses on purpose and covers that case.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from af_core.errors import AfError
from af_core.twin import TwinSession
from af_core.workloads import load_workloads

pytestmark = pytest.mark.twin

WORKLOADS = ("dcnv2_bag27_sum", "tbe_default_bag20", "sim_L54000_k50_ta", "dlrm_kaggle_d16")
CORES = 48
L2_KEYS = ("hbm_read_bytes", "hbm_write_bytes", "l2_read_bytes", "l2_write_bytes", "l2_hits", "l2_misses")


def aslr() -> str:
    path = Path("/proc/sys/kernel/randomize_va_space")
    return path.read_text().strip() if path.exists() else "unknown"


@pytest.mark.parametrize("name", WORKLOADS)
def test_counters_are_identical_in_two_processes(name):
    (workload,) = load_workloads(names=[name])
    session = TwinSession(workload.graph)
    inputs = session.inputs({}, seed=1, distribution=workload.distribution)
    compared = []
    for case in session.scheduled.cases:
        try:
            first = session.run(inputs, core_num=CORES, tiling_key=case.tiling_key)
        except AfError:
            continue  # the case does not fit these sizes
        second = session.run(inputs, core_num=CORES, tiling_key=case.tiling_key)
        where = f"{name} {case.label} (randomize_va_space={aslr()})"
        assert set(L2_KEYS) <= set(first.counters), where
        assert first.counters == second.counters, where
        assert first.stage_cores == second.stage_cores, where
        for out, values in first.outputs.items():
            assert np.array_equal(values, second.outputs[out], equal_nan=True), where
        compared.append((case.label, first.counters["dcache_misses"], first.counters["l2_hits"]))
    # the comparison covered data-cache traffic (a SIMT case that fills lines) and L2 reuse across accesses
    assert any(label.startswith("simt") and misses > 0 for label, misses, _hits in compared), compared
    assert any(hits > 0 for _label, _misses, hits in compared), compared
