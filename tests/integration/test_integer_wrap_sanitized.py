"""Integer ops wrap like the reference, and do so without signed overflow: UBSan (no -fwrapv) stays quiet."""

from __future__ import annotations

import numpy as np
import pytest

from af_core.autofuser import AutofuserOptions
from af_core.testing import chain_graph
from af_core.twin import TwinSession
from af_core.twin.runner import BASE_FLAGS, SANITIZE_FLAGS

pytestmark = pytest.mark.twin


def test_builds_do_not_define_signed_overflow_away():
    assert "-fwrapv" not in BASE_FLAGS + SANITIZE_FLAGS
    assert any(flag.startswith("-fsanitize=") and "undefined" in flag for flag in SANITIZE_FLAGS)


@pytest.mark.parametrize(("dtype", "template"), [("int32", "simt"), ("int64", "simt"), ("int32", "simd")])
def test_overflowing_integer_chain_matches_the_reference_under_sanitizers(dtype, template):
    graph = chain_graph(rank=2, dim=0, dtype=dtype, post=("Mul(side)", "Add(side)", "Muls(3)", "Neg", "Abs"))
    session = TwinSession(graph, AutofuserOptions(force_template=template), sanitize=True)
    base = session.inputs({"a0": 5, "a1": 6, "b0": 7, "b1": 6}, seed=1)
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    arrays = {}
    for name, array in base.logical.items():
        if name == "index":
            arrays[name] = array
            continue
        values = rng.choice(
            np.array([info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max], dtype=dtype),
            size=array.shape,
        )
        arrays[name] = values.astype(array.dtype)
    run = session.check(inputs=session.inputs(arrays=arrays, sizes=base.sizes), core_num=2)
    assert run.ok, run.describe()  # products of INT_MIN / INT_MAX operands overflow and wrap on both sides
