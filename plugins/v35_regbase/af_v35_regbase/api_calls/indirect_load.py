"""IndirectLoadRegApiCall: the IndirectLoad node, dispatched on the gather mode the case asks for.

Like Autofuse's ``IndirectLoadRegApiCall``, one ApiCall serves every
template; ``node.attrs["gather_mode"]`` (a :class:`GatherMode`) selects the
generator — SIMT lanes reading GM, or a vector Gather of a UB tile — so any
template, built in or not, gets the form it schedules for. A mode without a
generator here is a codegen error, not a silent fallback.

The tile gather moves the data with the register Gather where the 3510
register API has a form for the data (:func:`register_gather_rejection`):
the offset helpers write element indices (the register Gather's unit) and a
``__simd_vf__`` function loops over the tile in vector-length steps --
``LoadAlign`` the indices, ``Reg::Gather`` from the input slice,
``StoreAlign`` to the output tile, the tail under ``UpdateMask``. 2-byte data
take their uint16 indices from the low halves of the uint32 index tile
(``LoadAlign`` of it as uint16: lane ``2j`` holds index ``j``, lane ``2j + 1``
its high half, 0), gather into the even lanes and store them with
``StoreAlign`` ``DIST_PACK_B32``: 64 elements per step, as for 4-byte data.
1-byte data keep the memory-based ``AscendC::Gather`` on byte offsets, and
``afc explain`` says why (:meth:`IndirectLoadRegApiCall.form_note`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import sympy

from af_core.template_api import (
    ApiCall,
    CodegenError,
    FloorDiv,
    GatherMode,
    Gt,
    ImplGraph,
    ImplNode,
    Role,
    Select,
    dtypes,
    product,
)
from af_v35_regbase import reg_cost
from af_v35_regbase.reg_cost import LOAD, MASK, STORE, RegInstr
from af_v35_regbase.simt_lanes import SIMT_SOURCE, simt_lanes

GATHER_SOURCE = "af_gather"
#: Output elements one step of the register gather function covers (one vector of uint32 indices).
GATHER_VF_STEP = 64


def register_gather_rejection(data: dtypes.DType) -> str | None:
    """Why the tile gather of ``data`` has no register Gather here, or None when it has one.

    The 3510 register Gather (``DataCopyGatherImpl``) takes 1-, 2-, 4- and 8-byte sources; the tile
    gather never moves 8-byte data (no memory-based form either), and a 1-byte source comes back
    zero-extended into 2-byte lanes, which would need a 4:1 narrowing store to become bytes again.
    """
    if data.itemsize == 1:
        return (
            f"{data.name} data: the register Gather widens each byte into a 2-byte lane and no narrowing "
            "store back to bytes is generated here, so the memory-based Gather (byte offsets) stays"
        )
    if data.itemsize not in (2, 4):
        return f"{data.name} data: no register Gather form is generated here for {data.itemsize}-byte data"
    return None


def gather_vf_step(data: dtypes.DType) -> list[tuple[RegInstr, str]]:
    """The loop body of the gather function of ``data``: each register call with its instruction, as
    :meth:`IndirectLoadRegApiCall._define_gather_vf` writes it and the cost model counts it. One step
    covers :data:`GATHER_VF_STEP` outputs; empty when ``data`` has no register Gather.

    2-byte data take uint16 indices: lanes ``2j`` / ``2j + 1`` are the low / high halves of index ``j`` (the
    high half 0: the tile's source holds fewer than 65536 elements); the odd lanes gather element 0 and
    are not stored.
    """
    if register_gather_rejection(data) is not None:
        return []
    step = GATHER_VF_STEP
    if data.itemsize == 4:
        return [
            (RegInstr("UpdateMask", data.name, MASK), f"mask = AscendC::Reg::UpdateMask<{data.cpp}>(count);"),
            (RegInstr("LoadAlign", "uint32", LOAD), f"AscendC::Reg::LoadAlign(idx, index + i * {step});"),
            (RegInstr("Gather", data.name, LOAD), "AscendC::Reg::Gather(val, src, idx, mask);"),
            (
                RegInstr("StoreAlign", data.name, STORE),
                f"AscendC::Reg::StoreAlign(dst + i * {step}, val, mask);",
            ),
        ]
    return [
        (RegInstr("UpdateMask", "uint32", MASK), "mask = AscendC::Reg::UpdateMask<uint32_t>(count);"),
        (RegInstr("UpdateMask", data.name, MASK), f"lanes = AscendC::Reg::UpdateMask<{data.cpp}>(halves);"),
        (RegInstr("LoadAlign", "uint16", LOAD), f"AscendC::Reg::LoadAlign(idx, index + i * {2 * step});"),
        (RegInstr("Gather", data.name, LOAD), "AscendC::Reg::Gather(val, src, idx, lanes);"),
        (
            RegInstr("StoreAlign", data.name, STORE, elements=step),
            f"AscendC::Reg::StoreAlign<{data.cpp}, AscendC::Reg::StoreDist::DIST_PACK_B32>"
            f"(dst + i * {step}, val, mask);",
        ),
    ]


def index_vf_name(neg: bool, bound: bool, wide: bool = False, compact: bool = False) -> str:
    """The register offsets function of a full index tile (or of a ``compact`` one) with (or without) the
    negative-index normalisation and the bound check, of an int32 index tile or an int64 one (``wide``): one
    function per variant, chosen when the kernel is generated."""
    base = "AfGatherCompactVf" if compact else "AfGatherIndexVf"
    return f"{base}{'_i64' if wide else ''}{'_neg' if neg else ''}{'_bound' if bound else ''}"


def index_vf_once(bound: bool, wide: bool = False) -> list[tuple[RegInstr, str]]:
    """The register calls of the offsets function before its loop (``Duplicate``, no mask): the zero slot's
    offset in every lane when out-of-range positions select it; for an int64 index the sign extensions
    -1 / 0 and the two clamp bounds ``-extent - 1`` / ``extent``."""
    once = []
    if wide:
        once += [
            (RegInstr("Duplicate", "int32"), "AscendC::Reg::Duplicate(ones, static_cast<int32_t>(-1));"),
            (RegInstr("Duplicate", "int32"), "AscendC::Reg::Duplicate(zeros, static_cast<int32_t>(0));"),
            (RegInstr("Duplicate", "int32"), "AscendC::Reg::Duplicate(lowBound, -extent - 1);"),
            (RegInstr("Duplicate", "int32"), "AscendC::Reg::Duplicate(highBound, extent);"),
        ]
    if bound:
        once.append((RegInstr("Duplicate", "int32"), "AscendC::Reg::Duplicate(zero, zeroSlot);"))
    return once


def index_vf_narrow() -> list[tuple[RegInstr, str]]:
    """An int64 index vector in registers, narrowed to int32 as the memory path's ``Maxs`` / ``Mins`` /
    ``Cast`` narrow it: clamped to ``[-extent - 1, extent]``, so an index outside int32 stays outside the
    gathered extent (on its own side) instead of wrapping into it.

    The dual ``LoadAlign`` (``DIST_DINTLV_B32``) splits 64 int64 values into their low words ``v`` and high
    words ``hi``. An index fits in int32 when its high word is the sign extension of its low word (-1 or 0
    as ``v < 0``): then it is ``v`` clamped by ``Maxs`` / ``Mins``; otherwise the bound on its side
    (``hi < 0``: ``-extent - 1``, else ``extent``) -- all int32 register calls the 3510 API has."""
    return [
        (
            RegInstr("LoadAlign", "int32", LOAD, elements=2 * GATHER_VF_STEP),
            "AscendC::Reg::LoadAlign<int32_t, AscendC::Reg::LoadDist::DIST_DINTLV_B32>"
            f"(v, hi, index + i * {2 * GATHER_VF_STEP});",
        ),
        *index_vf_fit(),
    ]


def index_vf_fit() -> list[tuple[RegInstr, str]]:
    """The narrowing of :func:`index_vf_narrow` once the low words are in ``v`` and the high words in
    ``hi`` (by the dual load, or by two register Gathers of a compact index's words)."""
    i32 = "int32"
    return [
        (
            RegInstr("Compares", i32),
            "AscendC::Reg::Compares<int32_t, AscendC::CMPMODE::LT>(lowNeg, v, static_cast<int32_t>(0), mask);",
        ),
        (RegInstr("Select", i32), "AscendC::Reg::Select(t, ones, zeros, lowNeg);"),
        (
            RegInstr("Compare", i32),
            "AscendC::Reg::Compare<int32_t, AscendC::CMPMODE::EQ>(fits, hi, t, mask);",
        ),
        (
            RegInstr("Compares", i32),
            "AscendC::Reg::Compares<int32_t, AscendC::CMPMODE::LT>(highNeg, hi, static_cast<int32_t>(0), mask);",
        ),
        (RegInstr("Select", i32), "AscendC::Reg::Select(t, lowBound, highBound, highNeg);"),
        (RegInstr("Maxs", i32), "AscendC::Reg::Maxs(v, v, -extent - 1, mask);"),
        (RegInstr("Mins", i32), "AscendC::Reg::Mins(v, v, extent, mask);"),
        (RegInstr("Select", i32), "AscendC::Reg::Select(v, v, t, fits);"),
    ]


def index_vf_select(wide: bool) -> list[tuple[RegInstr, str]]:
    """The index values of a step's positions from a compact index tile: the step's select entries (the
    element of its row's compact index each position reads, the following rows' + ``idxPitch`` each, from
    the select tile's overhang) plus the step's first row's start, then a register ``Gather`` of those
    elements. An int64 index is gathered as its two int32 words (elements ``2e`` and ``2e + 1`` of the tile
    read as int32) and narrowed as the dual load's words are (:func:`index_vf_fit`)."""
    body = [
        (RegInstr("LoadAlign", "uint32", LOAD), "AscendC::Reg::LoadAlign(sel, select + at);"),
        (RegInstr("Adds", "uint32"), "AscendC::Reg::Adds(sel, sel, row * idxPitch, mask);"),
    ]
    if not wide:
        return [*body, (RegInstr("Gather", "int32", LOAD), "AscendC::Reg::Gather(v, index, sel, mask);")]
    return [
        *body,
        (RegInstr("Add", "uint32"), "AscendC::Reg::Add(sel, sel, sel, mask);"),
        (RegInstr("Gather", "int32", LOAD), "AscendC::Reg::Gather(v, index, sel, mask);"),
        (RegInstr("Adds", "uint32"), "AscendC::Reg::Adds(sel, sel, 1u, mask);"),
        (RegInstr("Gather", "int32", LOAD), "AscendC::Reg::Gather(hi, index, sel, mask);"),
        *index_vf_fit(),
    ]


def index_vf_step(
    neg: bool, bound: bool, wide: bool = False, compact: bool = False
) -> list[tuple[RegInstr, str]]:
    """The loop body of the offsets function of a full index tile: each register call with its instruction,
    as :meth:`IndirectLoadRegApiCall._define_index_vf` writes it and the cost model counts it. One step
    covers :data:`GATHER_VF_STEP` positions of the flat tile (rows ``pitch`` apart), as the memory-based
    ``AfGatherOffsetsVector`` computes them: an index below 0 gets ``extent`` added (``neg``); the offset
    is ``index * scale`` plus the position's pattern entry (its inner bytes and the base of its row
    relative to the step's first row, read from the pattern's overhang) plus the step's first row's base;
    a position whose index lies outside ``[0, extent)`` gets the zero slot's offset (``bound``).
    int32 arithmetic wraps as the memory calls' does, so the offsets are the same bits. An int64 index
    (``wide``) is loaded and narrowed in registers first (:func:`index_vf_narrow`). A ``compact`` index tile
    (broadcast over some row axes) gives each position its value by a register Gather
    (:func:`index_vf_select`); the rest is the same, as the memory-based suffix and scalar paths compute it.
    """
    i32 = "int32"
    body = [(RegInstr("UpdateMask", i32, MASK), "mask = AscendC::Reg::UpdateMask<int32_t>(count);")]
    if compact:
        body += index_vf_select(wide)
    elif wide:
        body += index_vf_narrow()
    else:
        body.append(
            (RegInstr("LoadAlign", i32, LOAD), f"AscendC::Reg::LoadAlign(v, index + i * {GATHER_VF_STEP});")
        )
    if neg:
        body += [
            (
                RegInstr("Compares", i32),
                "AscendC::Reg::Compares<int32_t, AscendC::CMPMODE::LT>(below, v, static_cast<int32_t>(0), mask);",
            ),
            (RegInstr("Adds", i32), "AscendC::Reg::Adds(t, v, extent, mask);"),
            (RegInstr("Select", i32), "AscendC::Reg::Select(v, t, v, below);"),
        ]
    if bound:
        body += [
            (
                RegInstr("Compares", i32),
                "AscendC::Reg::Compares<int32_t, AscendC::CMPMODE::GE>(low, v, static_cast<int32_t>(0), mask);",
            ),
            # under the mask of the first comparison: on where both hold (0 <= index < extent)
            (
                RegInstr("Compares", i32),
                "AscendC::Reg::Compares<int32_t, AscendC::CMPMODE::LT>(ok, v, extent, low);",
            ),
        ]
    body += [
        (RegInstr("Muls", i32), "AscendC::Reg::Muls(v, v, scale, mask);"),
        (RegInstr("LoadAlign", i32, LOAD), "AscendC::Reg::LoadAlign(b, pattern + at);"),
        (RegInstr("Add", i32), "AscendC::Reg::Add(v, v, b, mask);"),
        (RegInstr("Adds", i32), "AscendC::Reg::Adds(v, v, static_cast<int32_t>(row * rowBytes), mask);"),
    ]
    if bound:
        body.append((RegInstr("Select", i32), "AscendC::Reg::Select(v, v, zero, ok);"))
    body.append(
        (
            RegInstr("StoreAlign", i32, STORE),
            f"AscendC::Reg::StoreAlign(offsets + i * {GATHER_VF_STEP}, v, mask);",
        )
    )
    return body


def fused_vf_name(
    data: dtypes.DType, neg: bool, bound: bool, wide: bool = False, compact: bool = False
) -> str:
    """The register vector function that computes a tile's offsets (of a full or ``compact`` index tile, one
    (neg, bound, wide) variant) and gathers the ``data`` they select in the same step."""
    index = "compact" if compact else "full"
    return f"AfGatherFusedVf_{data.name}_{index}{'_i64' if wide else ''}{'_neg' if neg else ''}{'_bound' if bound else ''}"


def fused_vf_step(
    data: dtypes.DType, neg: bool, bound: bool, wide: bool = False, compact: bool = False
) -> list[tuple[RegInstr, str]]:
    """The loop body of :func:`fused_vf_name`'s function: the offsets step (:func:`index_vf_step`) without
    its store, then the register ``Gather`` of :func:`gather_vf_step` by the offsets register itself (element
    indices, read as uint32: the same bits the gather function's ``LoadAlign`` of the stored offsets gives)
    under the offsets' mask (the same 64 lanes), and the store of the gathered values. 4-byte data only
    (:meth:`IndirectLoadRegApiCall.fused`)."""
    if data.itemsize != 4:
        raise CodegenError(f"the fused offsets and gather function takes 4-byte data, not {data.name}")
    body = index_vf_step(neg, bound, wide, compact)
    store, _line = body.pop()
    assert store.api == "StoreAlign", body
    return [
        *body,
        (
            RegInstr("Gather", data.name, LOAD),
            "AscendC::Reg::Gather(val, src, (AscendC::Reg::RegTensor<uint32_t>&)v, mask);",
        ),
        (
            RegInstr("StoreAlign", data.name, STORE),
            f"AscendC::Reg::StoreAlign(dst + i * {GATHER_VF_STEP}, val, mask);",
        ),
    ]


def index_vf_source(
    neg: bool, bound: bool, wide: bool = False, compact: bool = False, data: dtypes.DType | None = None
) -> str:
    """The C++ text of the offsets function of a full index tile for one (neg, bound, wide) variant, or of a
    ``compact`` one.

    ``row`` / ``at`` are the tile row and the position in it of a step's first element; the pattern (and a
    compact index's select tile) holds a vector past the row (``AF_GATHER_PATTERN_OVERHANG``), so the loads
    at ``at`` stay inside it, and the index load and the offsets store at ``i * 64`` lie in the tiles' whole
    vectors (tiles are sized in whole 256-byte repeats). An int64 index tile (``wide``) comes as its int32
    words, two per index; its dual load reads 512 bytes a step, so the tile is padded by a vector
    (:meth:`IndirectLoadRegApiCall.read_past_tile`). A compact tile is read by register Gathers of the
    elements its positions select: only those elements, none past the tile. With ``data``, the function
    gathers the data in the same step instead of storing the offsets (:func:`fused_vf_step`)."""
    func = (
        index_vf_name(neg, bound, wide, compact)
        if data is None
        else fused_vf_name(data, neg, bound, wide, compact)
    )
    step = GATHER_VF_STEP
    decls = ["AscendC::Reg::RegTensor<int32_t> v;", "AscendC::Reg::RegTensor<int32_t> b;"]
    if compact:
        decls.append("AscendC::Reg::RegTensor<uint32_t> sel;")
    if wide:
        decls += [
            "AscendC::Reg::RegTensor<int32_t> hi;",
            "AscendC::Reg::RegTensor<int32_t> t;",
            "AscendC::Reg::RegTensor<int32_t> ones;",
            "AscendC::Reg::RegTensor<int32_t> zeros;",
            "AscendC::Reg::RegTensor<int32_t> lowBound;",
            "AscendC::Reg::RegTensor<int32_t> highBound;",
            "AscendC::Reg::MaskReg lowNeg;",
            "AscendC::Reg::MaskReg highNeg;",
            "AscendC::Reg::MaskReg fits;",
        ]
    if neg:
        decls += ["AscendC::Reg::RegTensor<int32_t> t;"] if not wide else []
        decls.append("AscendC::Reg::MaskReg below;")
    if bound:
        decls += [
            "AscendC::Reg::RegTensor<int32_t> zero;",
            "AscendC::Reg::MaskReg low;",
            "AscendC::Reg::MaskReg ok;",
        ]
    decls.append("AscendC::Reg::MaskReg mask;")
    if data is not None:
        decls.append(f"AscendC::Reg::RegTensor<{data.cpp}> val;")
    once = [line for _instr, line in index_vf_once(bound, wide)]
    steps = (
        index_vf_step(neg, bound, wide, compact)
        if data is None
        else fused_vf_step(data, neg, bound, wide, compact)
    )
    body = [line for _instr, line in steps]
    variant = ", ".join(
        [
            "int64 indices narrowed in registers" if wide else "int32 indices",
            "negative indices wrapped" if neg else "no negative-index wrap",
            "out-of-range positions to the zero slot" if bound else "no bound check",
        ]
    )
    tile, select = (
        ("a compact index tile", "__ubuf__ uint32_t* select, ") if compact else ("a full index tile", "")
    )
    pitches = "uint32_t pitch, uint32_t idxPitch, " if compact else "uint32_t pitch, "
    if data is None:
        what, head = f"the tile gather's offsets from {tile}", "__ubuf__ int32_t* offsets, "
    else:
        what = f"the tile gather of {data.name} data by its offsets from {tile}"
        head = f"__ubuf__ {data.cpp}* dst, __ubuf__ {data.cpp}* src, "
    return (
        f"// register vector function: {what} ({variant})\n"
        f"__simd_vf__ inline void {func}({head}__ubuf__ int32_t* index, "
        f"__ubuf__ int32_t* pattern, {select}uint32_t count, {pitches}int32_t scale, int32_t rowBytes, "
        "int32_t extent, int32_t zeroSlot)\n"
        "{\n"
        + "".join(f"    {d}\n" for d in decls)
        + "".join(f"    {line}\n" for line in once)
        + ("" if neg or bound or wide else "    (void)extent;\n")
        + ("" if bound else "    (void)zeroSlot;\n")
        + f"    const uint32_t repeats = (count + {step - 1}u) / {step}u;\n"
        + "    for (uint32_t i = 0; i < repeats; ++i) {\n"
        + f"        const uint32_t row = i * {step}u / pitch;\n"
        + f"        const uint32_t at = i * {step}u - row * pitch;\n"
        + "".join(f"        {line}\n" for line in body)
        + "    }\n}\n"
    )


def compact_memory_calls(geom: dict, rows) -> Any:
    """Memory-based vector calls and vector-function launches one compact index tile's gather node issues
    besides the one call a template counts for the node, with the register offsets off: the zero slot's
    ``Duplicate``; then, where the index is on the gather axis only and each value covers a multiple of 8
    positions (``AfGatherOffsetsSuffix``), an ``Adds`` (or the zero slot's ``Duplicate``) per index value
    and a ``Duplicate`` of a row's padding per row; anything else takes the scalar loop, no vector call."""
    if not geom["dim_only"]:
        return sympy.Integer(1)
    sizes = [sympy.sympify(v) for v in geom["sizes"]]
    suffix = product(sizes[1:])
    width = sizes[0] * suffix
    per_row = sizes[0] + Select(Gt(geom["out_pitch"], width), 1, 0)
    return 1 + sympy.Piecewise((rows * per_row, sympy.Eq(FloorDiv(suffix, 8) * 8, suffix)), (0, True))


def index_memory_calls(index_dtype: dtypes.DType, *, registers: bool, neg: bool, bound: bool, rows) -> Any:
    """Memory-based vector calls and vector-function launches one full index tile's gather node issues
    besides the one call a template counts for the node: the zero slot's ``Duplicate`` and the offsets --
    one launch of the register function (which narrows an int64 index itself), or the int64 clamp and
    narrowing (``Maxs``, ``Mins``, ``Cast``) and the memory-based ``AfGatherOffsetsVector`` (``Compares`` /
    ``Adds`` / ``Select`` for ``neg``, ``Compares`` x2, ``And``, ``Select`` x2 for ``bound``, ``Muls``, and
    an ``Add`` and an ``Adds`` per row)."""
    if registers:
        return 1 + 1
    calls: Any = 1 + (3 if index_dtype == dtypes.int64 else 0)
    return calls + (3 if neg else 0) + (5 if bound else 0) + 1 + 2 * rows


def gather_vf_instructions(data: dtypes.DType) -> dict[str, int]:
    """Register instructions of one step of the gather function (:data:`GATHER_VF_STEP` outputs), by name.

    The twin counts the same: ``UpdateMask`` (mask instructions), the index ``LoadAlign``, the ``Gather``
    (a register load) and the ``StoreAlign``; 2-byte data make a second mask for the gather's 2-byte lanes.
    """
    return dict(sorted(Counter(instr.api for instr, _line in gather_vf_step(data)).items()))


class IndirectLoadRegApiCall(ApiCall):
    """Fills :attr:`Role.GATHER` in both gather modes."""

    name = "IndirectLoadRegApiCall"
    roles = frozenset({Role.GATHER})
    gather_modes = frozenset({GatherMode.LANES, GatherMode.TILE})

    #: Whether the tile gather uses the register Gather where it has a form (off: always the memory-based
    #: ``AscendC::Gather``, the kernels before the register form; benchmarks compare the two).
    register_gather = True
    #: Whether a full index tile's offsets are computed by a register vector function (off: the memory-based
    #: ``AfGatherOffsetsVector``, the kernels before; benchmarks compare the two).
    register_offsets = True

    @classmethod
    def form_note(cls, op_type: str, in_dtypes, out_dtype) -> str | None:
        """How the tile gather of ``out_dtype`` data computes its offsets and moves the data: what runs in
        registers, and why the rest does not (:meth:`offsets_note` first: the line is cut at 200 characters)."""
        if op_type != "IndirectLoad":
            return None
        data = dtypes.get(out_dtype)
        reason = register_gather_rejection(data) if cls.register_gather else "the register form is off"
        if reason is None:
            note = f"register Gather in a vector function ({GATHER_VF_STEP} elements per step)"
        else:
            note = f"memory-based Gather: {reason}"
        index_dtype = dtypes.get(in_dtypes[1]) if len(in_dtypes) > 1 else None
        return f"{cls.offsets_note(index_dtype)}; {note}"

    @classmethod
    def offsets_note(cls, index_dtype: dtypes.DType | None) -> str:
        """How the offsets are computed: by a register vector function, of a full index tile or of a compact
        one (an int64 index narrowed in it, :func:`index_vf_narrow`); with the register form off, in UB
        (``AfGatherOffsetsVector``; for a compact index the per-run ``Adds`` of ``AfGatherOffsetsSuffix``, or
        the scalar loop). Short: the whole note line keeps 200 characters."""
        if not cls.register_offsets:
            return "offsets: in UB (register form off)"
        if index_dtype == dtypes.int64:
            return "offsets: in registers (int64 narrowed there)"
        return "offsets: in registers"

    @classmethod
    def predicted_counters(cls, node: ImplNode, impl: ImplGraph) -> dict[str, Any]:
        """``api_calls`` beyond the node's one per tile, and ``reg_instructions`` and ``reg_cycles`` of one
        tile gather in registers: the instructions of one step of its functions (the offsets,
        :func:`index_vf_step`, and the gather, :func:`gather_vf_step`, or the two in one,
        :func:`fused_vf_step`) times the steps over the tile's ``rows x out_pitch`` gathered elements. None
        for SIMT lanes and the pattern phase."""
        a = node.attrs
        if a.get("gather_mode") != GatherMode.TILE.value or a.get("phase") == "pattern":
            return {}
        count = a["rows"] * a["geom"]["out_pitch"]
        steps = reg_cost.vector_steps(count, GATHER_VF_STEP)
        parts = []
        out: dict[str, Any] = {}
        neg, bound = bool(a["need_check_negative"]), bool(a["need_check_bound"])
        index_dtype = dtypes.get(a.get("index_dtype", "int32"))
        wide = index_dtype == dtypes.int64
        # a compact index's offsets run in registers when the core gave the select tile the form asks for
        compact = not a["geom"]["full_index"]
        in_registers = bool(a.get("select")) if compact else cls.register_offsets
        data = dtypes.get(a["data_dtype"])
        # no offsets tile: one function computes the offsets and gathers the data (its launch is the node's call)
        fused = len(node.outputs) == 1
        if not compact:
            out["api_calls"] = index_memory_calls(
                index_dtype, registers=in_registers, neg=neg, bound=bound, rows=a["rows"]
            )
        else:
            out["api_calls"] = 1 + 1 if in_registers else compact_memory_calls(a["geom"], a["rows"])
        if fused:
            out["api_calls"] -= 1
            step = fused_vf_step(data, neg, bound, wide, compact)
        elif in_registers:
            step = index_vf_step(neg, bound, wide, compact)
        if fused or in_registers:
            parts.append((steps, reg_cost.mix(instr for instr, _line in step)))
            parts.append((1, reg_cost.mix(instr for instr, _line in index_vf_once(bound, wide))))
        if not fused and cls.register_gather and register_gather_rejection(data) is None:
            parts.append((steps, reg_cost.mix(instr for instr, _line in gather_vf_step(data))))
        if parts:
            out.update(reg_cost.loop_counters(parts))
        return out

    @classmethod
    def gather_scratch(
        cls, *, data: dtypes.DType, index: dtypes.DType, neg: bool, bound: bool, full_index: bool
    ) -> frozenset[str]:
        """The register offsets function keeps everything in registers (an int64 index's narrowing, the
        wrapped index, the in-range mask): no scratch tile, but for a compact index the ``select`` tile its
        register Gather of the index values reads, and the offsets tile unless the same function gathers
        the data (:meth:`fused`). The memory-based ``AfGatherOffsetsVector`` (and the int64 ``Cast`` before
        it) needs them all; the memory-based compact paths only the offsets tile."""
        if cls.register_offsets:
            want = frozenset() if full_index else frozenset({"select"})
            return want if cls.fused(data) else want | {"offsets"}
        return super().gather_scratch(data=data, index=index, neg=neg, bound=bound, full_index=full_index)

    @classmethod
    def fused(cls, data: dtypes.DType) -> bool:
        """Whether one register function computes the offsets and gathers ``data`` by them (both forms on
        and a register Gather for 4-byte data): the offsets never leave the registers. 2-byte data keep the
        offsets tile: their Gather reads each offset's low half as a uint16 lane, a view of the int32
        register at another element size, which the twin does not emulate (its registers track lanes per
        element size), so the gather function loads the stored offsets as uint16 instead."""
        return (
            cls.register_offsets
            and cls.register_gather
            and data.itemsize == 4
            and register_gather_rejection(data) is None
        )

    @classmethod
    def read_past_tile(cls, node: ImplNode, impl: ImplGraph, tensor: str) -> int:
        """Three tiles of a tile gather are read past their end:

        - the offset pattern runs one vector of int32 past the row (``AF_GATHER_PATTERN_OVERHANG`` in
          af_gather.h, which ``AfGatherPattern`` fills with the following rows' bases): the register offsets
          functions load it in whole vectors from any position of a row. ``AfGatherPattern`` writes it
          whichever offset form runs, so it is asked for either way;
        - a compact index's select tile likewise (``AfGatherSelect``);
        - an int64 full index tile, when the register function narrows it: its dual load reads 64 indices
          (512 bytes) a step, a vector more than a tile sized in whole 256-byte repeats may hold."""
        a = node.attrs
        if a.get("gather_mode") != GatherMode.TILE.value:
            return 0
        vector = GATHER_VF_STEP * dtypes.int32.itemsize
        if tensor in (a["pattern"], a.get("select")):
            return vector
        if not a["geom"]["full_index"]:
            return 0
        index = node.inputs[1] if len(node.inputs) > 1 else None
        if tensor == index and cls.register_offsets and a.get("index_dtype") == dtypes.int64.name:
            return vector
        return 0

    def parse_attr(self) -> None:
        self.param["gather_mode"] = self.node.attrs.get("gather_mode")

    def generate_api_call_string(self) -> str:
        mode = self.param["gather_mode"]
        if mode == GatherMode.LANES.value:
            return self.generate_lanes()
        if mode == GatherMode.TILE.value:
            return self.generate_tile()
        known = ", ".join(sorted(m.value for m in self.gather_modes))
        raise CodegenError(
            f"IndirectLoadRegApiCall: node '{self.node.name}' asks for gather mode {mode!r}; "
            f"this ApiCall generates {known}"
        )

    # -- SIMT lanes ------------------------------------------------------------
    def generate_lanes(self) -> str:
        ctx, attrs = self.ctx, self.node.attrs
        ctx.need_source(SIMT_SOURCE)
        out = ctx.impl.tensor(attrs["out"])
        ctype = ctx.cpp_type(out.dtype)
        lines = []
        if attrs["mode"] == "gm":
            # GetPhyAddr() is const in the official API; the offset form is the writable pointer
            out_ptr = f"{ctx.gm(out.name)}.GetPhyAddr(0)"
            name, text, ptr_args, int_args = simt_lanes(ctx, attrs, ctype, "gm")
        else:
            acquire, var = ctx.produce(out.name)
            lines.append(acquire)
            out_ptr = f"reinterpret_cast<__ubuf__ {ctype}*>({var}.GetPhyAddr())"
            name, text, ptr_args, int_args = simt_lanes(ctx, attrs, ctype, "ub")
        ctx.define(name, text)
        start, count = ctx.expr(attrs["start"]), ctx.expr(attrs["count"])
        args = ", ".join([out_ptr, *ptr_args, "laneStart", "laneCount", *int_args])
        # a template may launch fewer threads than the VF allows (``threads``, a formula in [1, 2048])
        most = ctx.expr(attrs["threads"]) if attrs.get("threads") is not None else "AF_SIMT_MAX_THREADS"
        lines += [
            "{",
            f"    const int64_t laneStart = {start};",
            f"    const int64_t laneCount = {count};",
            "    if (laneCount > 0) {",
            f"        const uint32_t threads = static_cast<uint32_t>(AfMin(laneCount, {most}));",
            f"        AscendC::Simt::VF_CALL<{name}>(AscendC::Simt::Dim3(threads), {args});",
            "    }",
            "}",
        ]
        if attrs["mode"] == "ub":
            lines.append(ctx.finish(out.name))  # VF_CALL runs on V: the tile's flags order its readers
        return "\n".join(line for line in lines if line)

    # -- SIMD (and the SK-like gather stage) -----------------------------------
    def _geometry(self, name: str) -> list[str]:
        ctx, a = self.ctx, self.node.attrs
        g = a["geom"]
        lines = [f"AfGatherGeom {name}{{}};", f"{name}.rank = {len(g['sizes'])};"]
        for key, field in (("sizes", "sizes"), ("idx_strides", "idxStrides"), ("in_strides", "inStrides")):
            for i, value in enumerate(g[key]):
                lines.append(f"{name}.{field}[{i}] = {ctx.expr(value)};")
        for key, field in (
            ("extent", "extent"),
            ("in_pitch", "inPitch"),
            ("idx_pitch", "idxPitch"),
            ("out_pitch", "outPitch"),
            ("zero_slot", "zeroSlot"),
        ):
            lines.append(f"{name}.{field} = {ctx.expr(g[key])};")
        suffix = " * ".join(f"{name}.sizes[{i}]" for i in range(1, len(g["sizes"]))) or "1"
        lines += [
            f"{name}.suffix = {suffix};",
            f"{name}.fullIndex = {'true' if g['full_index'] else 'false'};",
            f"{name}.needNegative = {'true' if a['need_check_negative'] else 'false'};",
            f"{name}.needBound = {'true' if a['need_check_bound'] else 'false'};",
        ]
        return lines

    def generate_tile(self) -> str:
        ctx, a = self.ctx, self.node.attrs
        ctx.need_source(GATHER_SOURCE)
        base = self.node.name[: -len("_pattern")] if a["phase"] == "pattern" else self.node.name
        geom = "geom_" + ctx.ident(base)
        data = dtypes.get(a["data_dtype"])
        data_t = ctx.cpp_type(data)
        in_registers = self.register_gather and register_gather_rejection(data) is None
        # the offset helpers compute byte offsets of their T: of a 1-byte T, element indices
        unit_t = "uint8_t" if in_registers else data_t
        if a["phase"] == "pattern":
            make, pattern = ctx.produce(a["pattern"])
            lines = [*self._geometry(geom), make, f"AfGatherPattern<{unit_t}>({pattern}, {geom});"]
            if a.get("select"):
                make, fill = ctx.produce(a["select"])
                lines += [make, f"AfGatherSelect({fill}, {geom});"]
            if a.get("pattern_flag", True):  # else a scalar row load's S_V orders them (settle_pattern_flag)
                lines.append(ctx.flag_pair("S", "V"))  # the scalar unit wrote the tiles the vector calls read
            return "\n".join(lines)
        slice_name, index_name, pattern_name = self.node.inputs[:3]
        gathered_name = self.node.outputs[0]
        fused = len(self.node.outputs) == 1
        if fused != (self.fused(data) and (bool(a["geom"]["full_index"]) or bool(a.get("select")))):
            raise CodegenError(
                f"IndirectLoadRegApiCall: gather node '{self.node.name}' has {len(self.node.outputs)} outputs; "
                "the offsets tile is left out exactly when one register function computes the offsets and "
                "gathers the data (gather_scratch)"
            )
        idx_t = ctx.cpp_type(ctx.impl.tensor(index_name).dtype)
        lines = []
        take, src = ctx.use(slice_name)
        lines.append(take)
        take, idx = ctx.use(index_name)
        lines.append(take)
        take, pattern = ctx.use(pattern_name)
        lines.append(take)
        select: str | None = None
        if a.get("select"):
            take, select = ctx.use(a["select"])
            lines.append(take)
        off = ""
        if not fused:
            make, off = ctx.produce(self.node.outputs[1])
            lines.append(make)
        extra = {}
        for key, tensor in a["extra"].items():
            make, var = ctx.produce(tensor)
            lines.append(make)
            extra[key] = var
        make, out = ctx.produce(gathered_name)
        lines.append(make)
        rows = ctx.expr(a["rows"])
        count = f"static_cast<int32_t>(({rows}) * {geom}.outPitch)"
        name = self.node.name
        lines += [
            f"AscendC::Duplicate({src}[static_cast<uint32_t>({geom}.zeroSlot)], static_cast<{data_t}>(0), "
            f"static_cast<int32_t>(32 / sizeof({data_t})));",
        ]
        wide = idx_t == "int64_t"
        if fused:
            # offsets and data gathered in one function (an int64 index narrowed in it too)
            into = (data, f"(__ubuf__ {data_t}*){out}.GetPhyAddr(), (__ubuf__ {data_t}*){src}.GetPhyAddr()")
            lines += self._index_vf_launch(
                off, idx, pattern, rows, geom, unit_t, wide=wide, select=select, into=into
            )
        elif a["geom"]["full_index"] and self.register_offsets:
            # an int64 index is narrowed in the register function itself
            lines += self._index_vf_launch(off, idx, pattern, rows, geom, unit_t, wide=wide)
        elif select is not None:
            # a compact index: each position's value gathered by the select tile the prologue filled
            lines += self._index_vf_launch(off, idx, pattern, rows, geom, unit_t, wide=wide, select=select)
        elif a["geom"]["full_index"]:
            if idx_t == "int64_t":
                conv = extra["conv"]
                lines += [
                    f"AscendC::Maxs({idx}, {idx}, static_cast<int64_t>(-{geom}.extent - 1), {count});",
                    f"AscendC::Mins({idx}, {idx}, static_cast<int64_t>({geom}.extent), {count});",
                    f"AscendC::Cast<int32_t, int64_t>({conv}, {idx}, AscendC::RoundMode::CAST_NONE, "
                    f"static_cast<uint32_t>({count}));",
                ]
                idx32 = conv
            else:
                idx32 = idx
            tmp = extra.get("tmp", off)
            lines.append(
                f"AfGatherOffsetsVector<{unit_t}>({off}, {idx32}, {pattern}, {tmp}, {extra['mask']}, "
                f"{extra['mask2']}, {rows}, {geom}, {ctx.c_string(name)});"
            )
        else:
            suffix_ok = "true" if a["geom"]["dim_only"] else "false"
            lines += [
                f"if ({suffix_ok} && {geom}.suffix % 8 == 0) {{",
                f"    AfGatherOffsetsSuffix<{idx_t}, {unit_t}>({off}, {idx}, {pattern}, {rows}, {geom}, {ctx.c_string(name)});",
                "} else {",
                f"    AfGatherOffsetsScalar<{idx_t}, {unit_t}>({off}, {idx}, {rows}, {geom}, {ctx.c_string(name)});",
                "}",
            ]
        if fused:
            pass  # gathered by the offsets function above
        elif in_registers:
            func = self._define_gather_vf(data)
            index_t = "uint16_t" if data.itemsize == 2 else "uint32_t"
            if data.itemsize == 2:
                lines.append(f"AfGatherIndexFits16({off}, {count}, {ctx.c_string(name)});")
            lines.append(
                f"asc_vf_call<{func}>((__ubuf__ {data_t}*){out}.GetPhyAddr(), "
                f"(__ubuf__ {data_t}*){src}.GetPhyAddr(), (__ubuf__ {index_t}*){off}.GetPhyAddr(), "
                f"static_cast<uint32_t>({count}));"
            )
        else:
            lines.append(
                f"AscendC::Gather({out}, {src}, {off}.ReinterpretCast<uint32_t>(), 0, "
                f"static_cast<uint32_t>({count}));"
            )
        lines += [ctx.finish(gathered_name)]
        return "\n".join(line for line in lines if line)

    def _index_vf_launch(
        self,
        off: str,
        idx: str,
        pattern: str,
        rows: str,
        geom: str,
        unit_t: str,
        *,
        wide: bool,
        select: str | None = None,
        into: tuple[dtypes.DType, str] | None = None,
    ) -> list[str]:
        """The twin's index check (no bound check) and the launch of the offsets function of a full index
        tile, or of a compact one read through ``select`` (of int64 indices: ``wide``, passed as their int32
        words); its scalars are the memory path's, each cast to int32 as that path casts them. ``into``
        (data dtype, destination and source pointers): the fused function, which gathers the data by the
        offsets instead of storing them at ``off``."""
        ctx, a = self.ctx, self.node.attrs
        neg, bound = bool(a["need_check_negative"]), bool(a["need_check_bound"])
        compact = select is not None
        func = self._define_index_vf(neg, bound, wide, compact, None if into is None else into[0])
        target = f"(__ubuf__ int32_t*){off}.GetPhyAddr()" if into is None else into[1]
        size = f"static_cast<int64_t>(sizeof({unit_t}))"
        lines = []
        if not bound:
            check = "AfGatherCheckCompact" if compact else "AfGatherCheckIndices"
            lines.append(f"{check}({idx}, {rows}, {geom}, {ctx.c_string(self.node.name)});")
        compact_args = (
            f"(__ubuf__ uint32_t*){select}.GetPhyAddr(), " if compact else "",
            f"static_cast<uint32_t>({geom}.idxPitch), " if compact else "",
        )
        lines += [
            f"asc_vf_call<{func}>({target}, (__ubuf__ int32_t*){idx}.GetPhyAddr(), "
            f"(__ubuf__ int32_t*){pattern}.GetPhyAddr(), {compact_args[0]}"
            f"static_cast<uint32_t>(({rows}) * {geom}.outPitch), "
            f"static_cast<uint32_t>({geom}.outPitch), {compact_args[1]}"
            f"static_cast<int32_t>({geom}.inStrides[0] * {size}), "
            f"static_cast<int32_t>({geom}.inPitch * {size}), static_cast<int32_t>({geom}.extent), "
            f"static_cast<int32_t>({geom}.zeroSlot * {size}));",
        ]
        return lines

    def _define_index_vf(
        self, neg: bool, bound: bool, wide: bool, compact: bool, data: dtypes.DType | None = None
    ) -> str:
        """Define the offsets function of a full (or ``compact``) index tile for one (neg, bound, wide)
        variant, or with ``data`` the fused one gathering it (once per kernel); returns its name."""
        if data is None:
            func = index_vf_name(neg, bound, wide, compact)
        else:
            func = fused_vf_name(data, neg, bound, wide, compact)
        self.ctx.define(func, index_vf_source(neg, bound, wide, compact, data))
        return func

    def _define_gather_vf(self, data: dtypes.DType) -> str:
        """Define the register gather function of ``data`` (once per kernel); returns its name."""
        data_t = self.ctx.cpp_type(data)
        func = f"AfGatherVf_{self.ctx.ident(data.name)}"
        step = GATHER_VF_STEP
        if data.itemsize == 4:
            decls = ["AscendC::Reg::RegTensor<uint32_t> idx;", f"AscendC::Reg::RegTensor<{data_t}> val;"]
            index_t = "uint32_t"
        else:
            decls = [
                "AscendC::Reg::RegTensor<uint16_t> idx;",
                f"AscendC::Reg::RegTensor<{data_t}> val;",
                "AscendC::Reg::MaskReg lanes;",
                "uint32_t halves = count * 2u;",
            ]
            index_t = "uint16_t"
        body = [line for _instr, line in gather_vf_step(data)]
        text = (
            f"// register vector function: the tile gather of {data.name} data\n"
            f"__simd_vf__ inline void {func}(__ubuf__ {data_t}* dst, __ubuf__ {data_t}* src, "
            f"__ubuf__ {index_t}* index, uint32_t count)\n"
            "{\n"
            + "".join(f"    {d}\n" for d in decls)
            + "    AscendC::Reg::MaskReg mask;\n"
            + f"    const uint32_t repeats = (count + {step - 1}u) / {step}u;\n"
            + "    for (uint32_t i = 0; i < repeats; ++i) {\n"
            + "".join(f"        {line}\n" for line in body)
            + "    }\n}\n"
        )
        self.ctx.define(func, text)
        return func
