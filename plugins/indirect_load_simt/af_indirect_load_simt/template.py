"""The SIMT template (first seed, 功能需求4).

The output is linearized and split across cores; each lane of a SIMT VF
reads its index from GM, normalizes it, reads the input element from GM
(through the data cache) and runs the index and output chains as scalar
code. The whole input chain is first moved behind the IndirectLoad
(``hoist_input_chain``), one IndirectLoad per input view, sharing the index.

With a reduce, a tile holds whole reduce groups: the reduce is viewed as
``[A, R, I]`` (kept outer axes, reduced axes, kept inner axes), tiles are
rows of A, lanes fill a UB buffer with ``tile * R * I`` values and a vector
reduce finishes the tile before it is stored.

A 32 KiB data-cache reserve is recorded on the case and counted against UB.
"""

from __future__ import annotations

import sympy

from af_core import dtypes as dt
from af_core.errors import ScheduleError
from af_core.ir.graph import HintGraph, Node
from af_core.ir.sizes import contiguous_strides, product
from af_core.ops.core_ops import reduced_axes
from af_core.schedule.case import Case
from af_core.schedule.cost import modelled_cost
from af_core.schedule.impl_graph import ImplAxis, ImplGraph, ImplNode, ImplTensor, Stage
from af_core.schedule.rewrite import hoist_input_chain
from af_core.schedule.template import Rejected
from af_core.schedule.tiles import TilePlan, assign_releases
from af_core.tiling.spec import CORE_NUM, UB_SIZE, AlignUp, CeilDiv, FloorDiv, TilingSpec

MIN_LANES_PER_CORE = 256


def _fused_nodes(graph: HintGraph) -> list[Node]:
    return [n for n in graph.topo_order() if n.op.compute_type in ("elementwise", "broadcast")]


def _gm_tensors(impl: ImplGraph, graph: HintGraph) -> None:
    for node in graph.nodes():
        if node.op.compute_type == "data":
            impl.add_tensor(ImplTensor(node.name, node.y.dtype, "GM", tuple(node.y.size),
                                       tuple(node.y.strides), gm_arg=node.name))
        elif node.op.compute_type == "output":
            impl.add_tensor(ImplTensor(node.name, node.y.dtype, "GM", tuple(node.y.size),
                                       tuple(contiguous_strides(list(node.y.size))), gm_arg=node.name))


def reduce_view(sizes, axes: tuple[int, ...]) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
    """(A, R, I) for a reduce over a contiguous run of axes."""
    if list(axes) != list(range(axes[0], axes[-1] + 1)):
        raise ScheduleError(f"reduce axes {list(axes)} are not contiguous")
    lo, hi = axes[0], axes[-1] + 1
    return product(list(sizes[:lo])), product(list(sizes[lo:hi])), product(list(sizes[hi:]))


class SimtTemplate:
    """Registered as ``simt``; one case per graph."""

    name = "simt"

    def propose(self, graph: HintGraph, il: Node, ctx) -> list:
        if il.y.dtype.is_bool:
            return [Rejected(self.name, "bool IndirectLoad data is not supported")]
        try:
            rewrite = hoist_input_chain(graph, il)
        except ScheduleError as exc:
            return [Rejected(self.name, f"input chain cannot move behind the IndirectLoad: {exc}")]
        for node in _fused_nodes(graph):
            if node.op.compute_type == "elementwise" and not node.op.scalar_cpp:
                return [Rejected(self.name, f"op {node.type} ('{node.name}') has no scalar form for SIMT lanes")]
        stores = [n for n in graph.nodes() if n.op.compute_type == "store"]
        store = stores[0]
        output = graph.consumers(store)[0][0]
        before = graph.producer(store, "x")
        reduce = before if before.op.compute_type == "reduce" else None
        value_node = graph.producer(reduce, "x") if reduce is not None else before
        impl = ImplGraph(graph.name, self.name)
        _gm_tensors(impl, graph)
        spec = TilingSpec()
        dcache = ctx.platform.dcache_reserve
        gathers = [graph.node(n) for n in rewrite["gathers"]]
        index_node = graph.producer(gathers[0], "x2")
        index_dtype = index_node.y.dtype
        sizes = list(value_node.y.size)
        total = product(sizes)
        out_dtype = output.y.dtype
        common = {
            "template": self.name,
            "value_node": value_node.name,
            "gathers": [g.name for g in gathers],
            "dim": int(il.attr.ir_attr.dim),
            "need_check_negative": bool(il.attr.ir_attr.need_check_negative),
            "need_check_bound": bool(il.attr.ir_attr.need_check_bound),
            "bound_check_after": graph.attrs.get("bound_check_after", il.name),
            "coord_sizes": sizes,
        }
        inputs = sorted({graph.producer(n, "x").name for n in graph.nodes() if n.op.compute_type == "load"})
        fused = [ImplNode(n.name, n.type, None, fused_into=il.name) for n in _fused_nodes(graph)]
        # every lane reads its index and each gathered input as a scattered access, and writes one element
        gm_cost = modelled_cost(total * (index_dtype.itemsize + out_dtype.itemsize), scattered=total * len(gathers))
        if reduce is None:
            spec.add("total", total, "output elements")
            per_core = spec.add("per_core", sympy.Max(CeilDiv(total, CORE_NUM), MIN_LANES_PER_CORE),
                                "elements per core (at least 256 lanes of work)")
            used = spec.add("used_cores", CeilDiv(total, per_core), "cores with work")
            axes = [
                ImplAxis("L", "MERGED", total, tuple(a.name for a in value_node.y.axis)),
                ImplAxis("LB", "BLOCK_OUT", used, ("L",)),
                ImplAxis("Lb", "BLOCK_IN", per_core, ("L",)),
            ]
            start, count = sympy.Symbol("Lb_start"), sympy.Symbol("Lb_actual")
            node = ImplNode(il.name, "IndirectLoad", "IndirectLoadRegApiCall", tuple(inputs), (output.name,),
                            tuple(a.name for a in value_node.y.axis), tuple(sizes),
                            tuple(contiguous_strides(sizes)), ("L",), "Lb",
                            dict(common, mode="gm", out=output.name, start=start, count=count))
            stage = Stage("simt", axes, [node, *fused], [], used_cores="used_cores")
            ub_bytes = sympy.Integer(dcache)
        else:
            axes_r = reduced_axes(graph.producer(reduce, "x").y.size, reduce.y.size)
            if not axes_r:
                axes_r = (len(sizes) - 1,)
            try:
                a_, r_, i_ = reduce_view(sizes, axes_r)
            except ScheduleError as exc:
                return [Rejected(self.name, str(exc))]
            cdt = dt.float32 if out_dtype.is_float else out_dtype
            csz, tsz = cdt.itemsize, out_dtype.itemsize
            cast = cdt != out_dtype
            spec.add("rows", a_, "reduce groups (kept outer elements)")
            spec.add("group", r_, "reduced elements per group")
            spec.add("inner", i_, "kept inner elements per group")
            rows, group, inner = sympy.symbols("rows group inner", integer=True)
            per_row = group * inner * csz + inner * csz + (inner * tsz if cast else 0)
            fixed = dcache + AlignUp(group * csz + 96, 32) + 3 * 32
            tile_max = spec.add("tile_max", FloorDiv(sympy.Max(0, UB_SIZE - fixed), per_row),
                                "most groups a tile can hold")
            tile = spec.add("tile", sympy.Max(1, sympy.Min(tile_max, CeilDiv(rows, CORE_NUM))),
                            "groups per tile")
            tiles = spec.add("tiles", CeilDiv(rows, tile), "tiles")
            per_core = spec.add("tiles_per_core", CeilDiv(tiles, CORE_NUM), "tiles per core")
            used = spec.add("used_cores", CeilDiv(tiles, per_core), "cores with work")
            axes = [
                ImplAxis("A", "MERGED", rows, tuple(a.name for a in value_node.y.axis[: axes_r[0]])),
                ImplAxis("AT", "TILE_OUT", tiles, ("A",)),
                ImplAxis("At", "TILE_IN", tile, ("A",)),
                ImplAxis("ATB", "BLOCK_OUT", used, ("AT",)),
                ImplAxis("ATb", "BLOCK_IN", per_core, ("AT",)),
            ]
            stage = Stage("simt_reduce", axes, [], [], used_cores="used_cores")
            plan = TilePlan(impl, stage, tile)
            plan.tile("red_in", cdt, group * inner)
            plan.fixed("work", cdt, group + 32 // csz + 64 // csz)
            plan.tile("red_out", cdt, inner, position="VECOUT", que=not cast)
            if cast:
                plan.tile("cast_out", out_dtype, inner, position="VECOUT", que=True)
            ub_bytes = dcache + plan.ub_bytes()
            t_start, t_actual = sympy.Symbol("AT_start"), sympy.Symbol("AT_actual")
            reduced = "cast_out" if cast else "red_out"
            lanes = ImplNode(il.name, "IndirectLoad", "IndirectLoadRegApiCall", tuple(inputs), ("red_in",),
                             tuple(a.name for a in value_node.y.axis), tuple(sizes),
                             tuple(contiguous_strides(sizes)), ("At",), "AT",
                             dict(common, mode="ub", out="red_in", start=t_start * group * inner,
                                  count=t_actual * group * inner))
            red = ImplNode(reduce.name, reduce.type, "ReduceRegApiCall", ("red_in", "work"), ("red_out",),
                           loop_axis="AT",
                           attrs={"kind": reduce.type, "rows": t_actual, "group": group, "inner": inner})
            nodes = [lanes, red]
            if cast:
                nodes.append(ImplNode(f"{reduce.name}_cast", "Cast", "VecElementwiseRegApiCall", ("red_out",),
                                      ("cast_out",), loop_axis="AT", attrs={"count": t_actual * inner}))
            st = ImplNode(store.name, "Store", "StoreRegApiCall", (reduced,), (output.name,), loop_axis="AT",
                          attrs={"gm_offset": t_start * inner, "count": t_actual * inner})
            stage.nodes = [*nodes, st, *fused]
            assign_releases(stage, impl)
        spec.resources = {"ub_bytes": ub_bytes, "dcache_bytes": sympy.Integer(dcache),
                          "workspace_bytes": sympy.Integer(0)}
        spec.require(sympy.Le(ub_bytes, UB_SIZE),
                     "UB (32 KiB DCache reserve plus reduce buffers) exceeds the platform UB")
        spec.score = sympy.Integer(1)
        spec.cost = gm_cost
        spec.block_dim = used
        impl.stages = [stage]
        impl.meta = {"dcache_reserve": dcache, "rewrite": rewrite, "reduce": None if reduce is None else reduce.name}
        graph.attrs["dcache_size"] = dcache
        return [Case(self.name, "default", graph, impl, spec, meta={"dcache_reserve": dcache})]
