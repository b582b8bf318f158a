"""The pyautofuse-compatible surface builds the graphs a front end would."""

from __future__ import annotations

import os
import runpy
from pathlib import Path

import pytest
import sympy

from af_core import ascir
from af_core.errors import AttrError, GraphStructureError, ScheduleError, UnknownOpError
from af_core.ir.validate import validate
from af_core.platform import current_platform
from af_core.testing import seed_style_gather

ROOT = Path(__file__).resolve().parents[2]


def test_seed_script_runs_up_to_schedule_error_without_templates(registry_env):
    from af_core.registry import get_registry

    # the plugins the environment disables already stay disabled (their templates are not listed)
    ambient = {p for p in os.environ.get("AF_DISABLE_PLUGINS", "").split(",") if p}
    template_plugins = sorted({e.plugin for e in get_registry().entries("template")} | ambient)
    registry_env(AF_DISABLE_PLUGINS=",".join(template_plugins) or "none")
    assert get_registry().names("template") == []
    with pytest.raises(ScheduleError, match="no template plugin proposed a case"):
        runpy.run_path(str(ROOT / "examples" / "minimal_graph.py"))
    assert current_platform().core_num == 1
    assert current_platform().ub_size == 245760


def test_nodes_join_the_graph_when_wired():
    graph = seed_style_gather()
    names = [n.name for n in graph.nodes()]
    assert names == ["x", "index", "input_load", "index_load", "indirect_load", "store", "y"]
    il = graph.node("indirect_load")
    assert il.x1 is graph.node("input_load")
    assert il.x2 is graph.node("index_load")
    assert [c.name for c, _ in graph.consumers(graph.node("store"))] == ["y"]


def test_pending_chains_attach_transitively():
    graph = ascir.HintGraph("g")
    a = ascir.ops.Load("a")
    b = ascir.ops.Store("b")
    b.x = a  # neither belongs to a graph yet
    data = ascir.ops.Data("d", graph)
    a.x = data
    assert graph.has_node("a") and graph.has_node("b")
    assert b.x is a


def test_sizes_are_sympy_and_static_ints_stay_ints():
    graph = ascir.HintGraph("g")
    s0 = graph.create_size("s0")
    assert isinstance(s0, sympy.Symbol) and s0.is_positive and s0.is_integer
    assert graph.create_size(8) == 8
    assert ascir.SizeExpr(1) == 1
    assert graph.create_size("s0") is s0


def test_unknown_op_is_a_located_error():
    with pytest.raises(UnknownOpError, match="rule 'op-known'.*'Frobnicate'"):
        ascir.ops.Frobnicate("n")


def test_unknown_ir_attr_names_node_and_declared_attrs():
    graph = ascir.HintGraph("g")
    data = ascir.ops.Data("x", graph)
    with pytest.raises(AttrError) as info:
        data.attr.ir_attr.dim = 1
    assert info.value.rule == "attr-known" and info.value.node == "x"
    assert "index" in str(info.value)


def test_attr_type_is_checked():
    il = ascir.ops.IndirectLoad("il")
    with pytest.raises(AttrError, match="attr-type"):
        il.attr.ir_attr.dim = "two"
    with pytest.raises(AttrError, match="attr-type"):
        il.attr.ir_attr.need_check_bound = 3


def test_unknown_port_is_rejected():
    il = ascir.ops.IndirectLoad("il")
    with pytest.raises(AttrError, match="port-known"):
        il.x3 = ascir.ops.Load("l")


def test_wiring_to_a_non_node_is_rejected():
    store = ascir.ops.Store("s")
    with pytest.raises(GraphStructureError, match="port-producer"):
        store.x = 3


def test_graph_copy_is_deep_and_equal():
    graph = seed_style_gather()
    copy = graph.copy()
    from af_core.ir.serialize import to_json

    assert to_json(copy) == to_json(graph)
    copy.node("indirect_load").attr.ir_attr.dim = 1
    assert graph.node("indirect_load").attr.ir_attr.dim == 2


def test_set_platform_rejects_other_socs():
    with pytest.raises(ValueError, match="3510"):
        ascir.utils.set_platform("2201", 1, 1000)


def test_validate_resolves_every_node():
    info = validate(seed_style_gather())
    assert info["indirect_load"].dtype.name == "float16"
    assert [str(s) for s in info["indirect_load"].sizes] == ["s4", "s5", "s6", "s7"]
