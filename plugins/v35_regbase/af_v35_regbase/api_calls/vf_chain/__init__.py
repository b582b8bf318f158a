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
- ``cast``: the route's Cast steps (:func:`routes.register_route`), when each
  is a register Cast the twin and the 3510 implementation have (float <->
  float16 / bfloat16, float <-> int32; float16 / bfloat16 -> int32 rounding
  through float; int16 <-> float, float16 -> int16, int16 -> float16, 2-byte
  <-> 4-byte integers and float16 <-> bfloat16,
  :func:`routes._two_byte_cast_trait`; int8 / uint8 <-> float16 / int16 /
  uint16, :func:`routes._byte_cast_trait`) or a same-width integer
  reinterpretation (a register view, no instruction); a Cast between two
  2-byte types takes full 2-byte registers, so its run holds no 4-byte values;
  a run holding 1- and 2-byte values steps over 128 elements, the 1-byte ones
  in the even byte lanes (``LoadAlign`` ``DIST_UNPACK_B8``, ``StoreAlign``
  ``DIST_PACK_B16``), read only by Casts; a run holding 1- and 4-byte values
  steps over 64, the 1-byte ones in every fourth byte lane (``LoadAlign``
  ``DIST_UNPACK4_B8``), read only by Cast routes widening them
  (:func:`routes._widens_from_bytes`);
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
:data:`legality.MEMORY_CALL_REASONS` (predicates crossing a run's edge, 8-bit
Mul / Muls widened to int16, casts through other type pairs and casts to or
from 64 bits): forms the 3510 register API has that vector functions do not
generate yet. :meth:`VfChainRegApiCall.rejection` says why, and
``afc explain`` prints it.

A reduce over a kept inner width (``out[r, i] = fold over g of x[r, g, i]``)
ends the run whose last value it reduces, or runs alone in a function of its
own (:meth:`VfChainRegApiCall.reduce_rejection` says when): each group row is
loaded with ``LoadAlign`` (a tail with the block-masked form,
``DataCopyMode::DATA_BLOCK_COPY``: only the 32-byte blocks the tail mask
reaches are read, nothing past the tile), the chain computed in registers and
folded into an accumulator in the memory path's order
(:func:`reduce_text.reduce_steps`), so the value never goes through UB. Over
the innermost axis the group is accumulated lane-wise and ``Reg::Reduce``
folds the lanes (:func:`reduce_text.horizontal_steps`, whose docstring gives
the float sum order). Group rows or groups not known to start on 32-byte
blocks (widths that do not fill whole blocks, dynamic widths) are loaded with
``Reg::LoadUnAlign`` after a ``Reg::LoadUnAlignPre``
(:func:`moves._load_unaligned`) in the same order of folds; it reads whole
blocks past the data, so the tiles the function reads are padded
(:meth:`VfChainRegApiCall.read_past_tiles`). Results are stored with
``StoreAlign`` at each result row's start, so a kept-width reduce whose rows
are not known to start on 32-byte blocks has no register form
(:func:`reduce_facts.stores_aligned`). Where the register form has none the
reduce stays the memory-based ``ReduceRegApiCall``, with the reason in
``afc explain``.

The package, each module importing only those listed before it:

- :mod:`ops`: the vocabulary -- each op's register instruction, the form kinds
  (:class:`FormKind`), the facts of one op or one chain step;
- :mod:`routes`: the Cast routes in registers and their CastTraits;
- :mod:`reduce_facts`: the reduces a function ends with and how their rows are
  moved;
- :mod:`function`: the core of a function's code -- registers, the
  :class:`RegCall` each register call is written and recorded from, the loop
  text;
- :mod:`casts`, :mod:`b64`, :mod:`values`: Casts, 64-bit words and pairs, and
  the value steps' code the table's rows name;
- :mod:`forms`: the table of register forms (:data:`REGISTER_FORMS`), the one
  source of both the legality and the code of a value step;
- :mod:`legality`: every rule of which ops share a function, and every reason
  one stays a memory-based call;
- :mod:`predicates`, :mod:`moves`, :mod:`reduce_text`: the steps on mask
  registers, the loads and stores, the text of a run a reduce ends;
- :mod:`build`: the builder, reading the table for each value step's code;
- :mod:`counts`: what the cost model counts of a built function;
- :mod:`api_call`: :class:`VfChainRegApiCall`, the ApiCall the plugin registers.

The package re-exports the names its importers use from
``af_v35_regbase.api_calls.vf_chain``: the public names of the modules above,
and the builder, source and cached run facts its tests reach.
"""

from __future__ import annotations

from af_v35_regbase.api_calls.vf_chain.api_call import VfChainRegApiCall
from af_v35_regbase.api_calls.vf_chain.build import _build
from af_v35_regbase.api_calls.vf_chain.counts import chain_mix, function_counts
from af_v35_regbase.api_calls.vf_chain.forms import B64_FORMS, REGISTER_FORMS, UNSIGNED_FORMS, RegisterForm
from af_v35_regbase.api_calls.vf_chain.function import RegCall, _Source
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
    REDUCE_KINDS,
    REG_REDUCE,
    UNALIGN_REGS,
    UNALIGNED_READ_PAST,
    reduce_apis,
    starts_aligned,
    stores_aligned,
)
from af_v35_regbase.api_calls.vf_chain.reduce_text import horizontal_steps, reduce_steps
from af_v35_regbase.api_calls.vf_chain.routes import (
    FLOAT_WORDS,
    LOW_BYTE,
    LOW_WORDS,
    PAIR_FLOAT,
    SIGN_WORDS,
    _route_modes,
    register_route,
)

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
