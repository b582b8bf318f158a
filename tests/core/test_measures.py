"""The seed's selection measures, loops and quirks included."""

from __future__ import annotations

import sympy

from af_core.builders import GraphBuilder, embedding, gather, index_select
from af_core.ir.sizes import size_symbol
from af_core.schedule.measures import SelectionMeasures, Thresholds, continuous_product, index_outer_product

S = [size_symbol(f"s{i}") for i in range(4)]


def test_contiguous_input_multiplies_every_axis_but_the_first():
    strides = [S[1] * S[2] * S[3], S[2] * S[3], S[3], 1]
    assert continuous_product(S, strides) == S[1] * S[2] * S[3]


def test_loop_stops_at_the_first_gap():
    strides = [S[1] * 2 * S[3] * S[2], 2 * S[3] * S[2], S[3], 1]  # [s2, s3] blocks padded to twice their size
    # the block [s2, s3] is contiguous, but the loop multiplies repeats[i] only when strides[i-1] matches,
    # so it stops at i = 2 with s3 alone (the seed's loop, quirk kept)
    assert continuous_product(S, strides) == S[3]
    assert continuous_product([4, 5, 6], [40, 7, 1]) == 1  # gap right away: nothing but the quirk's 1


def test_last_stride_is_not_checked_and_rank_one_gives_one():
    assert continuous_product([4, 4], [8, 2]) == 4  # strides[0] == 4 * 2 though the last stride is 2
    assert continuous_product([9], [1]) == 1  # the loop never runs for rank 1


def test_broadcast_axis_breaks_the_run():
    v, d = size_symbol("V"), size_symbol("D")
    assert continuous_product([3, v, d], [0, d, 1]) == d  # embedding table broadcast over the batch


def test_index_outer_product():
    assert index_outer_product([2, 3, 5, 7], 2) == 6
    assert index_outer_product([2, 3], 0) == 1


def measures(graph):
    il = graph.nodes_of_type("IndirectLoad")[0]
    return SelectionMeasures.of(graph, il, Thresholds.of(0.5, 0.5, 128))


def test_measures_of_builders():
    g = GraphBuilder("g")
    x = g.data("x", [8, 100, 32], "float16")
    i = g.data("i", [6, 10, 32], "int32")
    g.output(gather(x, 1, i))
    m = measures(g.build())
    assert m.continuous_bytes == 100 * 32 * 2 and m.index_outer == 6
    g = GraphBuilder("e")
    w = g.data("w", ["V", 64], "float32")
    ids = g.data("ids", ["B", "L"], "int64")
    g.output(embedding(w, ids))
    m = measures(g.build())
    assert m.continuous_bytes == 64 * 4
    assert m.index_outer == size_symbol("B")
    g = GraphBuilder("s")
    x = g.data("x", ["N", 16], "float32")
    i = g.data("i", ["K"], "int32")
    g.output(index_select(x, 1, i))
    m = measures(g.build())
    assert m.continuous_bytes == 16 * 4 and m.index_outer == size_symbol("N")


def test_conditions_with_thresholds():
    g = GraphBuilder("g")
    x = g.data("x", ["a", "w"], "float32")
    i = g.data("i", ["b", "k"], "int32")
    g.output(gather(x, 1, i))
    m = measures(g.build())
    core = sympy.Symbol("core_num", integer=True, positive=True)
    a, w, b, k = (size_symbol(n) for n in "awbk")

    def holds(wv, bv, cores):
        env = {w: wv, b: bv, core: cores, a: bv, k: 1}
        return bool(m.cache_ok().subs(env)), bool(m.core_ok().subs(env))

    assert holds(16, 48, 48) == (True, True)  # 64 B >= 128 * 0.5 and 48 rows >= 48 * 0.5
    assert holds(16, 23, 48) == (True, False)
    assert holds(15, 48, 48) == (False, True)  # 60 B < 64 B
    assert holds(15, 1, 1) == (False, True)
    strict = SelectionMeasures.of(
        g.graph, g.graph.nodes_of_type("IndirectLoad")[0], Thresholds.of(1.0, 0.25, 64)
    )
    env = {w: 16, b: 12, core: 48, a: 12, k: 1}
    assert bool(strict.cache_ok().subs(env)) and bool(
        strict.core_ok().subs(env)
    )  # 64 B >= 64 and 12 >= 48 / 4
    assert not hasattr(strict, "rule")  # the core offers conditions; the regions are the templates'
