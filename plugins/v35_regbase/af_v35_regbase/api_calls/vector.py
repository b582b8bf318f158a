"""VecElementwiseRegApiCall: elementwise ops on whole UB tiles with AscendC vector APIs.

One call per node over ``count`` elements (the tile, padding included). Ops
with a direct API map to it; Neg is ``Muls(-1)``; Exp2 and Sigmoid are short
API sequences, computed in a float32 scratch tile for float16/bfloat16 so
that only the final result is rounded (the elementwise numerics contract).
Comparisons write bit masks (``Compare``/``Compares``), ``Where`` selects
with them. Casts pick the round mode the reference uses (RINT between
floats, TRUNC float -> int).
"""

from __future__ import annotations

import math

import numpy as np

from af_core.codegen.api_call import ApiCall
from af_core.codegen.scalar import literal
from af_core.errors import CodegenError

UNARY = {"Abs": "Abs", "Exp": "Exp", "Log": "Ln", "Sqrt": "Sqrt", "Rsqrt": "Rsqrt", "Relu": "Relu"}
BINARY = {"Add": "Add", "Sub": "Sub", "Mul": "Mul", "Div": "Div", "Maximum": "Max", "Minimum": "Min"}
TENSOR_SCALAR = {"Adds": ("Adds", 1.0), "Subs": ("Adds", -1.0), "Muls": ("Muls", 1.0), "Maxs": ("Maxs", 1.0),
                 "Mins": ("Mins", 1.0)}
COMPARE = {"Gt": "GT", "Ge": "GE", "Lt": "LT", "Le": "LE", "Eq": "EQ", "Ne": "NE"}
#: ops computed as a sequence of APIs; float16/bfloat16 need a float32 scratch tile for them
COMPOSITE = {"Exp2", "Sigmoid"}
SUPPORTED = set(UNARY) | set(BINARY) | set(TENSOR_SCALAR) | set(COMPARE) | COMPOSITE | {"Neg", "Cast", "Where"}

# --- Rounding, reciprocal, bitwise and logical ops (legal forms on dav_3510) -----------------------
#: float -> integral float of the same dtype: Truncate<T, mode> (half / float / bfloat16_t, exact)
TRUNCATE = {"Floor": "CAST_FLOOR", "Ceil": "CAST_CEIL", "Round": "CAST_RINT"}
#: float -> int32: Cast<int32_t, T> with the op's rounding (half / float / bfloat16_t sources)
TO_INT32 = {"FloorToInt": "CAST_FLOOR", "Ceil2Int": "CAST_CEIL"}
#: float ops computed in float32; float16/bfloat16 go through the float32 scratch tile
VIA_FLOAT32 = {"Reciprocal": "Reciprocal"}
#: bitwise ops on whole tiles, run on the int16_t view of the bytes (And / Or / Not accept int16_t)
BITWISE = {"BitwiseAnd": "And", "BitwiseOr": "Or", "BitwiseXor": "Xor", "BitwiseNot": "Not"}
#: logical ops on compare masks (one bit per element), run on the uint16_t view of the mask bytes
LOGICAL = {"LogicalAnd": "And", "LogicalOr": "Or", "LogicalXor": "Xor", "LogicalNot": "Not"}
#: comparisons with a scalar: Compares(mask, x, s, mode); for float16 / bfloat16 the float32 scalar is
#: replaced by a neighbour in x's dtype that gives the same answer for every x (see compare_scalar)
COMPARE_SCALAR = {"Gts": "GT", "Ges": "GE", "Lts": "LT", "Les": "LE", "Eqs": "EQ", "Nes": "NE"}
EXTRA_FORMS = set(TRUNCATE) | set(TO_INT32) | set(VIA_FLOAT32) | set(BITWISE) | set(LOGICAL) | set(COMPARE_SCALAR)
SUPPORTED |= EXTRA_FORMS
# Log2, Tanh, Erf, Sign, Pow, LShift and RShift have no vector form here: Log2 as Ln * (1 / ln 2)
# is not exact at powers of two, the others need advanced APIs; supports() says False, so vector
# templates reject such graphs with the op named and the SIMT template computes them.


def needs_scratch(op_type: str, dtype) -> bool:
    """Whether the op needs a float32 scratch tile for this dtype."""
    return (op_type in COMPOSITE or op_type in VIA_FLOAT32) and dtype.name in ("float16", "bfloat16")


def _cpp_float(value: float) -> str:
    if math.isnan(value):
        return '__builtin_nanf("")'
    if math.isinf(value):
        return "__builtin_inff()" if value > 0 else "-__builtin_inff()"
    return literal(value)


def _neighbours(value: np.float32, dtype) -> tuple[float, float]:
    """The largest value of ``dtype`` <= value and the smallest >= value (infinities included)."""
    if dtype.name == "float16":
        with np.errstate(over="ignore"):
            near = np.float16(value)
        lo = near if float(near) <= value else np.nextafter(near, np.float16(-np.inf))
        hi = near if float(near) >= value else np.nextafter(near, np.float16(np.inf))
        return float(lo), float(hi)
    bits = int(np.array(value, dtype=np.float32).view(np.uint32))
    toward_zero = np.array(bits & 0xFFFF0000, dtype=np.uint32).view(np.float32).item()
    away = np.array((bits & 0xFFFF0000) + 0x10000, dtype=np.uint32).view(np.float32).item()
    if toward_zero == float(value):
        return toward_zero, toward_zero
    return min(toward_zero, away), max(toward_zero, away)


def compare_scalar(mode: str, value: float, dtype) -> str:
    """The C++ scalar with which Compares on ``dtype`` data answers ``x <mode> float32(value)``.

    Integers and float32 compare with the value itself. A float16 / bfloat16 x
    compared with a float32 s that the dtype cannot hold: x > s iff x > lo
    (lo the largest value <= s), x >= s iff x >= hi (hi the smallest >= s);
    x == s never holds and x != s always does, which Compares with a NaN
    scalar answers (NaN compares unequal to everything).
    """
    if not dtype.is_float or dtype.name == "float32":
        return literal(value)
    lo, hi = _neighbours(np.float32(value), dtype)
    if lo == hi or mode in ("GT", "LE"):
        return _cpp_float(lo)
    if mode in ("GE", "LT"):
        return _cpp_float(hi)
    return _cpp_float(float("nan"))


def cast_mode(src, dst) -> str:
    if src.is_float and dst.is_int:
        return "CAST_TRUNC"
    if src.is_float and dst.is_float:
        return "CAST_NONE" if dst.itemsize > src.itemsize else "CAST_RINT"
    if src.is_int and dst.is_float:
        return "CAST_RINT"
    return "CAST_NONE"


class VecElementwiseRegApiCall(ApiCall):
    name = "VecElementwiseRegApiCall"

    @classmethod
    def supports(cls, op_type: str) -> bool:
        """Whether ``op_type`` has a vector form (schedulers ask before choosing a vector path)."""
        return op_type in SUPPORTED

    @classmethod
    def scratch_dtype(cls, op_type: str, dtype):
        """The dtype of the scratch tile the op needs for ``dtype`` data, or None."""
        from af_core import dtypes

        return dtypes.float32 if needs_scratch(op_type, dtype) else None

    def generate_api_call_string(self) -> str:
        ctx, node = self.ctx, self.node
        a = node.attrs
        op = node.op_type
        if op not in SUPPORTED:
            raise CodegenError(f"no vector form for op {op} (node '{node.name}')")
        lines: list[str] = []
        srcs = []
        for name in node.inputs:
            take, var = ctx.use(name)
            lines.append(take)
            srcs.append(var)
        out = node.outputs[0]
        make, dst = ctx.produce(out, like=a.get("inplace"))
        lines.append(make)
        count = ctx.expr(a["count"])
        out_t = ctx.impl.tensor(out).dtype
        ctype = ctx.cpp_type(out_t)
        n = f"static_cast<int32_t>({count})"
        un = f"static_cast<uint32_t>({count})"
        if op in UNARY:
            lines.append(f"AscendC::{UNARY[op]}({dst}, {srcs[0]}, {n});")
        elif op in BINARY:
            lines.append(f"AscendC::{BINARY[op]}({dst}, {srcs[0]}, {srcs[1]}, {n});")
        elif op in TENSOR_SCALAR:
            api, sign = TENSOR_SCALAR[op]
            value = literal(sign * float(a["value"]))
            lines.append(f"AscendC::{api}({dst}, {srcs[0]}, static_cast<{ctype}>({value}), {n});")
        elif op == "Neg":
            lines.append(f"AscendC::Muls({dst}, {srcs[0]}, static_cast<{ctype}>(-1), {n});")
        elif op == "Cast":
            src_t = ctx.impl.tensor(node.inputs[0]).dtype
            src_c = ctx.cpp_type(src_t)
            lines.append(f"AscendC::Cast<{ctype}, {src_c}>({dst}, {srcs[0]}, AscendC::RoundMode::"
                         f"{cast_mode(src_t, out_t)}, {un});")
        elif op in COMPARE:
            lines.append(f"AscendC::Compare({dst}, {srcs[0]}, {srcs[1]}, AscendC::CMPMODE::{COMPARE[op]}, {un});")
        elif op == "Where":
            lines.append(f"AscendC::Select({dst}, {srcs[0]}, {srcs[1]}, {srcs[2]}, "
                         f"AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {un});")
        elif op in EXTRA_FORMS:
            lines += self._rounding_bitwise(op, dst, srcs, ctype, count, out_t)
        else:
            lines += self._composite(op, dst, srcs[0], ctype, n, un, out_t)
        lines.append("AscendC::PipeBarrier<PIPE_V>();")
        lines.append(ctx.finish(out))
        return "\n".join(line for line in lines if line)

    def _composite(self, op: str, dst: str, src: str, ctype: str, n: str, un: str, dtype) -> list[str]:
        lines = []
        if needs_scratch(op, dtype):
            take, work = self.ctx.produce(self.node.attrs["scratch"])
            lines += [take, f"AscendC::Cast<float, {ctype}>({work}, {src}, AscendC::RoundMode::CAST_NONE, {un});",
                      "AscendC::PipeBarrier<PIPE_V>();"]
            wtype, first = "float", work
        else:
            work, wtype, first = dst, ctype, src
        if op == "Exp2":
            lines += [f"AscendC::Muls({work}, {first}, static_cast<{wtype}>({literal(math.log(2.0))}), {n});",
                      "AscendC::PipeBarrier<PIPE_V>();", f"AscendC::Exp({work}, {work}, {n});"]
        elif op == "Sigmoid":
            lines += [f"AscendC::Muls({work}, {first}, static_cast<{wtype}>(-1), {n});",
                      "AscendC::PipeBarrier<PIPE_V>();", f"AscendC::Exp({work}, {work}, {n});",
                      "AscendC::PipeBarrier<PIPE_V>();", f"AscendC::Adds({work}, {work}, static_cast<{wtype}>(1), {n});",
                      "AscendC::PipeBarrier<PIPE_V>();", f"AscendC::Reciprocal({work}, {work}, {n});"]
        if work != dst:
            lines += ["AscendC::PipeBarrier<PIPE_V>();",
                      f"AscendC::Cast<{ctype}, float>({dst}, {work}, AscendC::RoundMode::CAST_RINT, {un});"]
        return lines

    def _rounding_bitwise(self, op: str, dst: str, srcs: list[str], ctype: str, count: str, out_t) -> list[str]:
        """Floor/Ceil/Round, FloorToInt/Ceil2Int, Reciprocal, bitwise and logical ops."""
        if op in TRUNCATE:
            return [f"AscendC::Truncate<{ctype}, AscendC::RoundMode::{TRUNCATE[op]}>({dst}, {srcs[0]}, "
                    f"static_cast<uint32_t>({count}));"]
        if op in TO_INT32:
            src_t = self.ctx.impl.tensor(self.node.inputs[0]).dtype
            return [f"AscendC::Cast<int32_t, {self.ctx.cpp_type(src_t)}>({dst}, {srcs[0]}, "
                    f"AscendC::RoundMode::{TO_INT32[op]}, static_cast<uint32_t>({count}));"]
        if op in VIA_FLOAT32:
            return self._via_float32(VIA_FLOAT32[op], dst, srcs[0], ctype, count, out_t)
        if op in COMPARE_SCALAR:
            src_t = self.ctx.impl.tensor(self.node.inputs[0]).dtype
            mode = COMPARE_SCALAR[op]
            scalar = compare_scalar(mode, float(self.node.attrs["value"]), src_t)
            return [f"AscendC::Compares({dst}, {srcs[0]}, static_cast<{self.ctx.cpp_type(src_t)}>({scalar}), "
                    f"AscendC::CMPMODE::{mode}, static_cast<uint32_t>({count}));"]
        if op in BITWISE:
            # count elements of out_t are count * itemsize / 2 int16_t lanes (tile rows are 32-byte blocks)
            lanes = f"static_cast<int32_t>(({count}) * {out_t.itemsize} / 2)"
            return self._bits(BITWISE[op], "int16_t", dst, srcs, lanes)
        # masks: count bits, rounded up to whole uint16_t lanes (inside the 32-byte aligned mask buffer)
        lanes = f"static_cast<int32_t>((({count}) + 15) / 16)"
        return self._bits(LOGICAL[op], "uint16_t", dst, srcs, lanes)

    def _via_float32(self, api: str, dst: str, src: str, ctype: str, count: str, dtype) -> list[str]:
        n, un = f"static_cast<int32_t>({count})", f"static_cast<uint32_t>({count})"
        if not needs_scratch(self.node.op_type, dtype):
            return [f"AscendC::{api}({dst}, {src}, {n});"]
        take, work = self.ctx.produce(self.node.attrs["scratch"])
        return [take, f"AscendC::Cast<float, {ctype}>({work}, {src}, AscendC::RoundMode::CAST_NONE, {un});",
                "AscendC::PipeBarrier<PIPE_V>();", f"AscendC::{api}({work}, {work}, {n});",
                "AscendC::PipeBarrier<PIPE_V>();",
                f"AscendC::Cast<{ctype}, float>({dst}, {work}, AscendC::RoundMode::CAST_RINT, {un});"]

    @staticmethod
    def _bits(api: str, lane: str, dst: str, srcs: list[str], lanes: str) -> list[str]:
        """And / Or / Not on a ``lane`` view; Xor as a + b - 2 (a & b), which wraps to a ^ b per lane."""
        view = [f"{s}.template ReinterpretCast<{lane}>()" for s in srcs]
        out = f"{dst}.template ReinterpretCast<{lane}>()"
        if api == "Not":
            return [f"AscendC::Not({out}, {view[0]}, {lanes});"]
        if api != "Xor":
            return [f"AscendC::{api}({out}, {view[0]}, {view[1]}, {lanes});"]
        bar = "AscendC::PipeBarrier<PIPE_V>();"
        return [f"AscendC::And({out}, {view[0]}, {view[1]}, {lanes});", bar,
                f"AscendC::Add({out}, {out}, {out}, {lanes});", bar,
                f"AscendC::Sub({out}, {view[0]}, {out}, {lanes});", bar,
                f"AscendC::Add({out}, {out}, {view[1]}, {lanes});"]
