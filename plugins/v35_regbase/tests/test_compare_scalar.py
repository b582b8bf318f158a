"""Comparisons with a scalar on float16 / bfloat16 data: the scalar handed to Compares.

Compares takes its scalar in the data's dtype, while the elementwise
contract compares with float32(value). ``compare_scalar`` picks a value of
the dtype that gives the same answer; checked here against numpy for every
one of the 65536 bit patterns of each dtype.
"""

from __future__ import annotations

import numpy as np
import pytest
from af_v35_regbase.api_calls.vector import compare_scalar

from af_core import dtypes as dt

OPS = {
    "GT": np.greater,
    "GE": np.greater_equal,
    "LT": np.less,
    "LE": np.less_equal,
    "EQ": np.equal,
    "NE": np.not_equal,
}
SCALARS = [0.1, -0.1, 0.7, 2.0, -3.0, 65504.0, 65536.0, -70000.0, 1e-9, -1e-9, 1e-30, 1e38, 3.4e38, 0.0]


def every_value(dtype) -> np.ndarray:
    bits = np.arange(65536, dtype=np.uint32)
    if dtype.name == "float16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float32)
    return (bits << 16).view(np.float32)


def parse(text: str) -> float:
    return (
        {"__builtin_inff()": np.inf, "-__builtin_inff()": -np.inf, '__builtin_nanf("")': np.nan}.get(
            text, None
        )
        if text.startswith(("__", "-__"))
        else float(text)
    )


@pytest.mark.parametrize("dtype", [dt.float16, dt.bfloat16], ids=["float16", "bfloat16"])
def test_the_scalar_answers_like_float32_for_every_value(dtype):
    x = every_value(dtype)
    for value in SCALARS:
        for mode, fn in OPS.items():
            scalar = parse(compare_scalar(mode, value, dtype))
            held = every_value(dtype)
            assert np.isnan(scalar) or scalar in held or np.isinf(scalar), (mode, value, scalar)
            with np.errstate(invalid="ignore"):
                expected = fn(x, np.float32(value))
                got = fn(x, np.float32(scalar))
            assert (expected == got).all(), (mode, value, scalar, x[expected != got][:4])


def test_float32_and_integers_use_the_value_itself():
    assert compare_scalar("GT", 0.1, dt.float32) == "0.1"
    assert compare_scalar("EQ", 5.0, dt.int32) == "5.0"
