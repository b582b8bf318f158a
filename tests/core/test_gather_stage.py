"""The target limits of the shared Gather step: uint16 offsets of 1-/2-byte data, no 8-byte Gather."""

from __future__ import annotations

import pytest
import sympy

from af_core import dtypes as dt
from af_core.errors import Unsupported
from af_core.schedule.gather_stage import GATHER_PACKED_INDICES, check_gather_dtype, gather_span_limit


@pytest.mark.parametrize("dtype", [dt.int8, dt.uint8, dt.float16, dt.bfloat16, dt.int16, dt.uint16])
@pytest.mark.parametrize("pin", [16, 32, 1008, 32768, 65535, 65536, 80000])
def test_one_and_two_byte_tiles_keep_the_zero_slot_a_uint16_index(dtype, pin):
    rows, fits, reason = gather_span_limit(dtype, sympy.Integer(pin))
    assert "uint16 offsets" in reason
    assert bool(fits) == (pin < GATHER_PACKED_INDICES)
    if fits:
        # the zero slot (element rows * pin) is the highest element the Gather reads
        assert rows * pin <= GATHER_PACKED_INDICES - 1 < (rows + 1) * pin


@pytest.mark.parametrize("dtype", [dt.float32, dt.int32, dt.uint32])
def test_four_byte_offsets_are_not_packed(dtype):
    assert gather_span_limit(dtype, sympy.Integer(80000)) is None


@pytest.mark.parametrize("dtype", [dt.int64, dt.uint64])
def test_there_is_no_8_byte_gather(dtype):
    with pytest.raises(Unsupported, match="no 8-byte form"):
        check_gather_dtype(dtype)
    check_gather_dtype(dt.float32)  # accepted
