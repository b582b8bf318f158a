"""The fusion's run-edge rule for run-local values (``run_local_dtypes`` / ``edge_rejection``).

A chain class names dtypes whose values a run holds in a form of its own (the v35 back end: predicates in
mask registers). Such a value crosses a run's edge only where the class says the run can store it (the
maker's run, a reader outside) or load it (the reader's run, a maker outside). These tests drive the rule
with a stub chain class over hand-built nodes, so they pin what the core asks and what it does with the
answers, whatever a back end generates.
"""

from __future__ import annotations

from af_core import dtypes as dt
from af_core.codegen.api_call import ApiCall
from af_core.schedule.impl_graph import ImplGraph, ImplNode, ImplTensor
from af_core.schedule.rowtiles import _edge_crossings


class StubChain(ApiCall):
    """Records every question; refuses stores of runs holding an int64 value and every load into a run a
    reduce ends."""

    name = "StubChain"
    asked: list = []

    @classmethod
    def run_local_dtypes(cls) -> frozenset[str]:
        return frozenset({"bool"})

    @classmethod
    def edge_rejection(cls, ops, dtype, *, stores, reduces):
        cls.asked.append(([op for op, _ins, _out in ops], dtype.name, stores, reduces))
        if stores and any(dt.int64 in ins for _op, ins, _out in ops):
            return "no store here"
        return "no load here" if reduces and not stores else None


def _graph() -> ImplGraph:
    impl = ImplGraph("edges", "stub")
    for name, dtype in [("x", dt.int32), ("w", dt.int64), ("m", dt.uint8), ("n", dt.uint8), ("y", dt.int32)]:
        impl.add_tensor(ImplTensor(name, dtype, "UB", buffer=name))
    return impl


def _node(name, op, ins, out, dtypes):
    return ImplNode(name, op, "Vec", tuple(ins), (out,), attrs={"count": 64, "graph_dtypes": dtypes})


LTS = _node("lts", "Lts", ["x"], "m", ["int32", "bool"])
NOT = _node("not", "LogicalNot", ["m"], "n", ["bool", "bool"])
WHERE = _node("where", "Where", ["n", "x", "x"], "y", ["bool", "int32", "int32", "int32"])


def test_a_crossing_the_chain_can_move_keeps_both_ends_in_their_runs():
    StubChain.asked = []
    nodes = [LTS, NOT, WHERE]
    found = _edge_crossings(
        nodes, [([LTS, NOT], False), ([WHERE], False)], frozenset({"bool"}), _graph(), StubChain
    )
    assert found == {}
    assert StubChain.asked == [
        (["Lts", "LogicalNot"], "bool", True, False),
        (["Where"], "bool", False, False),
    ]


def test_a_value_read_only_inside_its_run_asks_nothing():
    StubChain.asked = []
    assert (
        _edge_crossings(
            [LTS, NOT, WHERE], [([LTS, NOT, WHERE], False)], frozenset({"bool"}), _graph(), StubChain
        )
        == {}
    )
    assert StubChain.asked == []


def test_refused_stores_and_loads_hold_out_the_maker_and_the_reader_with_the_chains_reason():
    StubChain.asked = []
    wide = _node("wide", "Lts", ["w"], "m", ["int64", "bool"])
    found = _edge_crossings(
        [wide, NOT], [([wide], False), ([NOT], True)], frozenset({"bool"}), _graph(), StubChain
    )
    assert found == {
        "wide": "its bool result is read outside the run (by 'not') and no store here",
        "not": "it reads the bool value 'm', made outside the run, and no load here",
    }
    assert (["Lts"], "bool", True, False) in StubChain.asked and (
        ["LogicalNot"],
        "bool",
        False,
        True,
    ) in StubChain.asked


def test_the_default_chain_keeps_run_local_values_in_their_runs():
    class Plain(ApiCall):
        name = "Plain"

    found = _edge_crossings(
        [LTS, NOT], [([LTS], False), ([NOT], False)], frozenset({"bool"}), _graph(), Plain
    )
    assert found == {
        "lts": "its bool result is read outside the run (by 'not') and it cannot leave registers",
        "not": "it reads the bool value 'm', made outside the run, and it cannot leave registers",
    }
