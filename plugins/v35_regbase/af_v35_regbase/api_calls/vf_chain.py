"""VfChainRegApiCall: a run of elementwise ops over one UB tile as one register vector function.

Autofuse's v35 layer wraps a fused subgraph into a ``VfCall``: a ``__simd_vf__``
function whose loop body is register-level calls. This class does that for a
run of elementwise ops the scheduler fused (:attr:`Role.VECTOR_CHAIN`): the
function loops over the tile in vector-length steps, loads each input once
with an aligned ``Reg::LoadAlign``, computes every op in registers under the
tail mask of the step (``Reg::UpdateMask``), and stores with ``Reg::StoreAlign``
only the values later nodes read. The kernel launches it with
``asc_vf_call<func>(...)``.

A step covers one vector register of the run's widest type: 64 elements when
the run holds 4-byte values, else 256 bytes of its one element size. In a run
that mixes 2- and 4-byte values, the 2-byte values sit in the even lanes of
their registers (``LoadAlign`` ``DIST_UNPACK_B16``, ``StoreAlign``
``DIST_PACK_B32``, register ``Cast`` with ``RegLayout::ZERO``), and only
casts and ops computed in float32 touch them.

Each op is computed exactly as its memory-based form computes it
(:func:`~af_v35_regbase.api_calls.legalize.op_form`), instruction for
instruction, with the register instruction taking the same dtype:

- ``direct`` / ``relu_maxs``: the instruction in the op's dtype; for the
  float16 / bfloat16 ops of :data:`ROUNDS_ONCE` whose register instruction
  takes no such dtype, or in a run with 4-byte values, Cast up, the
  instruction in float32 and Cast back (the same bits, see ROUNDS_ONCE);
- ``promote``: float16 / bfloat16 inputs cast up to float32 (exact), the op in
  float32, the result cast back with CAST_RINT;
- ``cast``: the route's Cast steps, when each is a register Cast the twin and
  the 3510 implementation have (float <-> float16 / bfloat16, float <-> int32);
- 64-bit integers (a run of them alone, 32 per step): the ``direct`` ops the
  3510 register table takes for them (Maximum / Minimum / Maxs / Mins);
- ``composite`` Sigmoid: 1 / (1 + exp(-x)) in float32, the reciprocal as a Div
  of a register of ones.

Floor / Ceil / Round are the register ``Truncate`` with the memory path's
RoundMode. Reciprocal and Rsqrt (no register instruction of their own) are a
``Div`` of a register of ones, after a ``Sqrt`` for Rsqrt, in float32.

Comparisons (Gt / Ge / Lt / Le / Eq / Ne, and their scalar forms) are a
register ``Compare`` / ``Compares`` into a ``MaskReg``, and Where is a
``Select`` by that mask. A bool value has no register tile form, so
:meth:`VfChainRegApiCall.run_local_dtypes` names ``bool``: the fusion keeps a
comparison in a run only when every reader of its result is in the same run,
and a Where only when its condition is made there. The masks are per element
width, so a run holding them has one element size (no unpacked 2-byte
values). The memory path compares into a bit-mask tile and selects by it; the
register path makes the same predicate per lane (the same scalar as
:func:`~af_v35_regbase.api_calls.vector.compare_scalar` picks for a 2-byte
Compares) and selects the same bits.

Every other form (comparisons read outside their run, logical ops on masks,
bitwise ops, 8-bit integers widened to int16, the unsigned reinterpretations,
Exp2, the other 64-bit ops) stays a memory-based call;
:meth:`VfChainRegApiCall.rejection` says why, and ``afc explain`` prints it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import attrs

from af_core import dtypes as dt
from af_core.backend import Role
from af_core.codegen.api_call import ApiCall
from af_core.errors import CodegenError
from af_core.ir.sizes import Expr
from af_core.schedule.impl_graph import ImplGraph, ImplNode
from af_v35_regbase import reg_cost
from af_v35_regbase.api_calls.legalize import (
    BINARY,
    COMPARE,
    COMPARE_SCALAR,
    TENSOR_SCALAR,
    TRUNCATE,
    UNARY,
    Form,
    op_form,
)
from af_v35_regbase.api_calls.vector import compare_scalar, scalar_literal
from af_v35_regbase.api_dtypes import reg_accepts
from af_v35_regbase.reg_cost import LOAD, MASK, STORE, RegInstr

#: Bytes of one vector register.
VECTOR_BYTES = 256
#: ASCIR op -> register instruction, for the ops a run may hold (Neg is Muls by -1 as on the memory path).
REG_API = {
    **{op: api for op, api in UNARY.items() if op != "Rsqrt"},
    **BINARY,
    **{op: api for op, (api, _sign) in TENSOR_SCALAR.items()},
    **{op: "Truncate" for op in TRUNCATE},
}
#: Composite ops a run may hold (computed in float32).
COMPOSITE = {"Sigmoid"}
#: Ops with no register instruction that a run computes in float32 from ones that exist: Reciprocal as a
#: Div of a register of ones, Rsqrt as Sqrt then that Div (the memory path's Reciprocal / Rsqrt in float).
RECIPROCALS = {"Reciprocal", "Rsqrt"}
#: Ops whose float16 / bfloat16 ``direct`` memory form a vector function may compute in float32 registers
#: (Cast up, the op, Cast back with CAST_RINT): each float32 result is correctly rounded or exact, and
#: float32 holds more than twice the 2-byte types' precision plus two bits, so the second rounding gives
#: the same bits as the op rounded once in the 2-byte type -- what the memory path computes.
ROUNDS_ONCE = frozenset(
    {"Add", "Sub", "Mul", "Div", "Maximum", "Minimum", "Abs", "Sqrt", "Neg", "Relu", "Floor", "Ceil", "Round"}
)
_F32, _I32 = dt.float32, dt.int32
#: element size -> the dtype name of the UpdateMask of a step (the mask type of text())
_MASK_DTYPES = {8: "int64", 4: "float32", 2: "float16", 1: "uint8"}
_NARROW_FLOATS = ("float16", "bfloat16")


def _cast_trait(dst: dt.DType, src: dt.DType, mode: str) -> tuple[str, str] | None:
    """(name, C++ definition) of the register CastTrait for one Cast step, or None when there is none."""
    if dst == _F32 and src.name in _NARROW_FLOATS and mode == "CAST_NONE":
        layout, sat, rnd = "ZERO", "UNKNOWN", "UNKNOWN"
    elif src == _F32 and dst.name in _NARROW_FLOATS and mode not in ("CAST_NONE",):
        layout, sat, rnd = "ZERO", "NO_SAT", mode
    elif (
        dst == _F32
        and src == _I32
        and mode in ("CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC")
    ):
        layout, sat, rnd = "UNKNOWN", "UNKNOWN", mode
    elif (
        dst == _I32
        and src == _F32
        and mode in ("CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC")
    ):
        layout, sat, rnd = "UNKNOWN", "SAT", mode
    else:
        return None
    name = f"kAfRegCast_{layout}_{sat}_{rnd}"
    text = (
        f"constexpr AscendC::Reg::CastTrait {name} = {{AscendC::Reg::RegLayout::{layout}, "
        f"AscendC::Reg::SatMode::{sat}, AscendC::Reg::MaskMergeMode::ZEROING, AscendC::RoundMode::{rnd}}};\n"
    )
    return name, text


def _promotable(op_type: str, out: dt.DType) -> bool:
    """Whether a ``direct`` op on ``out`` may run in float32 registers with the same bits (ROUNDS_ONCE)."""
    return out.name in _NARROW_FLOATS and op_type in ROUNDS_ONCE and reg_accepts(REG_API[op_type], _F32)


def _f32_only(op_type: str, form: Form, out: dt.DType) -> bool:
    """Whether a ``direct`` op has a register form in float32 only (e.g. Neg on bfloat16: register Muls
    takes no bfloat16)."""
    return form.kind == "direct" and _promotable(op_type, out) and not reg_accepts(REG_API[op_type], out)


def _mask_rejection(op_type: str, ins: tuple[dt.DType, ...], out: dt.DType) -> str | None:
    """Why an op making or reading a bool value cannot join a run, or None (Compare / Compares into a
    mask register, Where as a Select by one)."""
    if op_type in COMPARE or op_type in COMPARE_SCALAR:
        api = "Compare" if op_type in COMPARE else "Compares"
        src = ins[0]
        if not out.is_bool or any(d != src for d in ins):
            return f"{op_type} mixes dtypes {', '.join(d.name for d in ins)} -> {out.name}"
        if not op_form(op_type, ins, out).legal or not reg_accepts(api, src):
            return f"the 3510 register {api} does not accept {src.name}"
        return None
    if op_type == "Where":
        cond, data = ins[0], ins[1:]
        if not cond.is_bool or out.is_bool or any(d != out for d in data):
            return f"Where mixes dtypes {', '.join(d.name for d in ins)} -> {out.name}"
        if not op_form(op_type, ins, out).legal or not reg_accepts("Select", out):
            return f"the 3510 register Select does not accept {out.name}"
        return None
    return f"{op_type}: bit-mask tiles of logical ops have no register form here"


def _steps_of(form: Form) -> tuple[tuple[dt.DType, dt.DType, str], ...]:
    return form.steps


class VfChainRegApiCall(ApiCall):
    """Fills :attr:`Role.VECTOR_CHAIN`: a run of elementwise ops as one ``__simd_vf__`` function."""

    name = "VfChainRegApiCall"
    roles = frozenset({Role.VECTOR_CHAIN})

    @classmethod
    def supports(cls, op_type: str) -> bool:
        """Whether ``op_type`` has a register form for some dtype."""
        return op_type in REG_API or op_type in COMPOSITE or op_type == "Cast"

    @classmethod
    def rejection(cls, op_type: str, in_dtypes, out_dtype) -> str | None:
        """Why ``op_type`` on these dtypes cannot join a register vector function, or None when it can."""
        ins = tuple(dt.get(d) for d in in_dtypes)
        out = dt.get(out_dtype)
        if out.is_bool or any(d.is_bool for d in ins):
            return _mask_rejection(op_type, ins, out)
        form = op_form(op_type, ins, out)
        if out.itemsize == 8 or any(d.itemsize == 8 for d in ins):
            api = REG_API.get(op_type, op_type)
            if form.kind != "direct" or any(d != out for d in ins) or not reg_accepts(api, out):
                return (
                    f"{op_type} on 64-bit data: the 3510 register {api} has no {out.name} form generated here"
                )
            return None
        kind = form.kind
        if kind == "cast":
            if any(step[2] == "VIEW" for step in form.steps):
                return f"Cast {ins[0].name} -> {out.name} reinterprets bits on the way (no register form)"
            for to, frm, mode in form.steps:
                if _cast_trait(to, frm, mode) is None:
                    return f"Cast {frm.name} -> {to.name} ({mode}) has no register Cast here"
            return None
        if kind == "composite":
            if op_type not in COMPOSITE:
                return f"{op_type} takes a composite memory form with no register form here"
            return None
        if op_type in RECIPROCALS and kind in ("direct", "promote") and out.is_float:
            return None if all(d == out for d in ins) else f"{op_type} mixes dtypes"
        if op_type not in REG_API:
            return f"op {op_type} has no register form in the vector function (memory-based call)"
        if any(d != out for d in ins):
            return f"{op_type} mixes dtypes {', '.join(d.name for d in ins)} -> {out.name}"
        if kind == "promote":
            api = REG_API[op_type]
            return None if reg_accepts(api, _F32) else f"the 3510 register {api} does not accept float32"
        if kind not in ("direct", "relu_maxs"):
            return (
                f"{op_type} on {out.name} takes the '{kind}' memory form (not one instruction in its dtype)"
            )
        api = "Maxs" if kind == "relu_maxs" else REG_API[op_type]
        if not reg_accepts(api, out) and not _promotable(op_type, out):
            return f"the 3510 register {api} does not accept {out.name}"
        return None

    @classmethod
    def run_local_dtypes(cls) -> frozenset[str]:
        """``bool``: a comparison's result lives in a mask register, which no tile outside the run holds."""
        return frozenset({"bool"})

    @classmethod
    def run_rejection(cls, ops: Sequence[tuple[str, Sequence[dt.DType], dt.DType]]) -> str | None:
        """Why these ops (each accepted alone) cannot share one function's vector steps, or None."""
        widths: set[int] = set()
        narrow_direct = []
        masked = []
        for op_type, ins, out in ops:
            ins = tuple(dt.get(d) for d in ins)
            out = dt.get(out)
            if out.is_bool or any(d.is_bool for d in ins):
                masked.append(op_type)
                widths.update(d.itemsize for d in (*ins, out) if not d.is_bool)
                continue
            widths.update(d.itemsize for d in (*ins, out))
            form = op_form(op_type, ins, out)
            in_f32 = form.kind in ("promote", "composite") or op_type in RECIPROCALS
            if in_f32 or _f32_only(op_type, form, out):
                widths.add(4)
            narrow = form.kind in ("direct", "relu_maxs") and out.itemsize == 2
            if narrow and not in_f32 and not _promotable(op_type, out):
                narrow_direct.append(op_type)
        if len(widths) == 1:
            return None
        if masked:
            return (
                f"{masked[0]} makes or reads a mask register, which holds one element size; the run holds "
                f"element sizes {sorted(widths)}"
            )
        if widths == {2, 4} and not narrow_direct:
            return None
        if widths == {2, 4}:
            return (
                f"{narrow_direct[0]} on 2-byte data next to 4-byte values: one vector step cannot hold both "
                "full 2-byte registers and 4-byte ones"
            )
        return (
            f"element sizes {sorted(widths)} in one run: a vector step holds 2- and 4-byte values together, "
            "8-byte values only alone"
        )

    # -- code ----------------------------------------------------------------
    def generate_api_call_string(self) -> str:
        ctx, node = self.ctx, self.node
        steps = node.attrs["steps"]
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
        func = self._define_function(steps)
        tensors = [*node.outputs, *node.inputs]
        args = [
            f"(__ubuf__ {self._ctype(t)}*){v}.GetPhyAddr()" for t, v in zip(tensors, [*out_vars, *in_vars])
        ]
        args.append(f"static_cast<uint32_t>({ctx.expr(node.attrs['count'])})")
        lines.append(f"asc_vf_call<{func}>({', '.join(args)});")
        lines += [ctx.finish(name) for name in node.outputs]
        return "\n".join(line for line in lines if line)

    def _dtype(self, tensor: str) -> dt.DType:
        return self.ctx.impl.tensor(tensor).dtype

    def _ctype(self, tensor: str) -> str:
        return self._dtype(tensor).cpp

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

    @classmethod
    def predicted_counters(cls, node: ImplNode, impl: ImplGraph) -> dict[str, Expr]:
        """``reg_instructions`` and ``reg_cycles`` of one launch: the instructions of the function
        :meth:`generate_api_call_string` writes for ``node`` (:func:`chain_mix`), once per vector step
        of its ``count`` elements (:mod:`af_v35_regbase.reg_cost`)."""
        per_step, step_lanes = chain_mix(node, impl)
        return reg_cost.launch_counters(per_step, reg_cost.vector_steps(node.attrs["count"], step_lanes))

    def _define_function(self, steps: list[dict]) -> str:
        """Define the ``__simd_vf__`` function of these steps (once per kernel); returns its name."""
        node = self.node
        fn = _build(_Source(node, self.ctx.impl, self.ctx.define), steps)
        params = [f"__ubuf__ {self._ctype(t)}* dst{j}" for j, t in enumerate(node.outputs)]
        params += [f"__ubuf__ {self._ctype(t)}* src{i}" for i, t in enumerate(node.inputs)]
        params.append("uint32_t count")
        signature = f"({', '.join(params)})\n"
        body = fn.text()
        digest = hashlib.sha256((signature + body).encode()).hexdigest()[:12]
        func = f"AfChainVf_{digest}"
        what = "; ".join(str(s["op"]) for s in steps)
        head = f"// register vector function: {self.ctx.comment(what)}\n__simd_vf__ inline void {func}"
        self.ctx.define(func, head + signature + body)
        return func


@attrs.frozen
class _Source:
    """What a vector function is built from: the chain node, the tensors' dtypes, where definitions go
    (the kernel's, or nowhere when only its instructions are wanted)."""

    node: ImplNode
    impl: ImplGraph
    define: Callable[[str, str], object]

    def _dtype(self, tensor: str) -> dt.DType:
        return self.impl.tensor(tensor).dtype


def _build(source: _Source, steps: list[dict]) -> _Function:
    """The vector function of a chain node: its loads, each step's instructions, its stores."""
    fn = _Function(source, steps)
    for i, name in enumerate(source.node.inputs):
        fn.load(name, f"src{i}")
    for step in steps:
        fn.step(step)
    for j, name in enumerate(source.node.outputs):
        fn.store(name, f"dst{j}")
    return fn


def chain_mix(node: ImplNode, impl: ImplGraph) -> tuple[reg_cost.RegMix, int]:
    """(register instructions of one vector step, elements per step) of the function a chain node
    generates: the same build as code generation, with the definitions discarded."""
    fn = _build(_Source(node, impl, lambda _name, _text: None), node.attrs["steps"])
    return reg_cost.mix(fn.instrs), fn.lanes


class _Function:
    """The body of one vector function: registers, the per-step instructions, the loop around them.

    Every ``AscendC::Reg`` call of the loop body goes through :meth:`emit`, which records its
    :class:`~af_v35_regbase.reg_cost.RegInstr` (the cost model counts those); :meth:`text` refuses a
    body holding a call that was not recorded.
    """

    def __init__(self, call: _Source, steps: list[dict]) -> None:
        self.call = call
        #: tensor -> mask register, for the comparison results (never loaded nor stored)
        self.masks: dict[str, str] = {}
        mask_tensors = {s["output"] for s in steps if _compares(s["op"])}
        dtypes = {call._dtype(t) for s in steps for t in (*s["inputs"], s["output"]) if t not in mask_tensors}
        forms = [call_form(call, s) for s in steps]
        in_f32 = any(
            f.kind in ("promote", "composite")
            or s["op"] in RECIPROCALS
            or _f32_only(s["op"], f, call._dtype(s["output"]))
            for s, f in zip(steps, forms)
        )
        wide = any(d.itemsize == 4 for d in dtypes) or in_f32
        self.mixed = wide and any(d.itemsize == 2 for d in dtypes)
        size = 4 if wide else max(d.itemsize for d in dtypes)
        self.mask_type = {8: "int64_t", 4: "float", 2: "half", 1: "uint8_t"}[size]
        self.lanes = VECTOR_BYTES // size
        self.decls: list[str] = []
        self.body: list[str] = []
        self.regs: dict[str, str] = {}  # tensor -> register
        #: the register instructions of one loop iteration, the step's UpdateMask (written by text()) first
        self.instrs: list[reg_cost.RegInstr] = [RegInstr("UpdateMask", _MASK_DTYPES[size], MASK)]

    def emit(self, instr: reg_cost.RegInstr, line: str) -> None:
        """Append one register call to the loop body and record its instruction."""
        self.instrs.append(instr)
        self.body.append(line)

    def reg(self, dtype: dt.DType) -> str:
        name = f"r{len(self.decls)}"
        self.decls.append(f"AscendC::Reg::RegTensor<{dtype.cpp}> {name};")
        return name

    def load(self, tensor: str, ptr: str) -> None:
        dtype = self.call._dtype(tensor)
        r = self.reg(dtype)
        if self.mixed and dtype.itemsize == 2:
            self.emit(
                RegInstr("LoadAlign", dtype.name, LOAD, elements=self.lanes),
                f"AscendC::Reg::LoadAlign<{dtype.cpp}, AscendC::Reg::LoadDist::DIST_UNPACK_B16>"
                f"({r}, {ptr} + i * {self.lanes});",
            )
        else:
            self.emit(
                RegInstr("LoadAlign", dtype.name, LOAD),
                f"AscendC::Reg::LoadAlign({r}, {ptr} + i * {self.lanes});",
            )
        self.regs[tensor] = r

    def store(self, tensor: str, ptr: str) -> None:
        if tensor in self.masks:
            raise CodegenError(
                f"node '{self.call.node.name}': the comparison result {tensor!r} is read after the function; "
                "a mask register has no tile to store to"
            )
        dtype = self.call._dtype(tensor)
        r = self.regs[tensor]
        if self.mixed and dtype.itemsize == 2:
            self.emit(
                RegInstr("StoreAlign", dtype.name, STORE, elements=self.lanes),
                f"AscendC::Reg::StoreAlign<{dtype.cpp}, AscendC::Reg::StoreDist::DIST_PACK_B32>"
                f"({ptr} + i * {self.lanes}, {r}, mask);",
            )
        else:
            self.emit(
                RegInstr("StoreAlign", dtype.name, STORE),
                f"AscendC::Reg::StoreAlign({ptr} + i * {self.lanes}, {r}, mask);",
            )

    def cast(self, src: str, to: dt.DType, frm: dt.DType, mode: str) -> str:
        found = _cast_trait(to, frm, mode)
        if found is None:
            raise CodegenError(
                f"node '{self.call.node.name}': no register Cast {frm.name} -> {to.name} ({mode})"
            )
        trait, text = found
        # definitions are emitted in key order: "AfChainVf_-..." sorts before every "AfChainVf_<hex>" function
        self.call.define(f"AfChainVf_-{trait}", text)
        dst = self.reg(to)
        self.emit(
            RegInstr("Cast", to.name, src=frm.name),
            f"AscendC::Reg::Cast<{to.cpp}, {frm.cpp}, {trait}>({dst}, {src}, mask);",
        )
        return dst

    def apply(self, op: str, srcs: list[str], dtype: dt.DType, value: object) -> str:
        api = REG_API[op]
        dst = self.reg(dtype)
        instr = RegInstr(api, dtype.name)
        if op in BINARY:
            self.emit(instr, f"AscendC::Reg::{api}({dst}, {srcs[0]}, {srcs[1]}, mask);")
        elif op in TRUNCATE:
            self.emit(
                instr,
                f"AscendC::Reg::Truncate<{dtype.cpp}, AscendC::RoundMode::{TRUNCATE[op]}>({dst}, {srcs[0]}, mask);",
            )
        elif op in TENSOR_SCALAR:
            scalar = -1.0 if op == "Neg" else TENSOR_SCALAR[op][1] * float(value)  # type: ignore[arg-type]
            self.emit(instr, f"AscendC::Reg::{api}({dst}, {srcs[0]}, {scalar_literal(scalar, dtype)}, mask);")
        else:
            self.emit(instr, f"AscendC::Reg::{api}({dst}, {srcs[0]}, mask);")
        return dst

    def compare(self, step: dict) -> None:
        """A comparison into a mask register, under the step mask (lanes past the tail are off)."""
        op = step["op"]
        src_t = self.call._dtype(step["inputs"][0])
        srcs = [self.regs[t] for t in step["inputs"]]
        m = f"m{len(self.masks)}"
        self.masks[step["output"]] = m
        if op in COMPARE:
            mode = COMPARE[op]
            self.emit(
                RegInstr("Compare", src_t.name),
                f"AscendC::Reg::Compare<{src_t.cpp}, AscendC::CMPMODE::{mode}>({m}, {srcs[0]}, {srcs[1]}, mask);",
            )
            return
        mode = COMPARE_SCALAR[op]
        value = float(step["value"])
        scalar = (
            f"static_cast<{src_t.cpp}>({compare_scalar(mode, value, src_t)})"
            if src_t.is_float
            else scalar_literal(value, src_t)
        )
        self.emit(
            RegInstr("Compares", src_t.name),
            f"AscendC::Reg::Compares<{src_t.cpp}, AscendC::CMPMODE::{mode}>({m}, {srcs[0]}, {scalar}, mask);",
        )

    def select(self, step: dict) -> None:
        """Where as a register Select by the mask its condition's comparison made in this function."""
        cond, *data = step["inputs"]
        if cond not in self.masks:
            raise CodegenError(
                f"node '{self.call.node.name}': Where '{step['name']}' reads the condition {cond!r}, which "
                "no comparison of this function makes"
            )
        r = self.reg(self.call._dtype(step["output"]))
        self.emit(
            RegInstr("Select", self.call._dtype(step["output"]).name),
            f"AscendC::Reg::Select({r}, {self.regs[data[0]]}, {self.regs[data[1]]}, {self.masks[cond]});",
        )
        self.regs[step["output"]] = r

    def step(self, step: dict) -> None:
        call = self.call
        op = step["op"]
        if _compares(op):
            self.compare(step)
            return
        if op == "Where":
            self.select(step)
            return
        ins = [call._dtype(t) for t in step["inputs"]]
        out = call._dtype(step["output"])
        srcs = [self.regs[t] for t in step["inputs"]]
        form = call_form(call, step)
        if op in RECIPROCALS:
            x = srcs[0] if out == _F32 else self.cast(srcs[0], _F32, out, "CAST_NONE")
            t = self.reg(_F32)
            one = self.reg(_F32)
            if op == "Rsqrt":
                self.emit(RegInstr("Sqrt", _F32.name), f"AscendC::Reg::Sqrt({t}, {x}, mask);")
                x = t
            self.emit(
                RegInstr("Duplicate", _F32.name),
                f"AscendC::Reg::Duplicate({one}, static_cast<float>(1), mask);",
            )
            self.emit(RegInstr("Div", _F32.name), f"AscendC::Reg::Div({t}, {one}, {x}, mask);")
            r = t if out == _F32 else self.cast(t, out, _F32, "CAST_RINT")
        elif (
            form.kind == "direct"
            and _promotable(op, out)
            and (self.mixed or not reg_accepts(REG_API[op], out))
        ):
            wide = [self.cast(s, _F32, d, "CAST_NONE") for s, d in zip(srcs, ins)]
            r = self.cast(self.apply(op, wide, _F32, step.get("value")), out, _F32, "CAST_RINT")
        elif form.kind == "direct":
            r = self.apply(op, srcs, out, step.get("value"))
        elif form.kind == "relu_maxs":
            r = self.reg(out)
            self.emit(
                RegInstr("Maxs", out.name),
                f"AscendC::Reg::Maxs({r}, {srcs[0]}, static_cast<{out.cpp}>(0), mask);",
            )
        elif form.kind == "promote":
            wide = [self.cast(s, _F32, d, "CAST_NONE") for s, d in zip(srcs, ins)]
            r = self.cast(self.apply(op, wide, _F32, step.get("value")), out, _F32, "CAST_RINT")
        elif form.kind == "cast":
            r = srcs[0]
            for to, frm, mode in _steps_of(form):
                r = self.cast(r, to, frm, mode)
        elif form.kind == "composite" and op == "Sigmoid":
            x = srcs[0] if out == _F32 else self.cast(srcs[0], _F32, out, "CAST_NONE")
            t = self.reg(_F32)
            one = self.reg(_F32)
            f32 = _F32.name
            self.emit(RegInstr("Muls", f32), f"AscendC::Reg::Muls({t}, {x}, static_cast<float>(-1), mask);")
            self.emit(RegInstr("Exp", f32), f"AscendC::Reg::Exp({t}, {t}, mask);")
            self.emit(RegInstr("Adds", f32), f"AscendC::Reg::Adds({t}, {t}, static_cast<float>(1), mask);")
            self.emit(
                RegInstr("Duplicate", f32), f"AscendC::Reg::Duplicate({one}, static_cast<float>(1), mask);"
            )
            self.emit(RegInstr("Div", f32), f"AscendC::Reg::Div({t}, {one}, {t}, mask);")
            r = t if out == _F32 else self.cast(t, out, _F32, "CAST_RINT")
        else:
            raise CodegenError(f"node '{call.node.name}': step {op} ({form.kind}) has no register form")
        self.regs[step["output"]] = r

    def text(self) -> str:
        calls = sum(line.lstrip().startswith("AscendC::Reg::") for line in self.body)
        if calls != len(self.instrs) - 1:
            raise CodegenError(
                f"node '{self.call.node.name}': the vector function writes {calls} register calls but records "
                f"{len(self.instrs) - 1} instructions (append through _Function.emit)"
            )
        inner = "\n".join(f"        {line}" for line in self.body)
        return (
            "{\n"
            + "".join(f"    {d}\n" for d in self.decls)
            + "    AscendC::Reg::MaskReg mask;\n"
            + "".join(f"    AscendC::Reg::MaskReg {m};\n" for m in self.masks.values())
            + f"    const uint32_t repeats = (count + {self.lanes - 1}u) / {self.lanes}u;\n"
            + "    for (uint32_t i = 0; i < repeats; ++i) {\n"
            + f"        mask = AscendC::Reg::UpdateMask<{self.mask_type}>(count);\n"
            + inner
            + "\n    }\n}\n"
        )


def _compares(op: str) -> bool:
    return op in COMPARE or op in COMPARE_SCALAR


def call_form(call: VfChainRegApiCall | _Source, step: dict) -> Form:
    """The memory-path form of one step, which its register code mirrors."""
    ins = tuple(call._dtype(t) for t in step["inputs"])
    return op_form(step["op"], ins, call._dtype(step["output"]))
