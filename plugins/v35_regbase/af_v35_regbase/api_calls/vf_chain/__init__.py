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
  float16 / bfloat16 ops of :data:`ops.ROUNDS_ONCE` whose register instruction
  takes no such dtype, or in a run with 4-byte values, Cast up, the
  instruction in float32 and Cast back (the same bits, see ROUNDS_ONCE);
- ``promote``: float16 / bfloat16 inputs cast up to float32 (exact), the op in
  float32, the result cast back with CAST_RINT;
- ``cast``: the route's Cast steps (:func:`routes.register_route`), when each is a
  register Cast the twin and the 3510 implementation have (float <-> float16 /
  bfloat16, float <-> int32; float16 / bfloat16 -> int32 rounding through
  float; int16 <-> float, float16 -> int16, int16 -> float16, 2-byte <->
  4-byte integers and float16 <-> bfloat16, :func:`routes._two_byte_cast_trait`;
  int8 / uint8 <-> float16 / int16 / uint16, :func:`routes._byte_cast_trait`) or
  a same-width integer reinterpretation (a register view, no instruction); a
  Cast between two 2-byte types takes full 2-byte registers, so its run holds
  no 4-byte values; a run holding 1- and 2-byte values steps over 128
  elements, the 1-byte ones in the even byte lanes (``LoadAlign``
  ``DIST_UNPACK_B8``, ``StoreAlign`` ``DIST_PACK_B16``), read only by Casts; a
  run holding 1- and 4-byte values steps over 64, the 1-byte ones in every
  fourth byte lane (``LoadAlign`` ``DIST_UNPACK4_B8``), read only by Cast
  routes widening them (:func:`routes._widens_from_bytes`);
- 64-bit integers (a run of them alone, 32 per step): the ``direct`` and
  ``bits`` ops the 3510 register table takes for them (Add / Sub / Mul,
  Adds / Subs / Muls, Maximum / Minimum / Maxs / Mins, the bitwise ops, and
  on int64 Abs / Relu / Neg) and their comparisons and Where (Compare /
  Compares / Select), each a sequence over a register pair in the 3510
  implementation (:func:`legality._b64_rejection`);
- ``reinterpret`` / ``splat`` (uint16 / uint32 Adds / Subs / Muls on the
  signed view, Maxs / Mins as Duplicate + Max / Min): the register
  tensor-scalar instruction in the unsigned type (:data:`forms.UNSIGNED_FORMS`);
- ``widen`` int8 Neg: the register Neg in int8; 8-bit Mul / Muls as the
  memory path computes them, in int16 lanes (:func:`ops._widened_bytes`);
- ``composite`` Sigmoid: 1 / (1 + exp(-x)) in float32, the reciprocal as a Div
  of a register of ones; ``composite`` Exp2: the memory path's steps, one
  register instruction each (:func:`values.exp2`), the same bits.

Floor / Ceil / Round are the register ``Truncate`` with the memory path's
RoundMode. Reciprocal and Rsqrt (no register instruction of their own) are a
``Div`` of a register of ones, after a ``Sqrt`` for Rsqrt, in float32.

Comparisons (Gt / Ge / Lt / Le / Eq / Ne, and their scalar forms) are a
register ``Compare`` / ``Compares`` into a ``MaskReg``, and Where is a
``Select`` by that mask. Outside a run a predicate is the bit-mask tile the
memory path uses (one bit per element), so
:meth:`VfChainRegApiCall.run_local_dtypes` names ``bool`` and
:meth:`VfChainRegApiCall.edge_rejection` lets a run store a predicate read
outside it and load one made outside it, as the 3510 memory Compare writes and
Select reads one (:func:`moves.store_mask`, :func:`moves.load_mask`:
``StoreAlign`` / ``LoadAlign`` of the mask register for 1- and 2-byte steps,
``StoreUnAlign`` / ``LoadUnAlign`` + ``MaskGenWithRegTensor`` for 4-byte
ones, plus ``UnPack`` for a 64-bit run's load); a 64-bit run stores none and a
run a reduce ends loads none (the fusion keeps those ops memory calls, with
the reason). The masks are per element width, so a run holding them has one
mask size. The memory path compares into a bit-mask tile and selects by it; the
register path makes the same predicate per lane (the same scalar as
:func:`~af_v35_regbase.api_calls.vector.compare_scalar` picks for a 2-byte
Compares) and selects the same bits.

Logical ops (LogicalAnd / Or / Xor / Not) of those predicates are the register
``And`` / ``Or`` / ``Xor`` / ``Not`` on mask registers, under the step mask
(zeroing: no lane past the tail turns on) -- the predicate per lane the memory
path's bit-mask tiles hold, so a Where selects the same bits.

Bitwise ops (BitwiseAnd / Or / Xor / Not) are the register ``And`` / ``Or`` /
``Xor`` / ``Not`` in the tile's own integer type: the same bits as the memory
path's calls on the int16 view of the same bytes.

Every other form stays a memory-based call, for one of the reasons of
:data:`legality.MEMORY_CALL_REASONS` (predicates crossing a run's edge, 8-bit Mul / Muls
widened to int16, casts through other type pairs and casts to or from 64 bits): forms
the 3510 register API has that vector functions do not generate yet. :meth:`VfChainRegApiCall.rejection`
says why, and ``afc explain`` prints it.

A reduce over a kept inner width (``out[r, i] = fold over g of x[r, g, i]``)
ends the run whose last value it reduces, or runs alone in a function of its
own (:meth:`VfChainRegApiCall.reduce_rejection` says when): each group row is
loaded with ``LoadAlign`` (a tail with the block-masked form,
``DataCopyMode::DATA_BLOCK_COPY``: only the 32-byte blocks the tail mask
reaches are read, nothing past the tile), the chain computed
in registers and folded into an accumulator in the memory path's order
(:func:`reduce_text.reduce_steps`), so the value never goes through UB. Over the innermost
axis the group is accumulated lane-wise and ``Reg::Reduce`` folds the lanes
(:func:`reduce_text.horizontal_steps`, whose docstring gives the float sum order). Group
rows or groups not known to start on 32-byte blocks (widths that do not fill
whole blocks, dynamic widths) are loaded with ``Reg::LoadUnAlign`` after a
``Reg::LoadUnAlignPre`` (:func:`moves._load_unaligned`) in the same order
of folds; it reads whole blocks past the data, so the tiles the function reads
are padded (:meth:`VfChainRegApiCall.read_past_tiles`). Results are stored
with ``StoreAlign`` at each result row's start, so a kept-width reduce whose
rows are not known to start on 32-byte blocks has no register form
(:func:`reduce_facts.stores_aligned`). Where the register form has none the reduce stays
the memory-based ``ReduceRegApiCall``, with the reason in ``afc explain``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import sympy

from af_core.template_api import (
    ApiCall,
    ChainReduce,
    ChainStep,
    CodegenError,
    Expr,
    ImplGraph,
    ImplNode,
    Role,
)
from af_core.template_api import dtypes as dt
from af_v35_regbase import reg_cost
from af_v35_regbase.api_calls.vf_chain import legality
from af_v35_regbase.api_calls.vf_chain.build import _build
from af_v35_regbase.api_calls.vf_chain.forms import B64_FORMS, REGISTER_FORMS, UNSIGNED_FORMS, RegisterForm
from af_v35_regbase.api_calls.vf_chain.function import RegCall, _Function, _Source
from af_v35_regbase.api_calls.vf_chain.legality import (
    B64_MASK_STORE,
    MEMORY_CALL_REASONS,
    REDUCE_MASK_LOAD,
    _run_facts,
    memory_call_reason,
    run_step_size,
)
from af_v35_regbase.api_calls.vf_chain.ops import (
    BITWISE_BINARY,
    COMPOSITE,
    RECIPROCALS,
    REG_API,
    ROUNDS_ONCE,
    VECTOR_BYTES,
    FormKind,
    b64_api,
    bool_inputs,
    call_form,
    form_kind,
    mask_tensors,
    step_signatures,
)
from af_v35_regbase.api_calls.vf_chain.reduce_facts import (
    _REDUCE_PARAMS,
    REDUCE_KINDS,
    REG_REDUCE,
    UNALIGN_REGS,
    UNALIGNED_READ_PAST,
    reduce_apis,
    starts_aligned,
    stores_aligned,
)
from af_v35_regbase.api_calls.vf_chain.reduce_text import (
    horizontal_steps,
    horizontal_text,
    loop_counts,
    reduce_parts,
    reduce_steps,
    reduce_text,
)
from af_v35_regbase.api_calls.vf_chain.routes import (
    FLOAT_WORDS,
    LOW_BYTE,
    LOW_WORDS,
    PAIR_FLOAT,
    SIGN_WORDS,
    _route_modes,
    register_route,
)


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
        """Why ``op_type`` on these dtypes cannot join a register vector function, or None when it can
        (:func:`legality.op_rejection`: the op's row of the table of register forms)."""
        return legality.op_rejection(op_type, in_dtypes, out_dtype)

    @classmethod
    def run_local_dtypes(cls) -> frozenset[str]:
        """``bool``: a comparison's result lives in a mask register; it crosses a run's edge only as
        :meth:`edge_rejection` allows."""
        return frozenset({"bool"})

    @classmethod
    def edge_rejection(
        cls,
        ops: Sequence[tuple[str, Sequence[dt.DType], dt.DType]],
        dtype: dt.DType,
        *,
        stores: bool,
        reduces: bool,
    ) -> str | None:
        """Why a run of ``ops`` cannot store a predicate it makes (``stores``) or load one made outside it,
        or None (:func:`legality.edge_rejection`)."""
        return legality.edge_rejection(ops, dtype, stores=stores, reduces=reduces)

    @classmethod
    def run_rejection(cls, ops: Sequence[tuple[str, Sequence[dt.DType], dt.DType]]) -> str | None:
        """Why these ops (each accepted alone) cannot share one function's vector steps, or None
        (:func:`legality.run_rejection`)."""
        return legality.run_rejection(ops)

    @classmethod
    def reduce_rejection(cls, kind: str, dtype, view, ops) -> str | None:
        """Why a reduce of ``kind`` over ``dtype`` tiles viewed as ``view`` = ``(rows, group, inner)``
        cannot end a run of ``ops`` (empty: the reduce alone) in one vector function, or None when it can
        (:func:`legality.reduce_rejection`)."""
        return legality.reduce_rejection(kind, dtype, view, ops)

    @classmethod
    def read_past_tile(cls, node: ImplNode, impl: ImplGraph, tensor: str) -> int:
        """:meth:`read_past_tiles`, and for a 64-bit tile a run of 4-byte values reads or writes as int32
        words a vector: its dual load (:data:`routes.LOW_WORDS`, and the load of a RegTraitNumTwo register for
        :data:`routes.PAIR_FLOAT`) reads and its dual store (:data:`routes.SIGN_WORDS`,
        :data:`routes.FLOAT_WORDS`, the mask ignored) writes 512 bytes a step, a vector more than a tile sized
        in whole 256-byte repeats may hold."""
        # the reduce's unaligned loads read past the tiles it reads, not past those it writes
        past = 0 if tensor in node.outputs else cls.read_past_tiles(node, impl)
        steps = node.attrs["steps"]
        made, reads = mask_tensors(steps)
        masks = made | reads
        if tensor in masks:
            # a bit-mask tile: a function stepping by 4- or 8-byte elements loads a step's bits by LoadUnAlign,
            # which reads the 256 bytes after the 32-byte block holding them (moves.load_mask)
            sigs = step_signatures(steps, lambda t: impl.tensor(t).dtype)
            wide = tensor in reads and "reduce" not in node.attrs and run_step_size(sigs) >= 4
            return max(past, UNALIGNED_READ_PAST) if wide else past
        # a run of 64-bit values holds nothing else (32 per step); any other tile makes it a 4-byte step
        dtypes = [impl.tensor(t).dtype for t in (*node.inputs, *node.outputs) if t not in masks]
        if impl.tensor(tensor).dtype.itemsize == 8 and any(d.itemsize != 8 for d in dtypes):
            past = max(past, VECTOR_BYTES)
        return past

    @classmethod
    def read_past_tiles(cls, node: ImplNode, impl: ImplGraph) -> int:
        """Bytes past the end of its input tiles that one launch may read: a reduce whose groups are not
        known to start on 32-byte blocks loads them with ``LoadUnAlign``, which reads the 256 bytes after
        the 32-byte block holding its address (:data:`reduce_facts.UNALIGNED_READ_PAST`); 0 otherwise."""
        reduce = node.attrs.get("reduce")
        if reduce is None or starts_aligned(reduce, impl.tensor(reduce.output).dtype):
            return 0
        return UNALIGNED_READ_PAST

    # -- code ----------------------------------------------------------------
    def generate_api_call_string(self) -> str:
        ctx, node = self.ctx, self.node
        steps = node.attrs["steps"]
        if "reduce" in node.attrs:
            return self._reduce_call(steps)
        lines: list[str] = []
        in_vars = []
        for name in node.inputs:
            take, var = ctx.use(name)
            lines.append(take)
            in_vars.append(var)
        by_step = {s.output: s for s in steps}
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

    def _reduce_call(self, steps: Sequence[ChainStep]) -> str:
        """The launch of a vector function that computes the run and reduces its last value."""
        ctx, node = self.ctx, self.node
        red = node.attrs["reduce"]
        lines: list[str] = []
        in_vars = []
        for name in node.inputs:
            take, var = ctx.use(name)
            lines.append(take)
            in_vars.append(var)
        (out,) = node.outputs
        make, out_var = ctx.produce(out)
        lines.append(make)
        func = self._define_function(steps, red)
        args = [
            f"(__ubuf__ {self._ctype(t)}*){v}.GetPhyAddr()"
            for t, v in zip([out, *node.inputs], [out_var, *in_vars])
        ]
        args += [
            f"static_cast<uint32_t>({ctx.expr(getattr(red, key))})"
            for key in ("tiles", "rows", "group", "inner", "src_pitch", "dst_pitch")
        ]
        if red.kind == "Mean":
            args.append(f"static_cast<float>(1.0 / static_cast<double>({ctx.expr(red.group)}))")
        lines.append(f"asc_vf_call<{func}>({', '.join(args)});")
        lines.append(ctx.finish(out))
        return "\n".join(line for line in lines if line)

    def dtype_of(self, tensor: str) -> dt.DType:
        """The dtype of one of the node's tensors."""
        return self.ctx.impl.tensor(tensor).dtype

    def _ctype(self, tensor: str) -> str:
        return self.dtype_of(tensor).cpp

    def _make_storage(self, tensor: str, by_step: dict[str, ChainStep], ready: set[str]) -> list[str]:
        """Lines that give ``tensor`` its storage: its own tile, or (in place) the tile of the value it
        replaces, following the in-place links back to an input or an earlier tile made ready here."""
        if tensor in ready:
            return []
        like = by_step[tensor].inplace
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
        :meth:`generate_api_call_string` writes for ``node`` (:func:`counts.function_counts`), each times the
        iterations of the loop it sits in (:mod:`af_v35_regbase.reg_cost`)."""
        return function_counts(node, impl)

    def _define_function(self, steps: Sequence[ChainStep], reduce: ChainReduce | None = None) -> str:
        """Define the ``__simd_vf__`` function of these steps, and of the reduce that ends them if any
        (once per kernel); returns its name."""
        node = self.node
        fn = _build(_Source(node, self.ctx.impl, self.ctx.define), steps, reduce)
        params = [f"__ubuf__ {self._ctype(t)}* dst{j}" for j, t in enumerate(node.outputs)]
        params += [f"__ubuf__ {self._ctype(t)}* src{i}" for i, t in enumerate(node.inputs)]
        if reduce is None:
            params.append("uint32_t count")
        else:
            params += [f"uint32_t {p}" for p in _REDUCE_PARAMS]
            if reduce.kind == "Mean":
                params.append("float scale")
        signature = f"({', '.join(params)})\n"
        if reduce is None:
            body = fn.text()
        elif sympy.sympify(reduce.inner) == 1:
            body = horizontal_text(fn, reduce)
        else:
            body = reduce_text(fn, reduce)
        digest = hashlib.sha256((signature + body).encode()).hexdigest()[:12]
        func = f"AfChainVf_{digest}"
        what = "; ".join([*(str(s.op) for s in steps), *([reduce.kind] if reduce else [])])
        head = f"// register vector function: {self.ctx.comment(what)}\n__simd_vf__ inline void {func}"
        self.ctx.define(func, head + signature + body)
        return func


# -- what the cost model counts ----------------------------------------------------
def _counted(node: ImplNode, impl: ImplGraph) -> _Function:
    """The function a chain node generates, built as code generation builds it with the definitions
    discarded: what the cost model counts."""
    return _build(
        _Source(node, impl, lambda _name, _text: None), node.attrs["steps"], node.attrs.get("reduce")
    )


def function_counts(node: ImplNode, impl: ImplGraph) -> dict[str, Expr]:
    """``reg_instructions`` and ``reg_cycles`` of one launch of the function a chain node generates: the
    same build as code generation (definitions discarded), each recorded instruction times the iterations
    of the loop it is written in -- the vector steps of ``count`` (and the lines after that loop once), or a
    reduce's loops (:func:`reduce_text.loop_counts`)."""
    fn = _counted(node, impl)
    reduce = node.attrs.get("reduce")
    if reduce is None:
        steps = reg_cost.vector_steps(node.attrs["count"], fn.lanes)
        return reg_cost.launch_counters(reg_cost.mix(fn.instrs), steps, once=reg_cost.mix(fn.after_instrs))
    if sympy.sympify(reduce.inner) == 1:
        horizontal_text(fn, reduce)
    else:
        reduce_text(fn, reduce)
    loops = loop_counts(fn, reduce)
    return reg_cost.loop_counters([(loops[loop], reg_cost.mix(instrs)) for loop, instrs in reduce_parts(fn)])


def chain_mix(node: ImplNode, impl: ImplGraph) -> tuple[reg_cost.RegMix, int]:
    """(register instructions of one vector step, elements per step) of the function a chain node
    generates: the same build as code generation, with the definitions discarded."""
    fn = _counted(node, impl)
    return reg_cost.mix(fn.instrs), fn.lanes


__all__ = [
    "B64_FORMS",
    "B64_MASK_STORE",
    "BITWISE_BINARY",
    "COMPOSITE",
    "FLOAT_WORDS",
    "FormKind",
    "LOW_BYTE",
    "LOW_WORDS",
    "MEMORY_CALL_REASONS",
    "PAIR_FLOAT",
    "RECIPROCALS",
    "REDUCE_KINDS",
    "REDUCE_MASK_LOAD",
    "REGISTER_FORMS",
    "REG_API",
    "REG_REDUCE",
    "ROUNDS_ONCE",
    "RegCall",
    "RegisterForm",
    "SIGN_WORDS",
    "UNALIGNED_READ_PAST",
    "UNALIGN_REGS",
    "UNSIGNED_FORMS",
    "VECTOR_BYTES",
    "VfChainRegApiCall",
    "_Source",
    "_build",
    "_route_modes",
    "_run_facts",
    "b64_api",
    "bool_inputs",
    "call_form",
    "chain_mix",
    "form_kind",
    "function_counts",
    "horizontal_steps",
    "mask_tensors",
    "memory_call_reason",
    "reduce_apis",
    "reduce_steps",
    "register_route",
    "run_step_size",
    "starts_aligned",
    "step_signatures",
    "stores_aligned",
]
