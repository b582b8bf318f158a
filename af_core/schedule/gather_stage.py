"""The Gather step of a row-tile stage: index layout, offsets, zero slot, ``AscendC::Gather``.

Shared by the SIMD template and the SK-like gather stage. The stage's rows
are the output's outer axes (before ``dim``); a tile holds the input slice
(input rows in UB, ``in_pitch`` apart, then a 32-byte zero slot), the index
tile and the offsets (unless the gather call keeps them in registers: its
``gather_scratch``), and the Gather writes the output tile.

The index tile is *full* (every row position has its own index) or
*compact* (index_select / embedding: the index is broadcast over the other
row axes with stride 0, so only its non-broadcast axes are loaded).

The target's Gather bounds the stage (:func:`gather_span_limit`): on SoC
3510 a 1- or 2-byte Gather packs its byte offsets to uint16 element indices,
so the source tile (rows * in_pitch elements, then the zero slot) must stay
below 65536 elements; and there is no 8-byte Gather, so 8-byte data is
rejected here (the SIMT template gathers it element by element).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from af_core import dtypes as dt
from af_core.backend import GATHER_SCRATCH, GatherMode, Role, api_call_for
from af_core.errors import Unsupported
from af_core.ir.graph import HintGraph, Node
from af_core.ir.sizes import Size, contiguous_strides
from af_core.schedule.impl_graph import ImplNode
from af_core.schedule.rowtiles import TileBuilder, never_dense, view_of
from af_core.tiling.conditions import Le
from af_core.tiling.spec import FloorDiv

# element indices a 1- or 2-byte Gather can address on SoC 3510 (its offsets are packed to uint16)
GATHER_PACKED_INDICES = 1 << 16


def check_gather_dtype(dtype: dt.DType) -> None:
    """Reject data the Gather cannot move: there is no 8-byte Gather on 3510."""
    if dtype.itemsize == 8:
        raise Unsupported(
            f"Gather has no 8-byte form on SoC 3510 ({dtype.name} data); the official API takes 1-, "
            "2- and 4-byte types"
        )


def gather_span_limit(dtype: dt.DType, pin: Size) -> tuple[sympy.Expr, sympy.Expr, str] | None:
    """(most tile rows, constraint, reason) bounding the Gather source of a tile, or None when unbounded.

    The zero slot sits at element ``tile * pin`` of the source, the highest element the Gather reads, so
    ``tile * pin`` must be a uint16 index for 1- and 2-byte data.
    """
    if dtype.itemsize > 2:
        return None
    last = GATHER_PACKED_INDICES - 1
    reason = (
        f"a {dtype.itemsize}-byte Gather addresses at most {GATHER_PACKED_INDICES} elements (uint16 offsets "
        f"on SoC 3510) and one input row of this case (plus the zero slot) is longer"
    )
    return FloorDiv(last, pin), Le(pin, last), reason


def index_layout(
    graph: HintGraph,
    index_loads: list[Node],
    heads: dict[str, Node],
    outer: Sequence[Size],
    dim: int,
    index_sizes: Sequence[Size],
) -> tuple[bool, dict]:
    """(full_index, view of the index load) — compact when the index row is broadcast."""
    head = heads[index_loads[0].name]
    compact = view_of(graph, head, outer, dim, compact=True)
    rank = len(index_sizes)
    broadcast_axes = [
        a for a in range(dim, rank) if a not in compact["inner_axes"] and sympy.sympify(index_sizes[a]) != 1
    ]
    if not broadcast_axes:
        return True, view_of(graph, head, outer, dim)
    if len(index_loads) > 1 or head is not index_loads[0]:
        raise Unsupported("a broadcast index combined with other index-chain inputs is not supported")
    return False, compact


def compact_strides(index_sizes: Sequence[Size], dim: int, inner_axes: list[int]) -> list:
    """Position of each row coordinate in the compact index row (0 for broadcast axes)."""
    strides = {}
    acc = sympy.Integer(1)
    for axis in reversed(inner_axes):
        strides[axis] = acc
        acc = acc * index_sizes[axis]
    return [strides.get(axis, sympy.Integer(0)) for axis in range(dim, len(index_sizes))]


def add_gather(
    b: TileBuilder,
    il: Node,
    *,
    pin: Size,
    pidx: Size,
    pout: Size,
    full_index: bool,
    index_axes: list[int],
    final: bool,
) -> tuple[str, ImplNode]:
    """Append the Gather node (and return its prologue node computing the offset pattern).

    Both nodes go to the ApiCall filling :attr:`Role.GATHER` in :attr:`GatherMode.TILE`; their
    ``gather_mode`` attr tells it which form to generate. The input slice and
    the index tile are the ones ``b`` already holds for the IndirectLoad's
    ``x1`` and ``x2`` producers.
    """
    graph = b.graph
    source, index = graph.producer(il, "x1"), graph.producer(il, "x2")
    slice_tensor, index_tensor, index_dtype = b.tensor_of[source.name], b.tensor_of[index.name], index.y.dtype
    input_sizes, index_sizes, dim = list(source.y.size), list(il.y.size), int(il.attr.ir_attr.dim)
    check_gather_dtype(il.y.dtype)
    gather_call = api_call_for(Role.GATHER, GatherMode.TILE)
    gather_api = gather_call.name
    note = gather_call.form_note("IndirectLoad", (il.y.dtype, index_dtype), il.y.dtype)
    if note is not None:
        b.impl.meta.setdefault("gather_forms", []).append(f"IndirectLoad ({il.name!r}): {note}")
    plan = b.plan
    neg = bool(il.attr.ir_attr.need_check_negative)
    bound = bool(il.attr.ir_attr.need_check_bound)
    pattern = plan.fixed(f"{il.name}_pattern", dt.int32, pout)
    extra = {}
    want = gather_call.gather_scratch(
        data=il.y.dtype, index=index_dtype, neg=neg, bound=bound, full_index=full_index
    )
    unknown = sorted(set(want) - set(GATHER_SCRATCH))
    if unknown:
        raise Unsupported(
            f"IndirectLoad '{il.name}': {gather_api}.gather_scratch asks for scratch tiles {unknown}; the core "
            f"offers {list(GATHER_SCRATCH)}"
        )
    offsets = plan.tile(f"{il.name}_offsets", dt.int32, pout) if "offsets" in want else None
    # filled once, before the loop, by the pattern phase
    select = plan.fixed(f"{il.name}_select", dt.int32, pout) if "select" in want and not full_index else None
    if full_index:
        if "conv" in want and index_dtype == dt.int64:
            extra["conv"] = plan.tile(f"{il.name}_index32", dt.int32, pout)
        if "tmp" in want and neg:
            extra["tmp"] = plan.tile(f"{il.name}_index_tmp", dt.int32, pout)
        for key in ("mask", "mask2"):
            if key in want:
                extra[key] = plan.mask(f"{il.name}_{key}", pout)
    gathered = plan.tile(
        f"{il.name}_tile",
        il.y.dtype,
        pout,
        position="VECOUT" if final else "VECCALC",
        que=final,
        num=b.buffers if final else 1,
    )
    geom = {
        "sizes": list(index_sizes[dim:]),
        "idx_strides": compact_strides(index_sizes, dim, index_axes),
        "in_strides": contiguous_strides(list(input_sizes[dim:])),
        "extent": input_sizes[dim],
        "in_pitch": pin,
        "idx_pitch": pidx,
        "out_pitch": pout,
        "zero_slot": plan.rows * pin,
        "full_index": full_index,
        "dim_only": index_axes == [dim],
    }
    common = {
        "gather_mode": GatherMode.TILE.value,
        "geom": geom,
        "need_check_negative": neg,
        "need_check_bound": bound,
        "pattern": pattern,
        "select": select,
        "data_dtype": il.y.dtype.name,
        "index_dtype": index_dtype.name,
    }
    fixed = (pattern,) if select is None else (pattern, select)
    prologue = ImplNode(
        f"{il.name}_pattern", "IndirectLoad", gather_api, (), fixed, attrs=dict(common, phase="pattern")
    )
    node = ImplNode(
        il.name,
        "IndirectLoad",
        gather_api,
        (slice_tensor, index_tensor, *fixed, *extra.values()),
        (gathered,) if offsets is None else (gathered, offsets),
        tuple(a.name for a in il.y.axis),
        tuple(index_sizes),
        tuple(contiguous_strides(list(index_sizes))),
        tuple(a.name for a in il.y.axis[dim:]),
        b.loop,
        dict(common, phase="gather", rows=b.actual, extra=extra),
    )
    b.nodes.append(node)
    for tensor in node.inputs:  # e.g. whole-vector reads of the offset pattern
        past = gather_call.read_past_tile(node, b.impl, tensor)
        if past:
            plan.pad(tensor, past)
    b.tensor_of[il.name] = gathered
    return gathered, prologue


def settle_pattern_flag(prologue: ImplNode, nodes: Sequence[ImplNode]) -> None:
    """Leave out the S_V pair after the gather's offset pattern (``attrs["pattern_flag"]`` False) when a row
    load read element by element at every shape runs in the loop before the gather: that load's own S_V
    (:attr:`af_core.backend.Role.LOAD_ROWS`) orders the scalar unit's pattern writes in every iteration,
    and the pair would order nothing."""
    for node in nodes:
        if node.op_type == "IndirectLoad" and node.attrs.get("phase") == "gather":
            return
        if node.op_type == "Load" and "view" in node.attrs and never_dense(node.attrs["view"]):
            prologue.attrs["pattern_flag"] = False
            return
