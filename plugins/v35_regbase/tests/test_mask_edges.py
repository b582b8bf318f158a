"""Which runs move a predicate across their edge, and at which mask size (``VfChainRegApiCall.edge_rejection``,
``run_step_size``): the fusion asks these before any code exists, so they must agree with the functions
code generation writes (``moves`` refuses a mask move whose step size differs from ``run_step_size``)."""

from __future__ import annotations

import pytest
from af_v35_regbase.api_calls.vf_chain import (
    B64_MASK_STORE,
    REDUCE_MASK_LOAD,
    VfChainRegApiCall,
    bool_inputs,
    memory_call_reason,
    run_step_size,
    step_signatures,
)

from af_core import dtypes as dt
from af_core.schedule.chain_attrs import ChainStep

B, F16, F32, I8, I16, I32, I64 = dt.bool_, dt.float16, dt.float32, dt.int8, dt.int16, dt.int32, dt.int64


@pytest.mark.parametrize(
    ("ops", "size"),
    [
        ([("Lts", (I32,), B), ("LogicalNot", (B,), B)], 4),
        ([("Adds", (I64,), I64), ("Where", (B, I64, I64), I64)], 8),
        ([("LogicalNot", (B,), B), ("LogicalAnd", (B, B), B)], 1),  # predicates alone
        ([("Gts", (F16,), B), ("Where", (B, F16, F16), F16)], 2),
        ([("Nes", (I32,), B), ("Where", (B, F16, F16), F16)], 4),  # masks of a 2/4-byte run at 4 bytes
        ([("Gts", (I8,), B), ("Where", (B, I8, I8), I8)], 1),
        ([("Exp", (F16,), F16)], 2),
        ([("Sigmoid", (F16,), F16)], 4),  # computed in float32 registers
        ([("Cast", (I32,), I64)], 4),  # int64 words in int32 registers
    ],
)
def test_run_step_size(ops, size):
    assert run_step_size(ops) == size


def test_a_run_of_64_bit_values_loads_predicates_but_stores_none():
    ops = [("Lts", (I64,), B), ("Where", (B, I64, I64), I64)]
    assert VfChainRegApiCall.edge_rejection(ops, B, stores=False, reduces=False) is None
    assert VfChainRegApiCall.edge_rejection(ops, B, stores=True, reduces=False) == B64_MASK_STORE
    for ops in ([("Lts", (I32,), B)], [("Gts", (F16,), B)], [("LogicalNot", (B,), B)]):
        assert VfChainRegApiCall.edge_rejection(ops, B, stores=True, reduces=False) is None


def test_a_run_a_reduce_ends_loads_no_predicate_and_only_bools_are_asked_about():
    ops = [("Where", (B, F32, F32), F32)]
    assert VfChainRegApiCall.edge_rejection(ops, B, stores=False, reduces=True) == REDUCE_MASK_LOAD
    assert "int32" in VfChainRegApiCall.edge_rejection(ops, I32, stores=False, reduces=False)


def test_the_kept_cases_are_documented_gaps():
    made = "its bool result is read outside the run (by 'where') and " + B64_MASK_STORE
    read = "it reads the bool value 'lts_mask', made outside the run, and " + REDUCE_MASK_LOAD
    assert memory_call_reason(made) == memory_call_reason(read) == "gap: bool across a run edge"


def test_step_signatures_read_predicates_as_bool():
    steps = [
        ChainStep(name="s0", op="Lts", inputs=["x"], output="m"),
        ChainStep(name="s1", op="LogicalNot", inputs=["m"], output="n"),
        ChainStep(name="s2", op="Where", inputs=["k", "w", "w"], output="y"),
    ]
    tiles = {"x": I32, "m": dt.uint8, "n": dt.uint8, "k": dt.uint8, "w": I64, "y": I64}
    assert step_signatures(steps, tiles.__getitem__) == [
        ("Lts", (I32,), B),
        ("LogicalNot", (B,), B),
        ("Where", (B, I64, I64), I64),
    ]
    assert [bool_inputs(s) for s in steps] == [[], ["m"], ["k"]]
