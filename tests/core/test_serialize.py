"""JSON round trip is exact; Mermaid text names every node and highlights IndirectLoad."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from af_core.builders import GraphBuilder, gather
from af_core.errors import AttrError, GraphStructureError, UnknownOpError
from af_core.ir.mermaid import to_mermaid
from af_core.ir.serialize import from_json, to_json
from af_core.ir.validate import validate
from af_core.registry import registry_ops
from af_core.testing import seed_style_gather


def test_round_trip_seed_graph():
    graph = seed_style_gather()
    text = to_json(graph)
    again = from_json(text, registry_ops())
    assert to_json(again) == text
    validate(again)
    assert again.node("indirect_load").attr.ir_attr.dim == 2


@settings(max_examples=40, deadline=None)
@given(
    rank=st.integers(1, 5),
    data=st.data(),
    dynamic=st.booleans(),
    negative=st.booleans(),
)
def test_round_trip_random_gathers(rank, data, dynamic, negative):
    dim = data.draw(st.integers(-rank if negative else 0, rank - 1))
    shape = data.draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank))
    index_shape = [data.draw(st.integers(1, n)) for n in shape]
    g = GraphBuilder("rt")
    x = g.data("x", [f"a{i}" if dynamic else n for i, n in enumerate(shape)], "bfloat16")
    i = g.data("i", index_shape, "int64")
    g.output(g.reduce("Sum", gather(x, dim, i, need_check_bound=True), [rank - 1]))
    text = to_json(g.graph)
    assert to_json(from_json(text, registry_ops())) == text
    assert json.loads(text)["format"] == "af-hintgraph/1"


def test_unknown_op_in_json():
    data = json.loads(to_json(seed_style_gather()))
    data["nodes"][4]["type"] = "IndirectStore"
    with pytest.raises(UnknownOpError, match="IndirectStore"):
        from_json(json.dumps(data), registry_ops())


def test_unknown_attr_in_json():
    data = json.loads(to_json(seed_style_gather()))
    data["nodes"][4]["ir_attr"]["axis"] = 1
    with pytest.raises(AttrError, match="rule 'attr-known'"):
        from_json(json.dumps(data), registry_ops())


def test_unknown_producer_in_json():
    data = json.loads(to_json(seed_style_gather()))
    data["nodes"][4]["inputs"]["x2"] = "nowhere"
    with pytest.raises(GraphStructureError, match="port 'x2'.*nowhere"):
        from_json(json.dumps(data), registry_ops())


def test_wrong_format_tag():
    with pytest.raises(GraphStructureError, match="json-format"):
        from_json('{"format": "other", "name": "g"}', registry_ops())


def test_mermaid_mentions_all_nodes_and_highlights_indirect_load():
    graph = seed_style_gather()
    text = to_mermaid(graph, title="seed")
    assert text.splitlines()[3] == "flowchart TD"
    for i, node in enumerate(graph.nodes()):
        assert f"n{i}" in text and node.name in text
    assert "class n4 indirect" in text
    assert "-->|x2| n4" in text and "-->|x1| n4" in text
