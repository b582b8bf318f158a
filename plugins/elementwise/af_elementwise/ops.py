"""Elementwise op definitions: semantics, dtype rules and scalar C++ forms.

Numerics contract (shared with the kernels, see docs/architecture.md):
float16 and bfloat16 inputs are computed in float32 and the result is rounded
to the op's dtype after every op (round to nearest even); integer ops wrap
around. The scalar operand of Adds/Subs/Muls/Maxs/Mins is a float32 for
float data (``np.float32(value)``) and ``int(value)`` modulo 2^bits for
integer data. Exp2 is exact at integer inputs on every path. Casts round to
nearest even between floats and from int to float, truncate float -> int and
keep the low bits int -> int (values outside the target's range are outside
the contract). The scalar C++ expressions (``scalar_cpp``) follow the same
contract so a SIMT lane reproduces the reference element for element, up to
the last-bit differences of transcendental functions.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from af_core import dtypes as dt
from af_core.ops.opdef import (
    AttrSpec,
    InferContext,
    OpDef,
    OutSpec,
    RefContext,
    broadcast_sizes,
    require_dtype_in,
    require_same_dtype,
)

SCALAR_SOURCE = "af_scalar_ops"

NUMERIC = dt.FLOATS + dt.INTS
SIGNED = dt.FLOATS + (dt.int8, dt.int16, dt.int32, dt.int64)


def _compute(values: np.ndarray, dtype: dt.DType) -> np.ndarray:
    """Interpreter representation -> compute representation (half types in float32)."""
    if dtype.is_float:
        return values.astype(np.float32)
    return values


def _unary(
    name: str,
    fn: Callable[[np.ndarray], np.ndarray],
    cpp: str,
    allowed: tuple[dt.DType, ...],
    doc: str,
) -> OpDef:
    def infer(ctx: InferContext) -> OutSpec:
        require_dtype_in(ctx, "x", allowed, f"{name.lower()}-dtype")
        src = ctx.input("x")
        return OutSpec(src.dtype, src.sizes)

    def reference(ctx: RefContext) -> np.ndarray:
        x = _compute(ctx.inputs["x"], ctx.in_dtypes["x"])
        with np.errstate(all="ignore"):
            return fn(x)

    return OpDef(
        name=name,
        inputs=("x",),
        compute_type="elementwise",
        infer=infer,
        reference=reference,
        scalar_cpp=cpp,
        cpp_sources=(SCALAR_SOURCE,),
        doc=doc,
    )


def _binary(
    name: str,
    fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
    cpp: str,
    allowed: tuple[dt.DType, ...],
    doc: str,
) -> OpDef:
    def infer(ctx: InferContext) -> OutSpec:
        require_dtype_in(ctx, "x1", allowed, f"{name.lower()}-dtype")
        dtype = require_same_dtype(ctx, ("x1", "x2"))
        sizes = broadcast_sizes(ctx, ("x1", "x2"))
        return OutSpec(dtype, sizes)

    def reference(ctx: RefContext) -> np.ndarray:
        a = _compute(ctx.inputs["x1"], ctx.in_dtypes["x1"])
        b = _compute(ctx.inputs["x2"], ctx.in_dtypes["x2"])
        with np.errstate(all="ignore"):
            return fn(a, b)

    return OpDef(
        name=name,
        inputs=("x1", "x2"),
        compute_type="elementwise",
        infer=infer,
        reference=reference,
        scalar_cpp=cpp,
        cpp_sources=(SCALAR_SOURCE,),
        doc=doc,
    )


def _tensor_scalar(
    name: str,
    fn: Callable[[np.ndarray, float], np.ndarray],
    cpp: str,
    allowed: tuple[dt.DType, ...],
    doc: str,
) -> OpDef:
    def infer(ctx: InferContext) -> OutSpec:
        require_dtype_in(ctx, "x", allowed, f"{name.lower()}-dtype")
        if ctx.attrs.get("value") is None:
            ctx.fail(f"{name.lower()}-value", "attribute 'value' (the scalar) is required")
        src = ctx.input("x")
        return OutSpec(src.dtype, src.sizes)

    def reference(ctx: RefContext) -> np.ndarray:
        dtype = ctx.in_dtypes["x"]
        x = _compute(ctx.inputs["x"], dtype)
        value = ctx.attrs["value"]
        scalar = np.float32(value) if dtype.is_float else np.array(int(value)).astype(x.dtype)
        with np.errstate(all="ignore"):
            return fn(x, scalar)

    return OpDef(
        name=name,
        inputs=("x",),
        compute_type="elementwise",
        attrs=(AttrSpec("value", "float", None, "the scalar operand"),),
        infer=infer,
        reference=reference,
        scalar_cpp=cpp,
        cpp_sources=(SCALAR_SOURCE,),
        doc=doc,
    )


def _relu(x):
    return np.where(x > 0, x, np.zeros((), dtype=x.dtype))


def _sigmoid(x):
    one = np.float32(1.0)
    return one / (one + np.exp(-x))


def _rsqrt(x):
    return np.float32(1.0) / np.sqrt(x)


def _neg(x):
    return -x


def _compare(name: str, fn, cpp: str) -> OpDef:
    def infer(ctx: InferContext) -> OutSpec:
        require_dtype_in(ctx, "x1", NUMERIC, f"{name.lower()}-dtype")
        require_same_dtype(ctx, ("x1", "x2"))
        return OutSpec(dt.bool_, broadcast_sizes(ctx, ("x1", "x2")))

    def reference(ctx: RefContext) -> np.ndarray:
        a = _compute(ctx.inputs["x1"], ctx.in_dtypes["x1"])
        b = _compute(ctx.inputs["x2"], ctx.in_dtypes["x2"])
        return fn(a, b)

    return OpDef(
        name=name,
        inputs=("x1", "x2"),
        compute_type="elementwise",
        infer=infer,
        reference=reference,
        scalar_cpp=cpp,
        cpp_sources=(SCALAR_SOURCE,),
        doc=f"Elementwise comparison producing bool ({name}).",
    )


def _infer_cast(ctx: InferContext) -> OutSpec:
    src = ctx.input("x")
    target = ctx.declared.dtype
    if target is None:
        ctx.fail("cast-dtype", "Cast needs the target dtype in y.dtype", port="y")
    if not (target.is_float or target.is_int):
        ctx.fail("cast-dtype", f"cannot cast to {target}", port="y")
    return OutSpec(target, src.sizes)


def _ref_cast(ctx: RefContext) -> np.ndarray:
    x = ctx.inputs["x"]
    if ctx.in_dtypes["x"].is_bool:
        return x.astype(np.int64)
    return _compute(x, ctx.in_dtypes["x"])


def _infer_where(ctx: InferContext) -> OutSpec:
    cond = ctx.input("x1")
    if cond.dtype is not None and not cond.dtype.is_bool:
        ctx.fail("where-cond-dtype", f"condition must be bool, got {cond.dtype}", port="x1")
    dtype = require_same_dtype(ctx, ("x2", "x3"))
    return OutSpec(dtype, broadcast_sizes(ctx, ("x1", "x2", "x3")))


def _ref_where(ctx: RefContext) -> np.ndarray:
    return np.where(ctx.inputs["x1"].astype(bool), ctx.inputs["x2"], ctx.inputs["x3"])


OPS: tuple[OpDef, ...] = (
    _unary("Abs", np.abs, "AfAbs({x})", SIGNED, "|x|."),
    _unary("Neg", _neg, "(-{x})", SIGNED, "-x."),
    _unary("Relu", _relu, "AfRelu({x})", SIGNED, "x if x > 0 else 0 (NaN -> 0)."),
    _unary("Exp", np.exp, "expf({x})", dt.FLOATS, "e**x."),
    _unary("Exp2", np.exp2, "exp2f({x})", dt.FLOATS, "2**x."),
    _unary("Log", np.log, "logf({x})", dt.FLOATS, "natural logarithm."),
    _unary("Sqrt", np.sqrt, "sqrtf({x})", dt.FLOATS, "square root."),
    _unary("Rsqrt", _rsqrt, "(1.0f / sqrtf({x}))", dt.FLOATS, "1 / sqrt(x)."),
    _unary("Sigmoid", _sigmoid, "(1.0f / (1.0f + expf(-{x})))", dt.FLOATS, "1 / (1 + e**-x)."),
    _binary("Add", np.add, "({x1} + {x2})", NUMERIC, "x1 + x2."),
    _binary("Sub", np.subtract, "({x1} - {x2})", NUMERIC, "x1 - x2."),
    _binary("Mul", np.multiply, "({x1} * {x2})", NUMERIC, "x1 * x2."),
    _binary("Div", np.divide, "({x1} / {x2})", dt.FLOATS, "x1 / x2 (floats only)."),
    _binary("Maximum", np.maximum, "AfMax({x1}, {x2})", NUMERIC, "max(x1, x2), NaN propagates."),
    _binary("Minimum", np.minimum, "AfMin({x1}, {x2})", NUMERIC, "min(x1, x2), NaN propagates."),
    _tensor_scalar("Adds", np.add, "({x} + ({C})({value}))", NUMERIC, "x + value."),
    _tensor_scalar("Subs", np.subtract, "({x} - ({C})({value}))", NUMERIC, "x - value."),
    _tensor_scalar("Muls", np.multiply, "({x} * ({C})({value}))", NUMERIC, "x * value."),
    _tensor_scalar("Maxs", np.maximum, "AfMax({x}, ({C})({value}))", NUMERIC, "max(x, value)."),
    _tensor_scalar("Mins", np.minimum, "AfMin({x}, ({C})({value}))", NUMERIC, "min(x, value)."),
    _compare("Gt", np.greater, "({x1} > {x2})"),
    _compare("Ge", np.greater_equal, "({x1} >= {x2})"),
    _compare("Lt", np.less, "({x1} < {x2})"),
    _compare("Le", np.less_equal, "({x1} <= {x2})"),
    _compare("Eq", np.equal, "({x1} == {x2})"),
    _compare("Ne", np.not_equal, "({x1} != {x2})"),
    OpDef(
        name="Cast",
        inputs=("x",),
        compute_type="elementwise",
        infer=_infer_cast,
        reference=_ref_cast,
        scalar_cpp="({x})",
        cpp_sources=(SCALAR_SOURCE,),
        doc="Convert to y.dtype: floats round to nearest even, float -> int truncates.",
    ),
    OpDef(
        name="Where",
        inputs=("x1", "x2", "x3"),
        compute_type="elementwise",
        infer=_infer_where,
        reference=_ref_where,
        scalar_cpp="({x1} ? {x2} : {x3})",
        cpp_sources=(SCALAR_SOURCE,),
        doc="x2 where the bool x1 holds, else x3.",
    ),
)
