"""The SIMT template (first seed, 功能需求4).

The output is linearized and split across cores; each lane of a SIMT VF
reads its index from GM, normalizes it, reads the input element from GM
(through the data cache) and runs the index and output chains as scalar
code. The whole input chain is first moved behind the IndirectLoad
(``hoist_input_chain``), one IndirectLoad per input view, sharing the index.

With a reduce there are two cases:

- ``default``: a tile holds whole reduce groups. The reduce is viewed as
  ``[A, R, I]`` (kept outer axes, reduced axes, kept inner axes), tiles are
  rows of A, lanes fill a UB buffer with ``tile * R * I`` values and a
  vector reduce finishes the tile before it is stored (the seed's SIMT +
  SIMD mix; needs contiguous reduce axes and a group that fits UB). The
  back end's register chain reduces the whole tile in one launch when it
  accepts the view: ``I`` fixed at 1 by the graph (a reduce over the last
  axes), or fixed with whole 32-byte rows; otherwise one vector reduce call
  per group;
- ``lanes``: every lane computes one output element, looping over the
  reduced coordinates itself; no UB, any reduce axes, any group size. A
  load that uses no reduced coordinate (an index constant along the reduce)
  is read once per lane, before the loop. When the last axis is kept, has a
  concrete size divisible by 4 (or 2) and the row's index is read at every
  step, a lane computes 4 (2) consecutive outputs of its row and reads that
  index once per step for all of them (``lanes`` = outputs / width).

How the lanes are split over the cores:

- without a reduce, a core takes whole rounds of the VF's threads, their
  number chosen as the official GatherV2 SIMT tiling for A5 chooses it
  (:func:`vf_threads`): a small output runs on fewer cores instead of a few
  lanes on every core, each of which would read its own index and side
  lines; the UB reduce's tiles hold at least one such round;
- the lane reduce over a middle axis splits at whole groups of lanes that
  share a row (the kept axes after the reduced ones) and launches only as
  many groups at once as keep their lines in half the data cache
  (:meth:`_Parts.lane_threads`).

A 32 KiB data-cache reserve is recorded on the case and counted against UB:
a kernel that launches ``VF_CALL`` may give ``TPipe`` at most the physical UB
minus the 8 KiB system reserve minus the data cache (official SIMT
programming model; the CPU twin checks the same budget), and never more than
the usable UB the host tiling is given.
"""

from __future__ import annotations

import attrs
import sympy

from af_core.template_api import (
    CORE_NUM,
    LINE_BYTES,
    UB_SIZE,
    Case,
    CeilDiv,
    ComputeType,
    CounterModel,
    FloorDiv,
    GatherMode,
    GatherReuse,
    HintGraph,
    ImplAxis,
    ImplGraph,
    ImplNode,
    IndexDistribution,
    LaneLoads,
    Le,
    Max,
    Min,
    Node,
    Rejected,
    Role,
    RowTiles,
    ScheduleContext,
    Stage,
    TileBuilder,
    TilePlan,
    TilingSpec,
    Unsupported,
    api_call_for,
    assign_releases,
    contiguous_strides,
    expected_distinct,
    gather_read_bytes,
    gather_reuse,
    hoist_input_chain,
    loop_axes,
    product,
    reduce_calls_per_group,
    run_line_bytes,
    storage_bytes,
)
from af_core.template_api import dtypes as dt

MIN_LANES_PER_CORE = 256
SIMT_MAX_THREADS = 2048  # threads of one VF_CALL (the back end's AF_SIMT_MAX_THREADS)
SMALL_CASE_THREADS = 128  # fewest threads vf_threads halves down to
SYSTEM_RESERVE = 8 * 1024  # UB bytes the system keeps on the A5 vector core


def vf_ub_limit(platform) -> sympy.Expr:
    """UB a VF_CALL kernel may use, data cache included: the usable UB, capped at physical UB - reserve."""
    return Min(UB_SIZE, platform.ub_total - SYSTEM_RESERVE)


def vf_threads(total: sympy.Expr) -> sympy.Expr:
    """Threads of a gather VF over ``total`` lanes, chosen as the official GatherV2 SIMT tiling for A5
    (arch35) chooses its ``threadNum``: 2048, halved (not below 128) while fewer than half the cores would
    get a round of them. A core then takes whole rounds, so a small output runs on fewer cores, each
    reading its index and side lines once, instead of on every core with a few lanes each.
    """
    half = Max(1, FloorDiv(CORE_NUM, 2))
    threads = sympy.Integer(SMALL_CASE_THREADS)
    step = SMALL_CASE_THREADS
    while step < SIMT_MAX_THREADS:
        step *= 2
        # 1 when ceil(total / step) >= half: a round of ``step`` threads still reaches half the cores
        threads = threads + (step // 2) * Min(1, FloorDiv(CeilDiv(total, step), half))
    return threads


def _fused_nodes(graph: HintGraph) -> list[Node]:
    return [
        n for n in graph.topo_order() if n.op.compute_type in (ComputeType.ELEMENTWISE, ComputeType.BROADCAST)
    ]


def _gm_tensors(impl: ImplGraph, graph: HintGraph) -> None:
    for node in graph.nodes():
        if node.op.compute_type in (ComputeType.DATA, ComputeType.OUTPUT):
            impl.add_gm(node)


def reduce_view(sizes, axes: tuple[int, ...]) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
    """(A, R, I) for a reduce over a contiguous run of axes."""
    if list(axes) != list(range(axes[0], axes[-1] + 1)):
        raise Unsupported(f"reduce axes {list(axes)} are not contiguous")
    lo, hi = axes[0], axes[-1] + 1
    return product(list(sizes[:lo])), product(list(sizes[lo:hi])), product(list(sizes[hi:]))


class SimtTemplate:
    """Registered as ``simt``."""

    name = "simt"

    def propose(self, graph: HintGraph, il: Node, ctx: ScheduleContext) -> list[Case | Rejected]:
        if il.y.dtype.is_bool:
            raise Unsupported("bool IndirectLoad data is not supported")
        try:
            rewrite = hoist_input_chain(graph, il)
        except Unsupported as exc:
            raise Unsupported(f"input chain cannot move behind the IndirectLoad: {exc}") from None
        for node in _fused_nodes(graph):
            if node.op.compute_type == ComputeType.ELEMENTWISE and not node.op.scalar_cpp:
                raise Unsupported(f"op {node.type} ('{node.name}') has no scalar form for SIMT lanes")
        graph.attrs["dcache_size"] = ctx.platform.dcache_reserve
        store = next(n for n in graph.nodes() if n.op.compute_type == ComputeType.STORE)
        before = graph.producer(store, "x")
        reduce = before if before.op.compute_type == ComputeType.REDUCE else None
        parts = _Parts(graph, il, store, reduce, rewrite, ctx)
        if reduce is None:
            return [self._linear(parts, "default")]
        out: list[Case | Rejected] = [self._linear(parts, "lanes")]
        try:
            out.append(self._tiled_reduce(parts))
        except Unsupported as exc:
            out.append(Rejected(self.name, f"the UB-reduce case needs {exc}; the lane-reduce case remains"))
        return out

    def _case(
        self, parts: _Parts, variant: str, stage: Stage, spec: TilingSpec, ub_bytes, counters: CounterModel
    ) -> Case:
        spec.resources = {
            "ub_bytes": ub_bytes,
            "dcache_bytes": sympy.Integer(parts.dcache),
            "workspace_bytes": sympy.Integer(0),
        }
        spec.block_dim = sympy.Symbol("used_cores", integer=True)
        counters.apply(spec)
        spec.require(
            Le(ub_bytes, parts.ub_limit),
            "UB (32 KiB DCache reserve plus reduce buffers) exceeds the UB of a VF_CALL kernel",
        )
        spec.score = sympy.Integer(1)
        parts.impl.stages = [stage]
        parts.impl.meta = {
            "dcache_reserve": parts.dcache,
            "rewrite": parts.rewrite,
            "variant": variant,
            "reduce": None if parts.reduce is None else parts.reduce.name,
        }
        return Case(self.name, variant, parts.graph, parts.impl, spec, meta={"dcache_reserve": parts.dcache})

    def _linear(self, parts: _Parts, variant: str) -> Case:
        """One lane per output element, the output linearized and split across cores."""
        parts = parts.fresh()
        spec = TilingSpec()
        out_sizes = list(parts.output.y.size)
        total = spec.add("total", product(out_sizes), "output elements")
        group = parts.lane_group() if variant == "lanes" else None
        width = 1 if group is None else parts.lane_width()
        lanes = total
        if width > 1:
            # a lane computes ``width`` consecutive outputs of one row (they share the row's index)
            lanes = spec.add("lanes", FloorDiv(total, width), f"lanes ({width} consecutive outputs each)")
            group = FloorDiv(group, width)
        if parts.reduce is None:
            # one lane per gathered element, as the official GatherV2 SIMT tiling splits its output
            # a core's lanes are whole rounds of these threads (one round unless 2048 threads do not reach
            # every core), so the VF launches min(lanes, 2048) threads as before
            threads = spec.add(
                "lane_threads", vf_threads(total), "threads of the VF (a core's lanes per round)"
            )
            per_core = spec.add(
                "per_core",
                Max(threads * CeilDiv(CeilDiv(total, CORE_NUM), threads), MIN_LANES_PER_CORE),
                "elements per core: whole rounds of the VF's threads, at least 256 lanes of work",
            )
        elif group is None:
            per_core = spec.add(
                "per_core",
                Max(CeilDiv(total, CORE_NUM), MIN_LANES_PER_CORE),
                "elements per core (at least 256 lanes of work)",
            )
        else:
            per_core = spec.add(
                "per_core",
                group * CeilDiv(Max(CeilDiv(lanes, CORE_NUM), MIN_LANES_PER_CORE), group),
                "lanes per core (at least 256 lanes of work), whole groups of lanes sharing a row",
            )
        spec.add("used_cores", CeilDiv(lanes, per_core), "cores with work")
        axes = [
            ImplAxis("L", "MERGED", lanes, tuple(a.name for a in parts.output.y.axis)),
            ImplAxis("LB", "BLOCK_OUT", sympy.Symbol("used_cores", integer=True), ("L",)),
            ImplAxis("Lb", "BLOCK_IN", per_core, ("L",)),
        ]
        attrs = dict(
            parts.common,
            mode="gm",
            out=parts.output.name,
            start=sympy.Symbol("Lb_start"),
            count=sympy.Symbol("Lb_actual"),
        )
        per_output = 1
        if parts.reduce is not None:
            axes_r = parts.reduce_axes()
            reduced = product([parts.sizes[a] for a in axes_r])
            attrs["lane_reduce"] = {
                "kind": parts.reduce.type,
                "axes": list(axes_r),
                "group": reduced,
                "width": width,
            }
            per_output = reduced
        if group is not None:
            attrs["threads"] = spec.add(
                "lane_threads", parts.lane_threads(group, per_output, width), "threads of the lane-reduce VF"
            )
        node = ImplNode(
            parts.il.name,
            "IndirectLoad",
            api_call_for(Role.GATHER, GatherMode.LANES).name,
            parts.inputs,
            (parts.output.name,),
            tuple(a.name for a in parts.value.y.axis),
            tuple(parts.sizes),
            tuple(contiguous_strides(parts.sizes)),
            ("L",),
            "Lb",
            attrs,
        )
        stage = Stage("simt", axes, [node, *parts.fused], [], used_cores="used_cores")
        # the reads as a formula of the sizes (not the ``total`` field), so the reuse model sees concrete sizes
        reads = product(out_sizes) * per_output
        out_bytes = total * parts.output.y.dtype.itemsize
        # a group of lanes sharing a row reads its lines together, and the groups that run at once keep
        # them for the group's whole reduce (lane_threads): each group is a reader of its own
        fills = parts.line_fills(reads, None if group is None else CeilDiv(lanes, group))
        if parts.reduce is not None and len(parts.sizes) - 1 in parts.reduce_axes():
            # Each lane walks its own row; the VF's threads advance in lockstep, so a step touches one
            # line per thread. Past half the data cache (4-way sets overflow well before it is full)
            # a line is evicted before the thread's next step reaches it: every read fills a line.
            threads = Min(per_core, SIMT_MAX_THREADS)
            thrash = Min(1, FloorDiv(threads * LINE_BYTES, parts.dcache // 2 + 1))
            fills = fills + thrash * (parts.thrashing_fills(reads, per_output) - fills)
        written = LINE_BYTES * CeilDiv(out_bytes, LINE_BYTES)
        if parts.reduce is None:
            lane_reads = reads * parts.lane_loads()
        else:
            # a lane reads what depends on a reduced coordinate at every step, the rest once; what depends
            # on the last axis once per output of the lane, the rest once for its ``width`` outputs
            t = parts.lane_reduce_loads(width)
            lane_reads = lanes * (
                per_output * (t[(True, False)] + width * t[(True, True)])
                + t[(False, False)]
                + width * t[(False, True)]
            )
        counters = CounterModel(
            write_bytes=written,
            line_fills=fills,
            scalar_accesses=lane_reads + total,
            hbm_bytes=parts.hbm_read_bytes(reads) + written,
        )
        return self._case(parts, variant, stage, spec, sympy.Integer(parts.dcache), counters)

    def _tiled_reduce(self, parts: _Parts) -> Case:
        """Lanes fill UB with whole reduce groups; the back end's register chain reduces the whole tile in one
        launch when it accepts the view (a horizontal reduce, or rows it can store aligned), else a vector
        reduce call per group finishes it."""
        parts = parts.fresh()
        assert parts.reduce is not None  # asked only for a graph with a reduce
        a_, r_, i_ = reduce_view(parts.sizes, parts.reduce_axes())
        out_dtype = parts.output.y.dtype
        cdt = dt.float32 if out_dtype.is_float else out_dtype
        red_api = api_call_for(Role.REDUCE)
        reason = red_api.rejection(parts.reduce.type, (cdt,), cdt)
        if reason is not None:
            raise Unsupported(f"a vector {parts.reduce.type} on {cdt}, which 3510 lacks: {reason}")
        cast = cdt != out_dtype
        spec = TilingSpec()
        spec.add("rows", a_, "reduce groups (kept outer elements)")
        spec.add("group", r_, "reduced elements per group")
        spec.add("inner", i_, "kept inner elements per group")
        rows, group, inner = sympy.symbols("rows group inner", integer=True)
        row_tiles = RowTiles(rows, "A", "A")
        tile = row_tiles.tile
        axes = row_tiles.axes(tuple(a.name for a in parts.value.y.axis[: parts.reduce_axes()[0]]))
        stage = Stage("simt_reduce", axes, [], [], used_cores="used_cores")
        plan = TilePlan(parts.impl, stage, tile)
        plan.tile("red_in", cdt, group * inner)
        plan.fixed("work", cdt, group + 32 // cdt.itemsize + 64 // cdt.itemsize)
        plan.tile("red_out", cdt, inner, position="VECOUT", que=not cast)
        if cast:
            plan.tile("cast_out", out_dtype, inner, position="VECOUT", que=True)
        t_start, t_actual = sympy.Symbol("AT_start"), sympy.Symbol("AT_actual")
        reduced = "cast_out" if cast else "red_out"
        lanes = ImplNode(
            parts.il.name,
            "IndirectLoad",
            api_call_for(Role.GATHER, GatherMode.LANES).name,
            parts.inputs,
            ("red_in",),
            tuple(a.name for a in parts.value.y.axis),
            tuple(parts.sizes),
            tuple(contiguous_strides(parts.sizes)),
            ("At",),
            "AT",
            dict(
                parts.common,
                mode="ub",
                out="red_in",
                start=t_start * group * inner,
                count=t_actual * group * inner,
            ),
        )
        # the vector reduce per group (reduce_calls_per_group), unless the register chain takes the reduce
        # over the whole tile in one launch; a Mean the chain does not take scales each tile once more
        per_group = reduce_calls_per_group(group, inner, cdt.itemsize)
        # a size the graph fixes is given to the reduce as the number: the chain's horizontal form needs
        # to know that ``inner`` is 1, and its aligned stores that the rows start on 32-byte blocks
        known_group, known_inner = (
            v if sympy.sympify(v).is_number else f for v, f in ((r_, group), (i_, inner))
        )
        red = ImplNode(
            parts.reduce.name,
            parts.reduce.type,
            red_api.name,
            ("red_in", "work"),
            ("red_out",),
            loop_axis="AT",
            attrs={
                "kind": parts.reduce.type,
                "rows": t_actual,
                "group": known_group,
                "inner": known_inner,
                # the chain's view of the tile: one row of t_actual groups, written back to back
                "tiles": 1,
                "src_pitch": t_actual * known_group * known_inner,
                "dst_pitch": t_actual * known_inner,
                "row_calls": per_group,
            },
        )
        nodes = [lanes, red]
        if cast:
            nodes.append(
                ImplNode(
                    f"{parts.reduce.name}_cast",
                    "Cast",
                    api_call_for(Role.VECTOR_OP).name,
                    ("red_out",),
                    ("cast_out",),
                    loop_axis="AT",
                    attrs={"count": t_actual * inner},
                )
            )
        nodes.append(
            ImplNode(
                parts.store.name,
                "Store",
                api_call_for(Role.STORE_ROWS).name,
                (reduced,),
                (parts.output.name,),
                loop_axis="AT",
                attrs={"gm_offset": t_start * inner, "count": t_actual * inner},
            )
        )
        builder = TileBuilder(parts.graph, parts.impl, plan, "AT", t_start, t_actual)
        builder.nodes = nodes
        builder.calls_per_row = per_group
        builder.fuse_chains()  # pads the tiles the chain reads past: before the UB fit
        chained = any(n.name == parts.reduce.name and n.fused_into for n in builder.nodes)
        ub_bytes = parts.dcache + plan.ub_bytes()
        # a tile is at least a round of the VF's threads (vf_threads of every gathered element), so a small
        # output runs on fewer cores, as in the linear case
        lanes_per_group = group * inner
        row_tiles.add_fields(
            spec,
            plan.max_rows(parts.ub_limit - parts.dcache),
            "most groups a tile can hold",
            unit="groups",
            at_least=CeilDiv(vf_threads(rows * lanes_per_group), lanes_per_group),
        )
        stage.nodes = [*builder.nodes, *parts.fused]
        assign_releases(stage, parts.impl)
        total = product(parts.sizes)
        # the back end's own figures for its calls: the chain's register instructions and cycles
        by_calls = builder.call_counters(row_tiles)
        # per tile: the store, each chain's launch (the reduce's; a cast's after it), a Mean's scaling when
        # no chain took the reduce
        chain = api_call_for(Role.VECTOR_CHAIN).name
        launches = sum(1 for n in builder.nodes if n.api_call == chain)
        per_tile = 1 + launches + int(parts.reduce.type == "Mean" and not chained)
        calls = rows * builder.calls_per_row + row_tiles.tiles * per_tile + by_calls["api_calls"]
        written = LINE_BYTES * CeilDiv(rows * inner * out_dtype.itemsize, LINE_BYTES)
        counters = CounterModel(
            write_bytes=written,
            line_fills=parts.line_fills(total),
            api_calls=calls,
            scalar_accesses=total * parts.lane_loads(),
            hbm_bytes=parts.hbm_read_bytes(total) + written,
            reg_instructions=by_calls["reg_instructions"],
            reg_cycles=by_calls["reg_cycles"],
        )
        return self._case(parts, "default", stage, spec, ub_bytes, counters)


@attrs.frozen
class _GatherShape:
    """One gather as the cost formulas see it: its index values, the bytes each reads, the outer rows
    that each own a slice of the input (and whether the input is broadcast along them), the slice's
    bytes and rows, and the stride between rows."""

    values: sympy.Expr
    run_bytes: sympy.Expr
    outer: sympy.Expr
    outer_broadcast: bool
    slice_bytes: sympy.Expr
    population: sympy.Expr
    stride_bytes: sympy.Expr
    itemsize: int


class _Parts:
    """What every SIMT case of one rewritten graph shares."""

    def __init__(
        self,
        graph: HintGraph,
        il: Node,
        store: Node,
        reduce: Node | None,
        rewrite: dict,
        ctx: ScheduleContext,
    ) -> None:
        self.graph, self.il, self.store, self.reduce, self.rewrite = graph, il, store, reduce, rewrite
        self.dcache = ctx.platform.dcache_reserve
        self.ub_limit = vf_ub_limit(ctx.platform)  # UB of a VF_CALL kernel, data cache included
        self.core_num = ctx.platform.core_num
        self.distribution: IndexDistribution | None = ctx.options.index_distribution
        self.output = graph.consumers(store)[0][0]
        self.value = graph.producer(reduce, "x") if reduce is not None else graph.producer(store, "x")
        self.sizes = list(self.value.y.size)
        self.gathers = [graph.node(n) for n in rewrite["gathers"]]
        self.index_dtype = graph.producer(self.gathers[0], "x2").y.dtype
        self.inputs = tuple(
            sorted(
                {graph.producer(n, "x").name for n in graph.nodes() if n.op.compute_type == ComputeType.LOAD}
            )
        )
        self.fused = [ImplNode(n.name, n.type, None, fused_into=il.name) for n in _fused_nodes(graph)]
        self.common = {
            "gather_mode": GatherMode.LANES.value,
            "value_node": self.value.name,
            "gathers": [g.name for g in self.gathers],
            "dim": int(il.attr.ir_attr.dim),
            "need_check_negative": bool(il.attr.ir_attr.need_check_negative),
            "need_check_bound": bool(il.attr.ir_attr.need_check_bound),
            "bound_check_after": graph.attrs.get("bound_check_after", il.name),
            "coord_sizes": self.sizes,
        }
        self.impl = ImplGraph(graph.name, "simt")

    def fresh(self) -> _Parts:
        """A copy with its own ImplGraph (cases must not share impl state)."""
        other = _Parts.__new__(_Parts)
        other.__dict__.update(self.__dict__)
        other.impl = ImplGraph(self.graph.name, "simt")
        _gm_tensors(other.impl, self.graph)
        return other

    def lane_loads(self) -> int:
        """GM reads a lane makes per value: the index, gathered and side-input reads of the walk the lanes
        are emitted by (:class:`LaneLoads`), each once per coordinate mask it is read at."""
        return sum(LaneLoads(self.graph).table(self.value, ()).values())

    def lane_reduce_loads(self, width: int = 1) -> dict[tuple[bool, bool], int]:
        """Loads of a lane-reduce lane by (read at every reduce step, read once per output of the lane):
        a load whose offset uses no reduced coordinate (an index constant along the reduced axes) is read
        before the loop; with ``width`` outputs per lane, one that does not depend on the last axis is
        read once for all of them (:class:`LaneLoads`, the walk the lanes are emitted by)."""
        wide = len(self.sizes) - 1 if width > 1 else None
        return LaneLoads(self.graph).table(self.value, self.reduce_axes(), wide)

    def lane_width(self) -> int:
        """Consecutive outputs of a row one lane of the lane reduce computes: 4, or the largest of 4 and 2
        that divides the (concrete) last axis, when a load read at every step does not depend on the last
        axis (the row's index, read once for all of them); else 1."""
        last = sympy.sympify(self.sizes[-1])
        if not last.is_Integer or self.lane_reduce_loads(2)[(True, False)] == 0:
            return 1
        return next(w for w in (4, 2, 1) if int(last) % w == 0)

    def _side_bytes(self) -> tuple[sympy.Expr, sympy.Expr]:
        """(index bytes, side-input bytes): tensors the lanes read that are not gathered."""
        gathered = {self.graph.producer(g, "x1").name for g in self.gathers}
        index_data = self._data(self.graph.producer(self.gathers[0], "x2"))
        index, side = sympy.Integer(0), sympy.Integer(0)
        for load in self.graph.nodes():
            if load.op.compute_type != ComputeType.LOAD:
                continue
            data = self.graph.producer(load, "x")
            if load.name in gathered or any(
                self._data(self.graph.producer(g, "x1")) is data for g in self.gathers
            ):
                continue
            nbytes = storage_bytes(data.y.size, data.y.strides, data.y.dtype.itemsize)
            if data is index_data:
                index = index + nbytes
            else:
                side = side + nbytes
        return index, side

    def _data(self, node: Node) -> Node:
        while node.op.compute_type not in (ComputeType.LOAD, ComputeType.DATA):
            node = self.graph.producer(node, node.op.inputs[0])
        return self.graph.producer(node, "x") if node.op.compute_type == ComputeType.LOAD else node

    def line_fills(self, reads: sympy.Expr, readers: sympy.Expr | None = None) -> sympy.Expr:
        """Data-cache line fills for ``reads`` value reads: the gathered lines, plus the index and side
        inputs' lines once (consecutive lanes read them in order). ``readers``: how many independent
        readers split the reads (each with the whole data cache while it runs); the used cores by default."""
        index, side = self._side_bytes()
        return (
            CeilDiv(self.gathered_bytes(reads, readers), LINE_BYTES)
            + CeilDiv(index, LINE_BYTES)
            + CeilDiv(side, LINE_BYTES)
        )

    def thrashing_fills(self, reads: sympy.Expr, group) -> sympy.Expr:
        """Line fills when the cache keeps nothing between two steps of a lane: every gathered read fills
        a line, and an index that changes along the reduced axes fills its lines again at every step
        (neighbouring lanes share one when their index rows are shorter than a line)."""
        index, side = self._side_bytes()
        isz = self.index_dtype.itemsize
        varies = sympy.Integer(0) if self.run() != 1 else sympy.Integer(1)
        index_steps = FloorDiv(reads * Min(LINE_BYTES, group * isz), LINE_BYTES * group) * group
        return (
            reads * len(self.gathers)
            + varies * index_steps
            + (1 - varies) * CeilDiv(index, LINE_BYTES)
            + CeilDiv(side, LINE_BYTES)
        )

    def gathered_bytes(self, reads: sympy.Expr, readers: sympy.Expr | None = None) -> sympy.Expr:
        """Modelled bytes the gathers read through the data cache for ``reads`` element reads, split over
        ``readers`` (the used cores by default). A table gather (one table for all outer rows) with concrete sizes and a
        declared index distribution takes the expected fills of every core's cache (``gather_reuse``):
        repeated rows hit, which the sizes-only formula cannot see."""
        total = sympy.Integer(0)
        for g in self.gathers:
            shape = self._gather_shape(g, reads)
            # one table for every outer row (dim 0, or an input broadcast along the outer axes)
            reuse = self._reuse(shape) if shape.outer == 1 or shape.outer_broadcast else None
            if reuse is not None:
                total = total + LINE_BYTES * reuse.core_fills
                continue
            total = total + gather_read_bytes(
                shape.values,
                shape.run_bytes,
                None if shape.outer_broadcast else shape.outer,
                shape.slice_bytes,
                sympy.Symbol("used_cores", integer=True) if readers is None else readers,
                self.dcache,
                stride_bytes=shape.stride_bytes,
                itemsize=shape.itemsize,
            )
        return total

    def hbm_read_bytes(self, reads: sympy.Expr) -> sympy.Expr:
        """Bytes HBM delivers for ``reads`` element reads: the index and side inputs' lines, and each
        gather's distinct lines per outer row (from ``gather_reuse`` when it can model them, else the
        uniform ``expected_distinct`` rows, their lines at most the slice's)."""
        index, side = self._side_bytes()
        total = LINE_BYTES * (CeilDiv(index, LINE_BYTES) + CeilDiv(side, LINE_BYTES))
        for g in self.gathers:
            shape = self._gather_shape(g, reads)
            outer = 1 if shape.outer_broadcast else shape.outer
            per_outer = CeilDiv(shape.values, outer)
            reuse = self._reuse(shape, per_outer)
            if reuse is not None:
                total = total + outer * LINE_BYTES * reuse.distinct_lines
                continue
            lines = expected_distinct(per_outer, shape.population) * run_line_bytes(
                shape.run_bytes, shape.stride_bytes, shape.itemsize
            )
            total = total + outer * Min(lines, LINE_BYTES * (CeilDiv(shape.slice_bytes, LINE_BYTES) + 1))
        return total

    def _reuse(self, shape: _GatherShape, values: sympy.Expr | None = None) -> GatherReuse | None:
        """The reuse model's figures for one gather's values (all of them by default), split over the cores
        the lanes fill at the platform's core count (at least MIN_LANES_PER_CORE lanes each)."""
        lanes = sympy.sympify(product(self.sizes))
        cores = min(self.core_num, max(1, int(lanes) // MIN_LANES_PER_CORE)) if lanes.is_Integer else 1
        return gather_reuse(
            shape.values if values is None else values,
            shape.population,
            shape.run_bytes,
            shape.stride_bytes,
            cores,
            self.dcache,
            self.distribution,
        )

    def _gather_shape(self, g: Node, reads: sympy.Expr) -> _GatherShape:
        """What the cost formulas need of one gather for ``reads`` element reads."""
        run = self.run()
        dim = int(self.il.attr.ir_attr.dim)
        isz = g.y.dtype.itemsize
        source = self.graph.producer(g, "x1")
        view = self._view_strides(source)
        # a side input broadcast along the gathered slice (a mask [B, L, 1]) spans only its stored bytes,
        # and one index value reads one of its elements however long the run is
        run_elements = run if any(sympy.sympify(s) != 0 for s in view[dim + 1 :]) else 1
        return _GatherShape(
            values=CeilDiv(reads, run),
            run_bytes=run_elements * isz,
            outer=product(list(self.sizes[:dim])),
            outer_broadcast=any(sympy.sympify(s) == 0 for s in self._data_strides(source)[:dim]),
            slice_bytes=storage_bytes(list(source.y.size[dim:]), view[dim:], isz),
            population=source.y.size[dim],
            stride_bytes=sympy.sympify(self._data_strides(source)[dim]) * isz,
            itemsize=isz,
        )

    def _view_strides(self, node: Node) -> list:
        """Strides of the input a gather reads, as viewed at ``node``'s sizes (0 along broadcast axes)."""
        strides = self._data_strides(node)
        data = node
        while data.op.compute_type not in (ComputeType.LOAD, ComputeType.DATA):
            data = self.graph.producer(data, "x")
        sizes = data.y.size
        return [
            0 if sympy.sympify(sizes[a]) == 1 and sympy.sympify(node.y.size[a]) != 1 else strides[a]
            for a in range(len(strides))
        ]

    def _data_strides(self, node: Node) -> list:
        while node.op.compute_type == ComputeType.BROADCAST:
            node = self.graph.producer(node, "x")
        data = self.graph.producer(node, "x") if node.op.compute_type == ComputeType.LOAD else node
        return list(data.y.strides)

    def run(self) -> sympy.Expr:
        """Output elements in a row that share one index value (trailing axes the index broadcasts)."""
        index = self.graph.producer(self.gathers[0], "x2")
        while index.op.compute_type not in (ComputeType.LOAD, ComputeType.DATA):
            index = self.graph.producer(index, index.op.inputs[0])
        data = self.graph.producer(index, "x") if index.op.compute_type == ComputeType.LOAD else index
        dim = int(self.il.attr.ir_attr.dim)
        run = sympy.Integer(1)
        for axis in range(len(data.y.size) - 1, dim, -1):
            if sympy.sympify(data.y.strides[axis]) != 0:
                break
            run = run * self.sizes[axis]
        return run

    def lane_group(self) -> sympy.Expr | None:
        """Lanes of the lane reduce that share one row of the index and of every gathered input: the
        kept axes after the reduced ones (``None`` when the last axis is reduced, or without a reduce)."""
        if self.reduce is None:
            return None
        axes = self.reduce_axes()
        if len(self.sizes) - 1 in axes:
            return None
        return product(list(self.sizes[axes[-1] + 1 :]))

    def lane_threads(self, group: sympy.Expr, steps: sympy.Expr, width: int = 1) -> sympy.Expr:
        """Threads of the lane-reduce VF: as many groups of ``group`` lanes as keep the lines they touch
        over their ``steps`` reduce steps within half the data cache, at least one group and 256 lanes
        (whole groups), at most the VF's 2048. A lane computes ``width`` outputs of its row.

        The lanes advance in lockstep: at each step every running group reads its index line and the
        lines of one gathered value run per input. A line a group reads again later in its reduce (a
        repeated index value, or a side row several values fall in) survives only when the running
        groups do not sweep the data cache in between; with 2048 threads and 32-lane groups, 64 rows
        evict each other (``sim_nv_masked_mean_k50``: 1.82x the minimum, 1.08x at 256 threads).
        """
        step_lines = 1 + sum(CeilDiv(group * width * g.y.dtype.itemsize, LINE_BYTES) for g in self.gathers)
        running = Max(1, FloorDiv(self.dcache // 2, LINE_BYTES * step_lines * steps))
        return Min(SIMT_MAX_THREADS, group * Max(running, CeilDiv(MIN_LANES_PER_CORE, group)))

    def reduce_axes(self) -> tuple[int, ...]:
        assert self.reduce is not None  # asked only for a graph with a reduce
        # never empty: validation refuses a reduce with no axis (rule reduce-axes)
        return loop_axes(self.graph.producer(self.reduce, "x").y.size, self.reduce.y.size)
