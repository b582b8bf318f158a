"""The graph IR finds op types only in the table it is given; the graph-building edges give the registry's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from af_core import ascir
from af_core.builders import GraphBuilder
from af_core.errors import UnknownOpError
from af_core.ir.graph import HintGraph, Node
from af_core.ops.table import FixedOps
from af_core.registry import registry_ops

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import check_layers  # noqa: E402


def test_a_node_named_by_op_type_needs_a_table():
    with pytest.raises(UnknownOpError, match="rule 'op-table'") as info:
        Node("Data", "x")
    assert "node 'x'" in str(info.value) and "op type 'Data' is given by name" in str(info.value)
    with pytest.raises(UnknownOpError, match="rule 'op-table'"):
        Node("Data", "x", HintGraph("g"))


def test_a_node_given_its_opdef_needs_no_table():
    data = registry_ops().lookup("Data")
    assert Node(data, "x").op is data


def test_a_graph_knows_only_the_ops_of_its_table():
    graph = HintGraph("g", FixedOps.of([registry_ops().lookup("Data")]))
    assert Node("Data", "x", graph).type == "Data"
    with pytest.raises(UnknownOpError, match="rule 'op-known'.*'Load'"):
        Node("Load", "l", graph)


def test_a_copy_keeps_the_table():
    table = FixedOps.of([registry_ops().lookup("Data")])
    graph = HintGraph("g", table)
    Node("Data", "x", graph)
    assert graph.copy().ops is table


def test_the_builder_takes_its_table():
    table = FixedOps.of([registry_ops().lookup(op) for op in ("Data", "Load")])
    g = GraphBuilder("g", ops=table)
    assert g.graph.ops is table
    g.data("x", [4], "float32")
    with pytest.raises(UnknownOpError, match="'Store'"):
        g.output(g.data("y", [4], "float32"))


def test_the_edges_give_the_registry_table():
    assert GraphBuilder("g").graph.ops is registry_ops()
    assert ascir.HintGraph("g").ops is registry_ops()
    assert ascir.ops.Data("x").op is registry_ops().lookup("Data")


def test_the_ir_layer_sits_below_the_registry():
    """So the layer check refuses any import of the registry (or the plugin manager) from the IR."""
    config = check_layers.load_config(ROOT)
    rank = {layer.name: layer.rank for layer in config.layers}
    assert rank["ir"] < rank["plugins"]
    ir_layer = check_layers.layer_of("af_core.ir.graph", config.layers)
    assert ir_layer is not None and ir_layer.name == "ir"
    assert check_layers.layer_of("af_core.registry", config.layers).name == "plugins"
