"""The SIMD template (first seed, 功能需求3).

Schedule axis: the merged output outer axes (the axes before ``dim``); tiles
and the split across cores cut only that axis, so a tile is ``rows`` whole
output rows. Per tile:

1. DataCopyPad the input slice ``[rows, s_dim, inner...]`` (input coordinates)
   and the input chain's side inputs into UB, run the input-pre chain on it;
2. load the index tile and run the index-pre chain;
3. build the offsets and gather (an out-of-range index with need_check_bound
   reads a zero slot placed after the slice): for 2- and 4-byte data uint32
   element indices and a register vector function (``LoadAlign`` them,
   ``Reg::Gather``, ``StoreAlign``), for 1-byte data byte offsets and the
   memory-based ``Gather`` (the gather role's ApiCall decides; ``afc explain``
   prints which under "Gather forms");
4. run the output-post chain, an optional reduce over axes inside the row,
   and store.

The input chain's unary ops move behind the IndirectLoad first when that
does not enlarge the data (``sink_unary_ops``). UB holds every tile of a
step at once — input slice (+ zero slot), index tile, offsets, output tile
and chain temporaries, twice for the queues of the double-buffered case —
and the tile rule takes the most rows that fit while still spreading rows
over the cores; a shape whose single row does not fit is dropped at tiling
time. Two cases: double-buffered queues (``db``) and single buffers (``sb``,
which fits larger rows).
"""

from __future__ import annotations

import sympy

from af_core.template_api import (
    UB_SIZE,
    Case,
    ComputeType,
    CounterModel,
    HintGraph,
    ImplGraph,
    ImplNode,
    Le,
    Min,
    Node,
    Rejected,
    RowTiles,
    ScheduleContext,
    Select,
    Stage,
    TileBuilder,
    TilePlan,
    TilingSpec,
    Unsupported,
    add_gather,
    add_reduce,
    assign_releases,
    dense,
    fold_view,
    gather_span_limit,
    index_layout,
    main_input,
    pitch_for,
    product,
    settle_pattern_flag,
    sink_unary_ops,
    view_head,
    view_of,
)
from af_core.template_api import dtypes as dt

T_START, T_ACTUAL = sympy.Symbol("OT_start"), sympy.Symbol("OT_actual")


def check_reduce(an, dim: int) -> tuple[int, ...]:
    axes = an.reduce_axes()  # never empty: validation refuses a reduce with no axis (rule reduce-axes)
    if min(axes) < dim:
        raise Unsupported(
            f"reduce axes {list(axes)} include an outer axis (< dim {dim}); the SIMD tile holds "
            "whole rows only"
        )
    if list(axes) != list(range(axes[0], axes[-1] + 1)):
        raise Unsupported(f"reduce axes {list(axes)} are not contiguous")
    return axes


class SimdTemplate:
    """Registered as ``simd``."""

    name = "simd"
    variants = (("db", 2), ("sb", 1))

    def propose(self, graph: HintGraph, il: Node, ctx: ScheduleContext) -> list[Case | Rejected]:
        cases: list[Case | Rejected] = []
        for variant, buffers in self.variants:
            copy = graph.copy()
            cases.append(self._case(copy, copy.node(il.name), ctx, variant, buffers))
        return cases

    def _case(self, graph: HintGraph, il: Node, ctx: ScheduleContext, variant: str, buffers: int) -> Case:
        if il.y.dtype.is_bool:
            raise Unsupported("bool IndirectLoad data is not supported")
        for node in graph.nodes():
            if node.op.compute_type == ComputeType.DATA and node.y.dtype.is_bool:
                raise Unsupported(f"bool input '{node.name}' cannot be loaded into a vector tile")
        moved = sink_unary_ops(graph, il)
        an = ctx.analyze(graph)
        dim, _rank = an.dim, an.rank
        index_sizes = list(il.y.size)
        gather_src = graph.producer(il, "x1")
        input_sizes = list(gather_src.y.size)
        outer = index_sizes[:dim]
        red_axes = check_reduce(an, dim) if an.reduce is not None else ()

        heads = {
            ld.name: view_head(graph, ld) for role in ("input", "index", "post") for ld in an.loads_of(role)
        }
        views = {name: view_of(graph, head, outer, dim) for name, head in heads.items()}
        main_data, _ = fold_view(graph, main_input(graph, il, stop=("load", "broadcast")))
        main_load = next(ld for ld in an.loads_of("input") if graph.producer(ld, "x") is main_data)
        if not dense(views[main_load.name]):
            raise Unsupported(
                f"input '{main_data.name}' rows [dim {dim}:] are not one dense block in GM "
                f"(strides {views[main_load.name]['inner_strides']}); the slice copy needs dense rows"
            )
        index_loads = an.loads_of("index")
        full_index, index_view = index_layout(graph, index_loads, heads, outer, dim, index_sizes)
        views[index_loads[0].name] = index_view

        spec = TilingSpec()
        impl = ImplGraph(graph.name, self.name, meta={"buffers": buffers, "moved_behind_gather": moved})
        rows = spec.add("rows", product(outer), "output rows (merged axes before dim)")
        row_tiles = RowTiles(rows, "O", "O")
        tiles, used = row_tiles.tiles, row_tiles.used_cores
        stage = Stage(
            "simd", row_tiles.axes(tuple(a.name for a in il.y.axis[:dim])), [], [], used_cores="used_cores"
        )
        plan = TilePlan(impl, stage, row_tiles.tile)
        b = TileBuilder(graph, impl, plan, row_tiles.loop, T_START, T_ACTUAL, buffers)

        in_dtypes = [n.y.dtype for n in an.input_chain] + [ld.y.dtype for ld in an.loads_of("input")]
        pin = pitch_for(product(input_sizes[dim:]), in_dtypes + [gather_src.y.dtype])
        out_dtypes = [n.y.dtype for n in [il, *an.post_chain, *an.loads_of("post")]] + [dt.int32]
        if full_index:
            out_dtypes += [n.y.dtype for n in [*an.index_chain, *index_loads]]
        width_out = product(index_sizes[dim:])
        pout = pitch_for(width_out, out_dtypes)
        pidx = (
            pout
            if full_index
            else pitch_for(
                product(index_view["inner_sizes"]), [n.y.dtype for n in [*index_loads, *an.index_chain]]
            )
        )

        # 1. input slice (a zero slot follows the tile the Gather reads) and the input-pre chain
        for load in an.loads_of("input"):
            head = heads[load.name]
            b.load(head, views[load.name], pin, rows, extra_bytes=32 if head is gather_src else 0)
        for node in an.input_chain:
            b.compute(
                node,
                pin,
                extra_bytes=32 if node is gather_src and node.op.compute_type != ComputeType.BROADCAST else 0,
            )
        # 2. index tile and the index-pre chain
        for load in index_loads:
            b.load(heads[load.name], views[load.name], pidx, rows)
        for node in an.index_chain:
            b.compute(node, pidx)
        # 3. offsets and Gather
        value = graph.producer(an.reduce or an.store, "x")
        _gathered, prologue = add_gather(
            b,
            il,
            pin=pin,
            pidx=pidx,
            pout=pout,
            full_index=full_index,
            index_axes=index_view["inner_axes"],
            final=an.reduce is None and value is il,  # a reduce reads the tile on V: no VECOUT queue
        )
        # 4. output-post chain, reduce, store
        for load in an.loads_of("post"):
            b.load(heads[load.name], views[load.name], pout, rows)
        for node in an.post_chain:
            b.compute(node, pout, final=an.reduce is None and node is value)
        result, width, pitch = b.tensor_of[value.name], width_out, pout
        if an.reduce is not None:
            result, width, pitch = add_reduce(
                b,
                an.reduce,
                result,
                value.y.dtype,
                index_sizes[dim:],
                (red_axes[0] - dim, red_axes[-1] + 1 - dim),
                pout,
            )
        out = an.output
        impl.add_gm(out)
        b.store(an.store.name, result, out.name, width, pitch, rows, out.y.dtype)
        b.fuse_chains()
        settle_pattern_flag(prologue, b.nodes)
        stage.nodes = [prologue, *b.nodes]
        stage.nodes += [
            ImplNode(n.name, n.type, None, fused_into=il.name)
            for n in graph.nodes()
            if n.op.compute_type == ComputeType.BROADCAST
        ]
        assign_releases(stage, impl)
        impl.stages = [stage]

        span = gather_span_limit(il.y.dtype, pin)
        fit = plan.max_rows(UB_SIZE) if span is None else Min(plan.max_rows(UB_SIZE), span[0])
        row_tiles.add_fields(
            spec,
            fit,
            "most rows whose tiles fit in UB together (and, for 1-/2-byte data, "
            "whose Gather source a uint16 offset reaches)",
        )
        ub = plan.ub_bytes()
        spec.resources = {
            "ub_bytes": ub,
            "workspace_bytes": sympy.Integer(0),
            "dcache_bytes": sympy.Integer(0),
        }
        spec.require(
            Le(ub, UB_SIZE),
            "one tile row (input slice + index + offsets + output + chain temporaries) does not fit in UB",
        )
        if span is not None:
            spec.require(span[1], span[2])
        # the seed's SIMD region: long contiguous rows and enough outer indices to share among cores
        spec.score = Select(sympy.And(ctx.measures.cache_ok(), ctx.measures.core_ok()), 2, -1)
        loop_calls = len([n for n in stage.nodes if n.loop_axis == "OT" and n.api_call])
        # the back end's own figures for its calls (the register instructions of its vector functions)
        by_calls = b.call_counters(row_tiles)
        spec.block_dim = used
        CounterModel(
            read_bytes=b.read_bytes,
            write_bytes=b.write_bytes,
            line_fills=b.line_fills,
            api_calls=tiles * loop_calls + rows * b.calls_per_row + by_calls["api_calls"],
            scalar_accesses=b.scalar_reads,
            reg_instructions=by_calls["reg_instructions"],
            reg_cycles=by_calls["reg_cycles"],
        ).apply(spec, serialized=buffers == 1)
        return Case(self.name, variant, graph, impl, spec, meta={"buffers": buffers})
