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


def needs_scratch(op_type: str, dtype) -> bool:
    """Whether the op needs a float32 scratch tile for this dtype."""
    return op_type in COMPOSITE and dtype.name in ("float16", "bfloat16")


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
