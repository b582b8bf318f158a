"""A reduce whose every named axis has size 1 (an embedding bag of one row) is the identity: every case of
every template must keep the other axes. Before, the templates found no reduced axis and fell back to the
last one, summing what the graph keeps (every case differed from the reference)."""

from __future__ import annotations

import pytest

from af_core.builders import GraphBuilder, embedding
from af_core.ops.core_ops import loop_axes
from af_core.twin import TwinSession


def _bag_of_one(kind: str, width: int):
    g = GraphBuilder(f"bag_of_one_{kind.lower()}_{width}")
    table = g.data("t", [300, width], "float32")
    g.output(g.reduce(kind, embedding(table, g.data("ids", [24, 1], "int64")), [1]), "y")
    return g.build()


@pytest.mark.parametrize("kind", ["Sum", "Max", "Mean"])
@pytest.mark.parametrize("width", [1, 40])
def test_every_case_keeps_the_rows_of_a_bag_of_one(kind, width):
    session = TwinSession(_bag_of_one(kind, width))
    labels = []
    for case in session.scheduled.cases:
        run = session.check({}, seed=1, tiling_key=case.tiling_key, core_num=8)
        assert run.ok, (case.label, run.describe())
        labels.append(case.label)
    assert any(label.startswith("simt") for label in labels), labels


def test_loop_axes_are_the_reduced_axes_or_else_the_size_one_axes_named():
    assert loop_axes((24, 5, 40), (24, 1, 40)) == (1,)
    assert loop_axes((24, 1, 40), (24, 1, 40)) == (1,)
    assert loop_axes((24, 1, 40), (24, 1, 1)) == (2,)  # a real reduced axis: the size-1 one is not looped
    assert loop_axes((24, 40), (24, 40)) == ()
