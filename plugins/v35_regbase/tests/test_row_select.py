"""The row view whole-row templates share (af_v35_regbase.row_select): what it reads and what it refuses."""

from __future__ import annotations

import pytest
from af_v35_regbase.row_select import row_select

from af_core.builders import GraphBuilder, embedding, gather
from af_core.errors import Unsupported
from af_core.schedule.analysis import analyze


def _gather_node(graph):
    return next(n for n in graph.nodes() if n.type == "IndirectLoad")


def test_embedding_rows_give_the_table_offsets_of_whole_rows():
    g = GraphBuilder("emb")
    w = g.data("w", ["V", "D"], "float16")
    ids = g.data("ids", ["B", "L"], "int64")
    g.output(embedding(w, ids, need_check_bound=True), "y")
    graph = g.build()
    rs = row_select(graph, _gather_node(graph), analyze(graph), "the test template")
    assert (rs.table.name, rs.index.name, rs.dim) == ("w", "ids", 1)
    shown = {k: [str(x) for x in v] if isinstance(v, list) else v for k, v in rs.view.items()}
    # output rows [B, L]; ids read at their own strides; the table broadcast over B, a row D apart
    assert shown["sizes"] == ["B", "L"]
    assert shown["index_strides"] == ["L", "1"]
    assert shown["table_strides"] == ["0", "D"]
    assert (str(shown["extent"]), str(shown["width"])) == ("V", "D")
    assert (shown["check_negative"], shown["check_bound"]) == (False, True)


def test_an_index_that_varies_inside_a_row_is_refused_naming_the_template():
    g = GraphBuilder("full_gather")
    x = g.data("x", ["N", "H"], "float32")
    idx = g.data("idx", ["K", "H"], "int32")
    g.output(gather(x, 0, idx), "y")
    graph = g.build()
    with pytest.raises(
        Unsupported, match="index 'idx' varies along axes \\[1\\].*the test template needs one"
    ):
        row_select(graph, _gather_node(graph), analyze(graph), "the test template")
