"""The SK-like template (first seed, 功能需求5).

For IndirectLoads with too few outer rows to fill the cores: the chains run
as their own stages, each with its own split and used-core count, joined by
GM workspaces and separated by ``SyncAll()``::

    input pre   : input GM            -> ws_input    (rows of the input)
    index pre   : index GM            -> ws_index    (rows of the index)
    IndirectLoad: ws_input + ws_index -> ws_gather   (output outer rows, as SIMD)
    output post : ws_gather (+ sides) -> output GM   (rows of the output, reduce inside)

A stage with no ops is left out (the next stage reads the original tensor,
or the gather writes the output directly). The pre and post stages are the
core's ordinary row-tile scheduling (:mod:`af_core.schedule.rowtiles`) with
the shared v35 ApiCalls, the same path the SIMD chains use; the gather stage
is the core's shared Gather step.
"""

from __future__ import annotations

import sympy

from af_core.template_api import (
    LINE_BYTES,
    UB_SIZE,
    AlignUp,
    Case,
    ComputeType,
    CounterModel,
    Expr,
    HintGraph,
    ImplGraph,
    ImplNode,
    ImplTensor,
    Le,
    Max,
    Min,
    Node,
    Rejected,
    RowTiles,
    ScheduleContext,
    Select,
    Stage,
    Storage,
    TileBuilder,
    TilePlan,
    TilingSpec,
    Unsupported,
    add_gather,
    add_reduce,
    assign_releases,
    contiguous_strides,
    dense,
    fold_view,
    gather_span_limit,
    index_layout,
    pitch_for,
    product,
    settle_pattern_flag,
    view_head,
    view_of,
    workspace_view,
)
from af_core.template_api import dtypes as dt

WS_ALIGN = 512


class StageBuilder:
    """One row-tile stage of the case: axes, tile plan, tiling fields (prefixed by the stage key)."""

    def __init__(
        self,
        case_graph: HintGraph,
        impl: ImplGraph,
        spec: TilingSpec,
        key: str,
        rows,
        axes_from,
        buffers: int = 1,
    ) -> None:
        self.key = key
        self.spec = spec
        self.rows = spec.add(f"{key}_rows", rows, f"rows of the {key} stage")
        self.row_tiles = RowTiles(self.rows, f"{key.upper()}R", key.upper(), prefix=f"{key}_")
        self.tile, self.tiles = self.row_tiles.tile, self.row_tiles.tiles
        self.per_core, self.used = self.row_tiles.tiles_per_core, self.row_tiles.used_cores
        loop = self.row_tiles.loop
        self.stage = Stage(key, self.row_tiles.axes(tuple(axes_from)), [], [], used_cores=f"{key}_used_cores")
        self.plan = TilePlan(impl, self.stage, self.tile)
        self.b = TileBuilder(
            case_graph,
            impl,
            self.plan,
            loop,
            sympy.Symbol(f"{loop}_start"),
            sympy.Symbol(f"{loop}_actual"),
            buffers,
        )
        self.prologue: list[ImplNode] = []

    def finish(self, impl: ImplGraph, span: tuple | None = None) -> None:
        """Tile rule (most rows that fit, spread over the cores) and the stage's UB constraint.

        ``span`` (from :func:`gather_span_limit`) further bounds the rows of a stage whose Gather source
        has a limited reach, and drops the case when one row is already too long.
        """
        k, spec = self.key, self.spec
        self.b.fuse_chains()  # first: a fused call may pad the tiles it reads, which the fit must see
        fit = self.plan.max_rows(UB_SIZE) if span is None else Min(self.plan.max_rows(UB_SIZE), span[0])
        self.row_tiles.add_fields(
            spec,
            fit,
            f"most rows of a {k} tile that fit UB"
            + (" and the Gather's offset range" if span is not None else ""),
            used_doc=f"cores the {k} stage uses",
        )
        spec.resources[f"{k}_ub_bytes"] = self.plan.ub_bytes()
        spec.require(Le(self.plan.ub_bytes(), UB_SIZE), f"one row of the {k} stage does not fit in UB")
        if span is not None:
            spec.require(span[1], f"{k} stage: {span[2]}")
        for prologue in self.prologue:
            settle_pattern_flag(prologue, self.b.nodes)
        self.stage.nodes = [*self.prologue, *self.b.nodes]
        assign_releases(self.stage, impl)


class SkLikeTemplate:
    """Registered as ``sklike``; one case per graph."""

    name = "sklike"

    def propose(self, graph: HintGraph, il: Node, ctx: ScheduleContext) -> list[Case | Rejected]:
        return [self._case(graph, il, ctx)]

    def _case(self, graph: HintGraph, il: Node, ctx: ScheduleContext) -> Case:
        consumers = graph.consumers(il)
        if len(consumers) != 1:
            raise Unsupported(
                f"the IndirectLoad output has {len(consumers)} consumers; the gather stage writes "
                "one workspace for exactly one consumer"
            )
        if il.y.dtype.is_bool or any(
            n.op.compute_type == ComputeType.DATA and n.y.dtype.is_bool for n in graph.nodes()
        ):
            raise Unsupported("bool tensors cannot be loaded into vector tiles")
        an = ctx.analyze(graph)
        dim, rank = an.dim, an.rank
        index_sizes = list(il.y.size)
        gather_src = graph.producer(il, "x1")
        index_node = graph.producer(il, "x2")
        input_sizes = list(gather_src.y.size)
        outer = index_sizes[:dim]
        if an.reduce is not None:
            axes = an.reduce_axes()  # never empty (validation rule reduce-axes)
            if list(axes) != list(range(axes[0], axes[-1] + 1)):
                raise Unsupported(f"reduce axes {list(axes)} are not contiguous")
        spec = TilingSpec()
        impl = ImplGraph(graph.name, self.name)
        heads = {
            ld.name: view_head(graph, ld) for role in ("input", "index", "post") for ld in an.loads_of(role)
        }
        stages: list[StageBuilder] = []
        ws: list[tuple[str, object]] = []  # (tensor, bytes) in layout order
        gm_bytes = sympy.Integer(0)
        pre_ops = [n for n in an.input_chain if n.op.compute_type != ComputeType.BROADCAST]
        idx_ops = [n for n in an.index_chain if n.op.compute_type != ComputeType.BROADCAST]

        def workspace(name: str, node: Node, sizes) -> str:
            impl.add_tensor(
                ImplTensor(
                    name,
                    node.y.dtype,
                    Storage.WORKSPACE,
                    tuple(sizes),
                    tuple(contiguous_strides(list(sizes))),
                    ws_offset=sympy.Symbol(f"{name}_offset", integer=True),
                )
            )
            ws.append((name, product(list(sizes)) * node.y.dtype.itemsize))
            return name

        def chain_stage(key: str, nodes: list[Node], loads: list[Node], target: Node, sizes) -> str:
            """An elementwise stage over a whole tensor: rows = all axes but the last."""
            split = max(len(sizes) - 1, 0)
            st = StageBuilder(
                graph, impl, spec, key, product(list(sizes[:split])), [a.name for a in target.y.axis[:split]]
            )
            dtypes = [n.y.dtype for n in [*nodes, *loads]]
            pitch = pitch_for(product(list(sizes[split:])), dtypes)
            for load in loads:
                st.b.load(
                    heads[load.name], view_of(graph, heads[load.name], sizes[:split], split), pitch, st.rows
                )
            for node in nodes:
                st.b.compute(node, pitch, final=node is target)
            name = workspace(f"ws_{key}", target, sizes)
            st.b.store(
                f"{key}_store",
                st.b.tensor_of[target.name],
                name,
                product(list(sizes[split:])),
                pitch,
                st.rows,
                target.y.dtype,
            )
            st.finish(impl)
            stages.append(st)
            return name

        # 1. input pre -> ws_input, 2. index pre -> ws_index
        ws_input = (
            chain_stage("pre", an.input_chain, an.loads_of("input"), gather_src, input_sizes)
            if pre_ops
            else None
        )
        ws_index = (
            chain_stage("idx", an.index_chain, an.loads_of("index"), index_node, index_sizes)
            if idx_ops
            else None
        )
        # 3. the gather stage, outer-axis rows like SIMD
        value = graph.producer(an.reduce or an.store, "x")
        post_needed = value is not il or an.reduce is not None
        g = StageBuilder(graph, impl, spec, "gather", product(outer), [a.name for a in il.y.axis[:dim]])
        pin = pitch_for(product(input_sizes[dim:]), [gather_src.y.dtype])
        if ws_input is not None:
            g.b.load(
                gather_src,
                workspace_view(input_sizes, dim, ws_input, outer),
                pin,
                g.rows,
                extra_bytes=32,
                source=ws_input,
            )
        else:
            main_data, _ = fold_view(graph, gather_src)
            view = view_of(graph, gather_src, outer, dim)
            if not dense(view):
                raise Unsupported(f"input '{main_data.name}' rows [dim {dim}:] are not one dense block in GM")
            g.b.load(gather_src, view, pin, g.rows, extra_bytes=32)
        index_loads = an.loads_of("index")
        if ws_index is not None:
            full_index, index_view = True, workspace_view(index_sizes, dim, ws_index, outer)
            pout = pitch_for(product(index_sizes[dim:]), [il.y.dtype, index_node.y.dtype, dt.int32])
            pidx = pout
            g.b.load(index_node, index_view, pidx, g.rows, source=ws_index)
        else:
            full_index, index_view = index_layout(graph, index_loads, heads, outer, dim, index_sizes)
            pout = pitch_for(
                product(index_sizes[dim:]),
                [il.y.dtype, dt.int32] + ([index_node.y.dtype] if full_index else []),
            )
            pidx = pout if full_index else pitch_for(product(index_view["inner_sizes"]), [index_node.y.dtype])
            g.b.load(heads[index_loads[0].name], index_view, pidx, g.rows)
        gathered, prologue = add_gather(
            g.b,
            il,
            pin=pin,
            pidx=pidx,
            pout=pout,
            full_index=full_index,
            index_axes=index_view["inner_axes"],
            final=True,
        )
        g.prologue.append(prologue)
        out = an.output
        impl.add_gm(out)
        target = workspace("ws_gather", il, index_sizes) if post_needed else out.name
        g.b.store(f"{il.name}_store", gathered, target, product(index_sizes[dim:]), pout, g.rows, il.y.dtype)
        g.finish(impl, gather_span_limit(il.y.dtype, pin))
        stages.append(g)
        # 4. output post (elementwise + reduce) from ws_gather
        if post_needed:
            sizes = list(value.y.size)
            red_axes: tuple[int, ...] = an.reduce_axes()
            split = red_axes[0] if red_axes else max(rank - 1, 0)
            p = StageBuilder(
                graph, impl, spec, "post", product(sizes[:split]), [a.name for a in value.y.axis[:split]]
            )
            dtypes = [n.y.dtype for n in [il, *an.post_chain, *an.loads_of("post")]]
            pitch = pitch_for(product(sizes[split:]), dtypes)
            p.b.load(il, workspace_view(index_sizes, split, "ws_gather"), pitch, p.rows, source="ws_gather")
            for load in an.loads_of("post"):
                p.b.load(
                    heads[load.name], view_of(graph, heads[load.name], sizes[:split], split), pitch, p.rows
                )
            for node in an.post_chain:
                p.b.compute(node, pitch, final=an.reduce is None and node is value)
            result, width, rpitch = p.b.tensor_of[value.name], product(sizes[split:]), pitch
            if an.reduce is not None:
                result, width, rpitch = add_reduce(
                    p.b, an.reduce, result, value.y.dtype, sizes[split:], (0, red_axes[-1] + 1 - split), pitch
                )
            p.b.store(an.store.name, result, out.name, width, rpitch, p.rows, out.y.dtype)
            p.finish(impl)
            stages.append(p)

        # workspace layout, SyncAll between stages, block_dim = the widest stage
        offset = sympy.Integer(0)
        for name, size in ws:
            spec.add(f"{name}_offset", offset, f"byte offset of {name} in the workspace")
            offset = offset + AlignUp(size, WS_ALIGN)
        total = spec.add("workspace_bytes", offset, "workspace the stages exchange data through")
        calls = sympy.Integer(0)
        counted: dict[str, Expr] = {"read": sympy.Integer(0), "write": sympy.Integer(0)}
        counted.update(fills=sympy.Integer(0), scalar=sympy.Integer(0))
        counted.update(reg_instructions=sympy.Integer(0), reg_cycles=sympy.Integer(0))
        for i, st in enumerate(stages):
            st.stage.sync_before = i > 0
            gm_bytes = gm_bytes + st.b.gm_bytes
            calls = calls + st.tiles * len([n for n in st.stage.nodes if n.loop_axis and n.api_call])
            calls = calls + st.rows * st.b.calls_per_row
            counted["read"] += st.b.read_bytes
            counted["write"] += st.b.write_bytes
            counted["fills"] += st.b.line_fills
            counted["scalar"] += st.b.scalar_reads
            # the back end's own figures for its calls (the register instructions of its vector functions)
            by_calls = st.b.call_counters(st.row_tiles)
            counted["reg_instructions"] += by_calls["reg_instructions"]
            counted["reg_cycles"] += by_calls["reg_cycles"]
            calls = calls + by_calls["api_calls"]  # the calls a node issues beyond its one per tile
        impl.stages = [st.stage for st in stages]
        impl.meta = {**impl.meta, "stages": [st.key for st in stages], "workspaces": [name for name, _ in ws]}
        used = [st.used for st in stages]
        spec.block_dim = Max(*used) if len(used) > 1 else used[0]
        spec.workspace = total
        spec.resources["ub_bytes"] = (
            Max(*(st.plan.ub_bytes() for st in stages)) if len(stages) > 1 else stages[0].plan.ub_bytes()
        )
        spec.resources["workspace_bytes"] = total
        spec.resources["dcache_bytes"] = sympy.Integer(0)
        # the seed's SK-like region: long contiguous rows, too few outer indices to share among cores
        region = sympy.And(ctx.measures.cache_ok(), sympy.Not(ctx.measures.core_ok()))
        spec.score = Select(region, 2, -1)
        # a later stage reads each workspace back from L2, which still holds it: HBM sees the workspace
        # written back once and never read
        read_back = sympy.Add(*(sympy.sympify(size) for _, size in ws))
        CounterModel(
            read_bytes=counted["read"],
            write_bytes=counted["write"],
            line_fills=counted["fills"],
            api_calls=calls,
            scalar_accesses=counted["scalar"],
            reg_instructions=counted["reg_instructions"],
            reg_cycles=counted["reg_cycles"],
            hbm_bytes=counted["read"] + LINE_BYTES * counted["fills"] - read_back + counted["write"],
        ).apply(spec)
        return Case(self.name, "default", graph, impl, spec, meta={"stages": [st.key for st in stages]})
