"""The v35 plugin is discovered and serves twin headers for SoC 3510 only."""

from __future__ import annotations

from pathlib import Path

from af_core.platform import Platform
from af_core.registry import get_registry


def test_plugin_loaded_from_its_distribution():
    manager = get_registry().manager
    infos = {p.name: p for p in manager.plugins()}
    assert infos["v35_regbase"].distribution == "af-v35-regbase"
    assert "af_twin_include_dirs" in infos["v35_regbase"].hooks


def test_twin_include_dir_for_3510():
    dirs = get_registry().manager.twin_include_dirs(Platform())
    assert any(Path(d).name == "include" and Path(d).is_dir() for d in dirs)


def test_merged_rows_joins_outer_axes_that_step_as_one():
    """Rows of x[4096, 90, 32] are one axis of 368640 rows; a size-1 axis goes; a broadcast pair (stride 0
    twice) is one axis too; axes with a gap between them stay apart; symbolic sizes merge when the strides
    say so; a view with nothing to merge is returned as it is."""
    import sympy
    from af_v35_regbase.api_calls.tile_io import merged_rows

    def view(sizes, strides):
        return {"outer_sizes": sizes, "outer_strides": strides, "inner_sizes": [32], "inner_strides": [1]}

    got = merged_rows(view([4096, 90], [2880, 32]))
    assert (got["outer_sizes"], got["outer_strides"]) == ([368640], [32])
    got = merged_rows(view([7, 1, 5], [5 * 32, 999, 32]))
    assert (got["outer_sizes"], got["outer_strides"]) == ([35], [32])
    got = merged_rows(view([3, 4], [0, 0]))
    assert (got["outer_sizes"], got["outer_strides"]) == ([12], [0])
    apart = view([4, 5], [200, 32])  # rows of 32 in a pitch of 200 per outer row: not one axis
    assert merged_rows(apart) is apart
    b0, b1 = sympy.symbols("b0 b1", positive=True, integer=True)
    got = merged_rows(view([b0, b1], [32 * b1, 32]))
    assert (got["outer_sizes"], got["outer_strides"]) == ([b0 * b1], [32])
    assert got["inner_sizes"] == [32]
