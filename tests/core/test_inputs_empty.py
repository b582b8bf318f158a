"""Inputs of empty tensors: nothing to draw is not an error, whatever the axis an index points into."""

from __future__ import annotations

import pytest

from af_core.inputs import make_inputs
from af_core.samples import seed_minimal

SIZES = {"s0": 2, "s1": 3, "s2": 10, "s3": 8, "s4": 2, "s5": 3, "s6": 6, "s7": 8}


@pytest.mark.parametrize(
    "distribution", ["uniform", "zipf1.1", "unique", "unique_per_row", "repeat2", "duplicates"]
)
def test_no_index_is_drawn_into_an_empty_axis(distribution):
    """An index of no elements into an axis of 0: numpy's draw used to fail with "high <= 0"."""
    inputs = make_inputs(
        seed_minimal(), {**SIZES, "s2": 0, "s4": 0}, distribution=distribution, out_of_range=0.5
    )
    assert inputs.storage["index"].size == 0 and inputs.logical["index"].shape == (0, 3, 6, 8)
    assert inputs.storage["x"].size == 0 and inputs.logical["x"].shape == (2, 3, 0, 8)
