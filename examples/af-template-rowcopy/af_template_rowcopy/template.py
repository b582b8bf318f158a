"""RowCopyTemplate: one DataCopyPad per selected table row, the post chain in UB.

The graphs it takes are row gathers: embedding, index_select, or any
IndirectLoad whose index value is the same across the axes after ``dim``
(stride 0 there), so that each index value selects a whole row of the table,
and whose selected rows are one contiguous block in GM. The output is cut
into rows (the merged output axes up to and including ``dim``); tiles of
whole rows are split across cores. Per tile:

1. read each row's index value (a scalar GM read) and DataCopyPad the table
   row it selects into UB; neighbouring table rows share one copy;
2. run the output-post chain on the tile with the core's row-tile machinery
   (:class:`~af_core.schedule.rowtiles.TileBuilder`, whose vector ops, reduce
   and store come from the installed back end);
3. an optional reduce over axes inside the row, then store.

It has no input or index chain (ops between the table or index load and the
gather); graphs with one are rejected, as are gathers whose index varies
inside a row (a plain ``torch.gather``) and tables whose rows are strided.

Score and cost: a copy per row has a fixed issue cost (256 bytes in the
units of :mod:`af_core.schedule.cost`), so the template claims long rows
only — score 2, the built-in templates' score inside their regions, when a
row has at least :data:`LONG_ROW_BYTES` bytes, -1 otherwise — and its
modelled cost counts the bytes it moves and one API call per row (runs of
neighbouring rows are not assumed). Under the seed policy it meets the
built-in region owners at equal score and the lower modelled cost decides;
under the cost policy the modelled cost alone decides.
"""

from __future__ import annotations

import sympy
from af_v35_regbase.row_select import RowSelect, row_select

from af_core.template_api import (
    CORE_NUM,
    UB_SIZE,
    AlignUp,
    Case,
    CeilDiv,
    ComputeType,
    Ge,
    HintGraph,
    ImplAxis,
    ImplGraph,
    ImplNode,
    Le,
    Max,
    Min,
    Node,
    ScheduleContext,
    Select,
    Stage,
    TileBuilder,
    TilePlan,
    TilingSpec,
    Unsupported,
    add_reduce,
    assign_releases,
    field,
    modelled_cost,
    pitch_for,
    product,
    view_head,
    view_of,
)
from af_core.template_api import dtypes as dt
from af_template_rowcopy.api_call import RowCopyApiCall

#: Rows of at least this many bytes are the template's region under the seed policy.
LONG_ROW_BYTES = 512


def reduce_axes_in_row(an, dim: int) -> tuple[int, int]:
    """The reduced axes as a run ``[lo, hi)`` of row axes (axes after ``dim``)."""
    axes = an.reduce_axes() or (an.rank - 1,)
    if min(axes) <= dim:
        raise Unsupported(
            f"reduce axes {list(axes)} include the gathered axis or one before it (dim {dim}); "
            "the row copy reduces inside rows only"
        )
    if list(axes) != list(range(axes[0], axes[-1] + 1)):
        raise Unsupported(f"reduce axes {list(axes)} are not contiguous")
    return axes[0] - dim - 1, axes[-1] - dim


class RowCopyTemplate:
    """Registered as ``rowcopy``."""

    name = "rowcopy"
    buffers = 2  # double-buffered queues: the copies of one tile overlap the vector work of the previous
    #: The stage's axis names: the merged rows, the tile loop (whose ``<name>_start`` / ``<name>_actual``
    #: symbols the kernel defines) and the split across cores. They become C++ identifiers as they are.
    axis_names = ("R", "RT", "Rt", "RTB", "RTb")

    def propose(self, graph: HintGraph, il: Node, ctx: ScheduleContext) -> list[Case]:
        an = ctx.analyze(graph)
        rs = row_select(graph, il, an, "the row copy")
        for node in graph.nodes():
            if node.op.compute_type == ComputeType.DATA and node.y.dtype.is_bool:
                raise Unsupported(f"bool input '{node.name}' cannot be loaded into a vector tile")
        return [self._case(graph, il, an, ctx, rs)]

    def _case(self, graph: HintGraph, il: Node, an, ctx: ScheduleContext, rs: RowSelect) -> Case:
        table, index, dim, view = rs.table, rs.index, rs.dim, rs.view
        out_sizes = list(il.y.size)
        row_sizes = out_sizes[: dim + 1]
        width = product(out_sizes[dim + 1 :])
        value = graph.producer(an.reduce or an.store, "x")

        spec = TilingSpec()
        impl = ImplGraph(graph.name, self.name, meta={"buffers": self.buffers})
        rows = spec.add("rows", product(row_sizes), "output rows (merged axes up to the gathered one)")
        tile, tiles = field("tile"), field("tiles")
        per_core, used = field("tiles_per_core"), field("used_cores")
        merged, loop, inner, cores, share = self.axis_names
        axes = [
            ImplAxis(merged, "MERGED", rows, tuple(a.name for a in il.y.axis[: dim + 1])),
            ImplAxis(loop, "TILE_OUT", tiles, (merged,)),
            ImplAxis(inner, "TILE_IN", tile, (merged,)),
            ImplAxis(cores, "BLOCK_OUT", used, (loop,)),
            ImplAxis(share, "BLOCK_IN", per_core, (loop,)),
        ]
        start, actual = sympy.Symbol(f"{loop}_start"), sympy.Symbol(f"{loop}_actual")
        stage = Stage("rowcopy", axes, [], [], used_cores="used_cores")
        plan = TilePlan(impl, stage, tile)
        b = TileBuilder(graph, impl, plan, loop, start, actual, self.buffers)

        post_loads = an.loads_of("post")
        pitch = pitch_for(width, [n.y.dtype for n in [il, *an.post_chain, *post_loads]])

        # 1. the row copies
        gathered = plan.tile(
            f"{il.name}_rows", il.y.dtype, pitch, position="VECIN", que=True, num=self.buffers
        )
        b.nodes.append(
            ImplNode(
                il.name,
                "IndirectLoad",
                RowCopyApiCall.name,
                (b.gm_tensor(table), b.gm_tensor(index)),
                (gathered,),
                loop_axis=loop,
                attrs={"view": view, "first_row": start, "rows": actual, "pitch": pitch},
            )
        )
        b.tensor_of[il.name] = gathered
        # 2. the output-post chain with its side inputs, 3. reduce and store
        for load in post_loads:
            head = view_head(graph, load)
            b.load(head, view_of(graph, head, row_sizes, dim + 1), pitch, rows)
        for node in an.post_chain:
            b.compute(node, pitch, final=an.reduce is None and node is value)
        result, out_width, out_pitch = b.tensor_of[value.name], width, pitch
        if an.reduce is not None:
            result, out_width, out_pitch = add_reduce(
                b, an.reduce, result, value.y.dtype, out_sizes[dim + 1 :], reduce_axes_in_row(an, dim), pitch
            )
        out = an.output
        impl.add_gm(out)
        b.store(an.store.name, result, out.name, out_width, out_pitch, rows, out.y.dtype)
        stage.nodes = [
            *b.nodes,
            *(
                ImplNode(n.name, n.type, None, fused_into=il.name)
                for n in graph.nodes()
                if n.op.compute_type == ComputeType.BROADCAST
            ),
        ]
        assign_releases(stage, impl)
        impl.stages = [stage]

        tile_max = spec.add("tile_max", plan.max_rows(UB_SIZE), "most rows whose tiles fit in UB together")
        spec.add("tile", Max(1, Min(tile_max, CeilDiv(rows, CORE_NUM))), "rows per tile")
        spec.add("tiles", CeilDiv(rows, tile), "tiles")
        spec.add("tiles_per_core", CeilDiv(tiles, CORE_NUM), "tiles per core")
        spec.add("used_cores", CeilDiv(tiles, per_core), "cores with work")
        ub = plan.ub_bytes()
        spec.resources = {
            "ub_bytes": ub,
            "workspace_bytes": sympy.Integer(0),
            "dcache_bytes": sympy.Integer(0),
        }
        spec.require(
            Le(ub, UB_SIZE),
            "one tile row (the copied row, the post chain's tiles and temporaries) does not fit in UB",
        )
        row_bytes = width * il.y.dtype.itemsize
        spec.score = Select(Ge(row_bytes, LONG_ROW_BYTES), 2, -1)
        spec.block_dim = used
        spec.cost = row_copy_cost(
            b, stage, rows, tiles, row_bytes, index.y.dtype, width, pitch, il.y.dtype, cores=used
        )
        return Case(self.name, "default", graph, impl, spec)


def row_copy_cost(
    b: TileBuilder,
    stage: Stage,
    rows,
    tiles,
    row_bytes,
    index_dtype: dt.DType,
    width,
    pitch,
    dtype: dt.DType,
    cores,
) -> sympy.Expr:
    """Modelled cost: the time of the bytes moved, and of one API call per row copy and per other call of
    a tile, spread over the ``cores`` that have tiles.

    The copies read ``rows * row_bytes`` table bytes and one index value per
    row (consecutive values share data-cache lines, so the index costs its
    bytes); TileBuilder counted the side inputs and the store. A tile row
    wider than its 32-byte padded data costs one Duplicate per row on top.
    """
    per_tile = len(
        [n for n in stage.nodes if n.loop_axis == b.loop and n.api_call and n.api_call != RowCopyApiCall.name]
    )
    filled = AlignUp(width, 32 // dtype.itemsize)
    fills = rows * Min(1, pitch - filled)
    gm_bytes = rows * row_bytes + rows * index_dtype.itemsize + b.gm_bytes
    return modelled_cost(gm_bytes, api_calls=rows + fills + tiles * per_tile, cores=cores)
