"""The fake back end's template: a scalar gather in two variants with different scores.

``flat``: each core walks its share of the output element by element, from
global memory to global memory (a stage without a tile loop).

``tiled``: the output is cut into tiles of at most ``TILE`` elements; each
core takes a run of tiles, the gather fills a queued UB tile and
``FakeStoreRows`` copies it out (a stage with a tile loop and a
double-buffered queue).

``staged``: two stages with ``SyncAll`` between them. The first gathers
into a workspace slice with the ``flat`` split; the second, split into
tiles across another number of cores, loads each tile into a scratch UB
buffer (``FakeLoadRows``) and stores it to the output.

Scores make the host tiling's choice depend on the sizes: ``flat`` wins
(score 2) for outputs of at most ``SMALL`` elements, ``tiled`` (score 1)
above; under the ``cost`` policy ``flat`` wins only for outputs of at most
8 elements. Either way two tiling keys are reachable from one kernel by the
host's choice. ``staged`` (score 0, the highest cost) is never chosen: it
runs when a test asks for its tiling key.
"""

from __future__ import annotations

import sympy

from af_core.backend import GatherMode, Role, api_call_for
from af_core.errors import Unsupported
from af_core.ir.graph import HintGraph, Node
from af_core.ir.sizes import product
from af_core.schedule.case import Case
from af_core.schedule.impl_graph import Buffer, ImplAxis, ImplGraph, ImplNode, ImplTensor, Stage
from af_core.schedule.template import Rejected, ScheduleContext
from af_core.tiling.spec import CORE_NUM, UB_SIZE, AlignUp, CeilDiv, Max, Min, TilingSpec

from .api_calls import FakeLoadRows, FakeStoreRows

#: The most elements one tile of the ``tiled`` variant holds.
TILE = 16
#: Outputs up to this many elements prefer the ``flat`` variant under the ``seed`` policy.
SMALL = 64
#: Where the ``staged`` variant's workspace slice starts (bytes): not at 0, so the offset is exercised.
WORKSPACE_OFFSET = 64


class FakeLanesTemplate:
    """Proposes ``flat`` and ``tiled`` cases for gathers whose chains have scalar forms.

    ``gather_call`` names the ApiCall of the gather node; by default the
    installed class filling the gather role in LANES mode (a role lookup,
    as a real template does). Tests pass another name to reach the error
    paths of code generation.
    """

    def __init__(
        self,
        name: str = "fake_lanes",
        *,
        gather_call: str | None = None,
        variants: tuple[str, ...] = ("flat", "staged", "tiled"),
    ) -> None:
        self.name = name
        self.gather_call = gather_call
        self.variants = variants

    def propose(self, graph: HintGraph, node: Node, ctx: ScheduleContext) -> list[Case | Rejected]:
        an = ctx.analyze(graph)
        if an.reduce is not None:
            raise Unsupported(f"{self.name} does not reduce")
        for chain_node in an.input_chain:
            if chain_node.op.compute_type != "broadcast":
                raise Unsupported(
                    f"{self.name} reads the input through Broadcasts only, not {chain_node.type}"
                )
        for chain_node in [*an.index_chain, *an.post_chain]:
            if chain_node.op.compute_type == "elementwise" and not chain_node.op.scalar_cpp:
                raise Unsupported(f"op {chain_node.type} has no scalar form")
        gather = self.gather_call or api_call_for(Role.GATHER, GatherMode.LANES).name
        store = FakeStoreRows.name
        builders = {"flat": self._flat, "staged": self._staged, "tiled": self._tiled}
        return [builders[v](graph, node, an, gather, store) for v in self.variants]

    # -- pieces shared by the variants -------------------------------------
    @staticmethod
    def _gm_tensors(graph: HintGraph, an) -> ImplGraph:
        impl = ImplGraph(graph.name, "")
        for data in graph.nodes():
            if data.op.compute_type == "data":
                impl.add_gm(data)
        impl.add_gm(an.output)
        return impl

    @staticmethod
    def _finish(spec: TilingSpec, total, block_dim, ub_bytes) -> None:
        spec.block_dim = block_dim
        spec.resources = {"ub_bytes": ub_bytes, "workspace_bytes": spec.workspace, "elements": total}

    # -- variants ----------------------------------------------------------
    def _flat(self, graph, il, an, gather, store) -> Case:
        value = graph.producer(an.store, "x")
        sizes = list(value.y.size)
        impl = self._gm_tensors(graph, an)
        impl.template = self.name
        spec = TilingSpec()
        total = spec.add("total", product(sizes), "output elements")
        per_core = spec.add("per_core", CeilDiv(total, CORE_NUM), "elements per core")
        used = spec.add("used_cores", CeilDiv(total, per_core), "cores with work")
        axes = [
            ImplAxis("E", "MERGED", total, tuple(a.name for a in value.y.axis)),
            ImplAxis("EB", "BLOCK_OUT", used, ("E",)),
            ImplAxis("Eb", "BLOCK_IN", per_core, ("E",)),
        ]
        node = ImplNode(
            il.name,
            "IndirectLoad",
            gather,
            (),
            (an.output.name,),
            loop_axis="Eb",
            attrs={
                "value_node": value.name,
                "sizes": sizes,
                "out": an.output.name,
                "start": sympy.Symbol("Eb_start"),
                "count": sympy.Symbol("Eb_actual"),
            },
        )
        impl.stages = [Stage("flat", axes, [node], [], used_cores="used_cores")]
        spec.score = sympy.Piecewise((2, sympy.Le(total, SMALL)), (0, True))
        spec.cost = 4 * total
        self._finish(spec, total, used, sympy.Integer(0))
        return Case(self.name, "flat", graph, impl, spec)

    def _staged(self, graph, il, an, gather, store) -> Case:
        value = graph.producer(an.store, "x")
        sizes = list(value.y.size)
        out = an.output
        itemsize = out.y.dtype.itemsize
        impl = self._gm_tensors(graph, an)
        impl.template = self.name
        spec = TilingSpec()
        total = spec.add("total", product(sizes), "output elements")
        per_core = spec.add("per_core", CeilDiv(total, CORE_NUM), "elements per core in the gather stage")
        used = spec.add("used_cores", CeilDiv(total, per_core), "cores of the gather stage")
        rows = spec.add("rows", Min(total, TILE), "elements per tile of the copy stage")
        blocks = spec.add("blocks", CeilDiv(total, rows), "tiles of the copy stage")
        copy_per_core = spec.add(
            "copy_per_core", CeilDiv(blocks, CORE_NUM), "tiles per core in the copy stage"
        )
        copy_cores = spec.add("copy_cores", CeilDiv(blocks, copy_per_core), "cores of the copy stage")
        offset = sympy.Integer(WORKSPACE_OFFSET)
        impl.add_tensor(
            ImplTensor("staging", out.y.dtype, "WORKSPACE", (total,), (sympy.Integer(1),), ws_offset=offset)
        )
        gather_axes = [
            ImplAxis("E", "MERGED", total, tuple(a.name for a in value.y.axis)),
            ImplAxis("GB", "BLOCK_OUT", used, ("E",)),
            ImplAxis("Gb", "BLOCK_IN", per_core, ("E",)),
        ]
        gather_node = ImplNode(
            il.name,
            "IndirectLoad",
            gather,
            (),
            ("staging",),
            loop_axis="Gb",
            attrs={
                "value_node": value.name,
                "sizes": sizes,
                "out": "staging",
                "start": sympy.Symbol("Gb_start"),
                "count": sympy.Symbol("Gb_actual"),
            },
        )
        copy_axes = [
            ImplAxis("F", "MERGED", total, ("E",)),
            ImplAxis("blk", "TILE_OUT", blocks, ("F",)),
            ImplAxis("row", "TILE_IN", rows, ("F",)),
            ImplAxis("CB", "BLOCK_OUT", copy_cores, ("blk",)),
            ImplAxis("Cb", "BLOCK_IN", copy_per_core, ("blk",)),
        ]
        tile_bytes = AlignUp(rows * itemsize, 32)
        impl.add_tensor(
            ImplTensor("copied", out.y.dtype, "UB", (rows,), (sympy.Integer(1),), buffer="copy_buf")
        )
        start, count = sympy.Symbol("blk_start"), sympy.Symbol("blk_actual")
        load = FakeLoadRows.name
        copy_nodes = [
            ImplNode(
                "staging_load",
                "Load",
                load,
                ("staging",),
                ("copied",),
                loop_axis="blk",
                attrs={"source": "staging", "tile": "copied", "start": start, "count": count},
            ),
            ImplNode(
                an.store.name,
                "Store",
                store,
                ("copied",),
                (out.name,),
                loop_axis="blk",
                attrs={
                    "tile": "copied",
                    "out": out.name,
                    "start": start,
                    "count": count,
                    "release": ("copied",),
                },
            ),
        ]
        impl.stages = [
            Stage("gather", gather_axes, [gather_node], [], used_cores="used_cores"),
            Stage(
                "copy",
                copy_axes,
                copy_nodes,
                [Buffer("copy_buf", "tbuf", "VECCALC", tile_bytes)],
                used_cores="copy_cores",
                sync_before=True,
            ),
        ]
        spec.score = sympy.Integer(0)
        spec.cost = 10 * total
        spec.workspace = offset + total * itemsize
        self._finish(spec, total, Max(used, copy_cores), tile_bytes)
        return Case(self.name, "staged", graph, impl, spec)

    def _tiled(self, graph, il, an, gather, store) -> Case:
        value = graph.producer(an.store, "x")
        sizes = list(value.y.size)
        out = an.output
        impl = self._gm_tensors(graph, an)
        impl.template = self.name
        spec = TilingSpec()
        total = spec.add("total", product(sizes), "output elements")
        tile = spec.add("tile", Min(total, TILE), "elements per tile")
        tiles = spec.add("tiles", CeilDiv(total, tile), "tiles")
        per_core = spec.add("per_core", CeilDiv(tiles, CORE_NUM), "tiles per core")
        used = spec.add("used_cores", CeilDiv(tiles, per_core), "cores with work")
        tile_bytes = AlignUp(tile * out.y.dtype.itemsize, 32)
        spec.require(sympy.Le(2 * tile_bytes, UB_SIZE), "two tiles fit in UB")
        axes = [
            ImplAxis("E", "MERGED", total, tuple(a.name for a in value.y.axis)),
            ImplAxis("tile", "TILE_OUT", tiles, ("E",)),
            ImplAxis("lane", "TILE_IN", tile, ("E",)),
            ImplAxis("TB", "BLOCK_OUT", used, ("tile",)),
            ImplAxis("Tb", "BLOCK_IN", per_core, ("tile",)),
        ]
        impl.add_tensor(
            ImplTensor("gathered", out.y.dtype, "UB", (tile,), (sympy.Integer(1),), buffer="tiles_q")
        )
        start, count = sympy.Symbol("tile_start"), sympy.Symbol("tile_actual")
        nodes = [
            ImplNode(
                il.name,
                "IndirectLoad",
                gather,
                (),
                ("gathered",),
                loop_axis="tile",
                attrs={
                    "value_node": value.name,
                    "sizes": sizes,
                    "out": "gathered",
                    "start": start,
                    "count": count,
                },
            ),
            ImplNode(
                an.store.name,
                "Store",
                store,
                ("gathered",),
                (out.name,),
                loop_axis="tile",
                attrs={
                    "tile": "gathered",
                    "out": out.name,
                    "start": start,
                    "count": count,
                    "release": ("gathered",),
                },
            ),
        ]
        buffers = [Buffer("tiles_q", "que", "VECOUT", tile_bytes, num=2)]
        impl.stages = [Stage("tiled", axes, nodes, buffers, used_cores="used_cores")]
        spec.score = sympy.Integer(1)
        spec.cost = 3 * total + 8 * tiles
        self._finish(spec, total, used, 2 * tile_bytes)
        return Case(self.name, "tiled", graph, impl, spec)


class RefusingTemplate:
    """Rejects every graph from deep inside ``propose``: the scheduler must name it and carry on."""

    name = "fake_refuser"

    def propose(self, graph: HintGraph, node: Node, ctx: ScheduleContext) -> list[Case | Rejected]:
        raise Unsupported("the refusing template handles no graph")
