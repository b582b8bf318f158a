"""What an op is: ports, IR attributes, dtype and shape rules, numpy semantics.

Ops are registered by plugins (``af_register_ops``); the core registers the
structural ops itself. An :class:`OpDef` carries everything the rest of the
pipeline needs to know about an op without importing the plugin that made it:
validation calls ``infer``, the reference interpreter calls ``reference``, and
SIMT codegen pastes ``scalar_cpp`` into a lane.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NoReturn

import attrs

from af_core import dtypes as dt
from af_core.errors import AscirError, DTypeError, ShapeError

if TYPE_CHECKING:
    import numpy as np
    from sympy import Expr

# Nothing here imports numpy or sympy: op definitions are built when the registry is (``afc
# plugins`` lists it), and their rules import what they compute with when they run.


class ComputeType(enum.StrEnum):
    """What kind of node an op makes; templates decide what they can fuse by these.

    A ``StrEnum``: a member equals its text (``ComputeType.DATA == "data"``), so graph files and plugins
    that give the text keep working, while the core compares with members (a misspelt member is an
    AttributeError at import, a misspelt string compared unequal silently).
    """

    DATA = "data"
    LOAD = "load"
    STORE = "store"
    OUTPUT = "output"
    WORKSPACE = "workspace"
    BROADCAST = "broadcast"
    ELEMENTWISE = "elementwise"
    REDUCE = "reduce"
    INDIRECT_LOAD = "indirect_load"


#: The compute types' texts, in declaration order.
COMPUTE_TYPES = tuple(c.value for c in ComputeType)


def _compute_type(value: ComputeType | str) -> ComputeType:
    """A compute type from its member or its text; another value is kept for :class:`OpDef` to refuse
    naming the op."""
    try:
        return ComputeType(value)
    except ValueError:
        return value  # type: ignore[return-value]


ATTR_KINDS = ("int", "bool", "float", "expr", "int_list")

#: Op roles the core itself relies on; an op declares them in :attr:`OpDef.roles`, and the core
#: finds the op by role (:func:`af_core.registry.op_with_role`), never by its name.
#: ``cast``: one input ``x``; converts it to the dtype the node declares (attr ``dtype``).
CAST = "cast"
OP_ROLES = (CAST,)


@attrs.frozen
class AttrSpec:
    """One IR attribute (``node.attr.ir_attr.<name>``)."""

    name: str
    kind: str
    _default: Any = None
    doc: str = ""

    def __attrs_post_init__(self) -> None:
        if self.kind not in ATTR_KINDS:
            raise ValueError(f"attr '{self.name}': kind must be one of {ATTR_KINDS}")

    @property
    def default(self) -> Any:
        """The value of an unset attribute; an integer ``expr`` default reads as a sympy Integer.

        Definitions may state it as a plain ``int`` so that building them imports no sympy.
        """
        if self.kind == "expr" and type(self._default) is int:
            import sympy

            return sympy.Integer(self._default)
        return self._default


@attrs.frozen
class PortInfo:
    """What validation knows about the tensor on a port."""

    dtype: dt.DType | None
    sizes: tuple[Expr, ...] | None
    strides: tuple[Expr, ...] | None = None


@attrs.define
class InferContext:
    """Arguments of :attr:`OpDef.infer`; ``fail`` raises a located AscirError."""

    node: str
    op: OpDef
    inputs: dict[str, PortInfo]
    attrs: dict[str, Any]
    declared: PortInfo

    def fail(
        self,
        rule: str,
        detail: str,
        *,
        port: str | None = None,
        error: type[AscirError] = AscirError,
        **values: Any,
    ) -> NoReturn:
        raise error(rule, detail, node=self.node, port=port, values=values)

    def input(self, port: str) -> PortInfo:
        return self.inputs[port]


@attrs.frozen
class OutSpec:
    """Result of shape/dtype inference for the op's single output ``y``."""

    dtype: dt.DType | None
    sizes: tuple[Expr, ...] | None


@attrs.define
class RefContext:
    """Arguments of :attr:`OpDef.reference`."""

    node: str
    inputs: dict[str, np.ndarray]
    in_dtypes: dict[str, dt.DType]
    attrs: dict[str, Any]
    out_dtype: dt.DType
    out_shape: tuple[int, ...]


InferFn = Callable[[InferContext], OutSpec]
ReferenceFn = Callable[[RefContext], "np.ndarray"]


@attrs.frozen
class OpDef:
    """An op type.

    ``scalar_cpp`` is a C++ expression template for one element, with
    ``{x}`` / ``{x1}`` / ``{x2}`` / ``{x3}`` for the inputs (already converted
    to the compute type ``{C}``), ``{value}`` for a scalar attribute and
    ``{T}`` for the output element type. SIMT lanes and scalar fallbacks use
    it; ``cpp_sources`` names the API sources (helper functions) it needs.

    ``roles`` lists the :data:`OP_ROLES` the op fills. ``scalar_form`` names
    the tensor-scalar op of a binary op (``x1 op x2`` with a constant ``x2``),
    which front ends use for a constant operand. ``data_input`` is the input
    port whose tensor the output's data comes from (its layout is what the
    selection measures look at); by default ``x``, else the first input.
    """

    name: str
    inputs: tuple[str, ...]
    compute_type: ComputeType = attrs.field(converter=_compute_type)
    attrs: tuple[AttrSpec, ...] = ()
    infer: InferFn | None = None
    reference: ReferenceFn | None = None
    scalar_cpp: str | None = None
    cpp_sources: tuple[str, ...] = ()
    doc: str = ""
    distribution: str = ""
    roles: frozenset[str] = frozenset()
    scalar_form: str | None = None
    data_input: str | None = None

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.compute_type, ComputeType):
            raise ValueError(f"op '{self.name}': compute_type '{self.compute_type}' not in {COMPUTE_TYPES}")
        unknown = sorted(set(self.roles) - set(OP_ROLES))
        if unknown:
            raise ValueError(f"op '{self.name}': unknown role(s) {unknown} (known: {OP_ROLES})")
        if self.data_input is not None and self.data_input not in self.inputs:
            raise ValueError(f"op '{self.name}': data_input '{self.data_input}' is not one of its inputs")

    @property
    def data_port(self) -> str:
        """The input port the output's data comes from (see ``data_input``)."""
        if self.data_input is not None:
            return self.data_input
        return "x" if "x" in self.inputs else self.inputs[0]

    @property
    def attr_specs(self) -> Mapping[str, AttrSpec]:
        return {a.name: a for a in self.attrs}

    def with_distribution(self, dist: str) -> OpDef:
        return attrs.evolve(self, distribution=dist)


# ---------------------------------------------------------------------------
# Inference building blocks shared by the core ops and plugins.


def same_as_input(port: str = "x") -> InferFn:
    """Output keeps dtype and sizes of one input (Load, Store, Output, unary ops)."""

    def infer(ctx: InferContext) -> OutSpec:
        src = ctx.input(port)
        return OutSpec(src.dtype, src.sizes)

    return infer


def broadcast_sizes(ctx: InferContext, ports: tuple[str, ...]) -> tuple[Expr, ...] | None:
    """Element-wise shape rule: equal ranks, equal sizes (no implicit broadcast).

    ASCIR makes broadcasts explicit with a Broadcast node; an elementwise op
    whose inputs disagree is an error that names both ports.
    """
    first = ports[0]
    sizes = ctx.input(first).sizes
    for port in ports[1:]:
        other = ctx.input(port).sizes
        if sizes is None or other is None:
            continue
        if len(other) != len(sizes):
            ctx.fail(
                "elementwise-rank",
                f"inputs '{first}' and '{port}' have ranks {len(sizes)} and {len(other)}",
                port=port,
                error=ShapeError,
            )
        for axis, (a, b) in enumerate(zip(sizes, other)):
            if a != b:
                ctx.fail(
                    "elementwise-shape",
                    f"inputs '{first}' and '{port}' differ on axis {axis} ({a} vs {b}); "
                    "insert a Broadcast node",
                    port=port,
                    error=ShapeError,
                )
    return sizes


def require_same_dtype(ctx: InferContext, ports: tuple[str, ...]) -> dt.DType | None:
    dtype = ctx.input(ports[0]).dtype
    for port in ports[1:]:
        other = ctx.input(port).dtype
        if dtype is not None and other is not None and other != dtype:
            ctx.fail(
                "elementwise-dtype",
                f"inputs '{ports[0]}' ({dtype}) and '{port}' ({other}) must have the same dtype",
                port=port,
                error=DTypeError,
            )
    return dtype


def require_dtype_in(ctx: InferContext, port: str, allowed: tuple[dt.DType, ...], rule: str) -> None:
    dtype = ctx.input(port).dtype
    if dtype is not None and dtype not in allowed:
        names = ", ".join(d.name for d in allowed)
        ctx.fail(rule, f"dtype {dtype} is not supported (allowed: {names})", port=port, error=DTypeError)
