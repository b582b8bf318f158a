"""The helpers templates share instead of copying: storage span, the row-tile rule and axes, CaseRef.of, main_input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from af_core.inputs import storage_elements as storage_count
from af_core.ir.sizes import size_symbol, storage_elements
from af_core.schedule.case import Case
from af_core.schedule.impl_graph import ImplGraph, Stage
from af_core.schedule.measures import main_input
from af_core.schedule.tiles import RowTiles
from af_core.testing import chain_graph
from af_core.tiling.solve import CaseRef, evaluate_case
from af_core.tiling.spec import TilingSpec


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 9), st.integers(0, 50)), min_size=1, max_size=4))
def test_storage_span_is_one_past_the_last_element_numpy_reaches(dims):
    shape, strides = zip(*dims)
    base = np.arange(10_000)
    view = np.lib.stride_tricks.as_strided(base, shape, [s * base.itemsize for s in strides])
    assert storage_elements(shape, strides) == int(view.max()) + 1
    assert storage_count(shape, strides) == int(view.max()) + 1


def test_storage_span_is_symbolic_and_an_empty_input_spans_nothing():
    n, m = size_symbol("n"), size_symbol("m")
    assert sympy.expand(storage_elements([n, m], [m, 1]) - n * m) == 0
    assert storage_count((3, 0), (1, 1)) == 0


def _evaluate(spec: TilingSpec, **env: int) -> dict[str, int]:
    case = Case("t", "default", chain_graph(rank=2, dim=0), ImplGraph("g", "t"), spec, tiling_key=0)
    return evaluate_case(CaseRef.of(case), env).fields


@pytest.mark.parametrize(
    "rows, fit, cores, expect",
    [
        (100, 7, 8, dict(tile=7, tiles=15, tiles_per_core=2, used_cores=8)),  # UB bounds the tile
        (100, 64, 8, dict(tile=13, tiles=8, tiles_per_core=1, used_cores=8)),  # every core gets one tile
        (3, 64, 8, dict(tile=1, tiles=3, tiles_per_core=1, used_cores=3)),  # fewer rows than cores
        (10, 0, 4, dict(tile=1, tiles=10, tiles_per_core=3, used_cores=4)),  # a tile holds at least one row
    ],
)
def test_the_five_field_tile_rule(rows, fit, cores, expect):
    spec = TilingSpec()
    row_tiles = RowTiles(spec.add("rows", rows), "O", "O")
    row_tiles.add_fields(spec, fit, "fits UB")
    assert spec.field_names() == ["rows", "tile_max", "tile", "tiles", "tiles_per_core", "used_cores"]
    fields = _evaluate(spec, core_num=cores, ub_size=1 << 18)
    assert {k: fields[k] for k in expect} == expect
    assert (
        fields["used_cores"] <= cores and fields["used_cores"] * fields["tiles_per_core"] >= fields["tiles"]
    )
    assert fields["tiles"] == math.ceil(rows / fields["tile"])


@pytest.mark.parametrize(
    "rows, fit, at_least, expect",
    [
        (200, 64, 8, dict(tile=8, tiles=25, used_cores=25)),  # 5 rows a core would be too little work
        (200, 6, 8, dict(tile=6, tiles=34, used_cores=34)),  # UB still caps the tile
        (1000, 64, 8, dict(tile=21, tiles=48, used_cores=48)),  # enough rows: every core, as before
    ],
)
def test_a_minimum_of_rows_per_tile_leaves_cores_idle(rows, fit, at_least, expect):
    spec = TilingSpec()
    row_tiles = RowTiles(spec.add("rows", rows), "O", "O")
    row_tiles.add_fields(spec, fit, "fits UB", at_least=at_least)
    fields = _evaluate(spec, core_num=48, ub_size=1 << 18)
    assert {k: fields[k] for k in expect} == expect


def test_prefixed_fields_and_the_axis_list_of_a_row_tiled_stage():
    spec = TilingSpec()
    row_tiles = RowTiles(spec.add("gather_rows", 40), "GR", "G", prefix="gather_")
    row_tiles.add_fields(spec, 5, "fit", unit="groups", used_doc="cores the gather stage uses")
    assert [(f.name, f.doc) for f in spec.fields[1:]] == [
        ("gather_tile_max", "fit"),
        ("gather_tile", "groups per tile"),
        ("gather_tiles", "tiles"),
        ("gather_tiles_per_core", "tiles per core"),
        ("gather_used_cores", "cores the gather stage uses"),
    ]
    axes = row_tiles.axes(("b", "l"))
    assert [(a.name, a.type, str(a.size), a.from_) for a in axes] == [
        ("GR", "MERGED", "gather_rows", ("b", "l")),
        ("GT", "TILE_OUT", "gather_tiles", ("GR",)),
        ("Gt", "TILE_IN", "gather_tile", ("GR",)),
        ("GTB", "BLOCK_OUT", "gather_used_cores", ("GT",)),
        ("GTb", "BLOCK_IN", "gather_tiles_per_core", ("GT",)),
    ]
    assert row_tiles.loop == "GT" and row_tiles.used_cores == spec.fields[-1].symbol
    Stage("s", axes, [], [], used_cores="gather_used_cores")  # a valid stage


def test_case_ref_of_a_case_carries_key_template_spec_and_label():
    spec = TilingSpec()
    case = Case(
        "simd_like", "db", chain_graph(rank=2, dim=0), ImplGraph("g", "simd_like"), spec, tiling_key=3
    )
    assert CaseRef.of(case) == CaseRef(3, "simd_like", spec, "simd_like/db")


def test_main_input_walks_to_the_data_or_stops_at_the_view():
    graph = chain_graph(rank=2, dim=0)
    il = next(n for n in graph.nodes() if n.op.compute_type == "indirect_load")
    data = main_input(graph, il)
    view = main_input(graph, il, stop=("load", "broadcast"))
    assert data.op.compute_type == "data"
    assert view.op.compute_type in ("load", "broadcast")
    assert graph.producer(view, "x") is data
