"""Loads and stores of a function: each input tile into its register (aligned, unpacked next to wider
values, as words or a register pair, or a reduce's block-masked and unaligned loads), each output register
back to its tile, and the predicates moved between mask registers and bit-mask tiles.

A mask move must agree with the fusion's plan of the run (:func:`legality.run_step_size`), so this family
sits above the legality rules, which no other family of code needs.
"""

from __future__ import annotations

import sympy

from af_core.template_api import dtypes as dt
from af_v35_regbase.api_calls.vf_chain.function import RegCall, _Function
from af_v35_regbase.api_calls.vf_chain.legality import B64_MASK_STORE, REDUCE_MASK_LOAD, run_step_size
from af_v35_regbase.api_calls.vf_chain.ops import _I32, VECTOR_BYTES, step_signatures
from af_v35_regbase.api_calls.vf_chain.reduce_facts import UNALIGN_REGS
from af_v35_regbase.reg_cost import LOAD, MASK, STORE


# -- values ---------------------------------------------------------------------------
def load(fn: _Function, tensor: str, ptr: str) -> None:
    """The load of input ``tensor`` (at pointer ``ptr``) into its register, in the form the function's step
    layout holds it: a predicate from its bit-mask tile (:func:`load_mask`), 64-bit values as a register pair
    or as int32 words, a reduce's loads by vector and tail, 1- and 2-byte values unpacked next to wider
    ones."""
    if tensor in fn.mask_reads:
        load_mask(fn, tensor, ptr)
        return
    dtype = fn.source.dtype_of(tensor)
    if tensor in fn.pair_reads and fn.lanes == VECTOR_BYTES // 4 and fn.reduce is None:
        # 64-bit values a Cast to float32 reads (PAIR_FLOAT): a RegTraitNumTwo register, whose LoadAlign is
        # the dual load; its reg[0] holds the low words a Cast to int32 (LOW_WORDS) reads
        pair = f"r{len(fn.decls)}"
        fn.decls.append(f"AscendC::Reg::RegTensor<{dtype.cpp}, AscendC::Reg::RegTraitNumTwo> {pair};")
        fn.instr(
            "LoadAlign",
            _I32,
            pair,
            f"{ptr} + {fn.offset}",
            mask=None,
            kind=LOAD,
            elements=2 * fn.lanes,
        )
        fn.pairs[tensor] = pair
        fn.regs[tensor] = f"(AscendC::Reg::RegTensor<int32_t>&){pair}.reg[0]"
        return
    if dtype.itemsize == 8 and fn.lanes == VECTOR_BYTES // 4 and fn.reduce is None:
        # 64-bit values in a run of 4-byte ones (read only by int64 -> int32, LOW_WORDS): the dual load
        # splits a step's 64 values into their low words (the value's register) and high words
        low, high = fn.reg(_I32), fn.reg(_I32)
        fn.instr(
            "LoadAlign",
            _I32,
            low,
            high,
            f"(__ubuf__ int32_t*)({ptr} + {fn.offset})",
            template="int32_t, AscendC::Reg::LoadDist::DIST_DINTLV_B32",
            mask=None,
            kind=LOAD,
            elements=2 * fn.lanes,
        )
        fn.regs[tensor] = low
        return
    r = fn.reg(dtype)
    if fn.unaligned:
        _load_unaligned(fn, r, dtype, ptr)
    elif fn.reduce is not None:
        # a whole vector of data: the contiguous load; a tail: only the 32-byte blocks the mask reaches
        # (nothing past the data), at the documented half rate of the block-strided load
        at = f"{ptr} + {fn.offset}"
        fn.full_loads.append(RegCall("LoadAlign", dtype.name, (r, at), kind=LOAD))
        fn.tail_loads.append(
            RegCall(
                "LoadAlign",
                dtype.name,
                (r, at, "1u", "mask"),
                f"{dtype.cpp}, AscendC::Reg::DataCopyMode::DATA_BLOCK_COPY",
                kind=LOAD,
                block=True,
            )
        )
    elif fn.bytes_unpacked and dtype.itemsize == 1:
        _load_dist(fn, r, dtype, ptr, "DIST_UNPACK_B8")
    elif fn.bytes_quartered and dtype.itemsize == 1:
        _load_dist(fn, r, dtype, ptr, "DIST_UNPACK4_B8")
    elif fn.mixed and dtype.itemsize == 2:
        _load_dist(fn, r, dtype, ptr, "DIST_UNPACK_B16")
    else:
        fn.instr("LoadAlign", dtype, r, f"{ptr} + {fn.offset}", mask=None, kind=LOAD)
    fn.regs[tensor] = r


def _load_dist(fn: _Function, r: str, dtype: dt.DType, ptr: str, dist: str) -> None:
    """A load of narrow values unpacked by ``dist`` into the lanes of the step's wider ones (one step's
    elements)."""
    fn.instr(
        "LoadAlign",
        dtype,
        r,
        f"{ptr} + {fn.offset}",
        template=f"{dtype.cpp}, AscendC::Reg::LoadDist::{dist}",
        mask=None,
        kind=LOAD,
        elements=fn.lanes,
    )


def _load_unaligned(fn: _Function, r: str, dtype: dt.DType, ptr: str) -> None:
    """A reduce's load of a group row / group vector that may not start on a 32-byte block.

    ``LoadUnAlign`` splices the register from the 32-byte block its ``UnalignRegForLoad`` holds and the
    256 bytes after it, and leaves the block of the address 256 bytes on in the register. Over the
    innermost axis a group's vectors follow one another, so one ``LoadUnAlignPre`` per group and input
    (each input its own register, at most :data:`reduce_facts.UNALIGN_REGS`) serves all of them; otherwise
    (kept inner width: the next load is another group row) each load has its own ``LoadUnAlignPre`` into one
    shared register. Unmasked: the lanes past the data hold the bytes after it (the tile's padding,
    :meth:`api_call.VfChainRegApiCall.read_past_tiles`), which the masked instructions never read."""
    assert fn.reduce is not None
    per_group = sympy.sympify(fn.reduce.inner) == 1 and len(fn.source.node.inputs) <= UNALIGN_REGS
    at = f"{ptr} + {fn.offset}"
    if per_group:
        u = f"u{len(fn.uregs)}"
        fn.uregs.append(u)
        row = f"{ptr} + t * src_pitch + a * group"
        fn.row_pres.append(_load_pre(u, dtype, row))
    else:
        if not fn.uregs:
            fn.uregs.append("u0")
        u = fn.uregs[0]
        fn.unaligned_loads.append(_load_pre(u, dtype, at))
    fn.unaligned_loads.append(RegCall("LoadUnAlign", dtype.name, (r, u, at), kind=LOAD))


def _load_pre(u: str, dtype: dt.DType, at: str) -> RegCall:
    """The ``LoadUnAlignPre`` of ``u`` at address ``at``: the 32-byte block holding it."""
    return RegCall("LoadUnAlignPre", dtype.name, (u, at), kind=LOAD, elements=32 // dtype.itemsize)


def store(fn: _Function, tensor: str, ptr: str) -> None:
    """The store of output ``tensor`` (at pointer ``ptr``) from its register: a predicate into its bit-mask
    tile (:func:`store_mask`), 64-bit words as the interleaved pair, a 4-byte register's low bytes, 1- and
    2-byte values packed from the lanes of wider ones."""
    if tensor in fn.masks:
        store_mask(fn, tensor, ptr)
        return
    dtype = fn.source.dtype_of(tensor)
    r = fn.regs[tensor]
    if tensor in fn.words:
        # 64 values as low / high words, interleaved by the dual store (mask ignored)
        low, high = fn.words[tensor]
        fn.instr(
            "StoreAlign",
            _I32,
            f"(__ubuf__ int32_t*)({ptr} + {fn.offset})",
            low,
            high,
            template="int32_t, AscendC::Reg::StoreDist::DIST_INTLV_B32",
            kind=STORE,
            elements=2 * fn.lanes,
        )
        return
    if tensor in fn.low_bytes:
        wide = fn.low_bytes[tensor]
        fn.instr(
            "StoreAlign",
            wide,
            f"(__ubuf__ {wide.cpp}*)({ptr} + {fn.offset})",
            r,
            template=f"{wide.cpp}, AscendC::Reg::StoreDist::DIST_PACK4_B32",
            kind=STORE,
        )
        return
    if fn.bytes_quartered and dtype.itemsize == 1:
        raise fn.error(
            f"{tensor!r} holds 1-byte values next to 4-byte ones; no store of that layout is generated"
        )
    if fn.bytes_unpacked and dtype.itemsize == 1:
        _store_dist(fn, r, dtype, ptr, "DIST_PACK_B16")
    elif fn.mixed and dtype.itemsize == 2:
        _store_dist(fn, r, dtype, ptr, "DIST_PACK_B32")
    else:
        fn.instr("StoreAlign", dtype, f"{ptr} + {fn.offset}", r, kind=STORE)


def _store_dist(fn: _Function, r: str, dtype: dt.DType, ptr: str, dist: str) -> None:
    """A store of narrow values packed by ``dist`` from the lanes of the step's wider ones (one step's
    elements)."""
    fn.instr(
        "StoreAlign",
        dtype,
        f"{ptr} + {fn.offset}",
        r,
        template=f"{dtype.cpp}, AscendC::Reg::StoreDist::{dist}",
        kind=STORE,
        elements=fn.lanes,
    )


# -- predicates -------------------------------------------------------------------------
def _mask_bytes(fn: _Function, what: str) -> int:
    """Bytes of the bit-mask tile one vector step covers (one bit per element), refused where no mask
    move is generated (a reduce function; a store of 8-byte elements' masks)."""
    if fn.reduce is not None:
        raise fn.error(REDUCE_MASK_LOAD)
    size = VECTOR_BYTES // fn.lanes
    steps = step_signatures(fn.source.node.attrs["steps"], fn.source.dtype_of)
    if run_step_size(steps) != size:
        raise fn.error(
            f"the function steps by {size}-byte elements but its ops by {run_step_size(steps)}-byte ones; "
            f"the {what} would not match the fusion's plan"
        )
    return fn.lanes // 8


def load_mask(fn: _Function, tensor: str, ptr: str) -> None:
    """A predicate made outside the function, read from its bit-mask tile (one bit per element) into a
    mask register of the step's element size, as the 3510 memory Select reads its condition: 1-byte
    elements the 32 bytes of a step (``LoadAlign`` DIST_NORM), 2-byte ones 16 bytes each bit doubled
    (DIST_US); 4-byte ones 8 bytes, which start on no 16-byte boundary every other step, through a
    register (``LoadUnAlign``, ``MaskGenWithRegTensor`` of its first 8 bytes); 8-byte ones the first half
    of that mask unpacked (``UnPack``)."""
    per_step = _mask_bytes(fn, f"load of {tensor!r}")
    m = f"m{len(fn.masks)}"
    fn.masks[tensor] = m
    if per_step >= 16:
        dist = "DIST_NORM" if per_step == 32 else "DIST_US"
        at = f"{ptr} + i * {per_step}"
        template = f"uint8_t, AscendC::Reg::MaskDist::{dist}"
        fn.write(
            RegCall("LoadAlign", dt.uint8.name, (m, at), template, kind=LOAD, elements=per_step, of_mask=True)
        )
        return
    if fn.uload is None:
        fn.uload = "uload"
        fn.before.append("AscendC::Reg::UnalignRegForLoad uload;")
    words = per_step // 4  # uint32 words of the tile one step covers
    at = f"(__ubuf__ uint32_t*){ptr} + i" + (f" * {words}" if words > 1 else "")
    r = fn.reg(dt.uint32)
    u32 = dt.uint32.name
    fn.instr("LoadUnAlignPre", u32, fn.uload, at, mask=None, kind=LOAD, elements=8)
    fn.instr("LoadUnAlign", u32, r, fn.uload, at, mask=None, kind=LOAD)
    target = m if per_step == 8 else f"m{len(fn.masks)}b"
    fn.instr("MaskGenWithRegTensor", u32, target, r, template="uint32_t, 0", mask=None, kind=MASK)
    if per_step == 4:
        fn.masks[f"#bits{len(fn.masks)}"] = target
        fn.instr("UnPack", u32, m, target, mask=None, kind=MASK)


def store_mask(fn: _Function, tensor: str, ptr: str) -> None:
    """A predicate the function makes for a reader outside it, written to its bit-mask tile (one bit
    per element), as the 3510 memory Compare writes one: 1-byte elements' mask the 32 bytes of a step
    (``StoreAlign`` DIST_NORM), 2-byte ones' 16 bytes (DIST_PACK: every other bit); 4-byte ones' 8 bytes,
    which start on no 16-byte boundary every other step, through an ``UnalignRegForStore`` that
    ``StoreUnAlign`` fills and the ``StoreUnAlignPost`` after the loop empties."""
    per_step = _mask_bytes(fn, f"store of {tensor!r}")
    m = fn.masks[tensor]
    if per_step >= 16:
        dist = "DIST_NORM" if per_step == 32 else "DIST_PACK"
        at = f"{ptr} + i * {per_step}"
        template = f"uint8_t, AscendC::Reg::MaskDist::{dist}"
        fn.write(
            RegCall(
                "StoreAlign", dt.uint8.name, (at, m), template, kind=STORE, elements=per_step, of_mask=True
            )
        )
        return
    if per_step != 8:
        raise fn.error(B64_MASK_STORE)
    n = len(fn.before)
    bits, ureg = f"bits{n}", f"ustore{n}"
    fn.before += [
        f"__ubuf__ uint32_t* {bits} = (__ubuf__ uint32_t*){ptr};",
        f"AscendC::Reg::UnalignRegForStore {ureg};",
    ]
    u32 = dt.uint32.name
    fn.write(RegCall("StoreUnAlign", u32, (bits, m, ureg), kind=STORE, of_mask=True))
    post = "uint32_t, AscendC::Reg::PostLiteral::POST_MODE_NORMAL"
    fn.after.append(RegCall("StoreUnAlignPost", u32, (bits, ureg, "0"), post, kind=STORE, of_mask=True))
