"""The dedup template is discovered, rejects what it cannot do with a reason, has an honest cost and is picked
where it saves and not where it loses, under both selection policies."""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import graphs
import numpy as np
import pytest

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.builders import GraphBuilder, gather, index_select
from af_core.errors import ScheduleError
from af_core.explain import explain
from af_core.registry import get_registry
from af_core.schedule.cost import twin_counters
from af_core.traffic import traffic
from af_core.twin import TwinSession

needs_simt = pytest.mark.skipif(
    importlib.util.find_spec("af_indirect_load_simt") is None,
    reason="the policy tests need the SIMT template as a competitor",
)

#: 16 positions selecting 3 distinct rows of 256 KiB (a beam reorder): the case the template is for.
BEAMS = {"N": 16, "H": 65536, "K": 16}
BEAM_INDEX = np.array([5, 5, 2, 9, 2, 5, 9, 9, 2, 5, 5, 2, 9, 9, 2, 5])
#: 64 of 1000 rows of 8 KiB, drawn at random: few repeats, nothing to save.
LONG_ROWS = {"N": 1000, "H": 2048, "K": 64}
#: 64-byte rows: below the template's shortest row.
SHORT_ROWS = {"N": 1000, "H": 16, "K": 4096}


def index_chain_gather():
    """A row gather whose index goes through an op first."""
    g = GraphBuilder("index_chain")
    x = g.data("x", ["N", "H"], "float32")
    idx = g.data("idx", ["K", "H"], "int32")
    g.output(gather(x, 0, g.op("Maxs", idx, value=0.0)), "y")
    return g.build()


def test_discovered_from_its_distribution():
    registry = get_registry()
    assert registry.entry("template", "dedup").distribution == "af-indirect-load-dedup"
    for call in ("DedupGatherApiCall", "DedupStoreApiCall"):
        assert registry.entry("api_call", call).distribution == "af-indirect-load-dedup"
    assert registry.entry("api_source", "af_dedup_gather").distribution == "af-indirect-load-dedup"


@pytest.mark.parametrize(
    "build,reason",
    [
        (graphs.row_reduce, "stores rows without reducing them"),
        (graphs.side_input_chain, "only chains without side inputs fit"),
        (graphs.full_index_gather, "needs one index value per row"),
        (index_chain_gather, "sit between the index and the gather"),
    ],
)
def test_rejects_what_it_cannot_do_with_the_reason(build, reason):
    with pytest.raises(ScheduleError, match=reason) as info:
        Autofuser(AutofuserOptions(force_template="dedup")).schedule(build())
    rejected = [r for r in info.value.rejections if r.template == "dedup"]
    assert len(rejected) == 1 and reason in rejected[0].reason
    assert rejected[0].plugin == "af-indirect-load-dedup"


def test_afc_explain_shows_the_rejection(tmp_path):
    program = tmp_path / "isel_sum.py"
    program.write_text("import graphs\ngraph = graphs.row_reduce()\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(graphs.__file__).parent), "COLUMNS": "400"}
    proc = subprocess.run(
        [sys.executable, "-m", "af_core", "explain", str(program), "--shape", "N=50,H=2048,K=8"],
        env=env,
        capture_output=True,
        text=True,
    )
    line = next((ln for ln in proc.stdout.splitlines() if " dedup " in ln), "")
    assert "rejected" in line and "reduce 'sum' follows the gather" in line, proc.stdout + proc.stderr


@functools.cache
def session(selection: str, build=graphs.index_select_plain) -> TwinSession:
    return TwinSession(build("float32", "int32", False), AutofuserOptions(selection=selection))


def run_with(s: TwinSession, sizes: dict[str, int], idx: np.ndarray | None, cores: int):
    """A twin run with the given index values (random ones when None), checked against the reference."""
    if idx is None:
        run = s.check(sizes, seed=5, core_num=cores)
    else:
        x = np.random.default_rng(1).standard_normal((sizes["N"], sizes["H"])).astype(np.float32)
        arrays = {"x": x, "idx": np.broadcast_to(idx.astype(np.int32)[:, None], (sizes["K"], sizes["H"]))}
        run = s.check(inputs=s.inputs(sizes, arrays=arrays), core_num=cores)
    assert run.ok, run.describe()
    return run


def counted_cost(s: TwinSession, run) -> int:
    return traffic(s.graph, run.inputs, run.twin.outputs, run.twin.counters, s.scheduled.info).cost


def forced_l2_core_bytes(sizes, idx, cores) -> dict[str, int]:
    """Bytes the cores read from L2 in the dedup and SIMT cases on the same inputs."""
    out = {}
    for template in ("dedup", "simt"):
        s = TwinSession(
            graphs.index_select_plain("float32", "int32", False), AutofuserOptions(force_template=template)
        )
        out[template] = twin_counters(run_with(s, sizes, idx, cores).twin.counters)["l2_core_bytes"]
    return out


def forced_costs(sizes, idx, cores) -> dict[str, int]:
    """Twin-counted cost of the dedup and SIMT cases on the same inputs."""
    out = {}
    for template in ("dedup", "simt"):
        s = TwinSession(
            graphs.index_select_plain("float32", "int32", False), AutofuserOptions(force_template=template)
        )
        out[template] = counted_cost(s, run_with(s, sizes, idx, cores))
    return out


@needs_simt
@pytest.mark.twin
@pytest.mark.parametrize("selection", ["seed", "cost"])
def test_picked_where_repeated_rows_save_reads(selection):
    """Repeated rows: HBM delivers each distinct line once whichever case runs (the shared L2 keeps it),
    so the saving is in the bytes the cores read from L2, and the estimated time is no worse."""
    run = run_with(session(selection), BEAMS, BEAM_INDEX, 48)
    assert run.template == "dedup"
    costs = forced_costs(BEAMS, BEAM_INDEX, 48)
    assert costs["dedup"] <= costs["simt"], costs
    l2 = forced_l2_core_bytes(BEAMS, BEAM_INDEX, 48)
    assert l2["dedup"] < 0.7 * l2["simt"], l2


@needs_simt
@pytest.mark.twin
@pytest.mark.parametrize("selection", ["seed", "cost"])
def test_without_repeats_the_pick_stays_within_10_percent(selection):
    """Random indices into long rows: whichever case a policy picks costs at most 10% over the other."""
    picked = run_with(session(selection), LONG_ROWS, None, 8).template
    costs = forced_costs(LONG_ROWS, None, 8)
    assert picked in costs and costs[picked] <= 1.1 * min(costs.values()), (picked, costs)


@needs_simt
@pytest.mark.twin
@pytest.mark.parametrize("selection", ["seed", "cost"])
def test_short_rows_are_dropped_with_the_reason(selection):
    s = session(selection)
    assert run_with(s, SHORT_ROWS, None, 48).template != "dedup"
    row = next(r for r in explain(s.scheduled, SHORT_ROWS, 48).rows if r.template == "dedup")
    assert row.status == "dropped" and "rows under 4096 bytes" in row.reason


@pytest.mark.twin
@pytest.mark.parametrize(
    "sizes,cores", [(LONG_ROWS, 8), (LONG_ROWS, 48), ({"N": 16, "H": 65536, "K": 16}, 48)]
)
def test_modelled_cost_matches_the_twin_counted_cost_for_uniform_indices(sizes, cores):
    """The model's assumption (uniformly drawn indices) holds: modelled and twin-counted cost within 10%."""
    s = TwinSession(
        graphs.index_select_plain("float32", "int32", False), AutofuserOptions(force_template="dedup")
    )
    counted = counted_cost(s, run_with(s, sizes, None, cores))
    modelled = next(r for r in explain(s.scheduled, sizes, cores).rows if r.status == "chosen").cost
    assert abs(modelled - counted) <= 0.1 * counted, (modelled, counted)


def test_rows_known_to_be_short_are_rejected_at_schedule():
    """A constant row size under the floor: no case at all (it could never fit), the reason names the bytes."""
    g = GraphBuilder("short_static")
    x = g.data("x", ["N", 16], "float32")
    g.output(index_select(x, 0, g.data("idx", ["K"], "int32")), "y")
    with pytest.raises(ScheduleError, match="rows of 64 bytes, under 4096") as info:
        Autofuser(AutofuserOptions(force_template="dedup")).schedule(g.build())
    assert [r.plugin for r in info.value.rejections if r.template == "dedup"] == ["af-indirect-load-dedup"]
