"""Every load, vector-op, reduce and store node the installed templates make for the corpus workloads
carries its role's attributes (af_core.schedule.node_attrs): the typed classes the back end reads are the
contract the schedulers keep, checked on what they really emit. The corpus fixes every size, so the
register chain takes all its reduces; one symbolic bag sum, whose kept width is a size symbol, keeps a
reduce call in the SIMT case."""

from __future__ import annotations

from collections import Counter

from af_core.autofuser import Autofuser
from af_core.backend import role_call
from af_core.builders import GraphBuilder, embedding
from af_core.registry import use_registry
from af_core.schedule.node_attrs import ROLE_ATTRS
from af_core.workloads import load_workloads


def symbolic_bag_sum():
    g = GraphBuilder("bag_sum_symbolic_width")
    w = g.data("weight", ["V", "D"], "float32")
    ids = g.data("ids", ["B", "L"], "int64")
    g.output(g.reduce("Sum", embedding(w, ids), [1]), "y")
    return g.build()


def test_every_row_role_node_of_the_corpus_reads_as_its_roles_attributes():
    fuser = Autofuser()
    read: Counter = Counter()
    with use_registry(fuser.registry):
        for graph in [*(w.graph for w in load_workloads()), symbolic_bag_sum()]:
            for case in fuser.schedule(graph).cases:
                for stage in case.impl.stages:
                    for node in stage.nodes:
                        cls = None if node.api_call is None else role_call(node.api_call)
                        roles = [] if cls is None else [r for r in sorted(cls.roles) if r in ROLE_ATTRS]
                        if len(roles) == 1:
                            ROLE_ATTRS[roles[0]].of(node)  # CodegenError naming the node if not
                            read[roles[0]] += 1
    assert set(read) == set(ROLE_ATTRS), read
