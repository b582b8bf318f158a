"""Hardening: random valid graphs run correctly, random invalid graphs fail cleanly, sanitizers stay quiet."""

from __future__ import annotations

import json
import random
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from af_core.autofuser import Autofuser
from af_core.errors import AfError, AscirError
from af_core.ir.serialize import graph_from_dict, to_json
from af_core.ir.validate import validate
from af_core.plugin_manager import AfPluginManager
from af_core.registry import Registry, registry_ops
from af_core.testing import chain_graph, gather_sizes
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin

FLOAT_OPS = ["Abs", "Relu", "Neg", "Muls(0.5)", "Adds(0.25)", "Sigmoid", "Exp"]
INT_OPS = ["Abs", "Neg", "Relu", "Adds(3)", "Maxs(0)", "Muls(2)"]


@st.composite
def graph_specs(draw):
    rank = draw(st.integers(1, 4))
    dim = draw(st.integers(-rank, rank - 1))
    dtype = draw(st.sampled_from(["float16", "bfloat16", "float32", "int32"]))
    ops = FLOAT_OPS if dtype != "int32" else INT_OPS
    spec = dict(
        rank=rank,
        dim=dim,
        dtype=dtype,
        index_dtype=draw(st.sampled_from(["int32", "int64"])),
        pre=tuple(draw(st.lists(st.sampled_from(ops), max_size=3))),
        post=tuple(draw(st.lists(st.sampled_from(ops), max_size=3))),
        need_check_negative=draw(st.booleans()),
        need_check_bound=draw(st.booleans()),
    )
    if draw(st.booleans()):
        spec["reduce"] = (draw(st.sampled_from(["Sum", "Max"])), (rank - 1,))
    return spec


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(spec=graph_specs(), seed=st.integers(0, 10**6))
def test_random_valid_graphs_run_correctly_on_every_case(spec, seed):
    session = TwinSession(chain_graph(**spec))
    rng = np.random.default_rng(seed)
    sizes = gather_sizes(rng, spec["rank"], spec["dim"], max_elements=3000)
    kw = dict(
        negative_indices=spec["need_check_negative"], out_of_range=0.15 if spec["need_check_bound"] else 0.0
    )
    inputs = session.inputs(sizes, seed=seed, **kw)
    chosen = session.check(inputs=inputs, core_num=int(rng.choice([1, 7, 48])))
    assert chosen.ok, f"{spec} {sizes}:\n{chosen.describe()}"
    ran = {chosen.template}
    for case in session.scheduled.cases:
        try:
            run = session.check(inputs=inputs, core_num=8, tiling_key=case.tiling_key)
        except AfError as exc:
            assert "does not fit" in str(exc) or "no case" in str(exc), str(exc)
            continue
        assert run.ok, f"{spec} {sizes} forced {case.label}:\n{run.describe()}"
        ran.add(case.label)
    assert ran


MUTATIONS = [
    "dtype",
    "dim",
    "size",
    "stride",
    "drop_node",
    "rewire",
    "drop_field",
    "attr",
    "attr_type",
    "format",
    "axis",
    "index",
]


def mutate(data: dict, rng: random.Random, kind: str) -> dict:
    nodes = data["nodes"]
    node = rng.choice(nodes)
    # a mutation may meet a node an earlier one broke (drop_field), so nothing here assumes a field
    if kind == "dtype" and "y" in node:
        node["y"]["dtype"] = rng.choice(["float32", "bool", "int8", "uint64", "complex64", "int64", 3])
    elif kind == "dim":
        for n in nodes:
            if n.get("type") == "IndirectLoad":
                n.setdefault("ir_attr", {})["dim"] = rng.choice([-9, -4, 3, 7, 100, "1", None])
    elif kind == "size" and node.get("y", {}).get("size"):
        i = rng.randrange(len(node["y"]["size"]))
        node["y"]["size"][i] = rng.choice([0, -2, "s9 - s8", "a0 - 1", "1/2", "x y", 10**30, None, [1]])
    elif kind == "stride" and node.get("y", {}).get("strides"):
        node["y"]["strides"][rng.randrange(len(node["y"]["strides"]))] = rng.choice(
            [-1, "a0 - a1", "bad(", 0]
        )
    elif kind == "drop_node":
        nodes.remove(node)
    elif kind == "rewire" and node.get("inputs"):
        port = rng.choice(sorted(node["inputs"]))
        node["inputs"][port] = rng.choice([n.get("name", "ghost") for n in nodes] + ["ghost"])
    elif kind == "drop_field":
        node.pop(rng.choice(["y", "type", "name", "inputs"]), None)
    elif kind == "attr":
        node.setdefault("ir_attr", {})[rng.choice(["axes", "value", "dim", "index"])] = 1
    elif kind == "attr_type":
        for n in nodes:
            if n.get("type") == "IndirectLoad":
                n.setdefault("ir_attr", {})["need_check_bound"] = rng.choice(["yes", 2, [1]])
    elif kind == "format":
        data["format"] = rng.choice(["af-hintgraph/2", None, 1])
    elif kind == "axis" and node.get("y", {}).get("axis"):
        node["y"]["axis"] = node["y"]["axis"][:-1] or ["nope"]
    elif kind == "index":
        if node.get("type") in ("Data", "Output"):
            node.setdefault("ir_attr", {})["index"] = rng.choice([-1, 0, 1, 5])
    return data


@settings(max_examples=150, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10**9), kinds=st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=3))
def test_random_invalid_graphs_raise_ascir_errors_only(seed, kinds):
    rng = random.Random(seed)
    base = chain_graph(
        rank=rng.randint(1, 4),
        dim=0,
        pre=("Abs",),
        post=("Mul(side)",),
        reduce=("Sum", (0,)) if rng.random() < 0.3 else None,
    )
    data = json.loads(to_json(base))
    for kind in kinds:
        data = mutate(data, rng, kind)
    try:
        graph = graph_from_dict(data, registry_ops())
        validate(graph)
    except AscirError as exc:
        assert exc.rule and str(exc)
    # anything else propagates and fails the test


PLUGIN = """
from af_core import hookimpl
from af_core.schedule.template import Rejected

AF_CONTRACT_VERSION = 1


class Exploding:
    name = "exploding"

    def propose(self, graph, node, ctx):
        raise RuntimeError("the template crashed")


@hookimpl
def af_register_templates(register):
    register(Exploding())
"""


def test_a_template_that_raises_is_rejected_with_its_plugin_named(tmp_path, monkeypatch):
    (tmp_path / "af_exploding.py").write_text(textwrap.dedent(PLUGIN))
    info = tmp_path / "af_exploding-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: af-exploding\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[af_core]\nexploding = af_exploding\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry(AfPluginManager())  # finds the plugin written above; the process's does not
    assert registry.templates.entry("exploding").distribution == "af-exploding"
    scheduled = Autofuser(registry=registry).schedule(chain_graph(rank=2, dim=1))
    rejected = [r for r in scheduled.rejections if r.template == "exploding"]
    assert rejected and rejected[0].plugin == "af-exploding"
    assert "RuntimeError: the template crashed" in rejected[0].reason
    assert {"simt", "simd", "sklike"} <= {c.template for c in scheduled.cases}


SANITIZED = [
    dict(rank=3, dim=1, pre=("Abs",), post=("Exp",)),
    dict(rank=2, dim=1, dtype="float16", reduce=("Sum", (1,)), need_check_bound=True),
    dict(
        rank=3, dim=2, dtype="bfloat16", index_pre=("Maxs(0)",), post=("Mul(side)",), need_check_negative=True
    ),
]


@pytest.mark.parametrize("spec", SANITIZED, ids=["chains", "reduce", "sides"])
def test_every_case_is_clean_under_asan_and_ubsan(spec):
    session = TwinSession(chain_graph(**spec), sanitize=True)
    rng = np.random.default_rng(11)
    sizes = gather_sizes(rng, spec["rank"], spec["dim"], max_elements=2000)
    inputs = session.inputs(
        sizes,
        seed=3,
        negative_indices=spec.get("need_check_negative", False),
        out_of_range=0.1 if spec.get("need_check_bound") else 0.0,
    )
    for case in session.scheduled.cases:
        try:
            run = session.check(inputs=inputs, core_num=6, tiling_key=case.tiling_key)
        except AfError as exc:
            assert "does not fit" in str(exc), str(exc)
            continue
        assert run.ok, f"{case.label}: {run.describe()}"
