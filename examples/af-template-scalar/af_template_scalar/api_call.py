"""ScalarLoopApiCall: the code of the scalar loop, built on af_core's ScalarEmitter."""

from __future__ import annotations

import sympy

from af_core.template_api import ApiCall, ComputeType, KernelContext, Mask, Node, ScalarEmitter, value_type


class _Emitter(ScalarEmitter):
    """Leaves read GM with GlobalTensor::GetValue; gathers normalize and check their index."""

    def __init__(self, ctx, graph, coords):
        super().__init__(graph, self._leaf)
        self.ctx = ctx
        self.coords = coords

    def _offset(self, data: Node, coords, mask: Mask) -> str:
        terms = [
            f"({c}) * ({self.ctx.expr(st)})"
            for axis, (c, st) in enumerate(zip(coords, data.y.strides))
            if axis not in mask and sympy.sympify(st) != 0
        ]
        return " + ".join(terms) or "0"

    def _view(self, node: Node) -> tuple[Node, set[int]]:
        mask: set[int] = set()
        while node.op.compute_type == ComputeType.BROADCAST:
            src = self.graph.producer(node, "x")
            mask |= {i for i, (a, b) in enumerate(zip(src.y.size, node.y.size)) if a == 1 and b != 1}
            node = src
        return self.graph.producer(node, "x"), mask

    def _leaf(self, node: Node, mask: Mask):
        if node.op.compute_type == ComputeType.LOAD:
            data = self.graph.producer(node, "x")
            return f"{self.ctx.gm(data.name)}.GetValue({self._offset(data, self.coords, mask)})"
        if node.op.compute_type != ComputeType.INDIRECT_LOAD:
            return None
        dim = int(node.attr.ir_attr.dim)
        x1 = self.graph.producer(node, "x1")
        data, view_mask = self._view(x1)
        extent = self.ctx.expr(x1.y.size[dim])
        idx = self.fresh()
        self.emit(
            f"int64_t {idx} = static_cast<int64_t>({self.value(self.graph.producer(node, 'x2'), mask)});"
        )
        if node.attr.ir_attr.need_check_negative:
            self.emit(f"{idx} = {idx} < 0 ? {idx} + ({extent}) : {idx};")
        coords = list(self.coords)
        coords[dim] = idx
        load = f"{self.ctx.gm(data.name)}.GetValue({self._offset(data, coords, (mask - {dim}) | view_mask)})"
        if node.attr.ir_attr.need_check_bound:
            return (
                f"(({idx} >= 0 && {idx} < ({extent})) ? {load} : static_cast<{value_type(node.y.dtype)}>(0))"
            )
        self.emit(f"AF_SIMT_CHECK_INDEX({idx}, ({extent}), {KernelContext.c_string(node.name)});")
        return load


class ScalarLoopApiCall(ApiCall):
    name = "ScalarLoopApiCall"
    sources = ("af_simt_common",)  # for AF_SIMT_CHECK_INDEX (the twin reports out-of-range indices)

    def generate_api_call_string(self) -> str:
        ctx, a = self.ctx, self.node.attrs
        graph = ctx.case.graph
        rank = len(a["sizes"])
        coords = [f"c{i}" for i in range(rank)]
        emitter = _Emitter(ctx, graph, coords)
        value = emitter.value(graph.node(a["value_node"]))
        for source in sorted(emitter.sources):
            ctx.need_source(source)
        decode = ["int64_t rem = pos;"]
        for axis in range(rank - 1, 0, -1):
            decode += [
                f"const int64_t {coords[axis]} = rem % ({ctx.expr(a['sizes'][axis])});",
                f"rem /= ({ctx.expr(a['sizes'][axis])});",
            ]
        decode.append(f"const int64_t {coords[0]} = rem;")
        out = a["out"]
        ctype = ctx.cpp_type(ctx.impl.tensor(out).dtype)
        body = [*decode, *emitter.lines, f"{ctx.gm(out)}.SetValue(pos, static_cast<{ctype}>({value}));"]
        start, count = ctx.expr(a["start"]), ctx.expr(a["count"])
        return "\n".join(
            [
                f"for (int64_t pos = {start}; pos < {start} + {count}; ++pos) {{",
                *("    " + line for line in body),
                "}",
            ]
        )
