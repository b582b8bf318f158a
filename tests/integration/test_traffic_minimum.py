"""The minimum data movement, on cases small enough to count by hand.

The minimum is index bytes + output bytes + 128 B per distinct input line the
gather reads, with the lines taken from the index values after the index chain
(the values the kernel computes), not from the raw index input.
"""

from __future__ import annotations

import numpy as np
import pytest

from af_core.builders import GraphBuilder, embedding
from af_core.inputs import pack_inputs
from af_core.ir.validate import validate
from af_core.reference.interpreter import evaluate
from af_core.traffic import minimum_bytes, used_indices

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
