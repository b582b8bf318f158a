"""Plugin selection policies and contributions: the compiled C++ host tiling chooses what Python chooses."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import types

import numpy as np
import pytest
import sympy

from af_core import hookimpl
from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.builders import GraphBuilder, gather
from af_core.errors import TilingError
from af_core.explain import explain
from af_core.ir.serialize import to_json
from af_core.plugin_manager import AfPluginManager
from af_core.policy import SelectionPolicy
from af_core.registry import Registry, use_registry
from af_core.schedule.contributions import ResourceFormula, ScoreTerm
from af_core.testing import chain_graph, gather_sizes
from af_core.tiling.solve import solve_scheduled
from af_core.tiling.spec import CORE_NUM
from af_core.twin.native_tiling import NativeTiling

pytestmark = pytest.mark.twin

POLICIES = [
    # fewest cores, then the smallest UB footprint, then the *highest* modelled cost
    SelectionPolicy(
        "fewest_cores", "least cores", [("block_dim", "min"), ("resource:ub_bytes", "min"), ("cost", "max")]
    ),
    # most workspace, then the lowest score, then the highest key (no case ties on the key)
    SelectionPolicy("odd_one", "inverted", [("workspace", "max"), ("score", "min"), ("tiling_key", "max")]),
    # a resource only the contributor below defines (for SIMT cases): the other cases never fit
    SelectionPolicy("least_l2", "least L2 bytes", [("resource:l2_bytes", "min"), ("cost", "min")]),
]


def contributions(case, ctx):
    """SIMT cases get an L2 footprint; every case a score term that grows with the core count."""
    items = [
        ScoreTerm("cores_bonus", CORE_NUM - 1 if case.template == "simt" else sympy.Integer(0), "test bonus")
    ]
    if case.template == "simt":
        (size, *_rest) = sorted(case.graph.sizes(), key=lambda v: v.symbol.name)
        items.append(ResourceFormula("l2_bytes", 64 * size.symbol, "rows kept in L2"))
    return items


def policy_plugin() -> types.ModuleType:
    module = types.ModuleType("af_test_policies")

    @hookimpl
    def af_register_selection_policies(register):
        for policy in POLICIES:
            register(policy)

    module.af_register_selection_policies = af_register_selection_policies
    module.af_case_contributions = hookimpl(contributions)
    return module


@pytest.fixture(scope="module")
def installed():
    """Every installed plugin plus the test's policies and contributor, for this module's tests."""
    plugins = (("test_policies", policy_plugin(), "af-test-policies"),)
    with use_registry(Registry(AfPluginManager(extra_plugins=plugins))):
        yield


GRAPHS = {
    "plain": dict(rank=3, dim=1),
    "reduce_last": dict(rank=3, dim=1, dtype="float16", reduce=("Sum", (2,))),
    "chains": dict(rank=2, dim=0, pre=("Abs", "Add(side)"), post=("Exp",)),
}


def compiled(graph: str, policy: str):
    fuser = Autofuser(AutofuserOptions(selection=policy))
    scheduled = fuser.schedule(chain_graph(**GRAPHS[graph]))
    result = fuser.generate(scheduled)
    return scheduled, NativeTiling(result)


@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("policy", ["seed", "cost", *(p.name for p in POLICIES)])
def test_cpp_and_python_choose_the_same_case(installed, graph, policy):
    scheduled, native = compiled(graph, policy)
    assert scheduled.policy.name == policy
    rng = np.random.default_rng(len(graph) * 31 + len(policy))
    rank, dim = GRAPHS[graph]["rank"], GRAPHS[graph]["dim"]
    chosen: collections.Counter[int] = collections.Counter()
    for _k in range(40):
        sizes = gather_sizes(rng, rank, dim, max_extent=int(rng.choice([4, 40, 400])), max_elements=10**8)
        core_num = int(rng.choice([1, 2, 7, 48, 64]))
        ub_size = int(rng.choice([248 * 1024, 192 * 1024, 40 * 1024]))
        got = native(sizes, core_num, ub_size)
        try:
            want = solve_scheduled(scheduled, sizes, core_num, ub_size)
        except TilingError:
            assert got.code in (1, 2), f"Python found no case for {sizes} but C++ returned {got.code}"
            continue
        assert got.code == 0, f"C++ failed ({got.code}) where Python chose key {want.tiling_key}"
        assert got.struct == want.struct, f"{policy}: sizes {sizes}, cores {core_num}, ub {ub_size}"
        chosen[want.tiling_key] += 1
    assert sum(chosen.values()) >= 15
    if policy == "least_l2":
        assert {scheduled.case(k).template for k in chosen} == {"simt"}


def test_a_contributed_score_term_moves_the_seed_choice_on_both_sides(installed):
    """+(core_num - 1) on SIMT's score (1) beats SIMD's 2 in its own region from 3 cores on."""
    scheduled, native = compiled("plain", "seed")
    simt = [c for c in scheduled.cases if c.template == "simt"]
    assert simt and all(c.contributions[0].distribution == "af-test-policies" for c in simt)
    sizes = {"a0": 64, "a1": 48, "a2": 64, "b0": 64, "b1": 48, "b2": 64}
    for cores, template in ((1, "simd"), (48, "simt")):
        want = solve_scheduled(scheduled, sizes, cores)
        assert scheduled.case(want.tiling_key).template.startswith(template), (cores, want.tiling_key)
        assert native(sizes, cores, scheduled.platform.ub_size).struct == want.struct


def test_explain_shows_the_policy_order_and_the_contributions(installed):
    scheduled, _native = compiled("plain", "least_l2")
    sizes = {"a0": 64, "a1": 48, "a2": 64, "b0": 64, "b1": 48, "b2": 64}
    report = explain(scheduled, sizes, 8)
    assert (
        report.policy == "least_l2"
        and report.order == "min resource:l2_bytes, then min cost, then min tiling_key"
    )
    l2 = [c for c in report.contributions if c.name == "l2_bytes"]
    assert l2 and all(c.value == 64 * 64 and c.plugin == "af-test-policies" for c in l2)
    dropped = [r for r in report.rows if r.status == "dropped" and "l2_bytes" in r.reason]
    assert dropped and all(not r.template.startswith("simt") for r in dropped)
    text = report.markdown()
    assert "Order: min resource:l2\\_bytes" in text and "rows kept in L2" in text


def test_explain_names_the_quantity_each_candidate_lost_on(installed):
    scheduled, _native = compiled("plain", "seed")
    sizes = {"a0": 64, "a1": 48, "a2": 64, "b0": 64, "b1": 48, "b2": 64}
    report = explain(scheduled, sizes, 48)
    rows = {r.status: r for r in report.rows}
    chosen = [r for r in report.rows if r.status == "chosen"]
    assert len(chosen) == 1 and chosen[0].template == "simt" and chosen[0].reason.startswith("highest score")
    assert rows["candidate"].reason in ("lower score", "higher modelled cost", "higher tiling key")
    for r in report.rows:
        if r.status == "candidate":
            assert (r.score < chosen[0].score) == (r.reason == "lower score"), r
    cost_report = explain(compiled("plain", "cost")[0], sizes, 48)
    (cheapest,) = [r for r in cost_report.rows if r.status == "chosen"]
    assert cheapest.reason.startswith("lowest modelled cost")
    assert all(r.cost >= cheapest.cost for r in cost_report.rows if r.status == "candidate")


CLI_PLUGIN = """
import sympy
from af_core import hookimpl
from af_core.schedule.contributions import ResourceFormula, ScoreTerm
from af_core.policy import SelectionPolicy

AF_CONTRACT_VERSION = 1


@hookimpl
def af_register_selection_policies(register):
    register(SelectionPolicy("fewest_rows", "fewest rows in L2", [("resource:row_bytes", "min")]))


@hookimpl
def af_case_contributions(case, ctx):
    if case.template != "simt":
        return None
    return [ScoreTerm("prefer_simt", sympy.Integer(5), "a test preference"),
            ResourceFormula("row_bytes", sympy.Integer(4096), "a test footprint")]
"""

BROKEN_PLUGIN = """
from af_core import hookimpl

AF_CONTRACT_VERSION = 1


@hookimpl
def af_case_contributions(case, ctx):
    raise RuntimeError("the contributor crashed")
"""


def install(site, dist: str, module: str, source: str) -> None:
    (site / f"{module}.py").write_text(source)
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[af_core]\n{module} = {module}\n")


def test_afc_explain_shows_contributions_the_policy_and_a_contributor_that_raised(tmp_path):
    install(tmp_path, "af-test-contrib", "af_test_contrib", CLI_PLUGIN)
    install(tmp_path, "af-test-broken", "af_test_broken_contrib", BROKEN_PLUGIN)
    g = GraphBuilder("g")
    x = g.data("x", ["a0", "a1"], "float32")
    i = g.data("index", ["b0", "b1"], "int64")
    g.output(g.op("Relu", gather(x, 1, i)), "y")
    path = tmp_path / "g.json"
    path.write_text(to_json(g.build()))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}

    def afc(*args):
        return subprocess.run(
            [sys.executable, "-m", "af_core", *args], capture_output=True, text=True, env=env, timeout=900
        )

    proc = afc(
        "explain",
        str(path),
        "--shape",
        "a0=48,a1=64,b0=48,b1=16",
        "--cores",
        "48",
        "--selection",
        "fewest_rows",
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "selection policy fewest_rows" in out and "policy order: min resource:row_bytes" in out
    assert "prefer_simt" in out and "row_bytes" in out and "af-test-contrib" in out
    assert "contribution dropped: af_test_broken_contrib (af-test-broken) on " in out
    assert "RuntimeError: the contributor crashed" in out
    chosen = [line for line in out.splitlines() if "chosen" in line]
    assert len(chosen) == 1 and "simt" in chosen[0]
    listed = afc("plugins")
    assert "selection policy fewest_rows (af-test-contrib): min resource:row_bytes" in listed.stdout
    proc = afc("compile", str(path), "-o", str(tmp_path / "out"), "--selection", "fastest")
    assert proc.returncode == 2
    assert "unknown selection policy 'fastest' (installed: cost, fewest_rows, seed)" in proc.stderr


def test_a_raising_contributor_is_a_diagnostic_and_proto_and_report_record_everything(tmp_path):
    import json

    from af_core.report import report_markdown

    def crash(case, ctx):
        raise RuntimeError("contributor crashed")

    broken = types.ModuleType("af_test_crashing")
    broken.af_case_contributions = hookimpl(crash)
    plugins = (
        ("test_policies", policy_plugin(), "af-test-policies"),
        ("crashing", broken, "af-test-crashing"),
    )
    registry = Registry(AfPluginManager(extra_plugins=plugins))
    with use_registry(registry):  # the options name a policy only this registry has
        options = AutofuserOptions(selection="least_l2")
    fuser = Autofuser(options, registry)  # the process's registry stays as it is
    scheduled = fuser.schedule(chain_graph(rank=2, dim=1))
    result = fuser.generate(scheduled)
    report = report_markdown(scheduled, result, None)
    assert scheduled.cases and len(scheduled.diagnostics) == len(scheduled.cases)
    assert all(
        d.plugin == "crashing"
        and d.distribution == "af-test-crashing"
        and d.reason == "raised RuntimeError: contributor crashed"
        for d in scheduled.diagnostics
    )
    proto = json.loads(result.proto)
    assert proto["selection_policy"] == "least_l2"
    assert proto["selection"]["policy"]["order"] == [["resource:l2_bytes", "min"], ["cost", "min"]]
    assert proto["selection"]["score"] == {str(c.tiling_key): str(c.tiling.score) for c in scheduled.cases}
    simt = [c for c in proto["candidates"] if c["template"] == "simt"]
    assert simt and {x["name"] for x in simt[0]["contributions"]} == {"cores_bonus", "l2_bytes"}
    assert {d["plugin"] for d in proto["contribution_diagnostics"]} == {"crashing"}
    assert (
        "min resource:l2\\_bytes, then min cost" in report
        and "from af-test-policies: rows kept in L2" in report
    )
    assert "dropped contribution: crashing (af-test-crashing) on " in report
