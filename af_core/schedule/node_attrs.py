"""The typed attributes of the row roles' nodes: what a back end reads from a load, vector op, reduce or
store node.

Schedulers (``rowtiles``, templates) write these nodes' ``attrs`` as dicts, and the ImplGraph's JSON dump
shows the dicts as they are. A back end reads them through the classes here (``LoadRowsAttrs.of(node)``):
one definition of each role's attributes, read as attributes mypy checks, with defaults stated once. A node
missing an attribute its role needs, or holding one of the wrong kind, is a :class:`~af_core.errors.CodegenError`
naming the node, the attribute and the role, where the back end reads it -- not a ``KeyError`` inside the
back end, nor a ``.get`` default that generates something else.

:data:`ROLE_ATTRS` is the table of which class each role's nodes carry; a role missing there
(:attr:`~af_core.backend.Role.GATHER`, whose attributes depend on the gather mode and the template) reads
its dict directly. The vector chain's steps and reduce are :mod:`af_core.schedule.chain_attrs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

import attrs
import sympy

from af_core.backend import Role
from af_core.errors import CodegenError
from af_core.ir.sizes import Size
from af_core.schedule.impl_graph import ImplNode

_A = TypeVar("_A", bound="RoleAttrs")


def _size(value: object) -> bool:
    return isinstance(value, (int, sympy.Basic)) and not isinstance(value, bool)


def _text(value: object) -> bool:
    return isinstance(value, str)


def _names(value: object) -> bool:
    return isinstance(value, (tuple, list)) and all(isinstance(v, str) for v in value)


def _view(value: object) -> bool:
    return isinstance(value, Mapping)


def _scalar(value: object) -> bool:
    return isinstance(value, (int, float, sympy.Basic)) and not isinstance(value, bool)


#: the check of a size attribute (an int or a formula of the sizes) and what it asks for
_SIZE = (_size, "a size")


@attrs.frozen
class RoleAttrs:
    """Base of the classes of :data:`ROLE_ATTRS`: reading one from a node, checked."""

    #: the role whose nodes carry these attributes (named in errors)
    role: ClassVar[Role]
    #: attribute -> the check its value must pass, and what the check asks for (named in errors)
    kinds: ClassVar[Mapping[str, tuple[Any, str]]]

    @classmethod
    def of(cls: type[_A], node: ImplNode) -> _A:
        """The attributes of ``node`` as this class, defaults filled in; a missing required attribute or a
        value of the wrong kind is a CodegenError naming the node, the attribute and the role. Attributes
        the class does not name are left alone (a template may carry its own)."""
        given = node.attrs
        values: dict[str, Any] = {}
        for field in attrs.fields(cls):
            if field.name not in given:
                if field.default is attrs.NOTHING:
                    raise CodegenError(
                        f"node '{node.name}' ({node.op_type}) fills the role '{cls.role.value}' but has no "
                        f"attribute '{field.name}' (the role's nodes carry {', '.join(_field_names(cls))}: "
                        f"af_core.schedule.node_attrs.{cls.__name__})"
                    )
                continue
            value = given[field.name]
            check, wanted = cls.kinds[field.name]
            if not (value is None and field.default is None) and not check(value):
                raise CodegenError(
                    f"node '{node.name}' ({node.op_type}): attribute '{field.name}' of the role "
                    f"'{cls.role.value}' must be {wanted}, not {type(value).__name__} {value!r}"
                )
            values[field.name] = tuple(value) if isinstance(value, list) else value
        return cls(**values)


def _field_names(cls: type[RoleAttrs]) -> list[str]:
    return [f.name + ("" if f.default is attrs.NOTHING else "?") for f in attrs.fields(cls)]


@attrs.frozen
class LoadRowsAttrs(RoleAttrs):
    """:attr:`Role.LOAD_ROWS`: rows ``first_row`` .. ``first_row + rows - 1`` of a GM view into a tile whose
    rows are ``pitch`` elements apart."""

    role: ClassVar[Role] = Role.LOAD_ROWS
    kinds: ClassVar[Mapping[str, tuple[Any, str]]] = {
        "view": (_view, "a view (af_core.schedule.rowtiles.view_of)"),
        "first_row": _SIZE,
        "rows": _SIZE,
        "pitch": _SIZE,
    }

    #: the GM view (``view_of``'s dict: inner sizes and strides, outer sizes and strides, offset)
    view: Mapping[str, Any]
    first_row: Size
    rows: Size
    pitch: Size


@attrs.frozen
class VectorOpAttrs(RoleAttrs):
    """:attr:`Role.VECTOR_OP`: one op over ``count`` elements of its tiles."""

    role: ClassVar[Role] = Role.VECTOR_OP
    kinds: ClassVar[Mapping[str, tuple[Any, str]]] = {
        "count": _SIZE,
        "value": (_scalar, "a number"),
        "inplace": (_text, "a tile name"),
        "scratch": (_names, "tile names"),
    }

    count: Size
    #: the scalar operand of a tensor-scalar op (``Adds``' value)
    value: float | int | sympy.Basic | None = None
    #: the input tile whose storage the output reuses, if any
    inplace: str | None = None
    #: the scratch tiles the op's form asks for (``scratch_dtypes``), in order
    scratch: tuple[str, ...] = ()


@attrs.frozen
class ReduceAttrs(RoleAttrs):
    """:attr:`Role.REDUCE`: each of ``tiles`` tile rows is ``rows`` groups of ``group`` x ``inner`` values,
    reduced over ``group``; ``src_pitch`` / ``dst_pitch`` are the elements between tile rows."""

    role: ClassVar[Role] = Role.REDUCE
    kinds: ClassVar[Mapping[str, tuple[Any, str]]] = {
        "kind": (_text, "a reduce kind (Sum, Mean, Max, Min, Prod)"),
        "rows": _SIZE,
        "group": _SIZE,
        "inner": _SIZE,
        "tiles": _SIZE,
        "src_pitch": _SIZE,
        "dst_pitch": _SIZE,
    }

    kind: str
    rows: Size
    group: Size
    inner: Size
    tiles: Size = 1
    src_pitch: Size = 0
    dst_pitch: Size = 0


@attrs.frozen
class StoreRowsAttrs(RoleAttrs):
    """:attr:`Role.STORE_ROWS`: ``rows`` blocks of ``count`` elements, taken every ``pitch`` elements of the
    tile (one block when ``pitch`` is None), to GM from element ``gm_offset`` on."""

    role: ClassVar[Role] = Role.STORE_ROWS
    kinds: ClassVar[Mapping[str, tuple[Any, str]]] = {
        "gm_offset": _SIZE,
        "count": _SIZE,
        "rows": _SIZE,
        "pitch": _SIZE,
    }

    gm_offset: Size
    count: Size
    rows: Size = 1
    pitch: Size | None = None


#: The attributes each row role's nodes carry.
ROLE_ATTRS: dict[Role, type[RoleAttrs]] = {
    cls.role: cls for cls in (LoadRowsAttrs, VectorOpAttrs, ReduceAttrs, StoreRowsAttrs)
}
