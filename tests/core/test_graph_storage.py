"""HintGraph keeps its edges itself, in networkx's MultiDiGraph layout: checked against networkx.

Random edit sequences (add a node, wire a port, rewire it, disconnect it, remove
a node) are applied both to a HintGraph and to a ``networkx.MultiDiGraph``
edited the way the graph used to edit its own networkx graph. Edge order,
topological order (networkx's lexicographic sort keyed by insertion rank),
the reported cycle, producers, consumers and copies must agree.
"""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from af_core.errors import GraphStructureError
from af_core.ir.graph import HintGraph, Node
from af_core.registry import registry_ops

EXAMPLES = settings(max_examples=60, deadline=None, derandomize=True)
#: op type -> its input ports (core ops: no plugin needed)
PORTS = {"Data": (), "Load": ("x",), "IndirectLoad": ("x1", "x2"), "Store": ("x",)}

edit = st.tuples(st.sampled_from(["add", "wire", "wire", "wire", "disconnect", "remove"]), st.integers(0, 63))


class Mirror:
    """A HintGraph and the networkx graph the same edits give, the way HintGraph edited it before."""

    def __init__(self) -> None:
        self.graph = HintGraph("g", registry_ops())
        self.ref = nx.MultiDiGraph()
        self.order: dict[str, int] = {}
        self.serial = 0

    def names(self) -> list[str]:
        return list(self.ref.nodes)

    def add(self, pick: int) -> None:
        op = sorted(PORTS)[pick % len(PORTS)]
        name = f"n{self.serial}"
        self.serial += 1
        self.graph.add_node(Node(op, name, self.graph))
        self.order[name] = len(self.order)
        self.ref.add_node(name)

    def _drop_port(self, consumer: str, port: str) -> None:
        for u, _v, key in list(self.ref.in_edges(consumer, keys=True)):
            if key == port:
                self.ref.remove_edge(u, consumer, key=port)

    def wire(self, pick: int) -> None:
        names = self.names()
        consumers = [n for n in names if PORTS[self.graph.node(n).type]]
        if not consumers:
            return
        consumer = consumers[pick % len(consumers)]
        ports = PORTS[self.graph.node(consumer).type]
        port = ports[(pick // 7) % len(ports)]
        producer = names[(pick // 3) % len(names)]
        self.graph.node(consumer).connect(port, self.graph.node(producer))
        self._drop_port(consumer, port)
        self.ref.add_edge(producer, consumer, key=port)

    def disconnect(self, pick: int) -> None:
        edges = list(self.ref.edges(keys=True))
        if edges:
            _u, v, port = edges[pick % len(edges)]
            self.graph.disconnect(self.graph.node(v), port)
            self._drop_port(v, port)

    def remove(self, pick: int) -> None:
        names = self.names()
        if names:
            name = names[pick % len(names)]
            self.graph.remove_node(self.graph.node(name))
            self.ref.remove_node(name)
            del self.order[name]

    def apply(self, edits: list[tuple[str, int]]) -> None:
        for kind, pick in edits:
            getattr(self, kind)(pick)


def edges(graph: nx.MultiDiGraph) -> list[tuple[str, str, str]]:
    return list(graph.edges(keys=True))


@EXAMPLES
@given(st.lists(st.integers(0, 63), min_size=2, max_size=10), st.lists(edit, max_size=40))
def test_edits_match_networkx(nodes, edits):
    m = Mirror()
    m.apply([("add", pick) for pick in nodes] + edits)
    graph, ref = m.graph, m.ref
    assert edges(graph.nx) == edges(ref)
    assert [n.name for n in graph.nodes()] == sorted(m.order, key=m.order.__getitem__)
    for name in ref.nodes:
        node = graph.node(name)
        assert [(c.name, p) for c, p in graph.consumers(node)] == sorted(
            ((v, k) for _u, v, k in ref.out_edges(name, keys=True)), key=lambda e: (m.order[e[0]], e[1])
        )
        for port in PORTS[node.type]:
            producers = [u for u, _v, k in ref.in_edges(name, keys=True) if k == port]
            found = graph.producer_or_none(node, port)
            assert (found.name if found else None) == (producers[0] if producers else None)
    copy, ref_copy = graph.copy(), nx.MultiDiGraph()  # a copy adds the nodes in node order, then the edges
    ref_copy.add_nodes_from(n.name for n in graph.nodes())
    ref_copy.add_edges_from(edges(ref))
    assert edges(copy.nx) == edges(ref_copy) and list(copy.nx.nodes) == list(ref_copy.nodes)
    if nx.is_directed_acyclic_graph(ref):
        assert graph.find_cycle() is None
        expected = list(nx.lexicographical_topological_sort(ref, key=m.order.__getitem__))
        assert [n.name for n in graph.topo_order()] == expected
    else:
        assert graph.find_cycle() == [e[0] for e in nx.find_cycle(ref)]
        with pytest.raises(GraphStructureError, match="rule 'graph-acyclic'"):
            graph.topo_order()


def test_remove_node_of_another_graph_is_a_key_error():
    graph, other = HintGraph("g", registry_ops()), HintGraph("h", registry_ops())
    node = Node("Data", "x", other)
    graph.add_node(Node(registry_ops().lookup("Data"), "x"))
    with pytest.raises(KeyError, match="has no node 'x'"):
        graph.remove_node(node)
