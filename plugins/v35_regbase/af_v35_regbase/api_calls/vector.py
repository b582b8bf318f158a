"""VecElementwiseRegApiCall: elementwise ops on whole UB tiles with AscendC vector APIs.

One call per node over ``count`` elements (the tile, padding included). Each
op is emitted in the legal 3510 form :mod:`.legalize` picks from the dtype
table (the API in the op's dtype, or computed in a wider type with casts);
schedulers ask :meth:`VecElementwiseRegApiCall.rejection` and
:meth:`VecElementwiseRegApiCall.scratch_dtypes` before choosing a vector path,
so an op/dtype pair the 3510 implementation rejects is never emitted.

Numerics (the elementwise contract): float16/bfloat16 results are rounded
once from float32; the scalar of Adds/Subs/Muls is a float32 for them; Exp2
is ``2^n * Exp(f * ln2)`` with ``n`` the clamped floor of ``x`` and the power
of two built exactly, so integer ``x`` gives exact powers of two; Cast rounds
to nearest even between floats and truncates float -> int. Floor / Ceil /
Round are exact Truncate calls; a scalar comparison on float16/bfloat16 data
compares with the neighbour of the float32 scalar in the data's dtype that
gives the same answer for every element (:func:`compare_scalar`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from af_core.template_api import ApiCall, CodegenError, Role, VectorOpAttrs, literal
from af_core.template_api import dtypes as dt
from af_v35_regbase.api_calls.legalize import (
    BINARY,
    COMPARE,
    COMPARE_SCALAR,
    LOGICAL,
    SUPPORTED,
    TENSOR_SCALAR,
    TRUNCATE,
    UNARY,
    VIA_FLOAT32,
    Form,
    op_form,
)

if TYPE_CHECKING:
    import numpy as np


#: Bytes of one vector repeat; Compare / Compares counts must cover whole repeats on 3510.
VECTOR_REPEAT_BYTES = 256


def _cpp(dtype: dt.DType) -> str:
    return "uint8_t" if dtype.is_bool else dtype.cpp


def _view(var: str, dtype: dt.DType) -> str:
    return f"{var}.template ReinterpretCast<{_cpp(dtype)}>()"


def scalar_literal(value: float, dtype: dt.DType) -> str:
    """C++ text of a scalar operand in ``dtype``: a float32 value for floats, wrapped integers for ints."""
    if dtype.is_float:
        return f"static_cast<{_cpp(dtype)}>({literal(value)})"
    bits = 8 * dtype.itemsize
    v = int(value) & ((1 << bits) - 1)
    if dtype.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    if dtype.kind == "i" and v == -(1 << (bits - 1)):
        return f"static_cast<{_cpp(dtype)}>({v + 1} - 1)"
    return f"static_cast<{_cpp(dtype)}>({v})"


def _cpp_float(value: float) -> str:
    if math.isnan(value):
        return '__builtin_nanf("")'
    if math.isinf(value):
        return "__builtin_inff()" if value > 0 else "-__builtin_inff()"
    return literal(value)


def _neighbours(value: np.float32, dtype: dt.DType) -> tuple[float, float]:
    """The largest value of ``dtype`` <= value and the smallest >= value (infinities included)."""
    import numpy as np  # here, not at import: compiling a graph without such a comparison needs no numpy

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


def compare_scalar(mode: str, value: float, dtype: dt.DType) -> str:
    """The C++ scalar with which Compares on ``dtype`` data answers ``x <mode> float32(value)``.

    Integers and float32 compare with the value itself. A float16 / bfloat16 x
    compared with a float32 s that the dtype cannot hold: x > s iff x > lo
    (lo the largest value <= s), x >= s iff x >= hi (hi the smallest >= s);
    x == s never holds and x != s always does, which Compares with a NaN
    scalar answers (NaN compares unequal to everything).
    """
    if not dtype.is_float or dtype.name == "float32":
        return literal(value)
    import numpy as np

    lo, hi = _neighbours(np.float32(value), dtype)
    if lo == hi or mode in ("GT", "LE"):
        return _cpp_float(lo)
    if mode in ("GE", "LT"):
        return _cpp_float(hi)
    return _cpp_float(float("nan"))


class VecElementwiseRegApiCall(ApiCall):
    """Fills :attr:`Role.VECTOR_OP`: one elementwise op or cast over a UB tile, legalized for 3510."""

    name = "VecElementwiseRegApiCall"
    roles = frozenset({Role.VECTOR_OP})

    @classmethod
    def supports(cls, op_type: str) -> bool:
        """Whether ``op_type`` has a vector form for some dtype."""
        return op_type in SUPPORTED

    @classmethod
    def rejection(cls, op_type: str, in_dtypes, out_dtype) -> str | None:
        """Why ``op_type`` on these dtypes has no legal 3510 vector form, or None when it has one."""
        form = op_form(op_type, tuple(dt.get(d) for d in in_dtypes), dt.get(out_dtype))
        return None if form.legal else form.reason

    @classmethod
    def scratch_dtypes(cls, op_type: str, in_dtypes, out_dtype) -> tuple[dt.DType, ...]:
        """The dtypes of the scratch tiles (one tile each, in order) the op's form needs."""
        return op_form(op_type, tuple(dt.get(d) for d in in_dtypes), dt.get(out_dtype)).scratch

    def generate_api_call_string(self) -> str:
        ctx, node = self.ctx, self.node
        a = self.op_attrs = VectorOpAttrs.of(node)
        op = node.op_type
        in_dtypes, out_t = self._graph_dtypes()
        form = op_form(op, in_dtypes, out_t)
        if not form.legal:
            raise CodegenError(f"node '{node.name}': {form.reason}")
        lines: list[str] = []
        srcs = []
        for name in node.inputs:
            take, var = ctx.use(name)
            lines.append(take)
            srcs.append(var)
        out = node.outputs[0]
        make, dst = ctx.produce(out, like=a.inplace)
        lines.append(make)
        scratch = []
        for name in a.scratch if form.scratch else ():
            take, var = ctx.produce(name)
            lines.append(take)
            scratch.append(var)
        if len(scratch) < len(form.scratch):
            raise CodegenError(
                f"node '{node.name}': its form needs {len(form.scratch)} scratch tiles, "
                f"the schedule gave {len(scratch)}"
            )
        count = ctx.expr(a.count)
        self.n = f"static_cast<int32_t>({count})"
        self.un = f"static_cast<uint32_t>({count})"
        lines += self._emit(op, form, dst, srcs, scratch, out_t, in_dtypes)
        lines.append(ctx.finish(out))
        return "\n".join(line for line in lines if line)

    def _graph_dtypes(self) -> tuple[tuple[dt.DType, ...], dt.DType]:
        """The node's input and output dtypes as the schedule saw them (and asked :meth:`rejection` with).

        A bool tensor is a bit-mask tile, which the impl graph holds as uint8:
        the outputs of comparisons and logical ops, the inputs of logical ops
        and the condition of Where are masks.
        """
        node, impl = self.node, self.ctx.impl
        op = node.op_type
        ins = [impl.tensor(n).dtype for n in node.inputs]
        out = impl.tensor(node.outputs[0]).dtype
        if op in LOGICAL:
            ins = [dt.bool_] * len(ins)
        if op == "Where":
            ins[0] = dt.bool_
        if op in LOGICAL or op in COMPARE or op in COMPARE_SCALAR:
            out = dt.bool_
        return tuple(ins), out

    def _scalar(self) -> float:
        """The node's scalar operand (a tensor-scalar op or a compare with a scalar)."""
        if self.op_attrs.value is None:
            raise CodegenError(
                f"node '{self.node.name}' ({self.node.op_type}) takes a scalar operand but has no attribute 'value'"
            )
        return float(self.op_attrs.value)

    # -- forms -----------------------------------------------------------------
    def _apply(self, op: str, api: str, dst: str, srcs: list[str], dtype: dt.DType) -> str:
        """One API call of ``op`` on operands of ``dtype``."""
        if op in UNARY or op in VIA_FLOAT32:
            return f"AscendC::{api}({dst}, {srcs[0]}, {self.n});"
        if op in BINARY:
            return f"AscendC::{api}({dst}, {srcs[0]}, {srcs[1]}, {self.n});"
        value = -1.0 if op == "Neg" else TENSOR_SCALAR[op][1] * self._scalar()
        return f"AscendC::{api}({dst}, {srcs[0]}, {scalar_literal(value, dtype)}, {self.n});"

    def _cast(self, dst: str, src: str, dst_t: dt.DType, src_t: dt.DType, mode: str) -> str:
        return (
            f"AscendC::Cast<{_cpp(dst_t)}, {_cpp(src_t)}>({dst}, {src}, AscendC::RoundMode::{mode}, "
            f"{self.un});"
        )

    def _emit(
        self,
        op: str,
        form: Form,
        dst: str,
        srcs: list[str],
        scratch: list[str],
        out_t: dt.DType,
        in_dtypes: tuple[dt.DType, ...],
    ) -> list[str]:
        kind = form.kind
        if kind == "direct" and op in COMPARE:
            count = self._compare_count(in_dtypes[0])
            return [
                f"AscendC::Compare({dst}, {srcs[0]}, {srcs[1]}, AscendC::CMPMODE::{COMPARE[op]}, {count});"
            ]
        if kind == "direct" and op == "Where":
            return [
                f"AscendC::Select({dst}, {srcs[0]}, {srcs[1]}, {srcs[2]}, "
                f"AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, {self.un});"
            ]
        if kind == "direct" and op in TRUNCATE:
            return [
                f"AscendC::Truncate<{_cpp(out_t)}, AscendC::RoundMode::{TRUNCATE[op]}>({dst}, {srcs[0]}, "
                f"{self.un});"
            ]
        if kind == "direct" and op in COMPARE_SCALAR:
            return [self._compares(COMPARE_SCALAR[op], dst, srcs[0], in_dtypes[0])]
        if kind == "direct":
            return [self._apply(op, form.api, dst, srcs, out_t)]
        if kind == "relu_maxs":
            return [f"AscendC::Maxs({dst}, {srcs[0]}, static_cast<{_cpp(out_t)}>(0), {self.n});"]
        if kind == "reinterpret":
            views = [_view(s, form.lane) for s in srcs]
            return [self._apply(op, form.api, _view(dst, form.lane), views, form.lane)]
        if kind == "splat":
            value = TENSOR_SCALAR[op][1] * self._scalar()
            return [
                f"AscendC::Duplicate({scratch[0]}, {scalar_literal(value, out_t)}, {self.n});",
                f"AscendC::{form.api}({dst}, {srcs[0]}, {scratch[0]}, {self.n});",
            ]
        if kind == "promote":
            lines = []
            for s, w in zip(srcs, scratch):
                lines += [self._cast(w, s, dt.float32, out_t, "CAST_NONE")]
            lines += [
                self._apply(op, form.api, scratch[0], scratch, dt.float32),
                self._cast(dst, scratch[0], out_t, dt.float32, "CAST_RINT"),
            ]
            return lines
        if kind == "widen":
            return self._widen(op, form, dst, srcs, scratch, out_t)
        if kind == "cast":
            return self._cast_route(form, dst, srcs[0], scratch, in_dtypes[0], out_t)
        if kind == "bits":
            return self._bits(form, dst, srcs, out_t)
        if kind == "composite":
            return self._composite(op, dst, srcs[0], scratch, out_t)
        raise CodegenError(f"node '{self.node.name}': unknown vector form {kind}")

    def _compares(self, mode: str, dst: str, src: str, src_t: dt.DType) -> str:
        value = self._scalar()
        scalar = (
            f"static_cast<{_cpp(src_t)}>({compare_scalar(mode, value, src_t)})"
            if src_t.is_float
            else scalar_literal(value, src_t)
        )
        return f"AscendC::Compares({dst}, {src}, {scalar}, AscendC::CMPMODE::{mode}, {self._compare_count(src_t)});"

    def _compare_count(self, src_t: dt.DType) -> str:
        """The count of a Compare / Compares: 3510 asserts count * sizeof(T) % 256 == 0, so the tile's count
        rounded up to whole 256-byte repeats (tiles are allocated in whole repeats; the extra mask bits
        describe padding no store reads)."""
        repeat = VECTOR_REPEAT_BYTES // src_t.itemsize
        count = self.ctx.expr(self.op_attrs.count)
        return f"static_cast<uint32_t>((({count}) + {repeat - 1}) / {repeat} * {repeat})"

    def _bits(self, form: Form, dst: str, srcs: list[str], out_t: dt.DType) -> list[str]:
        """And / Or / Not on the form's view; Xor as a + b - 2 (a & b), which wraps to a ^ b per lane.

        Integer tiles hold ``count * itemsize`` bytes (whole 32-byte blocks), bit masks ``count`` bits in a
        32-byte aligned buffer, rounded up here to whole lanes.
        """
        count = self.ctx.expr(self.op_attrs.count)
        lane = form.lane
        if out_t.is_bool:
            lanes = f"static_cast<int32_t>((({count}) + {8 * lane.itemsize - 1}) / {8 * lane.itemsize})"
        else:
            lanes = f"static_cast<int32_t>(({count}) * {out_t.itemsize} / {lane.itemsize})"
        view = [_view(s, lane) for s in srcs]
        out = _view(dst, lane)
        if form.api == "Not":
            return [f"AscendC::Not({out}, {view[0]}, {lanes});"]
        if form.api != "Xor":
            return [f"AscendC::{form.api}({out}, {view[0]}, {view[1]}, {lanes});"]
        return [
            f"AscendC::And({out}, {view[0]}, {view[1]}, {lanes});",
            f"AscendC::Add({out}, {out}, {out}, {lanes});",
            f"AscendC::Sub({out}, {view[0]}, {out}, {lanes});",
            f"AscendC::Add({out}, {out}, {view[1]}, {lanes});",
        ]

    def _widen(
        self, op: str, form: Form, dst: str, srcs: list[str], scratch: list[str], out_t: dt.DType
    ) -> list[str]:
        """8-bit integers in int16: widen exactly, compute, keep the low byte (wrap-around), narrow in range."""
        lines = []
        for s, w in zip(srcs, scratch):
            if out_t.kind == "i":
                lines.append(self._cast(w, s, dt.int16, dt.int8, "CAST_NONE"))
            else:
                lines.append(self._cast(_view(w, dt.uint16), s, dt.uint16, dt.uint8, "CAST_NONE"))
        lines += [
            self._apply(op, form.api, scratch[0], scratch, dt.int16),
            f"AscendC::Ands({scratch[0]}, {scratch[0]}, static_cast<int16_t>(255), {self.n});",
            self._cast(_view(dst, dt.uint8), scratch[0], dt.uint8, dt.int16, "CAST_NONE"),
        ]
        return lines

    def _cast_route(
        self, form: Form, dst: str, src: str, scratch_vars: list[str], src_t: dt.DType, out_t: dt.DType
    ) -> list[str]:
        """A Cast as its route: exact steps into scratch tiles, the last Cast into ``dst``, views in between."""
        steps = form.steps
        if not steps:
            return [f"AscendC::DataCopy({dst}, {src}, {self.un});"] if dst != src else []
        casts = [i for i, s in enumerate(steps) if s[2] != "VIEW"]
        if not casts:  # only reinterpretations: copy the bits
            if self.op_attrs.inplace:
                return []
            return [f"AscendC::DataCopy({dst}, {_view(src, out_t)}, {self.un});"]
        lines: list[str] = []
        cur, cur_t = src, src_t
        scratch = iter(scratch_vars)
        for i, (to, _from, mode) in enumerate(steps):
            if mode == "VIEW":
                cur, cur_t = _view(cur, to), to
                continue
            target = (dst if to == out_t else _view(dst, to)) if i == casts[-1] else next(scratch)
            lines.append(self._cast(target, cur, to, cur_t, mode))
            cur, cur_t = target, to
        return lines

    def _composite(self, op: str, dst: str, src: str, scratch: list[str], dtype: dt.DType) -> list[str]:
        lines = []
        rest = list(scratch)
        if dtype != dt.float32:
            x = rest.pop(0)
            lines += [self._cast(x, src, dt.float32, dtype, "CAST_NONE")]
            out = x
        else:
            x, out = src, dst
        n, un = self.n, self.un
        if op == "Exp2":
            # 2^x = 2^f * 2^k with k = clamp(floor(x), -126, 127), f = x - k, 2^k built from its exponent bits
            f, k = rest
            lines += [
                f"AscendC::Cast<int32_t, float>({k}, {x}, AscendC::RoundMode::CAST_FLOOR, {un});",
                f"AscendC::Maxs({k}, {k}, static_cast<int32_t>(-126), {n});",
                f"AscendC::Mins({k}, {k}, static_cast<int32_t>(127), {n});",
                f"AscendC::Cast<float, int32_t>({f}, {k}, AscendC::RoundMode::CAST_NONE, {un});",
                f"AscendC::Sub({f}, {x}, {f}, {n});",
                f"AscendC::Muls({f}, {f}, static_cast<float>({literal(math.log(2.0))}), {n});",
                f"AscendC::Exp({f}, {f}, {n});",
                f"AscendC::Adds({k}, {k}, static_cast<int32_t>(127), {n});",
                f"AscendC::Muls({k}, {k}, static_cast<int32_t>(8388608), {n});",
                f"AscendC::Mul({out}, {f}, {_view(k, dt.float32)}, {n});",
            ]
        elif op == "Sigmoid":
            work = out
            lines += [
                f"AscendC::Muls({work}, {x}, static_cast<float>(-1), {n});",
                f"AscendC::Exp({work}, {work}, {n});",
                f"AscendC::Adds({work}, {work}, static_cast<float>(1), {n});",
                f"AscendC::Reciprocal({work}, {work}, {n});",
            ]
        if dtype != dt.float32:
            lines += [self._cast(dst, out, dtype, dt.float32, "CAST_RINT")]
        return lines
