"""Legal 3510 forms of the vector elementwise ops: the step between an op and the dtype table.

For one op on one dtype, :func:`op_form` says how the vector path computes it
with calls the 3510 implementation accepts (:mod:`af_v35_regbase.api_dtypes`),
which scratch tiles that needs, or why there is no legal form (the SIMD and
SK-like templates then reject the case and SIMT keeps it). The forms keep the
numerics contract of :mod:`af_elementwise.ops`:

- ``direct``: the API in the op's own dtype;
- ``promote``: float16/bfloat16 computed in float32 (Cast in, op, Cast back
  with CAST_RINT), as Autofuse does for bfloat16; the tensor-scalar ops
  Adds/Subs/Muls always take this form for them, so the scalar operand is a
  float32 like in the reference (never rounded to half first);
- ``widen``: 8-bit integers computed in int16 and narrowed back by keeping
  the low byte (``Ands`` 0xFF, then an in-range Cast), which is exactly the
  wrap-around result;
- ``reinterpret``: uint16/uint32 Adds/Muls run as int16/int32 (wrap-around
  addition and multiplication do not depend on signedness);
- ``splat``: uint16/uint32 Maxs/Mins as Duplicate + Max/Min;
- ``relu_maxs``: integer Relu as Maxs(x, 0);
- ``cast``: a Cast as a route of legal Cast steps and bit reinterpretations
  (:func:`cast_route`); FloorToInt / Ceil2Int are the one Cast int32 <- T
  with CAST_FLOOR / CAST_CEIL;
- ``bits``: bitwise ops on the int16 view of the tile's bytes, logical ops on
  the uint16 view of the bit masks (And / Or / Not; Xor as a + b - 2 (a & b),
  which is a ^ b in every lane);
- ``composite``: Exp2 and Sigmoid as short float32 sequences.

Floor / Ceil / Round are ``direct`` Truncate calls (exact in the op's dtype),
scalar comparisons ``direct`` Compares calls. Reciprocal of float16/bfloat16
always takes the ``promote`` form, so it rounds once like the reference.
"""

from __future__ import annotations

import attrs

from af_core.template_api import CodegenError
from af_core.template_api import dtypes as dt
from af_v35_regbase import api_dtypes as tab

UNARY = {"Abs": "Abs", "Exp": "Exp", "Log": "Ln", "Sqrt": "Sqrt", "Rsqrt": "Rsqrt", "Relu": "Relu"}
BINARY = {"Add": "Add", "Sub": "Sub", "Mul": "Mul", "Div": "Div", "Maximum": "Max", "Minimum": "Min"}
#: op -> (API, sign applied to the scalar); Neg is Muls(-1)
TENSOR_SCALAR = {
    "Adds": ("Adds", 1.0),
    "Subs": ("Adds", -1.0),
    "Muls": ("Muls", 1.0),
    "Maxs": ("Maxs", 1.0),
    "Mins": ("Mins", 1.0),
    "Neg": ("Muls", 1.0),
}
COMPARE = {"Gt": "GT", "Ge": "GE", "Lt": "LT", "Le": "LE", "Eq": "EQ", "Ne": "NE"}
#: ops computed as a sequence of float APIs
COMPOSITE = {"Exp2", "Sigmoid"}
OTHER = {"Cast", "Where"}
#: float -> integral float of the same dtype: Truncate<T, mode>
TRUNCATE = {"Floor": "CAST_FLOOR", "Ceil": "CAST_CEIL", "Round": "CAST_RINT"}
#: float -> int32: one Cast<int32_t, T> with the op's rounding (saturating, NaN -> 0, like the reference)
TO_INT32 = {"FloorToInt": "CAST_FLOOR", "Ceil2Int": "CAST_CEIL"}
#: float ops computed in float32 for float16/bfloat16 even where the API takes them (one rounding)
VIA_FLOAT32 = {"Reciprocal": "Reciprocal"}
#: bitwise ops on the int16 view of integer tiles
BITWISE = {"BitwiseAnd": "And", "BitwiseOr": "Or", "BitwiseXor": "Xor", "BitwiseNot": "Not"}
#: logical ops on the uint16 view of bit masks (one bit per element)
LOGICAL = {"LogicalAnd": "And", "LogicalOr": "Or", "LogicalXor": "Xor", "LogicalNot": "Not"}
#: the APIs a bit op calls on its view
BIT_APIS = {"And": ("And",), "Or": ("Or",), "Not": ("Not",), "Xor": ("And", "Add", "Sub")}
#: comparisons with the scalar attribute ``value``: Compares into a bit mask
COMPARE_SCALAR = {"Gts": "GT", "Ges": "GE", "Lts": "LT", "Les": "LE", "Eqs": "EQ", "Nes": "NE"}
#: elementwise ops with no vector form, and why (SIMT computes them)
NO_VECTOR_FORM = {
    "Log2": "Log2 as Ln times 1/ln 2 is not exact at powers of two",
    "Tanh": "Tanh needs an advanced API the vector path does not emit",
    "Erf": "Erf needs an advanced API the vector path does not emit",
    "Sign": "Sign needs an advanced API the vector path does not emit",
    "Pow": "Pow needs an advanced API the vector path does not emit",
    "LShift": "LShift has per-element shift counts; ShiftLeft takes one scalar count",
    "RShift": "RShift has per-element shift counts; ShiftRight takes one scalar count",
}
SUPPORTED = (
    set(UNARY)
    | set(BINARY)
    | set(TENSOR_SCALAR)
    | set(COMPARE)
    | COMPOSITE
    | OTHER
    | set(TRUNCATE)
    | set(TO_INT32)
    | set(VIA_FLOAT32)
    | set(BITWISE)
    | set(LOGICAL)
    | set(COMPARE_SCALAR)
)

#: tensor-scalar APIs whose float16/bfloat16 form would round the scalar to the data type first
_SCALAR_ROUNDS = {"Adds", "Muls"}
_SIGNED_OF = {"uint16": dt.int16, "uint32": dt.int32}
_SPLAT = {"Maxs": "Max", "Mins": "Min"}


@attrs.frozen
class Form:
    """How the vector path computes one op for one dtype on 3510."""

    kind: str  # direct, promote, widen, reinterpret, splat, relu_maxs, cast, bits, composite, reject
    api: str = ""
    compute: dt.DType | None = None  # the dtype the API runs in when it is not the op's own
    scratch: tuple[dt.DType, ...] = ()  # UB tiles (one tile row pitch each) the form needs
    steps: tuple[tuple[dt.DType, dt.DType, str], ...] = ()  # cast: (dst, src, RoundMode or "VIEW")
    reason: str = ""

    @property
    def legal(self) -> bool:
        return self.kind != "reject"

    @property
    def lane(self) -> dt.DType:
        """``compute``, for the kinds that always name one (reinterpret, bits)."""
        if self.compute is None:
            raise CodegenError(f"the {self.kind} form of {self.api or 'an op'} names no compute dtype")
        return self.compute


def _reject(reason: str) -> Form:
    return Form("reject", reason=reason)


def _elementwise(op: str, api: str, dtype: dt.DType, inputs: int) -> Form:
    if dtype.is_bool:
        return _reject(f"{api} on bool: bool tiles are bit masks on the vector path")
    ts = op in TENSOR_SCALAR
    if dtype.name in ("float16", "bfloat16") and (
        ts and api in _SCALAR_ROUNDS and op != "Neg" or op in VIA_FLOAT32 or not tab.accepts(api, dtype)
    ):
        if tab.accepts(api, dt.float32):
            return Form("promote", api, dt.float32, (dt.float32,) * inputs)
        return _reject(f"{api} has no {dtype} or float32 form on 3510")
    if tab.accepts(api, dtype):
        return Form("direct", api)
    if op == "Relu" and dtype.is_int and tab.accepts("Maxs", dtype):
        return Form("relu_maxs", "Maxs")
    if ts and dtype.name in _SIGNED_OF and api in _SCALAR_ROUNDS and tab.accepts(api, _SIGNED_OF[dtype.name]):
        return Form("reinterpret", api, _SIGNED_OF[dtype.name])
    if ts and api in _SPLAT and tab.accepts("Duplicate", dtype) and tab.accepts(_SPLAT[api], dtype):
        return Form("splat", _SPLAT[api], scratch=(dtype,))
    if dtype.name in ("int8", "uint8") and tab.accepts(api, dt.int16) and tab.accepts("Ands", dt.int16):
        return Form("widen", api, dt.int16, (dt.int16,) * inputs)
    return _reject(
        f"{api} does not accept {dtype} on 3510 and no legal wider form keeps the numerics contract"
    )


def _composite(op: str, dtype: dt.DType) -> Form:
    if not dtype.is_float:
        return _reject(f"{op} is a float op")
    promote = (dt.float32,) if dtype != dt.float32 else ()
    if op == "Exp2":  # x in float32, 2^f and the clamped integer part n
        return Form("composite", op, dt.float32, (*promote, dt.float32, dt.int32))
    return Form("composite", op, dt.float32, promote)


def _truncate(op: str, dtype: dt.DType) -> Form:
    if tab.accepts("Truncate", dtype) and TRUNCATE[op] in tab.TRUNCATE_MODES:
        return Form("direct", "Truncate")
    return _reject(f"{op}: Truncate does not accept {dtype} on 3510")


def _to_int32(op: str, src: dt.DType) -> Form:
    mode = TO_INT32[op]
    if src.is_float and mode in tab.cast_modes(dt.int32, src):
        return Form("cast", "Cast", steps=((dt.int32, src, mode),))
    return _reject(f"{op}: the 3510 Cast int32 <- {src} has no {mode}")


def _bits(op: str, api: str, dtype: dt.DType, view: dt.DType) -> Form:
    """A bit op on the ``view`` lanes of the tile's bytes (integers) or of its bit mask (bool)."""
    wanted = dtype.is_bool if op in LOGICAL else dtype.is_int
    if not wanted:
        return _reject(f"{op} does not take {dtype} data")
    missing = [a for a in BIT_APIS[api] if not tab.accepts(a, view)]
    if missing:
        return _reject(
            f"{op} needs {', '.join(BIT_APIS[api])} on the {view} view; 3510 rejects {', '.join(missing)}"
        )
    return Form("bits", api, view)


def _compare_scalar(op: str, src: dt.DType) -> Form:
    if src.is_bool or not tab.accepts("Compares", src):
        return _reject(f"{op}: Compares does not accept {src} on 3510")
    return Form("direct", "Compares")


def op_form(op_type: str, in_dtypes: tuple[dt.DType, ...], out_dtype: dt.DType) -> Form:
    """The legal 3510 vector form of ``op_type`` (inputs ``in_dtypes``, result ``out_dtype``)."""
    if op_type in NO_VECTOR_FORM:
        return _reject(f"op {op_type} has no vector form: {NO_VECTOR_FORM[op_type]}")
    if op_type not in SUPPORTED:
        return _reject(f"op {op_type} has no vector form")
    if op_type in UNARY:
        return _elementwise(op_type, UNARY[op_type], out_dtype, 1)
    if op_type in VIA_FLOAT32:
        if not out_dtype.is_float:
            return _reject(f"{op_type} is a float op")
        return _elementwise(op_type, VIA_FLOAT32[op_type], out_dtype, 1)
    if op_type in TRUNCATE:
        return _truncate(op_type, out_dtype)
    if op_type in TO_INT32:
        return _to_int32(op_type, in_dtypes[0])
    if op_type in BITWISE:
        return _bits(op_type, BITWISE[op_type], out_dtype, dt.int16)
    if op_type in LOGICAL:
        return _bits(op_type, LOGICAL[op_type], out_dtype, dt.uint16)
    if op_type in COMPARE_SCALAR:
        return _compare_scalar(op_type, in_dtypes[0])
    if op_type in BINARY:
        return _elementwise(op_type, BINARY[op_type], out_dtype, 2)
    if op_type in TENSOR_SCALAR:
        return _elementwise(op_type, TENSOR_SCALAR[op_type][0], out_dtype, 1)
    if op_type in COMPOSITE:
        return _composite(op_type, out_dtype)
    if op_type in COMPARE:
        src = in_dtypes[0]
        if src.is_bool or not tab.accepts("Compare", src):
            return _reject(f"Compare does not accept {src} on 3510")
        return Form("direct", "Compare")
    if op_type == "Where":
        if out_dtype.is_bool or not tab.accepts("Select", out_dtype):
            return _reject(f"Select does not accept {out_dtype} data on 3510")
        return Form("direct", "Select")
    return cast_form(in_dtypes[0], out_dtype)


# ---------------------------------------------------------------------------
# Cast routes.

#: the 3510 Cast int32 -> half goes through the dequantisation scale register (CastIntrinsicsImplVF)
_AVOID = {("float16", "int32")}


def contract_mode(src: dt.DType, dst: dt.DType) -> str:
    """The rounding the numerics contract asks of a src -> dst conversion."""
    if src.is_float and dst.is_int:
        return "CAST_TRUNC"
    if src.is_float and dst.is_float:
        return "CAST_NONE" if dst.itemsize > src.itemsize else "CAST_RINT"
    if src.is_int and dst.is_float:
        return "CAST_RINT"
    return "CAST_NONE"


def _step_mode(src: dt.DType, dst: dt.DType) -> str | None:
    """The RoundMode a legal src -> dst Cast step takes under the contract, or None."""
    if (dst.name, src.name) in _AVOID:
        return None
    modes = tab.cast_modes(dst, src)
    want = contract_mode(src, dst)
    if want in modes:
        return want
    if want == "CAST_RINT" and "CAST_NONE" in modes and src.is_int:
        return "CAST_NONE"  # exact int -> float widenings take CAST_NONE only
    return None


def _int_range(d: dt.DType) -> tuple[int, int]:
    bits = 8 * d.itemsize
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if d.kind == "i" else (0, (1 << bits) - 1)


_EXACT_INT = {"float16": 1 << 11, "bfloat16": 1 << 8, "float32": 1 << 24}


def _exact(values: tuple[int, int] | None, src: dt.DType, dst: dt.DType, target: dt.DType) -> bool:
    """Whether every value (an int range, None for floats) survives src -> dst as the contract's src -> target.

    An integer rounded to float32 on its way to float16 or bfloat16 counts as
    exact: integers that float32 rounds are beyond 2^24, where float16 is
    infinite anyway, and the reference itself rounds to bfloat16 through
    float32.
    """
    if values is None:
        return src.is_float and dst == dt.float32
    lo, hi = values
    if dst.is_int:
        dlo, dhi = _int_range(dst)
        return dlo <= lo and hi <= dhi
    if dst == dt.float32 and target.name in ("float16", "bfloat16"):
        return True
    return max(-lo, hi) <= _EXACT_INT[dst.name]


def cast_route(src: dt.DType, dst: dt.DType) -> tuple[tuple[dt.DType, dt.DType, str], ...] | None:
    """Shortest chain of legal Cast steps and same-width reinterpretations from ``src`` to ``dst``.

    Every step but the last is exact for all values of ``src`` (widening casts,
    reinterpretations of values in range), so the route rounds once, with the
    contract's mode, like the reference. Between integers the last step is a
    reinterpretation (wrap-around) or a Cast, which saturates on 3510 where
    the reference wraps (values outside the target range are outside the
    contract). None when no route of at most four steps exists.
    """
    start = None if src.is_float else _int_range(src)
    candidates = [d for d in dt.ALL if not d.is_bool]
    frontier: list[tuple[dt.DType, tuple[int, int] | None, tuple]] = [(src, start, ())]
    for _depth in range(4):
        nxt = []
        for cur, values, path in frontier:
            for d in candidates:
                if d == cur:
                    continue
                if cur.is_int and d.is_int and cur.itemsize == d.itemsize:
                    step = (d, cur, "VIEW")
                    exact = values is not None and _exact(values, cur, d, dst)
                else:
                    mode = _step_mode(cur, d)
                    if mode is None:
                        continue
                    step = (d, cur, mode)
                    exact = _exact(values, cur, d, dst)
                    if cur.is_int and d.is_int and d.itemsize >= cur.itemsize and not exact:
                        continue  # a widening Cast saturates out-of-range values; a VIEW route wraps
                if d == dst:
                    return (*path, step)
                if exact:
                    nxt.append((d, values, (*path, step)))
        frontier = nxt
    return None


def cast_form(src: dt.DType, dst: dt.DType) -> Form:
    if src.is_bool or dst.is_bool:
        return _reject(f"Cast {src} -> {dst}: bool tiles are bit masks on the vector path")
    if src == dst:
        return Form("cast")
    route = cast_route(src, dst)
    if route is None:
        return _reject(f"Cast {src} -> {dst}: no chain of 3510 Cast steps rounds like the numerics contract")
    casts = [s for s in route if s[2] != "VIEW"]
    scratch = tuple(step[0] for step in casts[:-1])
    return Form("cast", "Cast", scratch=scratch, steps=route)
