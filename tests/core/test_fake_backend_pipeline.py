"""schedule -> codegen -> twin with nothing but af-core and a fake back end, against the reference.

The fake back end (``fake_backend``: a three-variant scalar gather template,
its ApiCalls and a minimal twin header) is registered through the real
plugin manager, so these tests run the core's own scheduler, kernel and
host-tiling generation, g++ build, harness and report parsing in an
environment where no real back end is installed. Each graph is built once
per module and run on many shapes drawn by hypothesis.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import fake_backend
import numpy as np
import pytest
from fake_backend.graphs import offset_chain
from fake_backend.template import SMALL, TILE
from hypothesis import given, settings
from hypothesis import strategies as st

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.builders import GraphBuilder, embedding, gather, index_select
from af_core.errors import ScheduleError
from af_core.testing import chain_graph
from af_core.tiling.solve import solve_scheduled
from af_core.twin import TwinSession, run_graph

pytestmark = pytest.mark.twin

EXAMPLES = settings(max_examples=8, deadline=None, derandomize=True)


@pytest.fixture(scope="module", autouse=True)
def fake_registry():
    with fake_backend.installed() as registry:
        yield registry


def _broadcast_chains():
    """An index broadcast along axis 0 before the gather, the gathered values broadcast along axis 2 after it."""
    g = GraphBuilder("broadcasts")
    x = g.data("x", ["a0", "a1", "a2"], "float32")
    index = g.broadcast(g.data("index", [1, "b1", 1], "int32"), ["b0", "b1", 1])
    g.output(g.broadcast(gather(x, 1, index), ["b0", "b1", "c"]), "y")
    return g.build()


def _index_select():
    g = GraphBuilder("select")
    x = g.data("x", ["a0", "a1"], "int64")
    g.output(index_select(x, 0, g.data("ids", ["n"], "int32")), "y")
    return g.build()


def _embedding():
    g = GraphBuilder("emb")
    weight = g.data("weight", ["V", "D"], "float32")
    g.output(embedding(weight, g.data("ids", ["B", "S"], "int64")), "y")
    return g.build()


GRAPHS = {
    # index - 1 (a -1 maps to the last column), float math after the gather; shared with the other modules
    "gather2d": offset_chain,
    # an integer offset past int32: the scalar C++ and the reference both wrap
    "gather3d_checked": lambda: chain_graph(
        rank=3,
        dim=0,
        dtype="int32",
        need_check_negative=True,
        need_check_bound=True,
        post=("FakeOffset(2147483650)",),
        name="checked",
    ),
    "index_select": _index_select,
    "embedding": _embedding,
    "broadcasts": _broadcast_chains,
}


def _chain_sizes(draw, rank: int, dim: int) -> dict[str, int]:
    a = [draw(st.integers(1, 7)) for _ in range(rank)]
    b = [draw(st.integers(1, 12)) if axis == dim else draw(st.integers(1, a[axis])) for axis in range(rank)]
    return {**{f"a{i}": v for i, v in enumerate(a)}, **{f"b{i}": v for i, v in enumerate(b)}}


@st.composite
def sizes_for(draw, graph: str) -> dict[str, int]:
    if graph == "gather2d":
        return _chain_sizes(draw, 2, 1)
    if graph == "gather3d_checked":
        return _chain_sizes(draw, 3, 0)
    if graph == "index_select":
        return {"a0": draw(st.integers(1, 9)), "a1": draw(st.integers(1, 30)), "n": draw(st.integers(1, 20))}
    if graph == "embedding":
        return {
            "V": draw(st.integers(1, 9)),
            "D": draw(st.integers(1, 17)),
            "B": draw(st.integers(1, 5)),
            "S": draw(st.integers(1, 6)),
        }
    a0 = draw(st.integers(1, 6))
    return {
        "a0": a0,
        "a1": draw(st.integers(1, 9)),
        "a2": draw(st.integers(1, 3)),
        "b0": draw(st.integers(1, a0)),
        "b1": draw(st.integers(1, 9)),
        "c": draw(st.integers(1, 5)),
    }


@pytest.fixture(scope="module")
def sessions(fake_registry):
    """One twin build per (graph, selection policy), shared by every test of the module."""
    built: dict[tuple[str, str], TwinSession] = {}

    def get(graph: str, selection: str = "seed") -> TwinSession:
        if (graph, selection) not in built:
            built[(graph, selection)] = TwinSession(GRAPHS[graph](), AutofuserOptions(selection=selection))
        return built[(graph, selection)]

    return get


def _check_run(session: TwinSession, sizes: dict[str, int], **kw):
    run = session.check(sizes, **kw)
    assert run.ok, run.describe()
    twin = run.twin
    stages = session.scheduled.case(twin.tiling_key).impl.stages
    elements = int(np.prod(next(iter(run.reference.values())).shape))
    # each stage writes every element once (the output, or a workspace slice the next stage reads)
    assert twin.counter("scalar_gm_writes") == elements * len(stages)
    assert twin.counter("block_dim") == twin.block_dim
    # the cores that entered each stage are the ones its tiling field gives
    assert twin.stage_cores == tuple(twin.struct[f"c{twin.tiling_key}_{s.used_cores}"] for s in stages)
    return run


@pytest.mark.parametrize("graph", sorted(GRAPHS))
def test_twin_matches_the_reference(sessions, graph):
    session = sessions(graph)
    assert [c.label for c in session.scheduled.cases] == [
        "fake_lanes/flat",
        "fake_lanes/staged",
        "fake_lanes/tiled",
    ]
    kw = {"negative_indices": True, "out_of_range": 0.25} if graph == "gather3d_checked" else {}

    @EXAMPLES
    @given(
        sizes=sizes_for(graph),
        core_num=st.sampled_from((1, 3, 48)),
        seed=st.integers(0, 3),
        key=st.sampled_from((None, 0, 1, 2)),
    )  # None: the host tiling chooses
    def check(sizes, core_num, seed, key):
        _check_run(session, sizes, seed=seed, core_num=core_num, tiling_key=key, **kw)

    check()


@pytest.mark.parametrize("selection", ["seed", "cost"])
def test_host_tiling_chooses_what_python_solve_chooses(sessions, selection):
    session = sessions("gather2d", selection)

    @EXAMPLES
    @given(sizes=sizes_for("gather2d"), core_num=st.sampled_from((1, 2, 7, 48)))
    def check(sizes, core_num):
        run = _check_run(session, sizes, core_num=core_num)
        expected = solve_scheduled(session.scheduled, sizes, core_num)
        assert run.twin.tiling_key == expected.tiling_key
        assert run.twin.struct == expected.struct

    check()
    # the sizes where each case wins (see fake_backend.template): both keys run from one kernel
    small = {"a0": 2, "a1": 3, "b0": 2, "b1": 2}
    large = {"a0": 7, "a1": 9, "b0": 7, "b1": 12}
    assert 2 * 2 <= min(SMALL, 8) and 7 * 12 > SMALL
    keys = {c.variant: c.tiling_key for c in session.scheduled.cases}
    assert _check_run(session, small).twin.tiling_key == keys["flat"]
    assert _check_run(session, large).twin.tiling_key == keys["tiled"]


def test_every_case_runs_when_its_key_is_forced(sessions):
    """Tiling data computed in Python for a given key: each case is correct on its own."""
    session = sessions("gather2d")
    sizes = {"a0": 5, "a1": 4, "b0": 5, "b1": 2 * TILE + 3}  # a tail tile in the tiled case
    for case in session.scheduled.cases:
        for core_num in (1, 4):
            run = _check_run(session, sizes, core_num=core_num, tiling_key=case.tiling_key)
            assert run.twin.tiling_key == case.tiling_key


def test_run_graph_is_one_session_check(sessions):
    sizes = {"a0": 4, "a1": 6, "b0": 3, "b1": 20}
    once = run_graph(offset_chain(), sizes, seed=3, core_num=5, options=AutofuserOptions(selection="seed"))
    again = sessions("gather2d").check(sizes, seed=3, core_num=5)
    assert once.ok, once.describe()
    assert once.twin.tiling_key == again.twin.tiling_key
    np.testing.assert_array_equal(once.twin.outputs["y"], again.twin.outputs["y"])


def test_refusing_template_is_named_with_its_distribution(sessions):
    scheduled = sessions("gather2d").scheduled
    assert [(r.template, r.plugin, r.reason) for r in scheduled.rejections] == [
        ("fake_refuser", fake_backend.DIST, "the refusing template handles no graph")
    ]
    proto = json.loads(sessions("gather2d").result.proto)
    assert proto["rejections"][0]["plugin"] == fake_backend.DIST
    assert [c["tiling_key"] for c in proto["candidates"]] == [0, 1, 2]


def test_forcing_the_refusing_template_fails_with_its_reason():
    with pytest.raises(ScheduleError, match="the refusing template handles no graph"):
        Autofuser(AutofuserOptions(force_template="fake_refuser")).schedule(GRAPHS["gather2d"]())


def test_generated_artifacts_are_deterministic(sessions):
    first = sessions("embedding").result.files()
    fuser = Autofuser(AutofuserOptions(selection="seed"))
    again = fuser.generate(fuser.schedule(GRAPHS["embedding"]())).files()
    assert again == first
    assert "fake_lanes/tiled" in first["kernel.cpp"] and "FakeStoreRows" in first["kernel.cpp"]


_DIGESTS = """
import hashlib, json, sys
sys.path.insert(0, sys.argv[1])
import fake_backend
from af_core.autofuser import Autofuser, AutofuserOptions
from fake_backend.graphs import offset_chain
with fake_backend.installed():
    fuser = Autofuser(AutofuserOptions(selection="seed"))
    files = fuser.generate(fuser.schedule(offset_chain())).files()
print(json.dumps({name: hashlib.sha256(text.encode()).hexdigest() for name, text in sorted(files.items())}))
"""


def test_artifacts_do_not_depend_on_the_hash_seed(sessions):
    """This process hashes with a random seed (unless PYTHONHASHSEED is set), the child with a fixed one."""
    here = {
        name: hashlib.sha256(text.encode()).hexdigest()
        for name, text in sessions("gather2d").result.files().items()
    }
    seed = "4242" if os.environ.get("PYTHONHASHSEED") != "4242" else "0"  # another seed than this process's
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run(
        [sys.executable, "-c", _DIGESTS, str(Path(__file__).parent)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out) == here
