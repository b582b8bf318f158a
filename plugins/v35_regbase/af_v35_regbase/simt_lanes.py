"""SIMT lane code for IndirectLoad (``IndirectLoadRegApiCall.GenerateSimt``).

One ``__simt_vf__`` function per case. Each lane decodes its output
coordinate, evaluates the index chain at that coordinate, normalizes the
index (``need_check_negative``), checks it (``need_check_bound``: zero and no
read; otherwise the twin reports an out-of-range index), reads every gathered
input from GM and evaluates the output chain — all as scalar code produced
by :class:`af_core.codegen.scalar.ScalarEmitter`.

With a lane reduce (``lane_reduce``) the lane loops over the reduced
coordinates; what does not depend on them (``LaneLoads``: the same walk the
SIMT template predicts its reads from) is computed before the loop. With a
``width`` > 1 the lane computes that many consecutive outputs along the last
axis: what depends on that axis is emitted once per output (``v4_0``,
``v4_1``, ...), the rest (the row's index) once for all of them.

VF arguments may only be raw pointers and scalars, so every size and stride
the lanes need travels as an ``int64_t`` parameter (``p0``, ``p1``, ...).
Inputs arrive as ``const __gm__ T*`` (``GlobalTensor::GetPhyAddr()`` is
const in the official API); a GM output as the writable ``__gm__ T*`` of
``GetPhyAddr(0)``.
"""

from __future__ import annotations

import re

import sympy

from af_core.template_api import (
    CodegenError,
    ComputeType,
    HintGraph,
    KernelContext,
    LaneLoads,
    Mask,
    Node,
    ScalarEmitter,
    offset_axes,
    value_type,
)

SIMT_SOURCE = "af_simt_common"


class LaneParams:
    """int64 parameters of the lane function: kernel-side expression -> lane name."""

    def __init__(self, ctx: KernelContext) -> None:
        self.ctx = ctx
        self.names: dict[str, str] = {}

    def __call__(self, expr: object) -> str:
        value = sympy.sympify(expr)
        if value.is_Integer:
            return f"static_cast<int64_t>({int(value)})"
        text = self.ctx.expr(value)
        if text not in self.names:
            self.names[text] = f"p{len(self.names)}"
        return self.names[text]


class LanePointers:
    """GM tensors the lanes read: Data node -> lane parameter."""

    def __init__(self, ctx: KernelContext) -> None:
        self.ctx = ctx
        self.params: dict[str, tuple[str, str]] = {}  # data name -> (lane name, ctype)

    def __call__(self, data: Node) -> str:
        if data.name not in self.params:
            self.params[data.name] = (f"g{len(self.params)}", KernelContext.cpp_type(data.y.dtype))
        return self.params[data.name][0]


class LaneEmitter(ScalarEmitter):
    """Scalar emitter whose leaves are GM loads and gathers.

    With ``reduced`` axes (the lane reduce) every line goes to one of two lists: ``pre``, the values that
    do not depend on a reduced coordinate (computed and loaded once per lane, before the reduce loop),
    and ``loop``, the rest. Which values depend on which axes is :class:`LaneLoads`' walk of the same
    chain, which the SIMT template counts its predicted GM reads from.
    """

    def __init__(
        self,
        graph: HintGraph,
        attrs: dict,
        params: LaneParams,
        pointers: LanePointers,
        coords: list[str],
        reduced: frozenset[int] = frozenset(),
        wide: int | None = None,
    ) -> None:
        super().__init__(graph, self._leaf)
        self.attrs = attrs
        self.params = params
        self.pointers = pointers
        self.coords = coords
        self.index_vars: dict[Mask, str] = {}  # normalized index per coordinate mask
        self.valid: dict[Mask, str] = {}  # index-in-range flag per coordinate mask
        self.reduced = reduced
        self.wide = wide
        self.lane_loads = LaneLoads(graph)
        # (depends on a reduced coordinate, depends on the wide axis) -> lines
        self.blocks: dict[tuple[bool, bool], list[str]] = {
            (True, False): self.lines,
            (False, False): [],
            (True, True): [],
            (False, True): [],
        }
        self.wide_names: set[str] = set()  # variables of the lines computed once per element along wide

    @property
    def pre(self) -> list[str]:
        return self.blocks[(False, False)]

    @property
    def loop(self) -> list[str]:
        return self.blocks[(True, False)]

    def _route(self, node: Node, mask: Mask) -> None:
        """Send the next lines to the block of ``node`` at ``mask``: before the reduce loop when it is the
        same at every reduce step; once per element along ``wide`` when it depends on that axis."""
        axes = self.lane_loads.axes(node, mask)
        self.lines = self.blocks[
            (not self.reduced or bool(axes & self.reduced), self.wide is not None and self.wide in axes)
        ]

    def _fresh(self) -> str:
        name = super()._fresh()
        if self.lines is self.blocks[(True, True)] or self.lines is self.blocks[(False, True)]:
            self.wide_names.add(name)
        return name

    def _offset(self, data: Node, coords: list[str], mask: Mask) -> str:
        terms = []
        for axis in offset_axes(data, mask):
            stride = sympy.sympify(data.y.strides[axis])
            terms.append(coords[axis] if stride == 1 else f"{coords[axis]} * {self.params(stride)}")
        return " + ".join(terms) if terms else "0"

    def _leaf(self, node: Node, mask: Mask) -> str | None:
        kind = node.op.compute_type
        if kind == "load":
            self._route(node, mask)
            data = self.graph.producer(node, "x")
            ptr = self.pointers(data)
            load = f"AF_SIMT_GM_LOAD({ptr} + ({self._offset(data, self.coords, mask)}))"
            return f"({load} != 0)" if data.y.dtype.is_bool else load
        if kind == "indirect_load":
            return self._gather(node, mask)
        return None

    def _elementwise(self, node: Node, mask: Mask) -> str:
        self._route(node, mask)
        return super()._elementwise(node, mask)

    def _gather(self, node: Node, mask: Mask) -> str:
        dim = int(node.attr.ir_attr.dim)
        index_node, data, data_mask = self.lane_loads.gather_parts(node, mask)
        index_value = self.value(index_node, mask)
        extent = self.params(self.graph.producer(node, "x1").y.size[dim])
        idx = self.index_vars.get(mask)
        if idx is None:
            self._route(index_node, mask)
            idx = self.fresh()
            self.emit(f"int64_t {idx} = static_cast<int64_t>({index_value});")
            if self.attrs["need_check_negative"]:
                self.emit(f"{idx} = {idx} < 0 ? {idx} + {extent} : {idx};")
            ok = self.fresh()
            self.emit(f"const bool {ok} = {idx} >= 0 && {idx} < {extent};")
            if not self.attrs["need_check_bound"]:
                self.emit(f"AF_SIMT_CHECK_INDEX({idx}, {extent}, {KernelContext.c_string(node.name)});")
            self.index_vars[mask] = idx
            self.valid[mask] = ok
        self._route(node, mask)
        ok = self.valid[mask]
        coords = list(self.coords)
        coords[dim] = idx
        load = f"AF_SIMT_GM_LOAD({self.pointers(data)} + ({self._offset(data, coords, data_mask)}))"
        if self.attrs["need_check_bound"]:
            return f"({ok} ? {load} : static_cast<{value_type(node.y.dtype)}>(0))"
        return load

    def after(self, node: Node, mask: Mask, var: str) -> str:
        if (
            self.attrs["need_check_bound"]
            and node.name == self.attrs["bound_check_after"]
            and node.op.compute_type != ComputeType.INDIRECT_LOAD
        ):
            ok = self.valid.get(mask)
            if ok is None:
                raise CodegenError(
                    f"bound check after '{node.name}' has no gathered value at this coordinate"
                )
            self._route(node, mask)
            wrapped = self.fresh()
            ctype = value_type(node.y.dtype)
            self.emit(f"const {ctype} {wrapped} = {ok} ? {var} : static_cast<{ctype}>(0);")
            return wrapped
        return var


def simt_lanes(
    ctx: KernelContext, attrs: dict, out_ctype: str, out_space: str
) -> tuple[str, str, list[str], list[str]]:
    """(name, definition text, pointer arguments, int64 arguments) of the lane function.

    ``out_space`` is ``"gm"`` (write the output at the lane's position) or
    ``"ub"`` (write the tile-local position of a UB buffer, converted to
    ``out_ctype``).
    """
    graph = ctx.case.graph
    sizes = attrs["coord_sizes"]
    rank = len(sizes)
    params = LaneParams(ctx)
    pointers = LanePointers(ctx)
    coords = [f"c{i}" for i in range(rank)]
    reduce = attrs.get("lane_reduce")
    red_axes = list(reduce["axes"]) if reduce else []
    width = int(reduce.get("width", 1)) if reduce else 1
    wide = rank - 1 if width > 1 else None
    if wide is not None and (out_space != "gm" or wide in red_axes):
        raise CodegenError("a lane computes several outputs only along a kept last axis, into GM")
    emitter = LaneEmitter(graph, attrs, params, pointers, coords, frozenset(red_axes), wide)
    value = emitter.value(graph.node(attrs["value_node"]))
    for source in sorted(emitter.sources):
        ctx.need_source(source)
    kept = [axis for axis in range(rank) if axis not in red_axes]
    if wide is not None:
        # the lane's first output element; the others follow it along the last axis (same row)
        decode = [f"const int64_t e = pos * {width};", *_decode("e", "rem", coords, kept, sizes, params)]
        decode += [f"const int64_t {coords[wide]}_{w} = {coords[wide]} + {w};" for w in range(width)]
    else:
        decode = _decode("pos", "rem", coords, kept, sizes, params)
    if not reduce:
        body = decode + emitter.loop
        result = value
    else:
        body = decode + _reduce_body(graph, attrs, emitter, value, params, width)
        result = "acc"
    if width > 1:
        # a lane computes ``width`` consecutive outputs along the last axis, one row's
        store = "\n".join(
            f"AF_SIMT_GM_STORE(out + e + {w}, static_cast<{out_ctype}>({result}_{w}));" for w in range(width)
        )
        out_param = f"__gm__ {out_ctype}* out"
    elif out_space == "gm":
        store = f"AF_SIMT_GM_STORE(out + pos, static_cast<{out_ctype}>({result}));"
        out_param = f"__gm__ {out_ctype}* out"
    else:
        store = f"AF_SIMT_UB_STORE(out + i, static_cast<{out_ctype}>({result}));"
        out_param = f"__ubuf__ {out_ctype}* out"
    name = f"AfSimtLanes_k{ctx.case.tiling_key}"
    # inputs are read-only: GlobalTensor::GetPhyAddr() hands out ``const __gm__ T*``
    ptr_params = [f"const __gm__ {ctype}* {lane}" for lane, ctype in pointers.params.values()]
    int_params = [f"int64_t {n}" for n in params.names.values()]
    signature = ", ".join([out_param, *ptr_params, "int64_t start", "int64_t count", *int_params])
    body = body + store.split("\n")
    lines = [
        f"// SIMT lanes of {ctx.case.label}: index -> normalize/check -> gather -> output chain",
        f"__simt_vf__ __aicore__ __launch_bounds__(AF_SIMT_MAX_THREADS) inline void {name}({signature})",
        "{",
        "    for (int64_t i = static_cast<int64_t>(AscendC::Simt::GetThreadIdx()); i < count;",
        "         i += static_cast<int64_t>(AscendC::Simt::GetThreadNum())) {",
        "        const int64_t pos = start + i;",
        *(f"        {line}" for line in body),
        "    }",
        "}",
    ]
    ptr_args = [f"{ctx.gm(data)}.GetPhyAddr()" for data in pointers.params]
    return name, "\n".join(lines) + "\n", ptr_args, list(params.names)


def _reduce_body(
    graph: HintGraph, attrs: dict, emitter: LaneEmitter, value: str, params: LaneParams, width: int
) -> list[str]:
    """A lane's reduce: values that use no reduced coordinate before the loop, the rest at every step;
    with ``width`` > 1, the values along the wide axis once per output of the lane (``acc_0`` ...)."""
    reduce = attrs["lane_reduce"]
    coords, sizes = emitter.coords, attrs["coord_sizes"]
    vdtype = graph.node(attrs["value_node"]).y.dtype
    acc_t = "float" if vdtype.is_float else "int64_t"
    group = params(reduce["group"])
    kind = reduce["kind"]
    if kind in ("Sum", "Mean"):
        combine = "{a} + {v}"
    elif kind == "Max":
        combine = "({a} != {a}) ? {a} : (({v} != {v} || {v} > {a}) ? {v} : {a})"
    else:
        combine = "({a} != {a}) ? {a} : (({v} != {v} || {v} < {a}) ? {v} : {a})"
    names = set(emitter.wide_names)
    if emitter.wide is not None:
        names.add(coords[emitter.wide])

    def each(lines: list[str]) -> list[str]:
        return [line for w in range(width) for line in _widen(lines, names, w)] if width > 1 else lines

    def sfx(w: int) -> str:
        return f"_{w}" if width > 1 else ""

    steps = _decode("rr", "rrem", coords, list(reduce["axes"]), sizes, params) + emitter.loop
    steps += each(emitter.blocks[(True, True)])
    for w in range(width):
        v = _widen([value], names, w)[0] if width > 1 else value
        acc = f"acc{sfx(w)}"
        steps += [
            f"const {acc_t} v{sfx(w)} = static_cast<{acc_t}>({v});",
            f"{acc} = rr == 0 ? v{sfx(w)} : ({combine.format(a=acc, v=f'v{sfx(w)}')});",
        ]
    loop = [f"for (int64_t rr = 0; rr < {group}; ++rr) {{", *(f"    {line}" for line in steps), "}"]
    # loads that do not depend on a reduced coordinate are read once, before the loop; an empty
    # group reads nothing (its index rows are empty)
    pre = emitter.pre + each(emitter.blocks[(False, True)])
    if pre and not sympy.sympify(reduce["group"]).is_positive:
        loop = [f"if ({group} > 0) {{", *(f"    {line}" for line in pre + loop), "}"]
    else:
        loop = pre + loop
    body = [f"{acc_t} acc{sfx(w)} = 0;" for w in range(width)] + loop
    if kind == "Mean" and not vdtype.is_float:
        body.append(f"const int64_t group_n = {group};")
    for w in range(width):
        acc = f"acc{sfx(w)}"
        if kind == "Mean" and vdtype.is_float:
            body.append(f"{acc} = {acc} * static_cast<{acc_t}>(1.0 / static_cast<double>({group}));")
        elif kind == "Mean":  # the reference floor-divides the integer sum (rounds toward -inf)
            body.append(f"{acc} = {acc} / group_n - (({acc} % group_n != 0 && {acc} < 0) ? 1 : 0);")
    return body


def _decode(
    source: str, rem: str, coords: list[str], axes: list[int], sizes, params: LaneParams
) -> list[str]:
    """Lines decoding the linear index ``source`` into the coordinates of ``axes`` (last fastest)."""
    if not axes:
        return []
    lines = [f"int64_t {rem} = {source};"] if len(axes) > 1 else []
    for axis in reversed(axes[1:]):
        size = params(sizes[axis])
        lines += [f"const int64_t {coords[axis]} = {rem} % {size};", f"{rem} /= {size};"]
    lines.append(f"const int64_t {coords[axes[0]]} = {rem if len(axes) > 1 else source};")
    return lines


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|\b[A-Za-z_]\w*\b')


def _widen(lines: list[str], names: set[str], w: int) -> list[str]:
    """``lines`` for element ``w`` of a lane's run along the wide axis: ``names`` get the suffix ``_w``
    (identifiers only; string literals stay as they are)."""

    def rename(match: re.Match[str]) -> str:
        token = match.group(0)
        return f"{token}_{w}" if token in names else token

    return [_TOKENS.sub(rename, line) for line in lines]
