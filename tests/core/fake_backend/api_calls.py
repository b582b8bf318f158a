"""The fake back end's ApiCalls: plain scalar C++ for the fake twin of ``include/``.

``FakeLanesGather`` fills the gather role in the LANES mode: every output
element (a "lane") decodes its coordinate, reads its index and its input
element with scalar global-memory reads and evaluates the chains around the
gather through the core's :class:`~af_core.codegen.scalar.ScalarEmitter`.
It writes straight to a GM tensor (the output or a workspace slice) or into a
UB tile that ``FakeStoreRows`` then copies out; ``FakeLoadRows`` fills a UB
tile from global memory. So the core's kernel skeleton runs with GM-only
stages, queued UB tiles, scratch (TBuf) tiles and workspace tensors.

Only the gather declares a role. The load-rows and store-rows roles fix the
nodes the core's row-tile helpers (``af_core.schedule.rowtiles``) emit, a
contract the two copies here do not implement, so they claim no role and
the fake template names them directly.
"""

from __future__ import annotations

from typing import ClassVar

import sympy

from af_core.backend import GatherMode, Role
from af_core.codegen.api_call import ApiCall
from af_core.codegen.scalar import Mask, ScalarEmitter, broadcast_mask, value_type
from af_core.errors import CodegenError
from af_core.ir.graph import HintGraph, Node
from af_core.ops.core_ops import normalize_dim
from af_core.schedule.impl_graph import ImplGraph, ImplNode


class _LaneEmitter(ScalarEmitter):
    """Scalar values at one lane's coordinate; leaves read global memory."""

    def __init__(self, call: FakeLanesGather, graph: HintGraph, coords: list[str]) -> None:
        super().__init__(graph, self._leaf, prefix="lane")
        self.call = call
        self.coords = coords

    def _offset(self, data: Node, coords: list[str], skip: set[int]) -> str:
        """Element offset of ``coords`` in ``data``'s storage; ``skip`` axes sit at coordinate 0."""
        terms = []
        for axis, stride in enumerate(data.y.strides):
            if axis in skip or sympy.sympify(stride) == 0:
                continue
            terms.append(f"({coords[axis]}) * ({self.call.ctx.expr(stride)})")
        return " + ".join(terms) or "0"

    def _leaf(self, node: Node, mask: Mask) -> str | None:
        kind = node.op.compute_type
        if kind == "load":
            data = self.graph.producer(node, "x")
            return f"{self.call.ctx.gm(data.name)}.GetValue({self._offset(data, self.coords, set(mask))})"
        if kind == "indirect_load":
            return self._gather(node, mask)
        return None

    def _gather(self, node: Node, mask: Mask) -> str:
        ctx = self.call.ctx
        x1 = self.graph.producer(node, "x1")
        dim = normalize_dim(int(node.attr.ir_attr.dim), len(x1.y.size))
        view: set[int] = set()  # axes the input chain broadcasts: their coordinate is 0 in the input
        source = x1
        while source.op.compute_type == "broadcast":
            below = self.graph.producer(source, "x")
            view |= broadcast_mask(source, below)
            source = below
        if source.op.compute_type != "load":
            raise CodegenError(
                f"{FakeLanesGather.name}: the input of '{node.name}' is not a (broadcast) Load"
            )
        data = self.graph.producer(source, "x")
        extent = ctx.expr(x1.y.size[dim])
        index = self.fresh()
        self.emit(
            f"int64_t {index} = static_cast<int64_t>({self.value(self.graph.producer(node, 'x2'), mask)});"
        )
        if node.attr.ir_attr.need_check_negative:
            self.emit(f"if ({index} < 0) {{ {index} += {extent}; }}")
        coords = list(self.coords)
        coords[dim] = index
        read = f"{ctx.gm(data.name)}.GetValue({self._offset(data, coords, (set(mask) - {dim}) | view)})"
        if node.attr.ir_attr.need_check_bound:
            zero = f"static_cast<{value_type(node.y.dtype)}>(0)"
            return f"(({index} >= 0 && {index} < {extent}) ? {read} : {zero})"
        return read


class FakeLanesGather(ApiCall):
    """One scalar lane per output element: index, input element, chains, result."""

    name: ClassVar[str] = "FakeLanesGather"
    roles: ClassVar[frozenset[Role]] = frozenset({Role.GATHER})
    gather_modes: ClassVar[frozenset[GatherMode]] = frozenset({GatherMode.LANES})

    @classmethod
    def read_past_tiles(cls, node: ImplNode, impl: ImplGraph) -> int:
        """Each lane reads its own elements with ``GetValue``: nothing past a tile."""
        return 0

    def generate_api_call_string(self) -> str:
        ctx, attrs = self.ctx, self.node.attrs
        sizes = attrs["sizes"]
        coords = [f"c{axis}" for axis in range(len(sizes))]
        emitter = _LaneEmitter(self, ctx.case.graph, coords)
        value = emitter.value(ctx.case.graph.node(attrs["value_node"]))
        for source in sorted(emitter.sources):
            ctx.need_source(source)
        out = attrs["out"]
        ctype = ctx.cpp_type(ctx.impl.tensor(out).dtype)
        decode = ["int64_t rest = pos;"]
        for axis in range(len(sizes) - 1, 0, -1):
            decode.append(f"const int64_t {coords[axis]} = rest % ({ctx.expr(sizes[axis])});")
            decode.append(f"rest /= ({ctx.expr(sizes[axis])});")
        decode.append(f"const int64_t {coords[0]} = rest;")
        before, after = [], []
        if ctx.impl.tensor(out).location == "UB":
            declare, tile = ctx.produce(out)
            before.append(declare)
            write = f"{tile}.SetValue(e, static_cast<{ctype}>({value}));"
            after.append(ctx.finish(out))
        else:
            write = f"{ctx.gm(out)}.SetValue(pos, static_cast<{ctype}>({value}));"
        start, count = ctx.expr(attrs["start"]), ctx.expr(attrs["count"])
        body = [f"const int64_t pos = {start} + e;", *decode, *emitter.lines, write]
        loop = [f"for (int64_t e = 0; e < {count}; ++e) {{", *("    " + line for line in body), "}"]
        return "\n".join([*before, *loop, *after])


class FakeStoreRows(ApiCall):
    """Copy a UB tile to its place in the output, element by element."""

    name: ClassVar[str] = "FakeStoreRows"

    def generate_api_call_string(self) -> str:
        ctx, attrs = self.ctx, self.node.attrs
        declare, tile = ctx.use(attrs["tile"])
        start, count = ctx.expr(attrs["start"]), ctx.expr(attrs["count"])
        copy = [
            f"for (int64_t e = 0; e < {count}; ++e) {{",
            f"    {ctx.gm(attrs['out'])}.SetValue({start} + e, {tile}.GetValue(e));",
            "}",
        ]
        return "\n".join([line for line in (declare, *copy) if line])


class FakeLoadRows(ApiCall):
    """Copy a run of elements of a GM (or workspace) tensor into a UB tile, element by element.

    Written in the template style of the ApiCall chain: ``build_api_param``
    fills ``param`` and the base class renders ``template`` with it.
    """

    name: ClassVar[str] = "FakeLoadRows"
    template: ClassVar[str] = """\
{% if declare %}
{{ declare }}
{% endif %}
for (int64_t e = 0; e < {{ count }}; ++e) {
    {{ tile }}.SetValue(e, {{ source }}.GetValue({{ start }} + e));
}
{% if finish %}
{{ finish }}
{% endif %}
"""

    def build_api_param(self) -> None:
        ctx, attrs = self.ctx, self.node.attrs
        declare, tile = ctx.produce(attrs["tile"])
        self.param = {
            "declare": declare,
            "tile": tile,
            "source": ctx.gm(attrs["source"]),
            "start": ctx.expr(attrs["start"]),
            "count": ctx.expr(attrs["count"]),
            "finish": ctx.finish(attrs["tile"]),
        }


class FakeBrokenGather(FakeLanesGather):
    """Emits a statement no compiler accepts: the twin build must fail with g++'s own diagnostics."""

    name: ClassVar[str] = "FakeBrokenGather"
    roles: ClassVar[frozenset[Role]] = frozenset()
    gather_modes: ClassVar[frozenset[GatherMode]] = frozenset()
    UNDECLARED: ClassVar[str] = "af_fake_undeclared_symbol"

    def generate_api_call_string(self) -> str:
        return f"{self.UNDECLARED} = 1;\n" + super().generate_api_call_string()
