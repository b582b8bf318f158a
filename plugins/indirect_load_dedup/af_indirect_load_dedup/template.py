"""DedupGatherTemplate: each distinct row tile of a chunk of positions is read once and stored to every position
that selects it.

The graphs it takes are row gathers (embedding, index_select, or any
IndirectLoad whose index is constant along the axes after ``dim``) whose
selected rows are contiguous in the table, with no op between the loads and
the gather, and an elementwise post chain without side inputs (or none).
The output's positions (the merged output axes up to and including ``dim``)
are cut into chunks of ``chunk`` positions, each row into column tiles of
``col`` elements; a work item is one (chunk, column tile) pair and the work
items are split across cores. So 16 positions with 2 MiB rows keep every
core busy (each takes column tiles of all 16 positions, and a repeated
position costs no second read), and 16384 positions with 64-byte rows give
each core chunks of positions. Per work item (C++ in ``af_dedup_gather.h``):

1. read the chunk's index values and number the distinct rows they select
   (a scalar pass with a hash table in UB);
2. DataCopyPad each distinct row's column tile into UB once (neighbouring
   table rows share a copy);
3. run the post chain once over the tile (the distinct rows), then write
   each tile row to every position that selected it (neighbouring positions
   with neighbouring tile rows share a copy).

Rejected with the reason: a reduce after the gather (the tile rows are
distinct rows, not positions), side inputs of the post chain (they are
indexed by position), index or input chains, gathers whose index varies
inside a row, strided rows.

Chunks and column tiles: a chunk holds as many positions as leave a work
item for every core, at most :data:`CHUNK_MAX`, and no more whole rows than
fit in UB — unless fewer than :data:`WHOLE_ROWS_MIN` fit, then
:data:`CHUNK_MIN` positions; column tiles are then as wide as UB allows for the chunk and,
from rows of ``2 * MIN_COLUMN_BYTES`` on, narrow enough to give every core
work. The bigger a chunk, the more repeats it catches: repeats across
chunks are read again.

Score and cost: score 1, the SIMT template's everywhere score, so under the
seed policy it meets SIMT on modelled cost and yields to SIMD / SK-like
inside their regions; under the cost policy the modelled costs decide. Rows
under :data:`MIN_ROW_BYTES` are dropped by a constraint (``afc explain``
shows it). The modelled cost (units of :mod:`af_core.schedule.cost`)
counts, per chunk, the distinct rows the host tiling expects — it cannot
see index values, so it takes the expected number of distinct values of
``chunk`` indices drawn uniformly from the ``R`` rows they can select,
``R * (1 - (1 - 1/R)^chunk)``, approximated with integer arithmetic by
``ceil(2 * chunk * R / (2 * R + chunk))`` and capped by ``min(chunk, R)``;
repeated indices (zipf, beams) make the real count lower, distinct ones
higher — plus the output and index bytes, one API call per distinct row
tile copied and per position stored (merged copies are not assumed) and
the chain's calls per work item.
"""

from __future__ import annotations

import attrs
import sympy
from af_v35_regbase.row_select import RowSelect, row_select

from af_core.template_api import (
    CORE_NUM,
    UB_SIZE,
    VECIN_VECOUT,
    AlignUp,
    Case,
    CaseRef,
    CeilDiv,
    ComputeType,
    CounterModel,
    FloorDiv,
    Ge,
    HintGraph,
    ImplAxis,
    ImplGraph,
    ImplNode,
    Le,
    Lt,
    Max,
    Min,
    Node,
    ScheduleContext,
    Stage,
    TileBuilder,
    TilePlan,
    TilingSpec,
    Unsupported,
    assign_releases,
    distinct_rows,
    evaluate_case,
    expected_distinct,
    field,
    pitch_for,
    product,
)
from af_core.template_api import dtypes as dt
from af_indirect_load_dedup.api_call import DedupGatherApiCall, DedupStoreApiCall

#: Most positions in one chunk: bounds the scalar pass and the hash table in UB.
CHUNK_MAX = 256
#: A chunk holds whole rows when at least this many fit in UB (no column cut: one copy call per row) ...
WHOLE_ROWS_MIN = 4
#: ... else this many positions, over column tiles narrow enough to fit (more calls, more repeats caught).
CHUNK_MIN = 16
#: UB kept for the hash table and the buffers' rounding when sizing chunks of whole rows.
HASH_RESERVE = 16384
#: A row is cut into column tiles of at least this many bytes (shorter copies cost more in calls than in bytes).
MIN_COLUMN_BYTES = 4096
#: Shortest row the template takes: one DataCopyPad per distinct row costs 256 bytes of issue cost (the
#: units of af_core.schedule.cost), at most 1/16 of a 4 KiB row, so without a repeated index the template
#: stays within about 10% of a gather that reads each line once; shorter rows lose clearly unless most
#: indices repeat, which the host tiling cannot see.
MIN_ROW_BYTES = 4096
#: A probe pitch (a multiple of 8, so that mask bytes divide) to read the tiles' UB bytes per pitch element.
_PITCH_PROBE = 256


@attrs.frozen
class _ChunkSizes:
    """The tiling fields the counters are formulas of, and their values at the platform (or None)."""

    positions: sympy.Expr
    chunk: sympy.Expr
    chunks: sympy.Expr
    width: sympy.Expr
    col_tiles: sympy.Expr
    at: dict[str, int] | None


def _fields_at_platform(spec: TilingSpec, ctx: ScheduleContext) -> dict[str, int] | None:
    """The case's tiling fields at the platform's core count and UB, when an index distribution is
    declared and the sizes are concrete (the reuse model needs a chunk's size as a number); None
    otherwise, without evaluating anything."""
    if ctx.options.index_distribution is None:
        return None
    env = {"core_num": ctx.platform.core_num, "ub_size": ctx.platform.ub_size}
    known = set(env) | {f.name for f in spec.fields}
    if any(not {str(x) for x in sympy.sympify(f.expr).free_symbols} <= known for f in spec.fields):
        return None
    ev = evaluate_case(CaseRef(0, "dedup", spec), env)
    return dict(ev.fields) if {"chunk", "positions"} <= set(ev.fields) else None


class DedupGatherTemplate:
    """Registered as ``dedup``."""

    name = "dedup"
    #: The gathered tile is double-buffered: one work item's copies overlap the previous one's stores.
    buffers = 2
    #: Rows shorter than this many bytes are dropped (a constraint ``afc explain`` shows); tests lower it.
    min_row_bytes = MIN_ROW_BYTES
    #: Rows are cut into column tiles of at least this many bytes; tests lower it to cut short rows too.
    min_column_bytes = MIN_COLUMN_BYTES
    #: The stage's axis names: the work items, the loop over them and the split across cores.
    axis_names = ("W", "WT", "Wt", "WTB", "WTb")

    def propose(self, graph: HintGraph, il: Node, ctx: ScheduleContext) -> list[Case]:
        an = ctx.analyze(graph)
        rs = row_select(graph, il, an, "the dedup gather")
        if an.reduce is not None:
            raise Unsupported(
                f"reduce '{an.reduce.name}' follows the gather; the dedup gather keeps one tile row per "
                "distinct index value, not per position, so it stores rows without reducing them"
            )
        side = an.loads_of("post")
        if side:
            raise Unsupported(
                f"the post chain reads {[n.name for n in side]}, indexed by output position; the dedup "
                "gather runs the chain once per distinct row, so only chains without side inputs fit"
            )
        dim = rs.dim
        row_bytes = sympy.sympify(product(list(il.y.size[dim + 1 :])) * il.y.dtype.itemsize)
        if row_bytes.is_number and int(row_bytes) < self.min_row_bytes:
            raise Unsupported(
                f"rows of {int(row_bytes)} bytes, under {self.min_row_bytes}: a copy call per distinct row "
                "costs more than deduplication saves unless most indices repeat"
            )
        return [self._case(graph, il, an, rs, ctx)]

    def _case(self, graph: HintGraph, il: Node, an, rs: RowSelect, ctx: ScheduleContext) -> Case:
        table, index, dim, view = rs.table, rs.index, rs.dim, rs.view
        out_sizes = list(il.y.size)
        row_sizes = out_sizes[: dim + 1]
        width = product(out_sizes[dim + 1 :])
        itemsize = il.y.dtype.itemsize
        value = graph.producer(an.store, "x")
        chain_dtypes = [n.y.dtype for n in [il, *an.post_chain]]
        align = 32 // min(d.itemsize for d in chain_dtypes)

        spec = TilingSpec()
        impl = ImplGraph(graph.name, self.name, meta={"buffers": self.buffers})
        positions = spec.add(
            "positions", product(row_sizes), "output positions (axes up to the gathered one)"
        )
        column_min = AlignUp(Max(1, self.min_column_bytes // itemsize), align)
        spare = Max(
            1, Min(CeilDiv(width, column_min), CORE_NUM)
        )  # most column tiles worth cutting a row into
        chunk = field("chunk")
        hash_size, chunks = field("hash_size"), field("chunks")
        col = field("col")
        pitch = pitch_for(col, chain_dtypes)

        merged, loop, inner, cores, share = self.axis_names
        items, per_core, used = field("items"), field("items_per_core"), field("used_cores")
        axes = [
            ImplAxis(merged, "MERGED", items, tuple(a.name for a in il.y.axis[: dim + 1])),
            ImplAxis(loop, "TILE_OUT", items, (merged,)),
            ImplAxis(inner, "TILE_IN", sympy.Integer(1), (merged,)),
            ImplAxis(cores, "BLOCK_OUT", used, (loop,)),
            ImplAxis(share, "BLOCK_IN", per_core, (loop,)),
        ]
        stage = Stage("dedup", axes, [], [], used_cores="used_cores")
        plan = TilePlan(impl, stage, chunk)
        item = sympy.Symbol(f"{loop}_start")
        col_tiles = field("col_tiles")
        chunk_of = FloorDiv(item, col_tiles)
        first_row = chunk_of * chunk
        rows = Min(chunk, positions - first_row)
        column = (item - chunk_of * col_tiles) * col
        columns = Min(col, width - column)
        b = TileBuilder(graph, impl, plan, loop, first_row, chunk, self.buffers)

        # 1-2. number the distinct rows, copy each distinct column tile once
        # a post chain reads the tile on V (a VECIN queue); without one MTE3 stores what MTE2 copied (a queue
        # bound from VECIN to VECOUT: its flags order MTE2 -> MTE3, and V writes only a zero slot, which the
        # store orders itself)
        gathered = plan.tile(
            f"{il.name}_rows",
            il.y.dtype,
            pitch,
            position="VECIN" if an.post_chain else VECIN_VECOUT,
            que=True,
            num=self.buffers,
        )
        keys = plan.fixed(f"{il.name}_keys", dt.int64, hash_size + chunk)
        ids = plan.fixed(f"{il.name}_ids", dt.int32, hash_size + chunk)
        b.nodes.append(
            ImplNode(
                il.name,
                "IndirectLoad",
                DedupGatherApiCall.name,
                (b.gm_tensor(table), b.gm_tensor(index)),
                (gathered, keys, ids),
                loop_axis=loop,
                attrs={
                    "view": view,
                    "first_row": first_row,
                    "rows": rows,
                    "column": column,
                    "columns": columns,
                    "pitch": pitch,
                    "hash_size": hash_size,
                    "tile_rows": chunk,
                    "zero_fill": bool(an.post_chain),
                },
            )
        )
        b.tensor_of[il.name] = gathered
        # 3. the post chain over the distinct rows, then the stores to every position
        for node in an.post_chain:
            b.compute(node, pitch, final=node is value)
        out = an.output
        impl.add_gm(out)
        b.nodes.append(
            ImplNode(
                an.store.name,
                "Store",
                DedupStoreApiCall.name,
                (b.tensor_of[value.name], ids),
                (out.name,),
                loop_axis=loop,
                attrs={
                    "first_row": first_row,
                    "rows": rows,
                    "width": width,
                    "column": column,
                    "columns": columns,
                    "pitch": pitch,
                    "hash_size": hash_size,
                    # V writes the stored tile: the chain, or the zero slot of an index out of range
                    "vector_writes": bool(an.post_chain) or bool(view["check_bound"]),
                },
            )
        )
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

        # chunks: as many positions as leave a work item for every core, and no more than fit in UB with
        # whole rows unless a row alone is too wide (then CHUNK_MIN positions and narrower column tiles)
        per_element = sympy.ceiling(plan.row_bytes.subs(pitch, _PITCH_PROBE) / _PITCH_PROBE)
        whole_rows = FloorDiv(UB_SIZE - HASH_RESERVE, AlignUp(width, align) * per_element)
        # whole_rows when at least WHOLE_ROWS_MIN fit, else CHUNK_MIN (written with the integer helpers)
        chunk_cap = Max(whole_rows, CHUNK_MIN * (1 - Min(1, FloorDiv(whole_rows, WHOLE_ROWS_MIN))))
        spec.add(
            "chunk",
            Max(1, Min(CHUNK_MAX, CeilDiv(positions, CeilDiv(CORE_NUM, spare)), chunk_cap)),
            "positions per chunk",
        )
        spec.add("hash_size", 2 * chunk, "slots of the chunk's hash table")
        spec.add("chunks", CeilDiv(positions, chunk), "chunks of positions")
        # column tiles: as wide as UB allows for a chunk, narrow enough that every core gets a work item
        fit = FloorDiv(Max(0, UB_SIZE - plan.fixed_bytes), chunk * per_element)
        wanted = AlignUp(CeilDiv(width, Max(1, Min(spare, CeilDiv(CORE_NUM, chunks)))), align)
        spec.add("col", Max(align, Min(wanted, FloorDiv(fit, align) * align)), "elements per column tile")
        spec.add("col_tiles", CeilDiv(width, col), "column tiles per row")
        spec.add("items", chunks * col_tiles, "work items: chunks x column tiles")
        spec.add("items_per_core", CeilDiv(items, CORE_NUM), "work items per core")
        spec.add("used_cores", CeilDiv(items, per_core), "cores with work")
        ub = plan.ub_bytes()
        spec.resources = {
            "ub_bytes": ub,
            "workspace_bytes": sympy.Integer(0),
            "dcache_bytes": sympy.Integer(0),
        }
        spec.require(
            Le(ub, UB_SIZE),
            "a chunk of one 32-byte column (the tile, the post chain's tiles, the hash table) does not fit in UB",
        )
        spec.require(
            Lt(width * max(d.itemsize for d in chain_dtypes), 2**31),
            "a row of 2 GiB or more does not fit the copies' 32-bit strides",
        )
        if self.min_row_bytes > 0:
            spec.require(
                Ge(width * itemsize, self.min_row_bytes),
                f"rows under {self.min_row_bytes} bytes: a copy call per distinct row costs more than "
                "deduplication saves unless most indices repeat",
            )
        spec.score = sympy.Integer(1)
        spec.block_dim = used
        sizes = _ChunkSizes(positions, chunk, chunks, width, col_tiles, _fields_at_platform(spec, ctx))
        self._counters(stage, loop, an, table, index, dim, sizes, ctx).apply(spec)
        return Case(self.name, "default", graph, impl, spec)

    @staticmethod
    def _counters(
        stage: Stage,
        loop: str,
        an,
        table: Node,
        index: Node,
        dim: int,
        sizes: _ChunkSizes,
        ctx: ScheduleContext,
    ) -> CounterModel:
        """Predicted counters: the expected distinct rows of each chunk read (DataCopyPad), the output
        written, the index read into UB and numbered by a scalar pass, copies, stores and chain calls.
        HBM delivers each row once however many chunks read it (the shared L2 keeps it), so its bytes
        are the distinct rows of all positions. With a declared index distribution and concrete sizes,
        the distinct rows come from it (a chunk's at the platform's core count, ``at``); otherwise from
        the uniform formula."""
        positions, chunk, chunks, width, col_tiles, at = attrs.astuple(sizes, recurse=False)
        out_dtype = an.output.y.dtype
        table_rows = table.y.size[dim] * product(
            [s for s, st in zip(table.y.size[:dim], table.y.strides[:dim]) if sympy.sympify(st) != 0]
        )
        declared = ctx.options.index_distribution
        per_chunk = None if at is None else distinct_rows(at["chunk"], table_rows, declared, at["positions"])
        overall = None if at is None else distinct_rows(at["positions"], table_rows, declared)
        if per_chunk is None:
            per_chunk = expected_distinct(chunk, table_rows)
        if overall is None:
            overall = expected_distinct(positions, table_rows)
        distinct = Min(positions, chunks * per_chunk)
        row_in = width * table.y.dtype.itemsize
        row_out = width * out_dtype.itemsize
        index_bytes = chunks * AlignUp(chunk * index.y.dtype.itemsize, 128)
        per_item = len(
            [
                n
                for n in stage.nodes
                if n.loop_axis == loop
                and n.api_call
                and n.api_call not in (DedupGatherApiCall.name, DedupStoreApiCall.name)
            ]
        ) + (1 if an.post_chain else 0)
        # per column tile: a copy per distinct row read, and a store per run of positions whose tile rows
        # follow each other (a run ends at each repeated row and at each chunk's end)
        stores = positions - distinct + chunks
        calls = col_tiles * (distinct + stores) + chunks * col_tiles * per_item
        written = positions * row_out
        read = distinct * row_in + index_bytes
        return CounterModel(
            read_bytes=read,
            write_bytes=written,
            api_calls=calls,
            scalar_accesses=positions,
            hbm_bytes=Min(positions, overall) * row_in + index_bytes + written,
        )
