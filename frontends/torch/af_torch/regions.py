"""Find the fusible regions of an aten FX graph and translate each to a HintGraph.

A region grows around one gather-like op (``embedding``, ``index_select``,
``gather``, ``x[idx]``, ``embedding_bag``): backwards over the pointwise ops
computing its index and its table, forwards over the pointwise ops and at
most one reduction that use its result. A node joins only when its result is
used by nothing outside the region, its shape is the chain's (no broadcast
of the gathered value), and the tables of :mod:`af_torch.aten_ops` name it.
Tensors the region reads but does not compute (parameters, inputs, results
of ops left in torch, constants) become its Data inputs, each seen through a
stride-0 view where torch broadcasts it.

Sizes keep torch's symbols: a dimension torch traces as ``s0`` becomes the
size ``s0`` of the HintGraph, so one kernel serves every batch size; a
concrete dimension stays an integer. A region whose translation or
scheduling fails is shrunk (the post ops first) and, if nothing fuses,
left to torch with the reason.
"""

from __future__ import annotations

from typing import Any

import attrs
import sympy
import torch
import torch.fx as fx

from af_core.builders import GraphBuilder, TensorRef, embedding, gather, index_select
from af_core.errors import AfError
from af_core.ir.graph import HintGraph
from af_torch import aten_ops as A  # noqa: N812 - the table module, short
from af_torch.bags import BagMode, RaggedBags


class Unfusible(Exception):
    """A node cannot join a region; the text says why (shown by explain)."""


@attrs.define
class RegionInput:
    """One tensor argument of a region call: an FX node of the outer graph, or a constant."""

    data: str  # the Data node's name
    source: fx.Node | None
    constant: float | int | bool | None = None
    torch_dtype: torch.dtype | None = None
    prepared: bool = False  # filled by the region's layout from its sources, not passed as ``source``


@attrs.define
class DerivedSize:
    """A size torch traced only inside an input dimension: ``dim == scale * symbol + offset``.

    ``scale`` and ``offset`` are polynomials of sizes bound before it (or
    integers); at run time ``symbol = (dim - offset) / scale``, which must
    divide exactly (Mixtral's batched experts index ``8*s47`` rows). The two
    polynomials are compiled once (``sympy.lambdify``), not substituted per call.
    """

    position: int
    dim: int
    symbol: str
    scale: sympy.Expr
    offset: sympy.Expr
    _names: tuple[str, ...] = attrs.field(init=False)
    _scale_fn: Any = attrs.field(init=False)
    _offset_fn: Any = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        symbols = sorted(self.scale.free_symbols | self.offset.free_symbols, key=lambda x: x.name)
        self._names = tuple(x.name for x in symbols)
        self._scale_fn = sympy.lambdify(symbols, self.scale, modules=[])
        self._offset_fn = sympy.lambdify(symbols, self.offset, modules=[])

    def solve(self, dim_value: int, sizes: dict[str, int]) -> int | None:
        """The symbol's value, or None when ``dim_value`` is not ``scale * s + offset`` for a positive ``s``."""
        args = [sizes[n] for n in self._names]
        scale, offset = int(self._scale_fn(*args)), int(self._offset_fn(*args))
        rest = dim_value - offset
        if scale <= 0 or rest <= 0 or rest % scale:
            return None
        return rest // scale


@attrs.define
class Region:
    """A fusible part of the FX graph and its HintGraph."""

    anchor: fx.Node
    nodes: list[fx.Node]  # every FX node the region replaces, in graph order
    output: fx.Node  # the node whose value the region returns
    graph: HintGraph
    inputs: list[RegionInput]
    bindings: list[tuple[int, int, str]]  # (input position, dim, size symbol) read at run time
    derived: list[DerivedSize]  # sizes solved from an input dimension after the bindings
    squeeze: tuple[int, ...]  # reduced dims torch drops (keepdim=False)
    out_dtype: torch.dtype
    notes: list[str]  # why the region stops where it does
    layout: RaggedBags | None = None  # ragged bags laid out on each call from ``layout_sources``
    layout_sources: list[fx.Node] = attrs.Factory(list)

    @property
    def call_sources(self) -> list[fx.Node]:
        """The FX nodes a region call takes, in order: direct inputs, then the layout's sources."""
        direct = [i.source for i in self.inputs if i.source is not None and not i.prepared]
        return direct + list(self.layout_sources)

    @property
    def fused_ops(self) -> list[str]:
        return [
            A.op_name(n.target)
            for n in self.nodes
            if n.op == "call_function"
            and n.target not in (A.aten.view.default, A.aten.arange.start_step)
            and "getitem" not in str(n.target)
        ]


def _val(node: Any) -> Any:
    return node.meta.get("val") if isinstance(node, fx.Node) else None


def _shape(node: fx.Node) -> tuple:
    val = _val(node)
    if not isinstance(val, torch.Tensor):
        raise Unfusible(f"'{node.name}' has no traced tensor value")
    return tuple(val.shape)


def _same_shape(a: fx.Node, b: fx.Node) -> bool:
    try:
        sa, sb = _shape(a), _shape(b)
    except Unfusible:
        return False
    return len(sa) == len(sb) and all(str(x) == str(y) for x, y in zip(sa, sb))


def _is_scalar(arg: Any) -> bool:
    return isinstance(arg, (int, float, bool)) and not isinstance(arg, torch.SymInt)


def _constant_of(node: Any) -> float | int | bool | None:
    """The value of ``aten.scalar_tensor(c)`` (a 0-d constant), else None."""
    if isinstance(node, fx.Node) and node.op == "call_function" and node.target is A.SCALAR_TENSOR:
        value = node.args[0]
        if _is_scalar(value):
            return value
    return None


def _pointwise_kind(node: fx.Node) -> str | None:
    """'unary' / 'binary' / 'where' / 'cast' if the tables name the op, else None."""
    if node.op != "call_function":
        return None
    t = node.target
    if t in A.UNARY:
        return "unary"
    if t in A.BINARY:
        if node.kwargs.get("alpha", 1) != 1:
            return None
        return "binary"
    if t is A.WHERE:
        return "where"
    if t is A.TO_COPY and set(node.kwargs) <= {"dtype", "device", "layout"}:
        return "cast"
    return None


def _tensor_args(node: fx.Node) -> list[fx.Node]:
    return [a for a in node.args if isinstance(a, fx.Node) and _constant_of(a) is None]


# ---------------------------------------------------------------------------
# selection


@attrs.define
class Selection:
    anchor: fx.Node
    index_nodes: list[fx.Node]
    input_nodes: list[fx.Node]
    post_nodes: list[fx.Node]
    extra: list[fx.Node]  # embedding_bag's view / arange / getitem
    output: fx.Node
    notes: list[str]


def _users_inside(node: fx.Node, inside: set[fx.Node]) -> bool:
    return all(u in inside for u in node.users)


def _grow_back(start: Any, anchor: fx.Node, taken: set[fx.Node], ref: fx.Node | None = None) -> list[fx.Node]:
    """Pointwise ops computing ``start`` (same shape) whose every use is inside the region."""
    if not isinstance(start, fx.Node):
        return []
    ref = ref or start
    chosen: list[fx.Node] = []
    inside = {anchor}
    frontier = [start]
    while frontier:
        node = frontier.pop()
        if node in inside or node in taken or _constant_of(node) is not None:
            continue
        if _pointwise_kind(node) is None or not _same_shape(node, ref):
            continue
        if not _users_inside(node, inside | set(chosen) | {node}):
            continue
        chosen.append(node)
        inside.add(node)
        frontier.extend(_tensor_args(node))
    # a node whose user was rejected later cannot stay: recheck until stable
    changed = True
    while changed:
        changed = False
        allowed = {anchor, *chosen}
        for node in list(chosen):
            if not _users_inside(node, allowed):
                chosen.remove(node)
                changed = True
    return chosen


@attrs.frozen
class BagParts:
    """An ``_embedding_bag`` as a region takes it: regular bags of 2-D ids, or ragged ones (``ragged``).

    Regular bags (``ids2d.view(-1)`` with offsets ``arange(0, n, L)``) are
    read in place. Every other form (1-D ids with data offsets, either
    ``include_last_offset``, and a mean or max with ``padding_idx``) is
    ``ragged``: each call lays the bags out first (:mod:`af_torch.bags`), and
    ``ids`` / ``offsets`` / ``weights`` are the call arguments of that layout.
    """

    ids2d: fx.Node | None  # regular bags: the 2-D ids
    extra: list[fx.Node]  # the view, arange and getitem nodes the region also replaces
    result: fx.Node
    mode: BagMode
    weights2d: fx.Node | None  # regular sum bags: per_sample_weights viewed back to the ids' shape
    padding_idx: int | None  # rows with this id contribute nothing
    ragged: bool = False
    ids: fx.Node | None = None  # ragged bags: the 1-D ids, the offsets and per_sample_weights
    offsets: fx.Node | None = None
    weights: fx.Node | None = None
    include_last_offset: bool = False

    @property
    def kind(self) -> str:
        return self.mode.reduce_kind if self.ragged else A.BAG_MODES[self.mode.value]


def _regular_ids(flat: Any, offsets: Any) -> fx.Node | None:
    """The 2-D ids when ``flat`` is their view(-1) and ``offsets`` is ``arange(0, n, L)``, else None."""
    if not (isinstance(flat, fx.Node) and flat.target is A.aten.view.default and len(_shape(flat)) == 1):
        return None
    ids2d = flat.args[0]
    if not isinstance(ids2d, fx.Node) or len(_shape(ids2d)) != 2:
        return None
    step = offsets.args[2] if isinstance(offsets, fx.Node) and len(offsets.args) > 2 else None
    step = _val(step) if isinstance(step, fx.Node) else step  # a SymInt placeholder under dynamo
    regular = (
        isinstance(offsets, fx.Node)
        and offsets.target is A.aten.arange.start_step
        and offsets.args[0] == 0
        and str(step) == str(_shape(ids2d)[1])
    )
    return ids2d if regular else None


def _bag_parts(anchor: fx.Node) -> BagParts:
    """An ``_embedding_bag(w, ids, offsets, ...)`` split into what a region reads (raises Unfusible with the reason)."""
    args = list(anchor.args) + [None] * 10
    _w, flat, offsets = args[0], args[1], args[2]
    code = anchor.kwargs.get("mode", args[4] if args[4] is not None else 0)
    psw = anchor.kwargs.get("per_sample_weights", args[6])
    last = bool(anchor.kwargs.get("include_last_offset", args[7] if args[7] is not None else False))
    padding = anchor.kwargs.get("padding_idx", args[8] if args[8] is not None else -1)
    padding = padding if padding is not None and padding >= 0 else None
    if code not in A.BAG_MODES:
        raise Unfusible(f"embedding_bag mode {code} is none of torch's sum / mean / max")
    mode = BagMode(code)
    results = [u for u in anchor.users]
    if not all(u.target.__name__ == "getitem" for u in results if callable(u.target)):
        raise Unfusible("embedding_bag's results are used as a whole")
    used = [u for u in results if u.args[1] == 0]
    others = [u for u in results if u.args[1] != 0 and u.users]
    if len(used) != 1 or others:
        raise Unfusible("embedding_bag's offsets / bag sizes outputs are used")
    ids2d = _regular_ids(flat, offsets)
    weights2d = None
    if ids2d is not None and psw is not None:  # torch takes them in sum mode only, flattened like the ids
        if (
            isinstance(psw, fx.Node)
            and psw.target is A.aten.view.default
            and isinstance(psw.args[0], fx.Node)
            and _same_shape(psw.args[0], ids2d)
        ):
            weights2d = psw.args[0]
        else:
            ids2d = None  # weights of another layout: laid out with the ids
    if ids2d is not None and not last and (padding is None or mode is BagMode.SUM):
        extra = [n for n in (flat, offsets) if len(n.users) == 1]
        if weights2d is not None and len(psw.users) == 1:
            extra.append(psw)
        return BagParts(ids2d, extra + results, used[0], mode, weights2d, padding)
    for port, node in (("ids", flat), ("offsets", offsets), ("per_sample_weights", psw)):
        if node is not None and (not isinstance(node, fx.Node) or len(_shape(node)) != 1):
            raise Unfusible(f"embedding_bag {port} are not a 1-D tensor")
    return BagParts(
        None,
        list(results),
        used[0],
        mode,
        None,
        padding,
        ragged=True,
        ids=flat,
        offsets=offsets,
        weights=psw,
        include_last_offset=last,
    )


def select(anchor: fx.Node, taken: set[fx.Node]) -> Selection:
    """The nodes of the region around ``anchor`` (raises Unfusible when the anchor itself cannot fuse)."""
    notes: list[str] = []
    extra: list[fx.Node] = []
    t = anchor.target
    if t is A.EMBEDDING:
        table, index = anchor.args[0], anchor.args[1]
        out = anchor
    elif t in (A.INDEX_SELECT, A.GATHER):
        table, index = anchor.args[0], anchor.args[2]
        out = anchor
    elif t is A.INDEX:
        table, indices = anchor.args
        if len(indices) != 1 or indices[0] is None:
            raise Unfusible("x[idx] with more than one index tensor")
        index = indices[0]
        out = anchor
        if len(_shape(table)) != 2 and len(_shape(index)) != 1:
            raise Unfusible("x[idx] with a multi-dimensional index on a table of rank other than 2")
    elif t is A.EMBEDDING_BAG:
        table = anchor.args[0]
        bag = _bag_parts(anchor)
        index, extra, out = (bag.ids if bag.ragged else bag.ids2d), bag.extra, bag.result
    else:  # pragma: no cover - the caller only passes anchors
        raise Unfusible("not a gather")
    if not isinstance(index, fx.Node) or not isinstance(table, fx.Node):
        raise Unfusible("table or index is not a tensor")
    index_nodes = [] if t is A.EMBEDDING_BAG else _grow_back(index, anchor, taken)
    input_nodes = _grow_back(table, anchor, taken | set(index_nodes))
    post: list[fx.Node] = []
    if t is not A.EMBEDDING_BAG:
        cur = out
        while True:
            users = list(cur.users)
            if len(users) != 1:
                if len(users) > 1:
                    consumers = ", ".join(sorted(u.name for u in users))
                    notes.append(
                        f"'{cur.name}' feeds {len(users)} ops ({consumers}); a region has one output, so it "
                        "ends there and the consumers run in torch on its result"
                    )
                break
            user = users[0]
            if user.op != "call_function" or user in taken:
                break
            if user.target in A.REDUCE:
                if (
                    len(_shape(user)) == 0
                    and len(_shape(cur)) > 0
                    and user.target is not A.aten.sum.dim_IntList
                ):
                    break
                post.append(user)
                cur = user
                break
            if _pointwise_kind(user) is None:
                notes.append(f"{A.op_name(user.target)} after the gather has no fused form")
                break
            if not _same_shape(user, cur):
                notes.append(f"{A.op_name(user.target)} broadcasts the gathered value; the region ends")
                break
            post.append(user)
            cur = user
        out = cur
    return Selection(anchor, index_nodes, input_nodes, post, extra, out, notes)


# ---------------------------------------------------------------------------
# translation


class _Translator:
    """Builds the HintGraph of a selection with af_core's builders."""

    def __init__(self, name: str, opaque: dict[sympy.Expr, str] | None = None) -> None:
        self.g = GraphBuilder(name)
        # torch size expressions the region treats as one size of its own (a product read whole)
        self.opaque = dict(opaque or {})
        self.inputs: list[RegionInput] = []
        self.bindings: list[tuple[int, int, str]] = []
        self.input_dims: list[tuple[int, int, sympy.Expr]] = []  # (position, dim, torch's expression)
        self.symbols: dict[str, sympy.Expr] = {}
        self.values: dict[tuple[fx.Node, str], TensorRef] = {}
        self._data_names: set[str] = set()
        self.layout_sources: list[fx.Node] = []

    # sizes
    def size(self, dim: Any) -> sympy.Expr | int:
        if isinstance(dim, int):
            return dim
        expr = dim.node.expr
        for product, fresh in self.opaque.items():
            expr = expr.subs(product, sympy.Symbol(fresh, integer=True, positive=True))
        if not all(isinstance(a, (sympy.Symbol, sympy.Integer)) for a in expr.atoms()):
            raise Unfusible(f"size {dim} is not a polynomial of torch's size symbols")
        for node in sympy.preorder_traversal(expr):
            if not isinstance(node, (sympy.Symbol, sympy.Integer, sympy.Add, sympy.Mul)):
                raise Unfusible(f"size {dim} uses {type(node).__name__}, which a region does not take")
        mapping = {}
        for sym in expr.free_symbols:
            if sym.name not in self.symbols:
                self.symbols[sym.name] = self.g.size(sym.name)
            mapping[sym] = self.symbols[sym.name]
        return expr.xreplace(mapping)

    def shape(self, node: fx.Node) -> list:
        return [self.size(d) for d in _shape(node)]

    # inputs
    def _data_name(self, base: str) -> str:
        name, n = base, 1
        while name in self._data_names:
            name, n = f"{base}_{n}", n + 1
        self._data_names.add(name)
        return name

    def external(self, node: fx.Node | float | int | bool, role: str, like: fx.Node) -> TensorRef:
        """A Data for a tensor the region reads, seen with ``like``'s shape (stride 0 where torch broadcasts)."""
        key = (node, role) if isinstance(node, fx.Node) else None
        if key is not None and key in self.values:
            return self.values[key]
        target = _shape(like)
        sizes = [self.size(d) for d in target]
        constant = _constant_of(node) if isinstance(node, fx.Node) else node
        if constant is not None:
            val = _val(node) if isinstance(node, fx.Node) else None
            tdtype = val.dtype if isinstance(val, torch.Tensor) else _val(like).dtype
            name = self._data_name(node.name if isinstance(node, fx.Node) else "const")
            ref = self.g.data(name, sizes, self.dtype(tdtype), strides=[0] * len(sizes))
            self.inputs.append(RegionInput(name, None, constant, tdtype))
        else:
            src = _shape(node)
            if len(src) > len(target):
                raise Unfusible(f"'{node.name}' has a higher rank than the value it combines with")
            pad = len(target) - len(src)
            aligned = [1] * pad + list(src)
            strides: list = []
            step: Any = 1
            for i in reversed(range(len(target))):
                a = aligned[i]
                if str(a) == str(target[i]):
                    strides.append(step)
                elif a == 1:
                    strides.append(0)
                else:
                    raise Unfusible(f"'{node.name}' does not broadcast to the region's shape")
                step = step * (self.size(a) if not isinstance(a, int) else a)
            strides.reverse()
            name = self._data_name(node.name)
            dtype = _val(node).dtype
            ref = self.g.data(name, sizes, self.dtype(dtype), strides=strides)
            position = sum(
                1 for i in self.inputs if i.source is not None
            )  # its place among the call's tensors
            self.inputs.append(RegionInput(name, node, None, dtype))
            self._bind(position, src)
        if key is not None:
            self.values[key] = ref
        return ref

    def external_strided(self, node: fx.Node, sizes: list, strides: list, role: str) -> TensorRef:
        """A Data reading ``node`` with explicit ``sizes`` and element ``strides`` (a 2-D tensor along 3-D rows)."""
        key = (node, role)
        if key in self.values:
            return self.values[key]
        name = self._data_name(f"{node.name}_{role}")
        dtype = _val(node).dtype
        ref = self.g.data(name, sizes, self.dtype(dtype), strides=strides)
        position = sum(1 for i in self.inputs if i.source is not None)
        self.inputs.append(RegionInput(name, node, None, dtype))
        self._bind(position, _shape(node))
        self.values[key] = ref
        return ref

    def prepared(
        self, source: fx.Node, role: str, dims: list[Any], strides: list, tdtype: torch.dtype
    ) -> tuple[str, TensorRef]:
        """A Data the region's layout fills on each call: its name and value.

        ``dims`` are torch sizes (int or SymInt, bound like any input's) or
        names from :meth:`fresh_size`, read from this input's dimension.
        """
        sizes = [self.symbols[d] if isinstance(d, str) else self.size(d) for d in dims]
        name = self._data_name(f"{source.name}_{role}")
        ref = self.g.data(name, sizes, self.dtype(tdtype), strides=strides)
        position = sum(1 for i in self.inputs if i.source is not None)
        self.inputs.append(RegionInput(name, source, None, tdtype, prepared=True))
        self._bind(position, tuple(None if isinstance(d, str) else d for d in dims))
        self.bindings += [(position, d, dim) for d, dim in enumerate(dims) if isinstance(dim, str)]
        return name, ref

    def fresh_size(self, base: str) -> str:
        """A size of the region's own (no torch symbol): its name, unused by torch's sizes."""
        name, n = base, 1
        while name in self.symbols:
            name, n = f"{base}_{n}", n + 1
        self.symbols[name] = self.g.size(name)
        return name

    def constant_strided(self, value: float | int, sizes: list, tdtype: torch.dtype) -> TensorRef:
        """A constant broadcast to ``sizes`` (stride 0), of torch dtype ``tdtype``."""
        name = self._data_name("const")
        ref = self.g.data(name, sizes, self.dtype(tdtype), strides=[0] * len(sizes))
        self.inputs.append(RegionInput(name, None, value, tdtype))
        return ref

    def _bind(self, position: int, src: tuple) -> None:
        """Record how the sizes of an input at ``position`` are read at run time."""
        for d, dim in enumerate(src):
            expr = dim.node.expr if isinstance(dim, torch.SymInt) else None
            if expr in self.opaque:
                self.bindings.append((position, d, self.opaque[expr]))
            elif isinstance(expr, sympy.Symbol):
                self.bindings.append((position, d, expr.name))
            elif expr is not None:
                self.input_dims.append((position, d, expr))

    @staticmethod
    def dtype(tdtype: torch.dtype) -> str:
        if tdtype not in A.DTYPES:
            raise Unfusible(f"dtype {tdtype} is not one a region takes")
        return A.DTYPES[tdtype]

    # ops
    def value(self, arg: Any, role: str, like: fx.Node, local: dict[fx.Node, TensorRef]) -> TensorRef:
        if isinstance(arg, fx.Node) and arg in local:
            return local[arg]
        return self.external(arg, role, like)

    def pointwise(self, node: fx.Node, role: str, local: dict[fx.Node, TensorRef]) -> TensorRef:
        g = self.g
        kind = _pointwise_kind(node)
        out_dtype = self.dtype(_val(node).dtype)
        args = node.args
        if kind == "unary":
            ref = g.op(A.UNARY[node.target], self.value(args[0], role, node, local))
        elif kind == "cast":
            ref = g.cast(self.value(args[0], role, node, local), out_dtype)
        elif kind == "where":
            cond, a, b = (self.value(x, role, node, local) for x in args[:3])
            ref = g.op("Where", cond, a, b)
        else:
            tensor_op, scalar_op = A.BINARY[node.target]
            first = self.value(args[0], role, node, local)
            second = args[1]
            if _is_scalar(second):
                if scalar_op is None:
                    raise Unfusible(f"{A.op_name(node.target)} with a Python scalar has no exact fused form")
                ref = g.op(scalar_op, first, value=float(second) if first.dtype.is_float else int(second))
            else:
                if tensor_op is None:
                    raise Unfusible(f"{A.op_name(node.target)} form not taken")
                if first.dtype.name == "bool":
                    tensor_op = A.BOOL_FORMS.get(tensor_op, tensor_op)
                ref = g.op(tensor_op, first, self.value(second, role, node, local))
        if ref.dtype.name != out_dtype:
            raise Unfusible(
                f"{A.op_name(node.target)} gives {_val(node).dtype} in torch but "
                f"{ref.dtype.name} fused (type promotion is left to torch)"
            )
        return ref


def translate(sel: Selection, name: str) -> Region:
    """The Region of a selection (raises Unfusible or an AfError when the builders refuse it).

    When some of torch's size symbols can be read from no input dimension
    (``s0*s1`` rows after a reshape, with neither size alone anywhere), each
    input dimension whose expression holds them becomes a size of the region
    on its own, and the selection is translated once more with those
    products read whole.
    """
    try:
        return _translate(sel, name, {})
    except _Unbound as exc:
        if not exc.products:
            raise Unfusible(str(exc)) from None
        opaque = {
            expr: "n" + "x".join(sorted(str(s) for s in expr.free_symbols)) + f"x{i}"
            for i, expr in enumerate(exc.products)
        }
        try:
            return _translate(sel, name, opaque)
        except _Unbound as again:
            raise Unfusible(str(again)) from None


class _Unbound(Unfusible):
    """Sizes no input dimension gives; ``products``: input dimension expressions that hold them."""

    def __init__(self, message: str, products: list[sympy.Expr]) -> None:
        super().__init__(message)
        self.products = products


def _bag_value(
    tr: _Translator, bag: BagParts, table: TensorRef, table_node: fx.Node, local: dict[fx.Node, TensorRef]
) -> tuple[RaggedBags | None, TensorRef]:
    """The bag's (bags, 1, D) sums / maxima, and the layout a ragged bag's calls run first."""
    g = tr.g
    dtype = _val(table_node).dtype
    if not bag.ragged:
        assert bag.ids2d is not None
        rows = embedding(table, local.get(bag.ids2d) or tr.external(bag.ids2d, "index", bag.ids2d))
        sizes = list(rows.shape)  # (bags, bag length, D)
        by_row = [sizes[1], 1, 0]  # a (bags, bag length) tensor seen along the rows' D
        if bag.weights2d is not None:
            rows = g.op("Mul", rows, tr.external_strided(bag.weights2d, sizes, by_row, "weights"))
        if bag.padding_idx is not None:
            ids = tr.external_strided(bag.ids2d, sizes, by_row, "padding")
            zero = tr.constant_strided(0, sizes, dtype)
            rows = g.op("Where", g.op("Eqs", ids, value=bag.padding_idx), zero, rows)
        return None, g.reduce(bag.kind, rows, [1])
    assert bag.ids is not None and bag.offsets is not None
    table_rows = _shape(table_node)[0]
    if not isinstance(table_rows, int):
        raise Unfusible("a ragged embedding_bag over a table whose row count is dynamic")
    bags = _shape(bag.result)[0]
    if isinstance(bags, torch.SymInt) and not isinstance(bags.node.expr, sympy.Symbol):
        bags = tr.fresh_size("bags")  # offsets' length - 1 (include_last_offset): a size of its own
    longest = tr.fresh_size("bag_len")
    step = tr.symbols[longest]
    ids_name, ids = tr.prepared(bag.ids, "bag_ids", [bags, longest], [step, 1], _val(bag.ids).dtype)
    # a filler id is past the table: it gathers a zero row without a read
    rows = embedding(table, ids, need_check_bound=True)
    weights_name = None
    if RaggedBags.needs_weights(bag.mode, bag.weights is not None):
        width = _shape(table_node)[1]
        weights_name, weights = tr.prepared(
            bag.ids, "bag_weights", [bags, longest, width], [step, 1, 0], dtype
        )
        rows = g.op("Mul", rows, weights)
    layout = RaggedBags(
        bag.mode,
        bag.include_last_offset,
        bag.padding_idx,
        bag.weights is not None,
        table_rows,
        ids_name,
        weights_name,
        dtype,
    )
    tr.layout_sources = [bag.ids, bag.offsets] + ([bag.weights] if bag.weights is not None else [])
    return layout, g.reduce(bag.kind, rows, [1])


def _translate(sel: Selection, name: str, opaque: dict[sympy.Expr, str]) -> Region:
    tr = _Translator(name, opaque)
    g = tr.g
    anchor = sel.anchor
    t = anchor.target
    local: dict[fx.Node, TensorRef] = {}
    bag = _bag_parts(anchor) if t is A.EMBEDDING_BAG else None
    layout: RaggedBags | None = None
    if bag is not None:
        table_node, index_node = anchor.args[0], (bag.ids if bag.ragged else bag.ids2d)
    elif t is A.EMBEDDING:
        table_node, index_node = anchor.args[0], anchor.args[1]
    elif t is A.INDEX:
        table_node, index_node = anchor.args[0], anchor.args[1][0]
    else:
        table_node, index_node = anchor.args[0], anchor.args[2]
    order = _order_of(anchor.graph)
    for node in sorted(sel.input_nodes, key=order):
        local[node] = tr.pointwise(node, "input", local)
    table = local.get(table_node) or tr.external(table_node, "input", table_node)
    for node in sorted(sel.index_nodes, key=order):
        local[node] = tr.pointwise(node, "index", local)
    squeeze: tuple[int, ...] = ()
    if bag is not None:
        layout, value = _bag_value(tr, bag, table, table_node, local)
        squeeze = (1,)
    else:
        index = local.get(index_node) or tr.external(index_node, "index", index_node)
        if t is A.EMBEDDING or (t is A.INDEX and table.rank == 2 and index.rank != 1):
            value = embedding(table, index)
        elif t is A.INDEX:
            value = index_select(table, 0, index)
        elif t is A.INDEX_SELECT:
            value = index_select(table, int(anchor.args[1]), index)
        else:
            value = gather(table, int(anchor.args[1]), index)
    local[sel.output if t is A.EMBEDDING_BAG else anchor] = value
    for node in sel.post_nodes:
        if node.target in A.REDUCE:
            dims = node.args[1] if len(node.args) > 1 else list(range(value.rank))
            keep = node.kwargs.get("keepdim", node.args[2] if len(node.args) > 2 else False)
            if node.kwargs.get("dtype") is not None:
                raise Unfusible("a reduction with a dtype argument")
            dims = sorted({d % value.rank for d in dims}) if dims else list(range(value.rank))
            value = g.reduce(A.REDUCE[node.target], local[node.args[0]], dims)
            squeeze = () if keep else tuple(dims)
        else:
            value = tr.pointwise(node, "post", local)
        local[node] = value
    g.output(value, "y")
    graph = g.build()
    derived = _derive(tr)
    bound = {s for _p, _d, s in tr.bindings} | {d.symbol for d in derived}
    free = sorted(set(tr.symbols) - bound)
    if free:
        products = sorted(
            {expr for _p, _d, expr in tr.input_dims if {s.name for s in expr.free_symbols} & set(free)},
            key=str,
        )
        raise _Unbound(
            f"sizes {free} cannot be read from the region's input shapes: no input dimension is such a size "
            "alone or a multiple of it (mark the dimensions that carry them dynamic, or give them static sizes)",
            products,
        )
    nodes = sorted({*sel.index_nodes, *sel.input_nodes, anchor, *sel.extra, *sel.post_nodes}, key=order)
    return Region(
        anchor,
        nodes,
        sel.output,
        graph,
        tr.inputs,
        tr.bindings,
        derived,
        squeeze,
        _val(sel.output).dtype,
        list(sel.notes),
        layout,
        tr.layout_sources,
    )


def _derive(tr: _Translator) -> list[DerivedSize]:
    """Sizes solved from input dimensions ``scale * s + offset`` once the bare ones are bound.

    Repeats until nothing new is solved, so a size may be solved through one
    solved before it. ``scale`` and ``offset`` may use only sizes already known.
    """
    known = {s for _p, _d, s in tr.bindings}
    derived: list[DerivedSize] = []
    progress = True
    while progress:
        progress = False
        for position, d, expr in tr.input_dims:
            unknown = sorted((sym for sym in expr.free_symbols if sym.name not in known), key=str)
            if len(unknown) != 1:
                continue
            sym = unknown[0]
            expanded = sympy.expand(expr)
            scale, offset = expanded.coeff(sym, 1), expanded.coeff(sym, 0)
            if sympy.expand(scale * sym + offset - expanded) != 0 or sym in scale.free_symbols:
                continue  # not linear in the unknown size
            derived.append(DerivedSize(position, d, sym.name, scale, offset))
            known.add(sym.name)
            progress = True
    return derived


def _order_of(graph: fx.Graph):
    order = {n: i for i, n in enumerate(graph.nodes)}
    return lambda n: order[n]


# ---------------------------------------------------------------------------
# the whole graph


@attrs.define
class Partition:
    regions: list[Region]
    left: dict[str, str]  # FX node name -> why it stays in torch (call_function nodes only)
    left_ops: dict[str, str]  # FX node name -> aten op


def _schedules(graph: HintGraph) -> None:
    from af_core.autofuser import Autofuser, AutofuserOptions

    Autofuser(AutofuserOptions()).schedule(graph)


def partition(fx_graph: fx.Graph, name: str = "torch") -> Partition:
    """Every fusible region of ``fx_graph`` (not modified) and why the other ops stay in torch."""
    regions: list[Region] = []
    reasons: dict[str, str] = {}
    taken: set[fx.Node] = set()
    anchors = [n for n in fx_graph.nodes if n.op == "call_function" and n.target in A.ANCHORS]
    for anchor in anchors:
        if anchor in taken:
            continue
        try:
            sel = select(anchor, taken)
        except Unfusible as exc:
            reasons[anchor.name] = str(exc)
            continue
        region = None
        last_error = ""
        graph_name = f"{name}_{anchor.name}"
        while True:
            try:
                region = translate(sel, graph_name)
                _schedules(region.graph)
                break
            except (Unfusible, AfError) as exc:
                last_error = str(exc)
                region = None
                if not sel.post_nodes:
                    break
                dropped = sel.post_nodes.pop()
                sel.notes.append(f"{A.op_name(dropped.target)} left to torch: {last_error}")
                sel.output = (
                    sel.post_nodes[-1]
                    if sel.post_nodes
                    else (sel.output if anchor.target is A.EMBEDDING_BAG else anchor)
                )
        if region is None:
            reasons[anchor.name] = f"not fused: {last_error}"
            continue
        regions.append(region)
        taken.update(region.nodes)
    for node in fx_graph.nodes:
        if node.op != "call_function" or node in taken or node.name in reasons:
            continue
        target = str(node.target)
        if "getitem" in target or "_assert" in target or not isinstance(_val(node), torch.Tensor):
            continue  # tuple members, asserts and size arithmetic are not ops to fuse
        if node.target is A.SCALAR_TENSOR and all(u in taken for u in node.users):
            continue  # a constant a region reads
        reasons[node.name] = (
            "fusible, but no region reaches it (a region grows from a gather through ops used only inside it)"
            if _pointwise_kind(node) or node.target in A.REDUCE
            else "not an op a region takes"
        )
    left_ops = {n.name: A.op_name(n.target) for n in fx_graph.nodes if n.name in reasons}
    return Partition(regions, reasons, left_ops)
