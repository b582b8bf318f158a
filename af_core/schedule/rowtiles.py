"""Row tiles: the core's ordinary vector scheduling of loads, elementwise ops and stores.

A row-tile stage cuts a tensor space into rows (the merged leading axes) and
processes ``tile`` whole rows at a time in UB. SIMD chains, the SK-like pre
and post stages and reduces all go through the same pieces:

- :func:`view_of` describes how the rows of a loaded tensor sit in GM
  (Broadcasts over a Load are folded into stride-0 axes);
- :class:`TileBuilder` turns loads and elementwise graph nodes into
  ImplNodes of the back-end roles (:class:`~af_core.backend.Role`:
  load rows, vector op, store rows), choosing in-place updates and scratch tiles;
- :func:`add_reduce` appends a reduce over a run of axes inside the row;
- :meth:`TileBuilder.fuse_chains` turns each run of consecutive elementwise
  nodes into one node of :attr:`~af_core.backend.Role.VECTOR_CHAIN` when a
  back end fills that role (one pass over the tile instead of one per op).

Which ApiCall fills a role, and which elementwise ops and dtypes have a
vector form, is asked of the installed back end (:func:`api_call_for`),
never hard-coded here.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import sympy

from af_core import dtypes as dt
from af_core.backend import OpCall, Role, VectorChainCall, api_call_for, installed, role_call
from af_core.errors import ScheduleError, Unsupported
from af_core.ir.graph import HintGraph, Node
from af_core.ir.sizes import Expr, Size, expand_polynomial, product
from af_core.ops.opdef import CAST, ComputeType
from af_core.registry import op_with_role
from af_core.schedule.chain_attrs import ChainReduce, ChainStep
from af_core.schedule.cost import COUNTER_NAMES, LINE_BYTES, storage_bytes
from af_core.schedule.impl_graph import ImplGraph, ImplNode
from af_core.schedule.tiles import RowTiles, TilePlan, pitch_for
from af_core.tiling.spec import CeilDiv, FloorDiv, Min


def vector_api() -> type[OpCall]:
    """The installed ApiCall of :attr:`Role.VECTOR_OP` (raises Unsupported when there is none)."""
    return api_call_for(Role.VECTOR_OP)


def fold_view(graph: HintGraph, node: Node) -> tuple[Node, set[int]]:
    """(Data, broadcast axes) of a Load, or of Broadcasts over a Load."""
    axes: set[int] = set()
    while node.op.compute_type == ComputeType.BROADCAST:
        src = graph.producer(node, "x")
        axes |= {
            i
            for i, (a, b) in enumerate(zip(src.y.size, node.y.size))
            if sympy.sympify(a) == 1 and sympy.sympify(b) != 1
        }
        node = src
    if node.op.compute_type != ComputeType.LOAD:
        raise Unsupported(
            f"'{node.name}' ({node.type}) is broadcast after being computed; only loaded "
            "tensors can be broadcast in a vector tile"
        )
    return graph.producer(node, "x"), axes


def view_head(graph: HintGraph, load: Node) -> Node:
    """The last node of ``load -> Broadcast*``: the tensor a tile of this load holds."""
    node = load
    while True:
        consumers = graph.consumers(node)
        if len(consumers) == 1 and consumers[0][0].op.compute_type == ComputeType.BROADCAST:
            node = consumers[0][0]
        else:
            return node


def view_of(
    graph: HintGraph, node: Node, outer_sizes: Sequence[Size], split: int, *, compact: bool = False
) -> dict:
    """Row view of a loaded tensor: rows over axes ``< split``, a row over the rest.

    ``outer_sizes`` number the rows (they may be smaller than the tensor's own
    sizes: an input slice follows the output's outer axes). With ``compact``
    the row keeps only its non-broadcast axes.
    """
    data, bcast = fold_view(graph, node)
    sizes = list(node.y.size)
    strides = [sympy.Integer(0) if i in bcast else s for i, s in enumerate(data.y.strides)]
    inner = list(range(split, len(sizes)))
    if compact:
        inner = [i for i in inner if sympy.sympify(strides[i]) != 0 and sympy.sympify(sizes[i]) != 1]
    return {
        "data": data.name,
        "outer_sizes": list(outer_sizes),
        "outer_strides": strides[:split],
        "inner_sizes": [sizes[i] for i in inner],
        "inner_strides": [strides[i] for i in inner],
        "inner_axes": inner,
    }


def workspace_view(
    sizes: Sequence[Size], split: int, name: str, outer_sizes: Sequence[Size] | None = None
) -> dict:
    """Row view of a contiguous workspace tensor."""
    from af_core.ir.sizes import contiguous_strides

    strides = contiguous_strides(list(sizes))
    return {
        "data": name,
        "outer_sizes": list(outer_sizes if outer_sizes is not None else sizes[:split]),
        "outer_strides": strides[:split],
        "inner_sizes": list(sizes[split:]),
        "inner_strides": strides[split:],
        "inner_axes": list(range(split, len(sizes))),
    }


def dense(view: Mapping[str, Any]) -> bool:
    """Structural check that a row is one unit-stride block (the rule AfRowIsDense applies)."""
    expected = sympy.Integer(1)
    for size, stride in reversed(list(zip(view["inner_sizes"], view["inner_strides"]))):
        if sympy.sympify(size) == 1:
            continue
        if expand_polynomial(stride - expected) != 0:
            return False
        expected = expected * size
    return True


def never_dense(view: dict) -> bool:
    """Whether a row is read element by element at every shape: its inner sizes and strides are numbers
    and :func:`dense` fails (symbolic sizes could be 1 at run time, which AfRowIsDense skips)."""
    numbers = all(sympy.sympify(v).is_number for v in [*view["inner_sizes"], *view["inner_strides"]])
    return numbers and not dense(view)


class TileBuilder:
    """Builds the ImplNodes of one row-tile stage.

    ``loop`` is the stage's TILE_OUT axis, ``start`` / ``actual`` its
    ``<loop>_start`` / ``<loop>_actual`` symbols (the tile's first row and
    row count), ``buffers`` the depth of the queues (2: double buffering).
    The nodes built so far are in ``nodes``; ``tensor_of`` maps a graph node
    to the UB tensor holding its tile (set it for a tile your own step made).
    """

    def __init__(
        self,
        graph: HintGraph,
        impl: ImplGraph,
        plan: TilePlan,
        loop: str,
        start: Size,
        actual: Size,
        buffers: int = 1,
    ) -> None:
        self.graph = graph
        self.impl = impl
        self.plan = plan
        self.loop = loop
        self.start = start
        self.actual = actual
        self.buffers = buffers
        self.nodes: list[ImplNode] = []
        self.tensor_of: dict[str, str] = {}  # graph node -> UB tensor holding its tile
        self.scratch: dict[
            tuple[str, int, str], str
        ] = {}  # (dtype, ordinal, pitch) -> tile shared by the nodes
        self.gm_bytes: Expr = sympy.Integer(0)  # modelled GM traffic of the loads and stores
        # the same traffic split into the counters of af_core.schedule.cost: DataCopy reads (dense
        # views), writes, and scalar GetValue reads of strided / broadcast views with their line fills
        self.read_bytes: Expr = sympy.Integer(0)
        self.write_bytes: Expr = sympy.Integer(0)
        self.scalar_reads: Expr = sympy.Integer(0)
        self.line_fills: Expr = sympy.Integer(0)
        # API calls a node issues per row of the tile on top of its one call per tile (a reduce's per-row calls)
        self.calls_per_row: Expr = sympy.Integer(0)

    def gm_tensor(self, node: Node) -> str:
        """Declare a Data (or Output) node as a GM tensor of the ImplGraph; returns its name."""
        return self.impl.add_gm(node)

    def load(
        self,
        node: Node,
        view: dict,
        pitch: Size,
        rows: Expr,
        *,
        extra_bytes: Size = 0,
        source: str | None = None,
        dtype: dt.DType | None = None,
    ) -> str:
        """Load ``rows`` rows of ``node`` (a Load, the last Broadcast over one, or a workspace) into VECIN.

        A row read element by element at every shape (:func:`never_dense`) is written by the scalar unit,
        which orders its writes for the vector pipe itself (S_V): its tile is a VECCALC buffer, not a VECIN
        queue, whose MTE2 -> V flags would order nothing."""
        dtype = dtype or node.y.dtype
        scalar = never_dense(view)
        name = self.plan.tile(
            f"{node.name}_tile",
            dtype,
            pitch,
            position="VECCALC" if scalar else "VECIN",
            que=not scalar,
            num=1 if scalar else self.buffers,
            extra_bytes=extra_bytes,
        )
        if source is None:
            source = self.gm_tensor(self.graph.node(view["data"]))
        self.nodes.append(
            ImplNode(
                node.name,
                "Load",
                api_call_for(Role.LOAD_ROWS).name,
                (source,),
                (name,),
                loop_axis=self.loop,
                attrs={"view": view, "first_row": self.start, "rows": self.actual, "pitch": pitch},
            )
        )
        width = product(view["inner_sizes"])
        per_element = dtype.itemsize if dense(view) else 32  # a scalar GM read costs a sector
        self.gm_bytes = self.gm_bytes + rows * width * per_element
        if dense(view):
            self.read_bytes = self.read_bytes + rows * width * dtype.itemsize
        else:  # one GetValue per element through the data cache; each line of the tensor filled about once
            data = self.graph.node(view["data"])
            self.scalar_reads = self.scalar_reads + rows * width
            stored = storage_bytes(data.y.size, data.y.strides, dtype.itemsize)
            self.line_fills = self.line_fills + CeilDiv(stored, LINE_BYTES)
        self.tensor_of[node.name] = name
        below = node
        while below.op.compute_type == ComputeType.BROADCAST:
            below = self.graph.producer(below, "x")
            self.tensor_of[below.name] = name
        return name

    def compute(self, node: Node, pitch: Size, *, final: bool = False, extra_bytes: Size = 0) -> str:
        """An elementwise node over the whole tile; ``final`` puts the result in a VECOUT queue."""
        if node.op.compute_type == ComputeType.BROADCAST:
            if node.name not in self.tensor_of:
                raise Unsupported(
                    f"Broadcast '{node.name}' expands a computed value; only loaded tensors can "
                    "be broadcast in a vector tile"
                )
            return self.tensor_of[node.name]
        api = vector_api()
        if not api.supports(node.type):
            raise Unsupported(f"op {node.type} ('{node.name}') has no vector form")
        ins = [self.tensor_of[self.graph.producer(node, p).name] for p in node.op.inputs]
        dtype = node.y.dtype
        in_dtypes = tuple(self.graph.producer(node, p).y.dtype for p in node.op.inputs)
        reason = api.rejection(node.type, in_dtypes, dtype)
        if reason is not None:
            raise Unsupported(f"op {node.type} ('{node.name}') has no legal vector form: {reason}")
        attrs: dict = {"count": self.actual * pitch}
        if dtype.is_bool or any(d.is_bool for d in in_dtypes):
            # bool values are bit-mask tiles of another dtype: keep the graph's dtypes for the chain fusion
            attrs["graph_dtypes"] = [*(d.name for d in in_dtypes), dtype.name]
        if "value" in node.op.attr_specs:
            attrs["value"] = node.attr.ir_attr.value
        first = self.graph.producer(node, node.op.inputs[0])
        if dtype.is_bool:
            out = self.plan.mask(f"{node.name}_mask", pitch)
        elif (
            not final
            and len(node.op.inputs) == 1
            and len(self.graph.consumers(first)) == 1
            and not extra_bytes
            and first.y.dtype.itemsize == dtype.itemsize
        ):
            out = self.plan.alias(f"{node.name}_tile", ins[0], dtype)
            attrs["inplace"] = ins[0]
        else:
            out = self.plan.tile(
                f"{node.name}_tile",
                dtype,
                pitch,
                position="VECOUT" if final else "VECCALC",
                que=final,
                num=self.buffers if final else 1,
                extra_bytes=extra_bytes,
            )
        scratch = self.scratch_tiles(api.scratch_dtypes(node.type, in_dtypes, dtype), pitch)
        if scratch:
            attrs["scratch"] = scratch
        self.nodes.append(
            ImplNode(node.name, node.type, api.name, tuple(ins), (out,), loop_axis=self.loop, attrs=attrs)
        )
        self.tensor_of[node.name] = out
        return out

    def scratch_tiles(self, dtypes: Sequence[dt.DType], pitch: Size) -> list[str]:
        """Scratch tiles of the given dtypes and row pitch, shared by the stage's nodes (they run one after another)."""
        names = []
        seen: dict[str, int] = {}
        for d in dtypes:
            k = seen.get(d.name, 0)
            seen[d.name] = k + 1
            key = (d.name, k, str(pitch))
            if key not in self.scratch:
                self.scratch[key] = self.plan.tile(f"{d.name}_scratch{len(self.scratch)}", d, pitch)
            names.append(self.scratch[key])
        return names

    def cast(self, name: str, src: str, dtype: dt.DType, pitch: Size, *, final: bool = False) -> str:
        """Cast the tile ``src`` to ``dtype`` into a new tile ``name`` (a VECOUT queue when ``final``)."""
        out = self.plan.tile(
            name,
            dtype,
            pitch,
            position="VECOUT" if final else "VECCALC",
            que=final,
            num=self.buffers if final else 1,
        )
        self.nodes.append(
            ImplNode(
                name,
                op_with_role(CAST).name,
                vector_api().name,
                (src,),
                (out,),
                loop_axis=self.loop,
                attrs={"count": self.actual * pitch},
            )
        )
        return out

    def call_counters(self, row_tiles: RowTiles) -> dict[str, Expr]:
        """The counters the stage's ApiCalls predict for their own calls
        (:meth:`~af_core.codegen.api_call.ApiCall.predicted_counters`, e.g. a vector function's register
        instructions and cycles), summed over every tile of ``row_tiles``; every counter of the contract
        is a key (0 when no call predicts it). Call it after :meth:`fuse_chains`: the fused nodes are the
        ones that run."""
        totals: dict[str, Expr] = {name: sympy.Integer(0) for name in COUNTER_NAMES}
        for node in self.nodes:
            if node.api_call is None or node.loop_axis != self.loop:
                continue
            cls = role_call(node.api_call)
            if cls is None:
                raise Unsupported(
                    f"no installed plugin registers the ApiCall '{node.api_call}' ('{node.name}')"
                )
            for name, per_call in sorted(cls.predicted_counters(node, self.impl).items()):
                if name not in totals:
                    raise Unsupported(
                        f"ApiCall {cls.name} predicts '{name}' for '{node.name}', which is not a counter of the "
                        f"cost model ({', '.join(COUNTER_NAMES)})"
                    )
                totals[name] = totals[name] + row_tiles.over_tiles(per_call, self.actual)
        return totals

    def fuse_chains(self) -> list[str]:
        """Fuse the runs of elementwise nodes built so far (:func:`fuse_vector_chains`); returns its notes,
        which are also appended to the ImplGraph's ``meta["vector_chains"]`` (``afc explain`` lists them).

        A reduce a chain takes in issues none of the calls :func:`add_reduce` counted per row (the chain's
        one launch per tile replaces them). The buffer of every tile a chain node reads or writes grows by
        the bytes its ApiCall may read or write past the tile (``read_past_tile``, :meth:`TilePlan.pad`):
        call it before the stage's UB fit is computed.

        Called out of order it raises :class:`ScheduleError` at once, naming the call: after
        :func:`~af_core.schedule.tiles.assign_releases` (a release on a node the fusion replaces would never
        be rendered, so that tile would never be freed), or before the node that reads a chain's result (the
        chain would write nothing, and code generation would fail far from the cause)."""
        released = sorted(n.name for n in self.nodes if n.attrs.get("release"))
        if released:
            raise ScheduleError(
                f"TileBuilder.fuse_chains() called after assign_releases(): node(s) {released} already "
                "carry releases, which fusing would lose; call fuse_chains() after the stage's last compute, "
                "reduce and store, and before assign_releases() and the UB fit"
            )
        before = {n.name: n for n in self.nodes if "row_calls" in n.attrs}
        self.nodes, notes = fuse_vector_chains(self.nodes, self.impl)
        chain_name = api_call_for(Role.VECTOR_CHAIN).name if notes else None
        silent = [n for n in self.nodes if n.api_call == chain_name and n.api_call and not n.outputs]
        if silent:
            fused = [m.name for m in self.nodes if m.fused_into == silent[0].name]
            raise ScheduleError(
                f"TileBuilder.fuse_chains(): the chain of {fused} writes no tile, since no node built so far "
                "reads its result; call fuse_chains() after the stage's last compute, reduce and store"
            )
        for n in self.nodes:
            if n.fused_into is not None and n.name in before:
                self.calls_per_row = self.calls_per_row - before[n.name].attrs["row_calls"]
        if notes:
            chain = api_call_for(Role.VECTOR_CHAIN)
            for n in self.nodes:
                for tensor in (*n.inputs, *n.outputs) if n.api_call == chain.name else ():
                    past = chain.read_past_tile(n, self.impl, tensor)
                    if past:
                        self.plan.pad(tensor, past)
        self.impl.meta.setdefault("vector_chains", []).extend(notes)
        return notes

    def store(
        self, name: str, src: str, target: str, width: Expr, pitch: Size, rows: Expr, dtype: dt.DType
    ) -> None:
        """Store the tile ``src`` (``width`` elements per row, rows ``pitch`` apart) to contiguous rows of GM
        tensor ``target``; ``rows`` (all rows of the stage) only feeds the modelled GM traffic."""
        self.nodes.append(
            ImplNode(
                name,
                "Store",
                api_call_for(Role.STORE_ROWS).name,
                (src,),
                (target,),
                loop_axis=self.loop,
                attrs={"gm_offset": self.start * width, "count": width, "rows": self.actual, "pitch": pitch},
            )
        )
        self.gm_bytes = self.gm_bytes + rows * width * dtype.itemsize
        self.write_bytes = self.write_bytes + rows * width * dtype.itemsize


def reduce_calls_per_group(group: Expr, inner: Expr, itemsize: int) -> Expr:
    """API calls the back end's vector reduce issues for one ``[group, inner]`` group of ``itemsize``-byte
    values: with a kept inner width that fills whole 32-byte blocks, one UB copy and ``group - 1`` Adds;
    with no inner width and a group of whole blocks, one whole-row reduction; otherwise it folds the
    group with scalar code (no API call)."""
    per_block = max(1, 32 // itemsize)

    def whole_blocks(x: Expr) -> Expr:
        return 1 - Min(1, x - per_block * FloorDiv(x, per_block))

    wide = Min(1, inner - 1)
    return wide * whole_blocks(inner) * group + (1 - wide) * whole_blocks(group)


def fuse_vector_chains(nodes: list[ImplNode], impl: ImplGraph) -> tuple[list[ImplNode], list[str]]:
    """Replace each run of consecutive vector-op nodes by one :attr:`Role.VECTOR_CHAIN` node.

    A node joins a run when the chain ApiCall accepts its op and dtypes (``rejection`` is None) and the
    ops of the run with it (``run_rejection`` is None, same ``count``); the others stay single vector
    calls, and a note says why. Values of the chain's ``run_local_dtypes`` (e.g. predicates held in
    mask registers) cross a run's edge only where the chain's ``edge_rejection`` lets the run store or load
    them: a pre-pass plans the runs, takes out every node that makes such a value read outside its run, or
    reads one made outside it, that the chain cannot move, and plans again until no node is taken out (each
    pass only takes nodes out, so it ends). A :attr:`Role.REDUCE` node joins the chain
    when the chain's ``reduce_rejection`` accepts it: at the end of the run right before it when it reduces
    the run's last value and no later node reads a value of the run, else alone (a chain of no steps);
    otherwise it stays a reduce call, and a note says why. The chain node reads
    the tiles its steps take from outside the run and writes the tiles later nodes read (an internal value
    that no later node reads is never stored); the replaced nodes stay as documentation (``fused_into``).
    Returns the new node list and the notes, in node order.
    """
    if not installed(Role.VECTOR_CHAIN):
        return nodes, []
    vector = api_call_for(Role.VECTOR_OP).name
    reducer = api_call_for(Role.REDUCE).name if installed(Role.REDUCE) else None
    if not any(_run_member(node, vector, reducer) for node in nodes):
        return nodes, []  # nothing a run could hold: the chain's class is not even built
    chain = api_call_for(Role.VECTOR_CHAIN)
    local = chain.run_local_dtypes()
    held_out: dict[str, str] = {}
    while True:
        out, notes, runs = _plan_runs(nodes, impl, chain, held_out)
        found = _edge_crossings(nodes, runs, local, impl, chain) if local else {}
        if not found:
            return out, notes
        held_out.update(found)


def _signature(node: ImplNode, impl: ImplGraph) -> tuple[str, tuple[dt.DType, ...], dt.DType]:
    """(op, input dtypes, output dtype) as the schedule checked them: the graph's dtypes when the node
    records them (``graph_dtypes``: a bool value is a bit-mask tile of another dtype), else its tiles'."""
    names = node.attrs.get("graph_dtypes")
    if names is not None:
        return node.op_type, tuple(dt.get(n) for n in names[:-1]), dt.get(names[-1])
    return node.op_type, tuple(impl.tensor(t).dtype for t in node.inputs), impl.tensor(node.outputs[0]).dtype


def _edge_crossings(
    nodes: list[ImplNode],
    runs: list[tuple[list[ImplNode], bool]],
    local: frozenset[str],
    impl: ImplGraph,
    chain: type[VectorChainCall],
) -> dict[str, str]:
    """The fused nodes whose run-local values would cross their run's edge where the chain cannot move them
    (:meth:`~af_core.codegen.api_call.ApiCall.edge_rejection`), each with the reason. ``runs``: each run
    with whether a reduce ends it."""
    readers: dict[str, list[str]] = {}
    for n in nodes:
        if n.fused_into is None:
            for t in n.inputs:
                readers.setdefault(t, []).append(n.name)
    found: dict[str, str] = {}
    for run, reduces in runs:
        members = {n.name for n in run}
        made = {o for n in run for o in n.outputs}
        signatures = [_signature(n, impl) for n in run]
        for n, (_op, ins, out_dtype) in zip(run, signatures):
            if out_dtype.name in local:
                outside = sorted(r for r in readers.get(n.outputs[0], ()) if r not in members)
                reason = (
                    chain.edge_rejection(signatures, out_dtype, stores=True, reduces=reduces)
                    if outside
                    else None
                )
                if reason is not None:
                    found[n.name] = (
                        f"its {out_dtype.name} result is read outside the run (by {', '.join(map(repr, outside))})"
                        f" and {reason}"
                    )
                    continue
            for t, d in zip(n.inputs, ins):
                crosses = d.name in local and t not in made
                reason = (
                    chain.edge_rejection(signatures, d, stores=False, reduces=reduces) if crosses else None
                )
                if reason is not None:
                    found[n.name] = f"it reads the {d.name} value {t!r}, made outside the run, and {reason}"
                    break
    return found


#: A run of fused nodes with whether a reduce ends it.
_Run: TypeAlias = tuple[list[ImplNode], bool]


class _Member(enum.Enum):
    """What a node may be to a run of :func:`fuse_vector_chains`."""

    REDUCE = "a reduce call with the view a chain takes over"
    VECTOR = "a vector op with one output"


def _run_member(node: ImplNode, vector: str, reducer: str | None) -> _Member | None:
    """What ``node`` may be to a run, or None (it ends any run and stays as it is). The early return of
    :func:`fuse_vector_chains` and the planner read this one rule."""
    if reducer is not None and node.api_call == reducer and _REDUCE_VIEW <= node.attrs.keys():
        return _Member.REDUCE
    if node.api_call == vector and len(node.outputs) == 1:
        return _Member.VECTOR
    return None


def _plan_runs(
    nodes: list[ImplNode], impl: ImplGraph, chain: type[VectorChainCall], held_out: dict[str, str]
) -> tuple[list[ImplNode], list[str], list[_Run]]:
    """One planning pass of :func:`fuse_vector_chains`, with the nodes of ``held_out`` kept out of runs;
    returns the new node list, the notes and the runs, each with whether a reduce ends it."""
    return _RunPlanner(nodes, impl, chain, held_out).plan()


def _chain_steps(run: list[ImplNode]) -> tuple[ChainStep, ...]:
    """The ``steps`` attribute of a chain node: each fused vector op's name, op, tiles and scalar options."""
    return tuple(
        ChainStep(
            name=n.name,
            op=n.op_type,
            inputs=n.inputs,
            output=n.outputs[0],
            value=n.attrs.get("value"),
            inplace=n.attrs.get("inplace"),
        )
        for n in run
    )


#: the attributes of a reduce node (:func:`add_reduce`) a chain takes over (:class:`ChainReduce`); a reduce
#: node without them (another template's) stays a reduce call
_REDUCE_VIEW = frozenset({"kind", "rows", "group", "inner", "tiles", "src_pitch", "dst_pitch"})


class _RunPlanner:
    """The state of one :func:`_plan_runs` pass: the run being grown, the node list and notes written so far.

    The nodes are visited once, in order: a vector op joins the current run or ends it, a reduce ends it
    (inside the chain or not), any other node ends it and is kept as it is.
    """

    def __init__(
        self, nodes: list[ImplNode], impl: ImplGraph, chain: type[VectorChainCall], held_out: dict[str, str]
    ) -> None:
        self.nodes = nodes
        self.impl = impl
        self.chain = chain
        self.held_out = held_out
        self.vector = api_call_for(Role.VECTOR_OP).name
        self.reducer = api_call_for(Role.REDUCE).name if installed(Role.REDUCE) else None
        self.notes: list[str] = []
        self.out: list[ImplNode] = []
        self.runs: list[_Run] = []
        #: the vector ops of the run being grown, and their signatures (kept as it grows, refreshed by
        #: :meth:`_sync_signatures` after a flush empties the run)
        self.run: list[ImplNode] = []
        self.signatures: list[tuple[str, tuple[dt.DType, ...], dt.DType]] = []

    def plan(self) -> tuple[list[ImplNode], list[str], list[_Run]]:
        """The new node list, the notes and the runs of the whole pass."""
        for i, node in enumerate(self.nodes):
            member = _run_member(node, self.vector, self.reducer)
            if member is _Member.REDUCE:
                self._take_reduce(i, node)
            elif member is _Member.VECTOR:
                self._take_vector(i, node)
            else:
                self._flush(self.nodes[i:])
                self.out.append(node)
        self._flush([])
        return self.out, self.notes, self.runs

    def _sync_signatures(self) -> None:
        """Recompute the run's signatures when the run was flushed and started again since they were taken."""
        if len(self.signatures) != len(self.run):
            self.signatures[:] = [_signature(n, self.impl) for n in self.run]

    def _take_vector(self, i: int, node: ImplNode) -> None:
        """Add the vector op ``node`` (at ``nodes[i]``) to the run, first ending the run when the chain
        cannot hold them together; or keep it a single vector call, with a note saying why."""
        reason = self.held_out.get(node.name) or self.chain.rejection(*_signature(node, self.impl))
        if reason is not None:
            self._flush(self.nodes[i:])
            self.notes.append(f"{node.op_type} ({node.name!r}) stays a single vector call: {reason}")
            self.out.append(node)
            return
        if self.run:
            self._sync_signatures()
            together = self.chain.run_rejection([*self.signatures, _signature(node, self.impl)])
            if together is not None or self.run[0].attrs["count"] != node.attrs["count"]:
                self._flush(self.nodes[i:])
                self.notes.append(
                    f"{node.op_type} ({node.name!r}) starts a new run: {together or 'another count'}"
                )
        self._sync_signatures()
        self.run.append(node)
        self.signatures.append(_signature(node, self.impl))

    def _reduce_rejection(self, node: ImplNode, ops: list[ImplNode]) -> str | None:
        """Why the chain cannot end the ops ``ops`` with the reduce ``node`` (None: it can)."""
        dtype = self.impl.tensor(node.outputs[0]).dtype
        view = (node.attrs["rows"], node.attrs["group"], node.attrs["inner"])
        return self.chain.reduce_rejection(
            node.attrs["kind"], dtype, view, [_signature(n, self.impl) for n in ops]
        )

    def _join_rejection(self, node: ImplNode, rest: list[ImplNode]) -> str | None:
        """Why the reduce ``node`` cannot end the current (non-empty) run (None: it can): it must reduce the
        run's last value, no node of ``rest`` may read a value of the run, and the chain must accept the
        reduce after the run's ops."""
        read_later = {t for n in rest for t in n.inputs}
        made = [o for n in self.run for o in n.outputs]
        if self.run[-1].outputs[0] != node.inputs[0]:
            return "it does not reduce the run's last value"
        if any(o in read_later for o in made):
            return "a later node reads a value of the run"
        return self._reduce_rejection(node, self.run)

    def _take_reduce(self, i: int, node: ImplNode) -> None:
        """Put the reduce ``node`` (at ``nodes[i]``) into the run before it, into a chain of its own, or leave it."""
        rest = self.nodes[i + 1 :]
        joined = None
        if self.run:
            joined = self._join_rejection(node, rest)
            if joined is None:
                self._flush(rest, node)
                return
            self._flush(self.nodes[i:])
        alone = self._reduce_rejection(node, [])
        if alone is None:
            if joined is not None:
                self.notes.append(f"{node.op_type} ({node.name!r}) does not end the run before it: {joined}")
            self._flush(rest, node)
            return
        self.notes.append(f"{node.op_type} ({node.name!r}) stays a reduce call: {alone}")
        self.out.append(node)

    def _chain_io(self, rest: list[ImplNode], reduce: ImplNode | None) -> tuple[list[str], list[str], dict]:
        """The chain node's input tiles (read by the run and made outside it, in first-read order), output
        tiles (the run's values a node of ``rest`` reads, but the reduce's input, then the reduce's result)
        and attributes (the run's ``count``, the reduce's attributes under ``reduce``)."""
        run = self.run
        made = {o for n in run for o in n.outputs}
        read_later = {t for n in rest for t in n.inputs}
        ins: list[str] = []
        for n in run:
            ins += [t for t in n.inputs if t not in made and t not in ins]
        outs = [o for n in run for o in n.outputs if o in read_later]
        attrs: dict = {"count": run[0].attrs["count"]} if run else {}
        if reduce is not None:
            src = reduce.inputs[0]
            if src not in made and src not in ins:
                ins.append(src)
            outs = [o for o in outs if o != src] + [reduce.outputs[0]]
            a = reduce.attrs
            attrs["reduce"] = ChainReduce(
                kind=a["kind"],
                rows=a["rows"],
                group=a["group"],
                inner=a["inner"],
                tiles=a["tiles"],
                src_pitch=a["src_pitch"],
                dst_pitch=a["dst_pitch"],
                name=reduce.name,
                input=src,
                output=reduce.outputs[0],
            )
        return ins, outs, attrs

    def _chain_note(self, reduce: ImplNode | None) -> str:
        """The note that says which ops (and which reduce) one chain holds."""
        what = ", ".join(f"{n.op_type} ({n.name!r})" for n in self.run)
        if reduce is None:
            return f"{len(self.run)} op(s) {what} in one {self.chain.name}"
        if self.run:
            return f"{len(self.run)} op(s) {what} and the {reduce.op_type} ({reduce.name!r}) in one {self.chain.name}"
        return f"the {reduce.op_type} ({reduce.name!r}) alone in one {self.chain.name}"

    def _flush(self, rest: list[ImplNode], reduce: ImplNode | None = None) -> None:
        """End the current run (with ``reduce`` at its end, if given) as one chain node followed by the nodes it
        replaces (``fused_into`` the chain); ``rest``: the nodes after it, whose reads decide what the chain
        stores. Nothing happens without a run or a reduce."""
        run = self.run
        if not run and reduce is None:
            return
        if run:
            self.runs.append((list(run), reduce is not None))
        ins, outs, attrs = self._chain_io(rest, reduce)
        last = reduce if reduce is not None else run[-1]
        name = f"{last.name}_chain"
        members = [*run, *([reduce] if reduce is not None else [])]
        self.out.append(
            ImplNode(
                name,
                "VectorChain",
                self.chain.name,
                tuple(ins),
                tuple(outs),
                loop_axis=members[0].loop_axis,
                attrs={**attrs, "steps": _chain_steps(run)},
            )
        )
        self.out.extend(
            ImplNode(n.name, n.op_type, None, n.inputs, n.outputs, loop_axis=n.loop_axis, fused_into=name)
            for n in members
        )
        self.notes.append(self._chain_note(reduce))
        run.clear()


def add_reduce(
    b: TileBuilder,
    reduce: Node,
    src: str,
    value_dtype: dt.DType,
    row_sizes: Sequence[Size],
    axes_in_row: tuple[int, int],
    pitch: Size,
) -> tuple[str, Expr, Expr]:
    """Reduce axes ``[lo, hi)`` of each tile row; returns (result tensor, result row width, its pitch).

    float16/bfloat16 rows are reduced in float32 and cast back; the result of
    the last step sits in a VECOUT queue, ready for the store.
    """
    lo, hi = axes_in_row
    a_r, r_r, i_r = (
        product(list(row_sizes[:lo])),
        product(list(row_sizes[lo:hi])),
        product(list(row_sizes[hi:])),
    )
    out_dtype = reduce.y.dtype
    cdt = dt.float32 if out_dtype.is_float else out_dtype
    red_api = api_call_for(Role.REDUCE)
    reason = red_api.rejection(reduce.type, (cdt,), cdt)
    if reason is not None:
        raise Unsupported(
            f"reduce {reduce.type} ('{reduce.name}') on {cdt} has no legal vector form: {reason}"
        )
    width = a_r * i_r
    rpitch = pitch_for(width, [cdt, out_dtype])
    if value_dtype != cdt:
        src = b.cast(f"{reduce.name}_in", src, cdt, pitch)
    cast_back = cdt != out_dtype
    red = b.plan.tile(
        f"{reduce.name}_tile",
        cdt,
        rpitch,
        position="VECCALC" if cast_back else "VECOUT",
        que=not cast_back,
        num=1 if cast_back else b.buffers,
    )
    work = b.plan.fixed(f"{reduce.name}_work", cdt, r_r + 96 // cdt.itemsize)
    row_calls = a_r * reduce_calls_per_group(r_r, i_r, cdt.itemsize)
    b.calls_per_row = b.calls_per_row + row_calls
    b.nodes.append(
        ImplNode(
            reduce.name,
            reduce.type,
            red_api.name,
            (src, work),
            (red,),
            loop_axis=b.loop,
            attrs={
                "kind": reduce.type,
                "rows": a_r,
                "group": r_r,
                "inner": i_r,
                "tiles": b.actual,
                "src_pitch": pitch,
                "dst_pitch": rpitch,
                "row_calls": row_calls,
            },
        )
    )
    if cast_back:
        red = b.cast(f"{reduce.name}_out", red, out_dtype, rpitch, final=True)
    return red, width, rpitch
