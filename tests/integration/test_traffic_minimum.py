"""The minimum data movement, on cases small enough to count by hand.

The minimum is index bytes + output bytes + 128 B per distinct input line the
gather reads, with the lines taken from the index values after the index chain
(the values the kernel computes), not from the raw index input.
"""

from __future__ import annotations

import numpy as np
import pytest

from af_core.builders import GraphBuilder, embedding, gather
from af_core.inputs import pack_inputs
from af_core.ir.validate import validate
from af_core.reference.interpreter import evaluate
from af_core.traffic import minimum_bytes, per_core_bound_bytes, used_indices

ROWS = 100


def embedding_graph(width: int, chain: tuple[tuple[str, float], ...] = ()):
    """weight [ROWS, width] float32, ids [n] int64 -> chain -> embedding -> y."""
    g = GraphBuilder("minimum_case")
    w = g.data("weight", [ROWS, width], "float32")
    ids = g.data("ids", ["N"], "int64")
    for op, value in chain:
        ids = g.op(op, ids, value=value)
    g.output(embedding(w, ids), "y")
    return g.build()


def run_inputs(graph, ids: list[int], width: int):
    """Logical arrays for ``graph``: a table of row numbers and ``ids`` viewed over the row axis."""
    n = len(ids)
    weight = np.repeat(np.arange(ROWS, dtype=np.float32)[:, None], width, axis=1)
    arrays = {"weight": weight, "ids": np.broadcast_to(np.array(ids, np.int64)[:, None], (n, width))}
    return pack_inputs(graph, arrays, {"N": n})


def minimum(ids: list[int], width: int, chain=()) -> tuple[int, int]:
    graph = embedding_graph(width, chain)
    info = validate(graph)
    inputs = run_inputs(graph, ids, width)
    outputs = evaluate(graph, inputs.logical, inputs.sizes, info=info)
    return minimum_bytes(graph, inputs, outputs, info)


def test_rows_of_one_line_without_an_index_chain():
    # 32 float32 = one 128-byte line per row; rows 3, 5, 7 -> 3 lines
    ids = [3, 3, 5, 7, 7, 7]
    least, per_lane = minimum(ids, 32)
    index_bytes, out_bytes = 6 * 8, 6 * 32 * 4
    assert least == 3 * 128 + index_bytes + out_bytes
    assert per_lane == 6 * 32 * 32 + index_bytes + out_bytes  # one 32-byte sector per output element


def test_a_clamping_index_chain_lowers_the_minimum_to_the_rows_really_read():
    # Mins(4) maps 5 and 7 onto 4: rows 3 and 4 are read, not 3, 5 and 7
    ids = [3, 3, 5, 7, 7, 7]
    least, _ = minimum(ids, 32, chain=(("Mins", 4.0),))
    assert least == 2 * 128 + 6 * 8 + 6 * 32 * 4


def test_a_maxs_chain_maps_ignored_ids_onto_row_zero():
    # the nll ignore_index pattern: -100 -> 0 by Maxs(0); rows 0, 2, 9 are read
    ids = [-100, -100, 2, 9]
    least, _ = minimum(ids, 32, chain=(("Maxs", 0.0),))
    assert least == 3 * 128 + 4 * 8 + 4 * 32 * 4


def test_a_shift_or_a_scale_can_raise_the_minimum():
    # rows of 16 B, 8 per line: ids 0..3 sit in line 0
    ids = [0, 1, 2, 3]
    rest = 4 * 8 + 4 * 4 * 4
    assert minimum(ids, 4)[0] == 1 * 128 + rest
    assert minimum(ids, 4, chain=(("Adds", 6.0),))[0] == 2 * 128 + rest  # rows 6, 7 | 8, 9
    assert minimum(ids, 4, chain=(("Muls", 8.0),))[0] == 4 * 128 + rest  # rows 0, 8, 16, 24


def test_used_indices_are_the_chain_output():
    graph = embedding_graph(32, (("Mins", 4.0), ("Maxs", 1.0)))
    inputs = run_inputs(graph, [0, 3, 9], 32)
    got = used_indices(graph, inputs)
    assert got.dtype == np.int64
    assert got.shape == (3, 32)
    assert got[:, 0].tolist() == [1, 3, 4]


@pytest.mark.parametrize("width", [4, 32, 64])
def test_minimum_never_exceeds_what_the_raw_index_would_give_for_a_clamp(width):
    rng = np.random.default_rng(width)
    ids = rng.integers(0, ROWS, 40).tolist()
    raw, _ = minimum(ids, width)
    clamped, _ = minimum(ids, width, chain=(("Mins", 10.0),))
    assert clamped <= raw
    lines_per_row = max(1, width * 4 // 128)
    rows = sorted({min(i, 10) for i in ids})
    line_set = {(r * width * 4 + k * 128) // 128 for r in rows for k in range(lines_per_row)}
    assert clamped == len(line_set) * 128 + 40 * 8 + 40 * width * 4


def test_evaluate_nodes_needs_only_the_inputs_upstream_of_the_asked_nodes():
    from af_core.errors import AscirError
    from af_core.reference.interpreter import evaluate_nodes

    graph = embedding_graph(32, (("Mins", 4.0),))
    inputs = run_inputs(graph, [0, 7], 32)
    only_ids = {"ids": inputs.logical["ids"]}  # no table: the index chain does not read it
    got = evaluate_nodes(graph, only_ids, ["mins"], inputs.sizes)
    assert got["mins"][:, 0].tolist() == [0, 4]
    with pytest.raises(AscirError, match="no array given"):
        evaluate_nodes(graph, only_ids, ["y"], inputs.sizes)
    with pytest.raises(AscirError, match="no such node"):
        evaluate_nodes(graph, only_ids, ["nowhere"], inputs.sizes)


def bound(ids: list[int], width: int, per_core: int) -> int:
    graph = embedding_graph(width)
    info = validate(graph)
    inputs = run_inputs(graph, ids, width)
    outputs = evaluate(graph, inputs.logical, inputs.sizes, info=info)
    return per_core_bound_bytes(graph, inputs, outputs, per_core, info)


@pytest.mark.parametrize(
    "per_core,lines,ids_read",
    [
        (192, 3, 6),  # one core: rows 3, 5, 7 -> the minimum's 3 lines
        (64, 4, 6),  # two rows per core: {3, 3} {5, 7} {7, 7} -> 1 + 2 + 1 lines
        (96, 3, 6),  # three rows per core: {3, 3, 5} {7, 7, 7} -> 2 + 1
        (16, 12, 12),  # half a row per core: each of 12 cores reads its row's line and its id
    ],
)
def test_the_per_core_bound_counts_each_line_once_per_core(per_core, lines, ids_read):
    ids = [3, 3, 5, 7, 7, 7]  # rows of 32 float32, one line each; 6 x 32 outputs
    assert bound(ids, 32, per_core) == lines * 128 + ids_read * 8 + 6 * 32 * 4


def _reduce_case(post_side: bool):
    """x [2, 5, 32] float32 (a line per row) gathered along axis 1 by rows {1, 1, 4} and {0, 2, 2}: Sum over
    the picks, or (``post_side``) times target [2, 1, 32] and Sum over the row."""
    g = GraphBuilder("bound_reduce")
    x = g.data("x", [2, 5, 32], "float32")
    index = g.data("index", [2, 3, 32], "int64")
    y = gather(x, 1, index)
    if post_side:
        y = g.op("Mul", y, g.broadcast(g.data("target", [2, 1, 32], "float32"), [2, 3, 32]))
    g.output(g.reduce("Sum", y, [2] if post_side else [1]), "y")
    graph = g.build()
    info = validate(graph)
    rows = np.array([[1, 1, 4], [0, 2, 2]], np.int64)
    arrays = {
        "x": np.zeros((2, 5, 32), np.float32),
        "index": np.broadcast_to(rows[:, :, None], (2, 3, 32)).copy(),
    }
    if post_side:
        arrays["target"] = np.ones((2, 1, 32), np.float32)
    inputs = pack_inputs(graph, arrays, {})
    return graph, info, inputs, evaluate(graph, inputs.logical, inputs.sizes, info=info)


def test_the_per_core_bound_maps_reduced_positions_to_their_output_element():
    graph, info, inputs, outputs = _reduce_case(post_side=False)
    rest = 2 * 3 * 32 * 8 + 2 * 32 * 4  # the index (each element used by one position) and the output
    assert minimum_bytes(graph, inputs, outputs, info)[0] == 4 * 128 + rest
    # 32 outputs per core: one core per batch row, each reads its 2 distinct lines once
    assert per_core_bound_bytes(graph, inputs, outputs, 32, info) == 4 * 128 + rest
    # 16 per core: both halves of a batch row read its 2 lines
    assert per_core_bound_bytes(graph, inputs, outputs, 16, info) == 8 * 128 + rest
    # everything on one core
    assert per_core_bound_bytes(graph, inputs, outputs, 64, info) == 4 * 128 + rest
    with pytest.raises(ValueError, match="at least 1"):
        per_core_bound_bytes(graph, inputs, outputs, 0, info)


def test_the_per_core_bound_counts_a_side_row_once_per_core_that_uses_it():
    # output [2, 3, 1]: one pick per core reads its x line and the 128 B target row of its batch row
    graph, info, inputs, outputs = _reduce_case(post_side=True)
    index_bytes, out_bytes = 2 * 3 * 32 * 8, 6 * 4
    assert minimum_bytes(graph, inputs, outputs, info)[0] == 4 * 128 + index_bytes + 2 * 128 + out_bytes
    assert (
        per_core_bound_bytes(graph, inputs, outputs, 1, info) == 6 * 128 + index_bytes + 6 * 128 + out_bytes
    )
    # 3 outputs per core: one core per batch row
    three = per_core_bound_bytes(graph, inputs, outputs, 3, info)
    assert three == 4 * 128 + index_bytes + 2 * 128 + out_bytes
