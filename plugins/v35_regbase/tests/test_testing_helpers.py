"""af_v35_regbase.testing: keeping ops memory-based calls for a comparison, and only inside the block."""

from __future__ import annotations

import numpy as np
import pytest
from af_v35_regbase.api_calls.vf_chain import VfChainRegApiCall
from af_v35_regbase.testing import KEPT, memory_calls

from af_core.testing import same_bits


def test_the_refusal_holds_inside_the_block_only():
    assert VfChainRegApiCall.rejection("Abs", ("float32",), "float32") is None
    with memory_calls({"Abs"}):
        assert VfChainRegApiCall.rejection("Abs", ("float32",), "float32") == KEPT
        # other ops keep their own answer
        assert VfChainRegApiCall.rejection("Exp", ("float32",), "float32") is None
    assert VfChainRegApiCall.rejection("Abs", ("float32",), "float32") is None


def test_the_refusal_is_undone_when_the_block_fails():
    with pytest.raises(RuntimeError), memory_calls({"Abs"}):
        raise RuntimeError("boom")
    assert VfChainRegApiCall.rejection("Abs", ("float32",), "float32") is None


def test_same_bits_tells_nan_payloads_and_signed_zeros_apart():
    a = np.array([0.0, np.nan], dtype=np.float32)
    assert same_bits(a, a.copy())
    assert not same_bits(a, np.array([-0.0, np.nan], dtype=np.float32))
    assert not same_bits(a, a.astype(np.float64))
    payload = a.view(np.uint32).copy()
    payload[1] ^= 1
    assert not same_bits(a, payload.view(np.float32))
