"""ScalarLoopTemplate: every core walks its share of the output element by element.

The simplest possible IndirectLoad kernel: no UB tiles, no vector calls, no
SIMT. Each output element reads its index and its input element with scalar
GM accesses and runs the graph's elementwise ops as scalar code. It is slow
for anything big, and cheap to launch for tiny outputs, so its score says
exactly that: 3 (above every built-in template) when the output has at most
``TINY`` elements, 0 otherwise.

Its modelled cost is what a SIMT lane pays for the same reads (scalar GM
reads go through the same data cache), made a quarter dearer because one
scalar pipeline cannot overlap them; so under the ``cost`` selection policy,
which ignores scores, it never beats the SIMT case.
"""

from __future__ import annotations

import sympy

from af_core.template_api import (
    CORE_NUM,
    Case,
    CeilDiv,
    ComputeType,
    HintGraph,
    ImplAxis,
    ImplGraph,
    ImplNode,
    Le,
    Max,
    Node,
    Rejected,
    ScheduleContext,
    Select,
    Stage,
    TilingSpec,
    Unsupported,
    gather_read_bytes,
    modelled_cost,
    product,
)

TINY = 64
MIN_PER_CORE = 1024


class ScalarLoopTemplate:
    name = "scalar_loop"

    def propose(self, graph: HintGraph, il: Node, ctx: ScheduleContext) -> list[Case | Rejected]:
        an = ctx.analyze(graph)
        if an.reduce is not None:
            raise Unsupported("the scalar loop does not implement reduces")
        if an.input_chain:
            raise Unsupported("the scalar loop reads the input as stored; it has no input-pre chain")
        for node in [*an.index_chain, *an.post_chain]:
            if node.op.compute_type == ComputeType.ELEMENTWISE and not node.op.scalar_cpp:
                raise Unsupported(f"op {node.type} has no scalar form")
        value = graph.producer(an.store, "x")
        sizes = list(value.y.size)
        impl = ImplGraph(graph.name, self.name)
        for node in graph.nodes():
            if node.op.compute_type == ComputeType.DATA:
                impl.add_gm(node)
        out = an.output
        impl.add_gm(out)
        spec = TilingSpec()
        total = spec.add("total", product(sizes), "output elements")
        per_core = spec.add("per_core", Max(CeilDiv(total, CORE_NUM), MIN_PER_CORE), "elements per core")
        used = spec.add("used_cores", CeilDiv(total, per_core), "cores with work")
        axes = [
            ImplAxis("E", "MERGED", total, tuple(a.name for a in value.y.axis)),
            ImplAxis("EB", "BLOCK_OUT", used, ("E",)),
            ImplAxis("Eb", "BLOCK_IN", per_core, ("E",)),
        ]
        loop = ImplNode(
            il.name,
            "IndirectLoad",
            "ScalarLoopApiCall",
            (),
            (out.name,),
            loop_axis="Eb",
            attrs={
                "value_node": value.name,
                "sizes": sizes,
                "out": out.name,
                "start": sympy.Symbol("Eb_start"),
                "count": sympy.Symbol("Eb_actual"),
            },
        )
        impl.stages = [Stage("scalar", axes, [loop], [], used_cores="used_cores")]
        spec.resources = {
            "ub_bytes": sympy.Integer(0),
            "workspace_bytes": sympy.Integer(0),
            "dcache_bytes": sympy.Integer(0),
        }
        spec.score = Select(Le(total, TINY), 3, 0)
        index = graph.producer(il, "x2")
        reads = gather_read_bytes(total, value.y.dtype.itemsize)
        spec.block_dim = used
        spec.serialized = True  # one scalar loop: its reads and its compute do not overlap
        spec.cost = modelled_cost(
            reads + total * (index.y.dtype.itemsize + out.y.dtype.itemsize), serialized=True, cores=used
        )
        return [Case(self.name, "default", graph, impl, spec)]
