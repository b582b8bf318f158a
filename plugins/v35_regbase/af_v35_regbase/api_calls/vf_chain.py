"""VfChainRegApiCall: a run of elementwise ops over one UB tile as one register vector function.

Autofuse's v35 layer wraps a fused subgraph into a ``VfCall``: a ``__simd_vf__``
function whose loop body is register-level calls. This class does that for a
run of elementwise ops the scheduler fused (:attr:`Role.VECTOR_CHAIN`): the
function loops over the tile in vector-length steps (256 bytes: 64 lanes of a
4-byte type, 128 of a 2-byte type), loads each input once with an aligned
``Reg::LoadAlign``, computes every op in registers under a tail mask
(``Reg::UpdateMask``), and stores with one ``Reg::StoreAlign`` only the values
later nodes read. The kernel launches it with ``asc_vf_call<func>(...)``.

An op joins a run only when its memory-path form is the API in its own dtype
(:func:`~af_v35_regbase.api_calls.legalize.op_form` ``direct``, or
``relu_maxs``) and the 3510 register implementation takes that dtype
(:func:`~af_v35_regbase.api_dtypes.reg_accepts`): then the register
instruction computes exactly what the memory-based call computes, element by
element. Everything else -- casts, comparisons into bit masks, Where, the
float16 forms computed in float32, 8-bit integers widened to int16, the
composite and bitwise forms, 64-bit types -- stays a memory-based call, and
:meth:`VfChainRegApiCall.rejection` says why.
"""

from __future__ import annotations

import hashlib

from af_core import dtypes as dt
from af_core.backend import Role
from af_core.codegen.api_call import ApiCall
from af_core.errors import CodegenError
from af_v35_regbase.api_calls.legalize import BINARY, TENSOR_SCALAR, UNARY, op_form
from af_v35_regbase.api_calls.vector import scalar_literal
from af_v35_regbase.api_dtypes import reg_accepts

#: Bytes of one vector register.
VECTOR_BYTES = 256
#: ASCIR op -> register instruction, for the ops a run may hold (Neg is Muls by -1 as on the memory path).
REG_API = {
    **{op: api for op, api in UNARY.items() if op != "Rsqrt"},
    **BINARY,
    **{op: api for op, (api, _sign) in TENSOR_SCALAR.items()},
}


def _cpp(dtype: dt.DType) -> str:
    return dtype.cpp


class VfChainRegApiCall(ApiCall):
    """Fills :attr:`Role.VECTOR_CHAIN`: a run of elementwise ops as one ``__simd_vf__`` function."""

    name = "VfChainRegApiCall"
    roles = frozenset({Role.VECTOR_CHAIN})

    @classmethod
    def supports(cls, op_type: str) -> bool:
        """Whether ``op_type`` has a register form for some dtype."""
        return op_type in REG_API

    @classmethod
    def rejection(cls, op_type: str, in_dtypes, out_dtype) -> str | None:
        """Why ``op_type`` on these dtypes cannot join a register vector function, or None when it can."""
        ins = tuple(dt.get(d) for d in in_dtypes)
        out = dt.get(out_dtype)
        if op_type not in REG_API:
            return f"op {op_type} has no register form in the vector function (memory-based call)"
        if any(d != out for d in ins):
            return f"{op_type} mixes dtypes {', '.join(d.name for d in ins)} -> {out.name}"
        if out.is_bool or out.itemsize == 8:
            return f"{op_type} on {out.name}: no register form for this dtype (bit masks, 64-bit registers)"
        form = op_form(op_type, ins, out)
        if form.kind not in ("direct", "relu_maxs"):
            return f"{op_type} on {out.name} takes the '{form.kind}' memory form (not one instruction in its dtype)"
        api = "Maxs" if form.kind == "relu_maxs" else REG_API[op_type]
        if not reg_accepts(api, out):
            return f"the 3510 register {api} does not accept {out.name}"
        return None

    def generate_api_call_string(self) -> str:
        ctx, node = self.ctx, self.node
        steps = node.attrs["steps"]
        dtype = ctx.impl.tensor(steps[-1]["output"]).dtype
        lines: list[str] = []
        in_vars = []
        for name in node.inputs:
            take, var = ctx.use(name)
            lines.append(take)
            in_vars.append(var)
        by_step = {s["output"]: s for s in steps}
        ready = set(node.inputs)
        out_vars = []
        for name in node.outputs:
            lines += self._make_storage(name, by_step, ready)
            out_vars.append(ctx.vars[name])
        func = self._define_function(steps, dtype)
        ctype = _cpp(dtype)
        args = [f"(__ubuf__ {ctype}*){v}.GetPhyAddr()" for v in [*out_vars, *in_vars]]
        count = ctx.expr(node.attrs["count"])
        args.append(f"static_cast<uint32_t>({count})")
        lines.append(f"asc_vf_call<{func}>({', '.join(args)});")
        lines += [ctx.finish(name) for name in node.outputs]
        return "\n".join(line for line in lines if line)

    def _make_storage(self, tensor: str, by_step: dict, ready: set[str]) -> list[str]:
        """Lines that give ``tensor`` its storage: its own tile, or (in place) the tile of the value it
        replaces, following the in-place links back to an input or an earlier tile made ready here."""
        if tensor in ready:
            return []
        like = by_step[tensor].get("inplace")
        lines: list[str] = []
        if like is not None and like not in ready:
            if like not in by_step:
                raise CodegenError(
                    f"node '{self.node.name}': in-place tile '{like}' is neither read nor made"
                )
            lines += self._make_storage(like, by_step, ready)
        make, _var = self.ctx.produce(tensor, like=like)
        ready.add(tensor)
        return [*lines, make]

    def _define_function(self, steps: list[dict], dtype: dt.DType) -> str:
        """Define the ``__simd_vf__`` function of these steps (once per kernel); returns its name."""
        node = self.node
        ctype = _cpp(dtype)
        lanes = VECTOR_BYTES // dtype.itemsize
        regs: dict[str, str] = {}
        for i, name in enumerate(node.inputs):
            regs[name] = f"in{i}"
        body = []
        for i in range(len(node.inputs)):
            body.append(f"AscendC::Reg::LoadAlign(in{i}, src{i} + i * {lanes});")
        for k, step in enumerate(steps):
            regs[step["output"]] = f"v{k}"
            srcs = [regs[t] for t in step["inputs"]]
            body.append(self._instruction(step, f"v{k}", srcs, dtype))
        for j, name in enumerate(node.outputs):
            body.append(f"AscendC::Reg::StoreAlign(dst{j} + i * {lanes}, {regs[name]}, mask);")
        params = [f"__ubuf__ {ctype}* dst{j}" for j in range(len(node.outputs))]
        params += [f"__ubuf__ {ctype}* src{i}" for i in range(len(node.inputs))]
        params.append("uint32_t count")
        decls = [f"AscendC::Reg::RegTensor<{ctype}> in{i};" for i in range(len(node.inputs))]
        decls += [f"AscendC::Reg::RegTensor<{ctype}> v{k};" for k in range(len(steps))]
        inner = "\n".join(f"        {line}" for line in body)
        text_body = (
            "{\n"
            + "".join(f"    {d}\n" for d in decls)
            + "    AscendC::Reg::MaskReg mask;\n"
            + f"    const uint32_t repeats = (count + {lanes - 1}u) / {lanes}u;\n"
            + "    for (uint32_t i = 0; i < repeats; ++i) {\n"
            + f"        mask = AscendC::Reg::UpdateMask<{ctype}>(count);\n"
            + inner
            + "\n    }\n}\n"
        )
        signature = f"({', '.join(params)})\n"
        digest = hashlib.sha256((signature + text_body).encode()).hexdigest()[:12]
        func = f"AfChainVf_{digest}"
        what = "; ".join(f"{s['op']}" for s in steps)
        head = f"// register vector function: {self.ctx.comment(what)}\n__simd_vf__ inline void {func}"
        text = head + signature + text_body
        self.ctx.define(func, text)
        return func

    def _instruction(self, step: dict, dst: str, srcs: list[str], dtype: dt.DType) -> str:
        op = step["op"]
        form = op_form(op, tuple(dtype for _ in srcs), dtype)
        if form.kind == "relu_maxs":
            return f"AscendC::Reg::Maxs({dst}, {srcs[0]}, static_cast<{_cpp(dtype)}>(0), mask);"
        if form.kind != "direct" or op not in REG_API:
            raise CodegenError(f"node '{self.node.name}': step {op} has no register form")
        api = REG_API[op]
        if op in BINARY:
            return f"AscendC::Reg::{api}({dst}, {srcs[0]}, {srcs[1]}, mask);"
        if op in TENSOR_SCALAR:
            value = -1.0 if op == "Neg" else TENSOR_SCALAR[op][1] * float(step["value"])
            return f"AscendC::Reg::{api}({dst}, {srcs[0]}, {scalar_literal(value, dtype)}, mask);"
        return f"AscendC::Reg::{api}({dst}, {srcs[0]}, mask);"
