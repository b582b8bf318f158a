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

Rounding ops say how they round: Floor / Ceil / Round give integral values in
the input's float dtype (Round is round-half-to-even, like ``torch.round``
and AscendC's CAST_RINT); FloorToInt / Ceil2Int produce int32 and saturate
out-of-range values to the int32 range, NaN giving 0 (what AscendC's Cast
to int32 does). Bitwise ops act on the two's-complement bits of integers;
logical ops take and give bool. Shift counts outside ``[0, bit width)``
shift every bit out (LShift gives 0, RShift gives 0 or -1 by the sign).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from af_core.template_api import (
    CAST,
    AttrSpec,
    ComputeType,
    DTypeError,
    InferContext,
    OpDef,
    OutSpec,
    RefContext,
    broadcast_sizes,
    require_dtype_in,
    require_same_dtype,
)
from af_core.template_api import dtypes as dt

if TYPE_CHECKING:
    import numpy as np

# numpy is imported where values are computed (references, one dtype rule), not with this module:
# the plugin registers its ops for every compile, and compiling a graph needs no numpy.

SCALAR_SOURCE = "af_scalar_ops"

NUMERIC = dt.FLOATS + dt.INTS
SIGNED = dt.FLOATS + (dt.int8, dt.int16, dt.int32, dt.int64)


def _numpy(name: str) -> Callable[..., np.ndarray]:
    """numpy's function ``name``, looked up when called (the op tables below name it at import)."""

    def call(*args: np.ndarray | np.generic) -> np.ndarray:
        import numpy as np

        return getattr(np, name)(*args)

    call.__name__ = name
    return call


def _compute(values: np.ndarray, dtype: dt.DType) -> np.ndarray:
    """Interpreter representation -> compute representation (half types in float32)."""
    import numpy as np

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
        import numpy as np

        x = _compute(ctx.inputs["x"], ctx.in_dtypes["x"])
        with np.errstate(all="ignore"):
            return fn(x)

    return OpDef(
        name=name,
        inputs=("x",),
        compute_type=ComputeType.ELEMENTWISE,
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
    scalar_form: str | None = None,
) -> OpDef:
    def infer(ctx: InferContext) -> OutSpec:
        require_dtype_in(ctx, "x1", allowed, f"{name.lower()}-dtype")
        dtype = require_same_dtype(ctx, ("x1", "x2"))
        sizes = broadcast_sizes(ctx, ("x1", "x2"))
        return OutSpec(dtype, sizes)

    def reference(ctx: RefContext) -> np.ndarray:
        import numpy as np

        a = _compute(ctx.inputs["x1"], ctx.in_dtypes["x1"])
        b = _compute(ctx.inputs["x2"], ctx.in_dtypes["x2"])
        with np.errstate(all="ignore"):
            return fn(a, b)

    return OpDef(
        name=name,
        inputs=("x1", "x2"),
        compute_type=ComputeType.ELEMENTWISE,
        infer=infer,
        reference=reference,
        scalar_cpp=cpp,
        cpp_sources=(SCALAR_SOURCE,),
        doc=doc,
        scalar_form=scalar_form,
    )


def _tensor_scalar(
    name: str,
    fn: Callable[[np.ndarray, np.generic | np.ndarray], np.ndarray],
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
        import numpy as np

        dtype = ctx.in_dtypes["x"]
        x = _compute(ctx.inputs["x"], dtype)
        value = ctx.attrs["value"]
        scalar = np.float32(value) if dtype.is_float else np.array(int(value)).astype(x.dtype)
        with np.errstate(all="ignore"):
            return fn(x, scalar)

    return OpDef(
        name=name,
        inputs=("x",),
        compute_type=ComputeType.ELEMENTWISE,
        attrs=(AttrSpec("value", "float", None, "the scalar operand"),),
        infer=infer,
        reference=reference,
        scalar_cpp=cpp,
        cpp_sources=(SCALAR_SOURCE,),
        doc=doc,
    )


def _relu(x: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.where(x > 0, x, np.zeros((), dtype=x.dtype))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    import numpy as np

    one = np.float32(1.0)
    return one / (one + np.exp(-x))


def _rsqrt(x: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.float32(1.0) / np.sqrt(x)


def _neg(x: np.ndarray) -> np.ndarray:
    return -x


def _compare(name: str, fn: Callable[[np.ndarray, np.ndarray], np.ndarray], cpp: str) -> OpDef:
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
        compute_type=ComputeType.ELEMENTWISE,
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
    import numpy as np

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
    import numpy as np

    return np.where(ctx.inputs["x1"].astype(bool), ctx.inputs["x2"], ctx.inputs["x3"])


# ---------------------------------------------------------------------------
# Rounding, integer-producing, bitwise, logical and shift ops.

BITWISE = dt.INTS
#: the shift-count dtype for each shifted dtype (AscendC ShiftLeft/ShiftRight pairs)
SHIFT_COUNT = {
    dt.int8: dt.int8,
    dt.uint8: dt.int8,
    dt.int16: dt.int16,
    dt.uint16: dt.int16,
    dt.int32: dt.int32,
    dt.uint32: dt.int32,
    dt.int64: dt.int64,
    dt.uint64: dt.int64,
}
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def _round_half_even(x: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.rint(x)


def _reciprocal(x: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.float32(1.0) / x


def _erf(x: np.ndarray) -> np.ndarray:
    import numpy as np

    flat = np.array([math.erf(float(v)) for v in x.reshape(-1)], dtype=np.float64)
    return flat.reshape(x.shape).astype(np.float32)


def _saturating_int32(values: np.ndarray) -> np.ndarray:
    """Float -> int32 the way AscendC's Cast does it: clamp to the range, NaN -> 0."""
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    out = np.clip(np.nan_to_num(v, nan=0.0, posinf=INT32_MAX, neginf=INT32_MIN), INT32_MIN, INT32_MAX)
    return out.astype(np.int32)


def _to_int(name: str, fn: Callable[[np.ndarray], np.ndarray], cpp: str, doc: str) -> OpDef:
    """A float op whose result is int32 (FloorToInt, Ceil2Int)."""

    def infer(ctx: InferContext) -> OutSpec:
        require_dtype_in(ctx, "x", dt.FLOATS, f"{name.lower()}-dtype")
        return OutSpec(dt.int32, ctx.input("x").sizes)

    def reference(ctx: RefContext) -> np.ndarray:
        import numpy as np

        x = _compute(ctx.inputs["x"], ctx.in_dtypes["x"])
        with np.errstate(all="ignore"):
            return _saturating_int32(fn(x))

    return OpDef(
        name=name,
        inputs=("x",),
        compute_type=ComputeType.ELEMENTWISE,
        infer=infer,
        reference=reference,
        scalar_cpp=cpp,
        cpp_sources=(SCALAR_SOURCE,),
        doc=doc,
    )


def _logical(name: str, inputs: tuple[str, ...], fn: Callable[..., np.ndarray], cpp: str, doc: str) -> OpDef:
    """Bool in, bool out."""

    def infer(ctx: InferContext) -> OutSpec:
        for port in inputs:
            src = ctx.input(port)
            if src.dtype is not None and not src.dtype.is_bool:
                ctx.fail(
                    f"{name.lower()}-dtype",
                    f"dtype {src.dtype} is not supported (allowed: bool)",
                    port=port,
                    error=DTypeError,
                )
        return OutSpec(dt.bool_, broadcast_sizes(ctx, inputs))

    def reference(ctx: RefContext) -> np.ndarray:
        return fn(*(ctx.inputs[p].astype(bool) for p in inputs))

    return OpDef(
        name=name,
        inputs=inputs,
        compute_type=ComputeType.ELEMENTWISE,
        infer=infer,
        reference=reference,
        scalar_cpp=cpp,
        cpp_sources=(SCALAR_SOURCE,),
        doc=doc,
    )


def _shift(name: str, left: bool, cpp: str, doc: str) -> OpDef:
    """x1 shifted by x2 bits; x2 has the signed dtype of x1's width."""

    def infer(ctx: InferContext) -> OutSpec:
        require_dtype_in(ctx, "x1", BITWISE, f"{name.lower()}-dtype")
        src = ctx.input("x1").dtype
        count = ctx.input("x2").dtype
        if src is not None and count is not None and count != SHIFT_COUNT[src]:
            ctx.fail(
                f"{name.lower()}-count-dtype",
                f"shift count must be {SHIFT_COUNT[src]} for {src} data, got {count}",
                port="x2",
                error=DTypeError,
            )
        return OutSpec(src, broadcast_sizes(ctx, ("x1", "x2")))

    def reference(ctx: RefContext) -> np.ndarray:
        import numpy as np

        x = ctx.inputs["x1"]
        dtype = ctx.in_dtypes["x1"]
        bits = dtype.itemsize * 8
        count = ctx.inputs["x2"].astype(np.int64)
        inside = (count >= 0) & (count < bits)
        safe = np.where(inside, count, 0).astype(x.dtype)
        with np.errstate(all="ignore"):
            shifted = np.left_shift(x, safe) if left else np.right_shift(x, safe)
        if left or dtype.kind == "u":
            out_of_range = np.zeros((), dtype=x.dtype)
        else:
            out_of_range = np.where(x < 0, np.array(-1, dtype=x.dtype), np.zeros((), dtype=x.dtype))
        return np.where(inside, shifted, out_of_range).astype(x.dtype)

    return OpDef(
        name=name,
        inputs=("x1", "x2"),
        compute_type=ComputeType.ELEMENTWISE,
        infer=infer,
        reference=reference,
        scalar_cpp=cpp,
        cpp_sources=(SCALAR_SOURCE,),
        doc=doc,
    )


def _compare_scalar(
    name: str, fn: Callable[[np.ndarray, np.generic | np.ndarray], np.ndarray], cpp: str
) -> OpDef:
    """x compared with the scalar attribute ``value``, producing bool.

    Float data compares (in float32) with float32(value); integer data needs
    an integral value its dtype can hold, so no wrap-around changes the test.
    """

    def infer(ctx: InferContext) -> OutSpec:
        require_dtype_in(ctx, "x", NUMERIC, f"{name.lower()}-dtype")
        value = ctx.attrs.get("value")
        if value is None:
            ctx.fail(f"{name.lower()}-value", "attribute 'value' (the scalar) is required")
        dtype = ctx.input("x").dtype
        if dtype is not None and dtype.is_int:
            import numpy as np

            info = np.iinfo(dtype.np)
            if not (float(value).is_integer() and info.min <= value <= info.max):
                ctx.fail(
                    f"{name.lower()}-value",
                    f"value {value} is not an integer {dtype} can hold ([{info.min}, {info.max}])",
                    port="x",
                    error=DTypeError,
                )
        return OutSpec(dt.bool_, ctx.input("x").sizes)

    def reference(ctx: RefContext) -> np.ndarray:
        import numpy as np

        dtype = ctx.in_dtypes["x"]
        x = _compute(ctx.inputs["x"], dtype)
        value = ctx.attrs["value"]
        scalar = np.float32(value) if dtype.is_float else np.array(int(value)).astype(x.dtype)
        return fn(x, scalar)

    return OpDef(
        name=name,
        inputs=("x",),
        compute_type=ComputeType.ELEMENTWISE,
        attrs=(AttrSpec("value", "float", None, "the scalar operand"),),
        infer=infer,
        reference=reference,
        scalar_cpp=cpp,
        cpp_sources=(SCALAR_SOURCE,),
        doc=f"x compared with the scalar value, producing bool ({name}).",
    )


#: the comparisons: tensor-tensor op name, numpy function, C++ operator (the scalar forms add an "s")
COMPARISONS = (
    ("Gt", _numpy("greater"), ">"),
    ("Ge", _numpy("greater_equal"), ">="),
    ("Lt", _numpy("less"), "<"),
    ("Le", _numpy("less_equal"), "<="),
    ("Eq", _numpy("equal"), "=="),
    ("Ne", _numpy("not_equal"), "!="),
)

COMPARE_SCALAR_OPS: tuple[OpDef, ...] = tuple(
    _compare_scalar(f"{name}s", fn, f"({{x}} {op} ({{C}})({{value}}))") for name, fn, op in COMPARISONS
)


ROUNDING_OPS: tuple[OpDef, ...] = (
    _unary("Floor", _numpy("floor"), "floorf({x})", dt.FLOATS, "largest integral value <= x (float result)."),
    _unary("Ceil", _numpy("ceil"), "ceilf({x})", dt.FLOATS, "smallest integral value >= x (float result)."),
    _unary(
        "Round",
        _round_half_even,
        "rintf({x})",
        dt.FLOATS,
        "nearest integral value, ties to even (torch.round, CAST_RINT).",
    ),
    _to_int("FloorToInt", _numpy("floor"), "AfFloorToInt({x})", "floor(x) as int32 (saturating, NaN -> 0)."),
    _to_int("Ceil2Int", _numpy("ceil"), "AfCeilToInt({x})", "ceil(x) as int32 (saturating, NaN -> 0)."),
)

MATH_OPS: tuple[OpDef, ...] = (
    _unary("Log2", _numpy("log2"), "log2f({x})", dt.FLOATS, "base-2 logarithm."),
    _unary("Reciprocal", _reciprocal, "(1.0f / {x})", dt.FLOATS, "1 / x."),
    _unary("Tanh", _numpy("tanh"), "tanhf({x})", dt.FLOATS, "hyperbolic tangent."),
    _unary("Erf", _erf, "erff({x})", dt.FLOATS, "error function."),
    _unary("Sign", _numpy("sign"), "AfSign({x})", NUMERIC, "-1, 0 or 1 by the sign of x (NaN stays NaN)."),
    _binary("Pow", _numpy("power"), "powf({x1}, {x2})", dt.FLOATS, "x1 ** x2 (floats only)."),
)

BITWISE_OPS: tuple[OpDef, ...] = (
    _binary("BitwiseAnd", _numpy("bitwise_and"), "({x1} & {x2})", BITWISE, "bits of x1 AND x2."),
    _binary("BitwiseOr", _numpy("bitwise_or"), "({x1} | {x2})", BITWISE, "bits of x1 OR x2."),
    _binary("BitwiseXor", _numpy("bitwise_xor"), "({x1} ^ {x2})", BITWISE, "bits of x1 XOR x2."),
    _unary("BitwiseNot", _numpy("invert"), "(~{x})", BITWISE, "every bit of x flipped."),
    _shift("LShift", True, "AfShiftLeft({x1}, {x2})", "x1 << x2 (counts outside [0, bits) give 0)."),
    _shift(
        "RShift",
        False,
        "AfShiftRight({x1}, {x2})",
        "x1 >> x2, arithmetic for signed x1 (counts outside [0, bits) give 0 or -1).",
    ),
)

LOGICAL_OPS: tuple[OpDef, ...] = (
    _logical("LogicalAnd", ("x1", "x2"), _numpy("logical_and"), "({x1} && {x2})", "x1 and x2 (bool)."),
    _logical("LogicalOr", ("x1", "x2"), _numpy("logical_or"), "({x1} || {x2})", "x1 or x2 (bool)."),
    _logical("LogicalXor", ("x1", "x2"), _numpy("logical_xor"), "({x1} != {x2})", "x1 xor x2 (bool)."),
    _logical("LogicalNot", ("x",), _numpy("logical_not"), "(!{x})", "not x (bool)."),
)


OPS: tuple[OpDef, ...] = (
    _unary("Abs", _numpy("abs"), "AfAbs({x})", SIGNED, "|x|."),
    _unary("Neg", _neg, "AfWrapNeg({x})", SIGNED, "-x."),
    _unary("Relu", _relu, "AfRelu({x})", SIGNED, "x if x > 0 else 0 (NaN -> 0)."),
    _unary("Exp", _numpy("exp"), "expf({x})", dt.FLOATS, "e**x."),
    _unary("Exp2", _numpy("exp2"), "exp2f({x})", dt.FLOATS, "2**x."),
    _unary("Log", _numpy("log"), "logf({x})", dt.FLOATS, "natural logarithm."),
    _unary("Sqrt", _numpy("sqrt"), "sqrtf({x})", dt.FLOATS, "square root."),
    _unary("Rsqrt", _rsqrt, "(1.0f / sqrtf({x}))", dt.FLOATS, "1 / sqrt(x)."),
    _unary("Sigmoid", _sigmoid, "(1.0f / (1.0f + expf(-{x})))", dt.FLOATS, "1 / (1 + e**-x)."),
    _binary("Add", _numpy("add"), "AfWrapAdd({x1}, {x2})", NUMERIC, "x1 + x2.", "Adds"),
    _binary("Sub", _numpy("subtract"), "AfWrapSub({x1}, {x2})", NUMERIC, "x1 - x2.", "Subs"),
    _binary("Mul", _numpy("multiply"), "AfWrapMul({x1}, {x2})", NUMERIC, "x1 * x2.", "Muls"),
    _binary("Div", _numpy("divide"), "({x1} / {x2})", dt.FLOATS, "x1 / x2 (floats only)."),
    _binary(
        "Maximum", _numpy("maximum"), "AfMax({x1}, {x2})", NUMERIC, "max(x1, x2), NaN propagates.", "Maxs"
    ),
    _binary(
        "Minimum", _numpy("minimum"), "AfMin({x1}, {x2})", NUMERIC, "min(x1, x2), NaN propagates.", "Mins"
    ),
    _tensor_scalar("Adds", _numpy("add"), "AfWrapAdd({x}, ({C})({value}))", NUMERIC, "x + value."),
    _tensor_scalar("Subs", _numpy("subtract"), "AfWrapSub({x}, ({C})({value}))", NUMERIC, "x - value."),
    _tensor_scalar("Muls", _numpy("multiply"), "AfWrapMul({x}, ({C})({value}))", NUMERIC, "x * value."),
    _tensor_scalar("Maxs", _numpy("maximum"), "AfMax({x}, ({C})({value}))", NUMERIC, "max(x, value)."),
    _tensor_scalar("Mins", _numpy("minimum"), "AfMin({x}, ({C})({value}))", NUMERIC, "min(x, value)."),
    *(_compare(name, fn, f"({{x1}} {op} {{x2}})") for name, fn, op in COMPARISONS),
    OpDef(
        name="Cast",
        inputs=("x",),
        compute_type=ComputeType.ELEMENTWISE,
        infer=_infer_cast,
        reference=_ref_cast,
        scalar_cpp="({x})",
        cpp_sources=(SCALAR_SOURCE,),
        doc="Convert to y.dtype: floats round to nearest even, float -> int truncates.",
        roles=frozenset({CAST}),
    ),
    OpDef(
        name="Where",
        inputs=("x1", "x2", "x3"),
        compute_type=ComputeType.ELEMENTWISE,
        infer=_infer_where,
        reference=_ref_where,
        scalar_cpp="({x1} ? {x2} : {x3})",
        cpp_sources=(SCALAR_SOURCE,),
        doc="x2 where the bool x1 holds, else x3.",
        data_input="x2",
    ),
    *ROUNDING_OPS,
    *MATH_OPS,
    *BITWISE_OPS,
    *LOGICAL_OPS,
    *COMPARE_SCALAR_OPS,
)
