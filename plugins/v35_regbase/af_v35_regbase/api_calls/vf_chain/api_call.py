"""The ApiCall that fills :attr:`Role.VECTOR_CHAIN`: :class:`VfChainRegApiCall` answers the scheduler's
questions (each a rule of :mod:`legality`), the padding its launches read past their tiles, and writes the
launch of the ``__simd_vf__`` function :func:`build._build` builds for its node.

It is the top of the package (the plugin reaches the class through the package's re-export): it asks the
rules and the builder, and nothing else in the package asks it, so the scheduler's view of a run and code
generation's meet only here.
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
from af_v35_regbase.api_calls.vf_chain import legality
from af_v35_regbase.api_calls.vf_chain.build import _build
from af_v35_regbase.api_calls.vf_chain.counts import function_counts
from af_v35_regbase.api_calls.vf_chain.function import _Source
from af_v35_regbase.api_calls.vf_chain.legality import run_step_size
from af_v35_regbase.api_calls.vf_chain.ops import (
    COMPOSITE,
    REG_API,
    VECTOR_BYTES,
    mask_tensors,
    step_signatures,
)
from af_v35_regbase.api_calls.vf_chain.reduce_facts import _REDUCE_PARAMS, UNALIGNED_READ_PAST, starts_aligned
from af_v35_regbase.api_calls.vf_chain.reduce_text import horizontal_text, reduce_text


class VfChainRegApiCall(ApiCall):
    """Fills :attr:`Role.VECTOR_CHAIN`: a run of elementwise ops as one ``__simd_vf__`` function."""

    name = "VfChainRegApiCall"
    roles = frozenset({Role.VECTOR_CHAIN})

    @classmethod
    def supports(cls, op_type: str) -> bool:
        """Whether ``op_type`` has a register form for some dtype."""
        return op_type in REG_API or op_type in COMPOSITE or op_type == "Cast"

    @classmethod
    def rejection(
        cls, op_type: str, in_dtypes: Sequence[dt.DType | str], out_dtype: dt.DType | str
    ) -> str | None:
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
    def reduce_rejection(
        cls,
        kind: str,
        dtype: dt.DType | str,
        view: tuple[object, object, object],
        ops: Sequence[tuple[str, Sequence[dt.DType | str], dt.DType | str]],
    ) -> str | None:
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
        """The launch of the node's vector function: its input tiles taken, its output tiles made (in the tile
        of the value a step replaces, where it says so), the function defined once per kernel and called with
        ``asc_vf_call``; a run a reduce ends launches through :meth:`_reduce_call`."""
        ctx, node = self.ctx, self.node
        steps = node.attrs["steps"]
        if "reduce" in node.attrs:
            return self._reduce_call(steps)
        lines: list[str] = []
        in_vars = self._take_inputs(lines)
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

    def _take_inputs(self, lines: list[str]) -> list[str]:
        """The variables of the node's input tiles, appending to ``lines`` the code that takes each."""
        in_vars = []
        for name in self.node.inputs:
            take, var = self.ctx.use(name)
            lines.append(take)
            in_vars.append(var)
        return in_vars

    def _reduce_call(self, steps: Sequence[ChainStep]) -> str:
        """The launch of a vector function that computes the run and reduces its last value."""
        ctx, node = self.ctx, self.node
        red = node.attrs["reduce"]
        lines: list[str] = []
        in_vars = self._take_inputs(lines)
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
