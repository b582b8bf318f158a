"""The row roles' node attributes are read through one class each (af_core.schedule.node_attrs): defaults
stated once, and a missing or malformed attribute is an error naming the node, the attribute and the role
where a back end reads it."""

from __future__ import annotations

import pytest
import sympy

from af_core.backend import Role
from af_core.errors import CodegenError
from af_core.schedule.impl_graph import ImplNode
from af_core.schedule.node_attrs import (
    ROLE_ATTRS,
    LoadRowsAttrs,
    ReduceAttrs,
    StoreRowsAttrs,
    VectorOpAttrs,
)


def node(op_type: str = "Add", **attrs) -> ImplNode:
    return ImplNode("n0", op_type, "SomeCall", ("a",), ("b",), loop_axis="OT", attrs=attrs)


def test_the_table_names_each_row_role_once():
    assert set(ROLE_ATTRS) == {Role.LOAD_ROWS, Role.VECTOR_OP, Role.REDUCE, Role.STORE_ROWS}
    assert all(cls.role is role for role, cls in ROLE_ATTRS.items())


def test_defaults_are_filled_and_attributes_of_a_template_are_left_alone():
    got = ReduceAttrs.of(node("Sum", kind="Sum", rows=4, group=sympy.Symbol("g"), inner=1, release="x"))
    assert (got.tiles, got.src_pitch, got.dst_pitch) == (1, 0, 0)
    assert got.group == sympy.Symbol("g")
    store = StoreRowsAttrs.of(node("Store", gm_offset=0, count=8))
    assert (store.rows, store.pitch) == (1, None)
    vec = VectorOpAttrs.of(node(count=64, scratch=["t0", "t1"]))
    assert vec.scratch == ("t0", "t1") and vec.value is None and vec.inplace is None


def test_a_missing_attribute_names_the_node_the_attribute_the_role_and_the_class():
    with pytest.raises(CodegenError) as info:
        LoadRowsAttrs.of(node("Load", view={}, first_row=0, pitch=8))
    text = str(info.value)
    for part in (
        "node 'n0' (Load)",
        "'load_rows'",
        "no attribute 'rows'",
        "view, first_row, rows, pitch",
        "LoadRowsAttrs",
    ):
        assert part in text


@pytest.mark.parametrize(
    ("cls", "attrs", "name", "wanted"),
    [
        (LoadRowsAttrs, dict(view=[1, 2], first_row=0, rows=1, pitch=8), "view", "a view"),
        (VectorOpAttrs, dict(count="64"), "count", "a size"),
        (VectorOpAttrs, dict(count=64, value="2.0"), "value", "a number"),
        (VectorOpAttrs, dict(count=64, scratch=[1]), "scratch", "tile names"),
        (ReduceAttrs, dict(kind=3, rows=1, group=2, inner=1), "kind", "a reduce kind"),
        (StoreRowsAttrs, dict(gm_offset=0, count=True), "count", "a size"),
    ],
)
def test_a_value_of_the_wrong_kind_is_refused_with_what_was_wanted(cls, attrs, name, wanted):
    with pytest.raises(
        CodegenError, match=rf"attribute '{name}' of the role '{cls.role.value}' must be {wanted}"
    ):
        cls.of(node(**attrs))
