"""Ops the core owns: graph boundaries, Broadcast, IndirectLoad and reductions.

Elementwise math lives in the ``af-elementwise`` plugin; these ops are the
structure every template has to understand, so they ship with the core.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from af_core import dtypes as dt
from af_core.errors import AscirError, DTypeError, ShapeError
from af_core.ops.opdef import (
    AttrSpec,
    ComputeType,
    InferContext,
    OpDef,
    OutSpec,
    RefContext,
    require_dtype_in,
    same_as_input,
)

if TYPE_CHECKING:
    import numpy as np
    from sympy import Expr

# sympy and numpy are imported inside the rules that use them, never at import: building the
# registry (``afc plugins`` lists it) loads these definitions and must stay light.

# ---------------------------------------------------------------------------
# boundaries


def _infer_data(ctx: InferContext) -> OutSpec:
    declared = ctx.declared
    if declared.dtype is None:
        ctx.fail("data-dtype", "a Data node must declare y.dtype", port="y", error=DTypeError)
    if declared.sizes is None:
        ctx.fail("data-size", "a Data node must declare y.size", port="y", error=ShapeError)
    return OutSpec(declared.dtype, declared.sizes)


def _ref_identity(ctx: RefContext) -> np.ndarray:
    return next(iter(ctx.inputs.values()))


def _infer_load(ctx: InferContext) -> OutSpec:
    import sympy

    offset = ctx.attrs.get("offset", 0)
    if offset is not None and sympy.sympify(offset) != 0:
        ctx.fail(
            "load-offset",
            "only offset 0 is supported; slice with the Data node's size and strides instead",
            error=ShapeError,
            offset=offset,
        )
    return same_as_input("x")(ctx)


DATA = OpDef(
    name="Data",
    inputs=(),
    compute_type=ComputeType.DATA,
    attrs=(AttrSpec("index", "int", None, "position of the tensor among the kernel inputs"),),
    infer=_infer_data,
    doc="A kernel input in global memory; y.strides give its layout (0 = broadcast).",
)

OUTPUT = OpDef(
    name="Output",
    inputs=("x",),
    compute_type=ComputeType.OUTPUT,
    attrs=(AttrSpec("index", "int", None, "position of the tensor among the kernel outputs"),),
    infer=same_as_input("x"),
    reference=_ref_identity,
    doc="A kernel output in global memory.",
)

LOAD = OpDef(
    name="Load",
    inputs=("x",),
    compute_type=ComputeType.LOAD,
    attrs=(AttrSpec("offset", "expr", 0, "element offset into the Data tensor"),),
    infer=_infer_load,
    reference=_ref_identity,
    doc="Bring a Data tensor into the fused computation.",
)

STORE = OpDef(
    name="Store",
    inputs=("x",),
    compute_type=ComputeType.STORE,
    attrs=(AttrSpec("offset", "expr", 0, "element offset into the Output tensor"),),
    infer=_infer_load,
    reference=_ref_identity,
    doc="Write a computed tensor towards an Output.",
)

WORKSPACE = OpDef(
    name="Workspace",
    inputs=("x",),
    compute_type=ComputeType.WORKSPACE,
    infer=same_as_input("x"),
    reference=_ref_identity,
    doc="A global-memory buffer joining two stages (SK-like); a value-preserving boundary.",
)

# ---------------------------------------------------------------------------
# Broadcast


def _infer_broadcast(ctx: InferContext) -> OutSpec:
    src = ctx.input("x")
    out = ctx.declared.sizes
    if out is None:
        ctx.fail("broadcast-size", "a Broadcast node must declare y.size", port="y", error=ShapeError)
    if src.sizes is not None:
        if len(src.sizes) != len(out):
            ctx.fail(
                "broadcast-rank",
                f"input rank {len(src.sizes)} differs from output rank {len(out)}",
                port="x",
                error=ShapeError,
            )
        for axis, (a, b) in enumerate(zip(src.sizes, out)):
            if a != b and a != 1:
                ctx.fail(
                    "broadcast-from-one",
                    f"axis {axis} broadcasts from size {a}; only size 1 can broadcast",
                    port="x",
                    error=ShapeError,
                    axis=axis,
                    input_size=a,
                    output_size=b,
                )
    return OutSpec(src.dtype, out)


def _ref_broadcast(ctx: RefContext) -> np.ndarray:
    import numpy as np

    return np.broadcast_to(ctx.inputs["x"], ctx.out_shape)


BROADCAST = OpDef(
    name="Broadcast",
    inputs=("x",),
    compute_type=ComputeType.BROADCAST,
    infer=_infer_broadcast,
    reference=_ref_broadcast,
    doc="Repeat size-1 axes of x up to the declared y.size.",
)

# ---------------------------------------------------------------------------
# IndirectLoad


def normalize_dim(dim: int, rank: int) -> int:
    return dim + rank if dim < 0 else dim


def _infer_indirect_load(ctx: InferContext) -> OutSpec:
    import sympy

    data, index = ctx.input("x1"), ctx.input("x2")
    require_dtype_in(ctx, "x1", dt.INDIRECT_LOAD_INPUT, "indirect-load-input-dtype")
    if index.dtype is not None and index.dtype not in dt.INDEX:
        kind = "float" if index.dtype.is_float else ("bool" if index.dtype.is_bool else "integer")
        ctx.fail(
            "index-dtype",
            f"index dtype {index.dtype} ({kind}) is not int32 or int64",
            port="x2",
            error=DTypeError,
        )
    if data.sizes is None or index.sizes is None:
        return OutSpec(data.dtype, index.sizes)
    rank = len(data.sizes)
    if len(index.sizes) != rank:
        ctx.fail(
            "indirect-load-rank",
            f"input rank {rank} differs from index rank {len(index.sizes)}",
            port="x2",
            error=ShapeError,
        )
    dim = ctx.attrs.get("dim")
    if dim is None:
        ctx.fail("indirect-load-dim", "attribute 'dim' is required", error=ShapeError)
    if not -rank <= dim < rank:
        ctx.fail(
            "indirect-load-dim",
            f"dim {dim} is out of range for rank {rank} (allowed [{-rank}, {rank - 1}])",
            error=ShapeError,
            dim=dim,
            rank=rank,
        )
    dim = normalize_dim(dim, rank)
    for axis in range(rank):
        if axis == dim:
            continue
        diff = sympy.sympify(data.sizes[axis] - index.sizes[axis])
        if diff.is_negative or (diff.is_number and diff < 0):
            ctx.fail(
                "index-size-le-input",
                f"index size {index.sizes[axis]} exceeds input size {data.sizes[axis]} "
                f"on non-dim axis {axis}",
                port="x2",
                error=ShapeError,
                axis=axis,
            )
    return OutSpec(data.dtype, index.sizes)


def _ref_indirect_load(ctx: RefContext) -> np.ndarray:
    import numpy as np

    x = ctx.inputs["x1"]
    given = ctx.inputs["x2"].astype(np.int64)
    rank = x.ndim
    dim = normalize_dim(int(ctx.attrs["dim"]), rank)
    extent = x.shape[dim]
    index, low = given, 0
    if ctx.attrs.get("need_check_negative"):
        index, low = np.where(given < 0, given + extent, given), -extent
    valid = (index >= 0) & (index < extent)
    if not ctx.attrs.get("need_check_bound") and not valid.all():
        bad = given[~valid].ravel()[:4].tolist()  # the values given, not the ones negatives shift to
        raise AscirError(
            "index-in-range",
            f"index values {bad} fall outside [{low}, {extent}) and need_check_bound is off; "
            "the kernel's behaviour is undefined",
            node=ctx.node,
            port="x2",
        )
    region = tuple(slice(0, index.shape[a]) if a != dim else slice(None) for a in range(rank))
    picked = np.take_along_axis(x[region], np.where(valid, index, 0), axis=dim)
    zero = np.zeros((), dtype=picked.dtype)
    return np.where(valid, picked, zero)


INDIRECT_LOAD = OpDef(
    name="IndirectLoad",
    inputs=("x1", "x2"),
    compute_type=ComputeType.INDIRECT_LOAD,
    attrs=(
        AttrSpec("dim", "int", None, "the gathered axis; negative counts from the end"),
        AttrSpec("need_check_negative", "bool", False, "map index < 0 to index + input.size(dim)"),
        AttrSpec("need_check_bound", "bool", False, "out-of-range index -> 0 without a read"),
    ),
    infer=_infer_indirect_load,
    reference=_ref_indirect_load,
    doc="output[c] = input[c with c[dim] = index[c]] (torch.gather semantics).",
)

# ---------------------------------------------------------------------------
# reductions


def reduced_axes(in_sizes: Sequence[Expr], out_sizes: Sequence[Expr]) -> tuple[int, ...]:
    """Axes a reduce node reduces: input size != 1 and output size == 1."""
    return tuple(axis for axis, (a, b) in enumerate(zip(in_sizes, out_sizes)) if b == 1 and a != 1)


def loop_axes(in_sizes: Sequence[Expr], out_sizes: Sequence[Expr]) -> tuple[int, ...]:
    """The axes a kernel loops a reduce over: the reduced ones, or, when every axis the reduce names
    has size 1 (an embedding bag of one row), those size-1 axes, over which the reduce is the identity.
    Without this a template would fall back to another axis and reduce what the graph keeps. Never
    empty on a validated graph: a reduce with no size-1 output axis is refused (rule ``reduce-axes``)."""
    axes = reduced_axes(in_sizes, out_sizes)
    if axes:
        return axes
    return tuple(axis for axis, (a, b) in enumerate(zip(in_sizes, out_sizes)) if b == 1 and a == 1)


def _infer_reduce(ctx: InferContext) -> OutSpec:
    src = ctx.input("x")
    out = ctx.declared.sizes
    require_dtype_in(ctx, "x", dt.FLOATS + dt.INTS, "reduce-dtype")
    if out is None:
        ctx.fail(
            "reduce-size",
            "a reduce node must declare y.size (1 on reduced axes, the input size elsewhere)",
            port="y",
            error=ShapeError,
        )
    if src.sizes is not None:
        if len(out) != len(src.sizes):
            ctx.fail(
                "reduce-rank",
                f"output rank {len(out)} differs from input rank {len(src.sizes)} (reduce keeps dims)",
                port="y",
                error=ShapeError,
            )
        for axis, (a, b) in enumerate(zip(src.sizes, out)):
            if b != a and b != 1:
                ctx.fail(
                    "reduce-axis-size",
                    f"axis {axis}: output size {b} must be the input size {a} or 1",
                    port="y",
                    error=ShapeError,
                    axis=axis,
                )
        if not any(b == 1 for b in out):
            # Every axis kept at its size: nothing to reduce. Refused rather than guessed: a kernel has no
            # axis to loop the reduce over, and torch reads an empty dim list as "every axis".
            ctx.fail(
                "reduce-axes",
                "a reduce must reduce at least one axis: declare y.size 1 on the reduced axes",
                port="y",
                error=ShapeError,
            )
    return OutSpec(src.dtype, out)


def _reduce_ref(fn: Callable[..., np.ndarray]) -> Callable[[RefContext], np.ndarray]:
    def ref(ctx: RefContext) -> np.ndarray:
        import numpy as np

        x = ctx.inputs["x"]
        axes = tuple(a for a, n in enumerate(ctx.out_shape) if n == 1 and x.shape[a] != 1)
        dtype = ctx.in_dtypes["x"]
        if dtype.is_float:
            work = x.astype(np.float32)
        else:
            work = x.astype(np.int64)
        return fn(work, axes)

    return ref


def _numpy_reduction(name: str) -> Callable[[np.ndarray, tuple[int, ...]], np.ndarray]:
    """``numpy.<name>`` over the given axes, dims kept (numpy imported on the first call)."""

    def reduce(work: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        import numpy as np

        return getattr(np, name)(work, axis=axes, keepdims=True)

    return reduce


def _mean(work: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    import numpy as np

    count = int(np.prod([work.shape[a] for a in axes])) if axes else 1
    if work.dtype.kind == "f":
        return np.sum(work, axis=axes, keepdims=True) * np.float32(1.0 / count)
    return np.sum(work, axis=axes, keepdims=True) // count


def _reduce_op(name: str, fn: Callable[..., np.ndarray], doc: str) -> OpDef:
    return OpDef(
        name=name,
        inputs=("x",),
        compute_type=ComputeType.REDUCE,
        infer=_infer_reduce,
        reference=_reduce_ref(fn),
        doc=doc + " Reduced axes are those where y.size is 1 and x.size is not (dims kept).",
    )


SUM = _reduce_op("Sum", _numpy_reduction("sum"), "Sum over axes.")
MAX = _reduce_op("Max", _numpy_reduction("max"), "Maximum over axes.")
MIN = _reduce_op("Min", _numpy_reduction("min"), "Minimum over axes.")
MEAN = _reduce_op("Mean", _mean, "Mean over axes (float accumulation in float32).")

CORE_OPS = (DATA, OUTPUT, LOAD, STORE, WORKSPACE, BROADCAST, INDIRECT_LOAD, SUM, MAX, MIN, MEAN)
