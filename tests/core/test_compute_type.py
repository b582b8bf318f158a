"""Compute types and storage kinds are enums: texts become members, an unknown one names the op or tensor."""

from __future__ import annotations

import pytest

from af_core.ops.opdef import COMPUTE_TYPES, ComputeType, OpDef
from af_core.registry import get_registry


def test_a_text_becomes_its_member_and_still_equals_the_text():
    op = OpDef("MyAbs", ("x",), "elementwise")
    assert op.compute_type is ComputeType.ELEMENTWISE
    assert op.compute_type == "elementwise" and str(op.compute_type) == "elementwise"
    assert OpDef("MyAbs", ("x",), ComputeType.ELEMENTWISE) == op


def test_an_unknown_compute_type_is_refused_naming_the_op_and_the_known_ones():
    with pytest.raises(ValueError, match=r"op 'MyAbs': compute_type 'elementwize' not in \('data', 'load'"):
        OpDef("MyAbs", ("x",), "elementwize")


def test_the_texts_are_the_members_values_in_order():
    assert COMPUTE_TYPES == tuple(c.value for c in ComputeType)
    assert len(set(COMPUTE_TYPES)) == len(ComputeType) == 9


def test_every_registered_op_holds_a_member():
    for entry in get_registry().entries("op"):
        assert isinstance(entry.value.compute_type, ComputeType), entry.name


def test_a_storage_text_becomes_its_member_and_an_unknown_one_names_the_tensor():
    from af_core import dtypes as dt
    from af_core.schedule.impl_graph import LOCATIONS, ImplTensor, Storage

    tile = ImplTensor("t", dt.float32, "UB", buffer="t")
    assert tile.location is Storage.UB and tile.location == "UB"
    assert set(LOCATIONS) == {s.value for s in Storage}
    with pytest.raises(ValueError, match=r"tensor 't': location L1 not in \('GM', 'UB', 'WORKSPACE'\)"):
        ImplTensor("t", dt.float32, "L1")
