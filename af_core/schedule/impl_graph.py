"""ImplGraph: the scheduled form of a case, the only thing codegen reads.

As in Autofuse, an ImplGraph carries three kinds of facts:

- axes: original and merged axes and their splits (TILE_OUT/TILE_IN for the
  UB tile loop, BLOCK_OUT/BLOCK_IN for the split across cores), with size
  expressions over graph sizes and tiling fields;
- tensors and buffers: GM tensors (kernel arguments and workspace slices) and
  UB buffers (queues and TBufs with their byte sizes);
- nodes: each names the ApiCall that renders it, its input/output tensors,
  its axis/repeats/strides and vectorized axes, and the loop it sits in.

A case may have several stages (SK-like); stages run in order with
``SyncAll()`` between dependent ones. Codegen does not make scheduling
decisions: everything it prints is decided here or in the tiling fields.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs
import sympy

from af_core import dtypes as dt
from af_core.ir.graph import Node
from af_core.ir.sizes import Expr, contiguous_strides, expr_text
from af_core.ops.opdef import ComputeType

AXIS_TYPES = ("ORIGINAL", "MERGED", "TILE_OUT", "TILE_IN", "BLOCK_OUT", "BLOCK_IN")


class Storage(enum.StrEnum):
    """Where an :class:`ImplTensor` lives; a member equals its text (``Storage.UB == "UB"``)."""

    #: a kernel argument in global memory
    GM = "GM"
    #: a slice of the kernel's workspace in global memory (``ws_offset``)
    WORKSPACE = "WORKSPACE"
    #: a view of a unified-buffer allocation (``buffer``)
    UB = "UB"


#: the storage kinds' texts
LOCATIONS = ("GM", "UB", "WORKSPACE")


def _storage(value: Storage | str) -> Storage:
    """A storage kind from its member or its text; another value is kept for the tensor to refuse by name."""
    try:
        return Storage(value)
    except ValueError:
        return value  # type: ignore[return-value]


@attrs.frozen
class ImplAxis:
    """An axis of a stage: ``type`` is one of :data:`AXIS_TYPES`, ``from_`` the axes it splits or merges.

    A stage iterates over its MERGED (or ORIGINAL) axis; TILE_OUT / TILE_IN
    split it into tiles (number of tiles, rows per tile), BLOCK_OUT / BLOCK_IN
    split those tiles (or, without a tile loop, the merged axis) across cores.
    ``size`` is a formula over graph sizes and tiling fields.
    """

    name: str
    type: str
    size: Expr
    from_: tuple[str, ...] = ()

    def __attrs_post_init__(self) -> None:
        if self.type not in AXIS_TYPES:
            raise ValueError(f"axis '{self.name}': type {self.type} not in {AXIS_TYPES}")


@attrs.frozen
class ImplTensor:
    """A tensor codegen can address: a GM argument, a workspace slice or a UB buffer view."""

    name: str
    dtype: dt.DType
    location: Storage = attrs.field(converter=_storage)
    sizes: tuple[Expr, ...] = ()
    strides: tuple[Expr, ...] = ()
    gm_arg: str | None = None  # kernel parameter holding the base address (GM)
    ws_offset: Expr | None = None  # byte offset into the workspace (WORKSPACE)
    buffer: str | None = None  # UB buffer providing the storage (UB)

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.location, Storage):
            raise ValueError(f"tensor '{self.name}': location {self.location} not in {LOCATIONS}")


#: A queue bound from VECIN to VECOUT (``TQueBind<VECIN, VECOUT>``): a tile MTE2 fills and MTE3 stores with no
#: vector call reading it between, whose EnQue / DeQue order MTE2 -> MTE3 (kernel_event.h GetQueEvt, UB to UB).
VECIN_VECOUT = "VECIN_VECOUT"
#: The pipes a UB buffer's position sits between, (producer, consumer): a VECIN buffer is filled by MTE2 and
#: read by V, a VECOUT buffer filled by V and read by MTE3. A queue of the position carries the flags of both
#: directions itself (EnQue / DeQue: producer -> consumer; FreeTensor / AllocTensor: consumer -> producer, as
#: the official TQue does); codegen gives a TBuf of the position the same two flag pairs. A VECCALC buffer is
#: V's alone: a call reading or writing it on another pipe owes its own flags.
POSITION_PIPES: dict[str, tuple[str, str]] = {
    "VECIN": ("MTE2", "V"),
    "VECOUT": ("V", "MTE3"),
    VECIN_VECOUT: ("MTE2", "MTE3"),
}
#: Event ids per HardEvent a TPipe hands out (QUE_MAX_EVENT): a queue buffer holds one from its FreeTensor
#: to the AllocTensor that reuses it, so the queues of one position hold at most this many buffers together.
EVENT_IDS = 8


@attrs.frozen
class Buffer:
    """A UB allocation: a queue (``TQue``) or a scratch buffer (``TBuf``)."""

    name: str
    kind: str  # "que" | "tbuf"
    position: str  # VECIN | VECOUT | VECCALC | VECIN_VECOUT (a queue bound from VECIN to VECOUT)
    bytes: Expr  # bytes per buffer, 32-byte aligned by the formula
    num: int = 1  # buffers in a queue (2 = double buffering)

    @property
    def total(self) -> Expr:
        return self.bytes * self.num


@attrs.define
class ImplNode:
    """One call the kernel makes: the ApiCall registered as ``api_call`` renders it.

    ``inputs`` / ``outputs`` name ImplGraph tensors; ``loop_axis`` is the
    stage's TILE_OUT axis (or its BLOCK_IN axis when there is no tile loop) or
    None for the stage prologue; ``attrs`` is what the ApiCall reads (formulas
    may use the ``<loop_axis>_start`` / ``<loop_axis>_actual`` symbols). A node
    with ``api_call`` None is documentation only (e.g. fused into another).
    """

    name: str
    op_type: str
    api_call: str | None  # ApiCall registry name; None when fused into another node
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    axis: tuple[str, ...] = ()
    repeats: tuple[Expr, ...] = ()
    strides: tuple[Expr, ...] = ()
    vectorized_axis: tuple[str, ...] = ()
    loop_axis: str | None = None  # the loop the call sits in; None = stage prologue
    attrs: dict[str, Any] = attrs.Factory(dict)
    fused_into: str | None = None


@attrs.define
class Stage:
    """One schedule group: its axes, its split and the nodes it runs per tile."""

    name: str
    axes: list[ImplAxis] = attrs.Factory(list)
    nodes: list[ImplNode] = attrs.Factory(list)
    buffers: list[Buffer] = attrs.Factory(list)
    used_cores: str = "used_cores"  # tiling field: cores that take part in this stage
    sync_before: bool = False  # emit SyncAll() before this stage

    def axis(self, type_: str) -> ImplAxis | None:
        return next((a for a in self.axes if a.type == type_), None)

    def node(self, name: str) -> ImplNode:
        return next(n for n in self.nodes if n.name == name)


@attrs.define
class ImplGraph:
    name: str
    template: str
    stages: list[Stage] = attrs.Factory(list)
    tensors: dict[str, ImplTensor] = attrs.Factory(dict)
    meta: dict[str, Any] = attrs.Factory(dict)

    def tensor(self, name: str) -> ImplTensor:
        return self.tensors[name]

    def add_tensor(self, tensor: ImplTensor) -> ImplTensor:
        if tensor.name in self.tensors and self.tensors[tensor.name] != tensor:
            raise ValueError(f"tensor '{tensor.name}' defined twice with different facts")
        self.tensors[tensor.name] = tensor
        return tensor

    def add_gm(self, node: Node) -> str:
        """Declare a graph's Data or Output node as a GM kernel argument named after it; returns the name.

        A Data tensor keeps its strides (a view of the caller's buffer, stride 0
        where it is broadcast); an Output is written contiguous.
        """
        sizes = tuple(node.y.size)
        output = node.op.compute_type == ComputeType.OUTPUT
        strides = tuple(contiguous_strides(list(sizes))) if output else tuple(node.y.strides)
        self.add_tensor(ImplTensor(node.name, node.y.dtype, Storage.GM, sizes, strides, gm_arg=node.name))
        return node.name

    def ub_bytes(self) -> Expr:
        """UB bytes all stages allocate at once (stages reuse UB via TPipe::Reset)."""
        per_stage = [sum((b.total for b in s.buffers), sympy.Integer(0)) for s in self.stages]
        return (
            sympy.Max(*per_stage) if len(per_stage) > 1 else (per_stage[0] if per_stage else sympy.Integer(0))
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (for the proto and for humans)."""

        def text(e: Expr | None) -> str | None:
            return None if e is None else _text(e)

        str = _text  # noqa: A001 - expressions print through the cache

        return {
            "name": self.name,
            "template": self.template,
            "meta": _jsonable(self.meta),
            "tensors": {
                n: {
                    "dtype": t.dtype.name,
                    "location": t.location,
                    "sizes": [str(s) for s in t.sizes],
                    "strides": [str(s) for s in t.strides],
                    "gm_arg": t.gm_arg,
                    "ws_offset": text(t.ws_offset),
                    "buffer": t.buffer,
                }
                for n, t in sorted(self.tensors.items())
            },
            "stages": [
                {
                    "name": s.name,
                    "used_cores": s.used_cores,
                    "sync_before": s.sync_before,
                    "axes": [
                        {"name": a.name, "type": a.type, "size": str(a.size), "from": list(a.from_)}
                        for a in s.axes
                    ],
                    "buffers": [
                        {
                            "name": b.name,
                            "kind": b.kind,
                            "position": b.position,
                            "bytes": str(b.bytes),
                            "num": b.num,
                        }
                        for b in s.buffers
                    ],
                    "nodes": [
                        {
                            "name": n.name,
                            "type": n.op_type,
                            "api_call": n.api_call,
                            "inputs": list(n.inputs),
                            "outputs": list(n.outputs),
                            "axis": list(n.axis),
                            "repeats": [str(r) for r in n.repeats],
                            "strides": [str(r) for r in n.strides],
                            "vectorized_axis": list(n.vectorized_axis),
                            "loop_axis": n.loop_axis,
                            "fused_into": n.fused_into,
                            "attrs": _jsonable(n.attrs),
                        }
                        for n in s.nodes
                    ],
                }
                for s in self.stages
            ],
        }


def _text(expr: Any) -> str:
    """Text of an expression (``str``; printing sympy is slow and the same expressions recur)."""
    return expr_text(expr)


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, dt.DType):
        return value.name
    if attrs.has(type(value)):
        # typed node attributes (a chain's steps and reduce): their fields, an optional one at None left out
        return _jsonable(
            {
                f.name: getattr(value, f.name)
                for f in attrs.fields(type(value))
                if not (f.default is None and getattr(value, f.name) is None)
            }
        )
    return _text(value)
