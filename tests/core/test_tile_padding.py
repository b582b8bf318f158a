"""TilePlan.pad: room past a tile for a call that reads whole blocks beyond its last row."""

from __future__ import annotations

import pytest
import sympy

from af_core import dtypes as dt
from af_core.errors import Unsupported
from af_core.schedule.impl_graph import ImplGraph, Stage
from af_core.schedule.tiles import TilePlan


def _plan() -> TilePlan:
    impl = ImplGraph("g", "t")
    return TilePlan(impl, Stage("s", []), sympy.Symbol("tile"))


def test_a_padded_buffer_grows_by_whole_blocks_once_and_the_fit_sees_it():
    plan = _plan()
    tile = plan.tile("x_tile", dt.float32, 24, que=True, num=2)
    plan.alias("y_tile", tile, dt.float32)  # in place: the same buffer
    before_bytes, before_fixed = plan.stage.buffers[0].bytes, plan.fixed_bytes
    plan.pad("x_tile", 250)  # rounded up to 256
    assert sympy.simplify(plan.stage.buffers[0].bytes - before_bytes) == 256
    assert sympy.simplify(plan.fixed_bytes - before_fixed) == 2 * 256  # both buffers of the queue
    plan.pad("y_tile", 100)  # the same buffer, already padded more: nothing changes
    plan.pad("x_tile", 256)
    assert sympy.simplify(plan.stage.buffers[0].bytes - before_bytes) == 256
    plan.pad("x_tile", 300)  # a larger request grows it to 320
    assert sympy.simplify(plan.stage.buffers[0].bytes - before_bytes) == 320
    assert sympy.simplify(plan.fixed_bytes - before_fixed) == 2 * 320
    assert sympy.simplify(plan.ub_bytes() - 2 * (before_bytes + 320)) == 0


def test_a_tile_of_another_stage_cannot_be_padded():
    plan, other = _plan(), _plan()
    other.impl = plan.impl
    other.tile("z_tile", dt.int32, 8)
    with pytest.raises(
        Unsupported, match="tile 'z_tile' must be padded by 256 bytes but its buffer 'z_tile' is not"
    ):
        plan.pad("z_tile", 256)
