"""Fused against unfused: the same graph run as single-op kernels, and the bytes each moves.

The fused kernel runs a whole fusion (index chain, input chain, gather, post
ops, reduce) in one pass over global memory (GM). Single-operator mode runs
each op as its own kernel: every op reads its operands from GM and writes its
result to GM, where the next op reads it again. :func:`split` cuts a graph
into those single-op kernels (:class:`Piece`), each a valid HintGraph of its
own (Data inputs -> Load -> one op -> Store -> Output):

- the **gather** piece: the IndirectLoad alone, reading the table and the
  index from GM and writing its output to GM. It is compiled and run on the
  CPU twin like any graph, so its traffic is *measured*, with the same
  definition as the fused kernel's (:func:`af_core.traffic.measured_bytes`:
  DataCopy bytes plus 128 B per data-cache line fill read; the larger of
  the DataCopy bytes and the distinct lines written x 128 written);
- a **stream** piece for every other op (elementwise ops of the index and
  input chains before the gather, of the post chain after it, the reduce):
  the templates build kernels only around a gather, so these are evaluated
  with the numpy reference, and their traffic is *exact* from shapes and
  dtypes (:func:`stream_bytes`): each distinct operand read once, the result
  written once. A streaming op has no reuse question, so nothing better or
  worse is possible for it; this is the least single-op traffic there is.

A Broadcast is no kernel of its own: its consumer reads the un-broadcast
tensor as a stride-0 view (as a single-op kernel with broadcasting operands
does), and an op whose every operand is constant along an axis (a stride-0
view of an index, say) writes that axis once. Both choices make the unfused
figure smaller, so "fused <= unfused" is the stricter claim.

The unfused figure (:func:`unfused_traffic`) is the gather's measured bytes
plus the exact bytes of every stream piece.

Times (:mod:`af_core.schedule.time_model`): the fused kernel and the lone
gather take their twin-estimated time; a stream piece takes the estimate of
its exact bytes through HBM and L2 with one vector instruction per 256 bytes
of its result spread over the cores (:func:`stream_time`, the least a
streaming kernel can do), and its own launch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs
import numpy as np

from af_core.builders import GraphBuilder, TensorRef
from af_core.dtypes import DType
from af_core.errors import AscirError
from af_core.inputs import GraphInputs, storage_elements, view
from af_core.ir.evaluate import eval_shape
from af_core.ir.graph import HintGraph, Node
from af_core.ir.sizes import contiguous_strides
from af_core.ir.validate import GraphInfo, normalized_copy, validate
from af_core.ops.opdef import ComputeType
from af_core.reference.interpreter import evaluate
from af_core.schedule.analysis import analyze
from af_core.schedule.cost import COUNTER_NAMES, counted_cost, twin_cores, twin_counters
from af_core.tiling.solve import CaseRef, solve
from af_core.traffic import measured_bytes
from af_core.twin import Comparison, TwinSession, compare, has_math

#: Names inside every piece graph: operands ``in0``, ``in1``, ..., the op ``op``, the output ``out``.
OUTPUT = "out"


@attrs.frozen
class Operand:
    """One GM tensor a piece reads: where its values come from and the view it reads them through.

    ``source`` is a Data node of the fused graph (``from_input``) or the op
    node of an earlier piece; ``shape``/``strides`` are in elements, a stride
    of 0 reads one element for the whole axis.
    """

    source: str
    from_input: bool
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: DType

    @property
    def nbytes(self) -> int:
        """Bytes of the distinct elements the view spans: what reading it once moves."""
        return storage_elements(self.shape, self.strides) * self.dtype.itemsize


@attrs.frozen
class Piece:
    """A single-op kernel of the unfused graph: op ``node`` of the fused graph, alone."""

    node: str
    kind: str  # "gather" (run on the twin) or "stream" (exact traffic)
    graph: HintGraph = attrs.field(eq=False)
    operands: tuple[Operand, ...]
    shape: tuple[int, ...]  # the op's logical output shape
    stored: tuple[int, ...]  # what it writes to GM: the shape with constant axes written once
    itemsize: int

    @property
    def out_bytes(self) -> int:
        return int(np.prod(self.stored, dtype=np.int64)) * self.itemsize

    @property
    def in_bytes(self) -> int:
        """Bytes read: each distinct operand once (``Mul(x, x)`` reads ``x`` once)."""
        return sum(o.nbytes for o in set(self.operands))


@attrs.frozen
class UnfusedPlan:
    """The pieces of one graph for one set of sizes, in the order they run."""

    graph: HintGraph = attrs.field(eq=False)
    pieces: tuple[Piece, ...]
    output: str  # the fused graph's Output node name

    @property
    def gather(self) -> Piece:
        return next(p for p in self.pieces if p.kind == "gather")

    @property
    def streams(self) -> tuple[Piece, ...]:
        return tuple(p for p in self.pieces if p.kind == "stream")


def stream_bytes(piece: Piece) -> int:
    """GM bytes of a streaming single-op kernel: every distinct operand element read once,
    every element of its stored result written once."""
    return piece.in_bytes + piece.out_bytes


def stream_time(piece: Piece, core_num: int, vector_bytes: int) -> int:
    """Estimated time (ps) of a streaming single-op kernel: its exact bytes from HBM through L2, one
    vector instruction per ``vector_bytes`` (a register) of its result over ``core_num`` cores, and one
    launch."""
    moved = stream_bytes(piece)
    counters = dict.fromkeys(COUNTER_NAMES, 0)
    counters.update(
        read_bytes=piece.in_bytes,
        write_bytes=piece.out_bytes,
        l2_core_bytes=piece.in_bytes,
        hbm_bytes=moved,
        reg_cycles=-(-piece.out_bytes // vector_bytes),
    )
    return int(counted_cost(counters, core_num))


def twin_time(counters: Mapping[str, int], serialized: bool = False) -> int:
    """The twin-estimated time (ps) of one run from its report."""
    return int(counted_cost(twin_counters(counters), twin_cores(counters), serialized))


def split(
    graph: HintGraph, sizes: Mapping[str, int] | None = None, info: GraphInfo | None = None
) -> UnfusedPlan:
    """Cut ``graph`` (one IndirectLoad fusion, see :mod:`af_core.schedule.analysis`) into single-op kernels.

    ``sizes`` gives the dynamic sizes (symbol or graph names); the pieces have
    concrete shapes. Raises :class:`~af_core.schedule.analysis.FusionError`
    for a graph that is not one fusion.
    """
    info = info or validate(graph)
    norm, info = normalized_copy(graph, info)
    analysis = analyze(norm)
    env = norm.size_env(sizes or {})
    final = norm.producer(analysis.store, "x").name
    pieces: list[Piece] = []
    stored: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}  # op -> (shape, compact strides)
    for node in norm.topo_order():
        kind = node.op.compute_type
        if kind not in ("elementwise", "reduce", "indirect_load"):
            continue
        shape = tuple(eval_shape(info[node.name].sizes, env))
        operands = [_operand(norm, info, env, node, port, stored) for port in node.op.inputs]
        constant = () if kind == "indirect_load" or node.name == final else _constant_axes(operands, shape)
        compact = tuple(1 if a in constant else n for a, n in enumerate(shape))
        strides = tuple(
            0 if a in constant else s for a, s in enumerate(int(v) for v in contiguous_strides(list(compact)))
        )
        stored[node.name] = (shape, strides)
        piece_kind = "gather" if kind == "indirect_load" else "stream"
        pieces.append(
            Piece(
                node.name,
                piece_kind,
                _piece_graph(f"{graph.name}_{piece_kind}", node, operands, shape),
                tuple(operands),
                shape,
                compact,
                info[node.name].dtype.itemsize,
            )
        )
    return UnfusedPlan(graph, tuple(pieces), analysis.output.name)


def _operand(
    graph: HintGraph,
    info: GraphInfo,
    env: Mapping[str, int],
    node: Node,
    port: str,
    stored: Mapping[str, tuple[tuple[int, ...], tuple[int, ...]]],
) -> Operand:
    """What ``node`` reads on ``port``: through Broadcasts and a Load to a Data node or an earlier op."""
    producer = graph.producer(node, port)
    shape = tuple(eval_shape(info[producer.name].sizes, env))
    broadcast: set[int] = set()
    while producer.op.compute_type in (ComputeType.BROADCAST, ComputeType.LOAD):
        src = graph.producer(producer, producer.op.inputs[0])
        src_shape = tuple(eval_shape(info[src.name].sizes, env))
        if len(src_shape) != len(shape):
            raise AscirError(
                "unfused-broadcast-rank",
                f"'{producer.name}' changes the rank ({len(src_shape)} -> {len(shape)}); the unfused split "
                "reads broadcasts as stride-0 views of the same rank",
                node=producer.name,
                port=producer.op.inputs[0],
            )
        broadcast |= {a for a, (m, n) in enumerate(zip(src_shape, shape)) if m == 1 and n != 1}
        producer = src
    if producer.op.compute_type == ComputeType.DATA:
        strides = tuple(eval_shape(info[producer.name].strides, env))
        from_input = True
    else:
        strides = stored[producer.name][1]
        from_input = False
    strides = tuple(0 if a in broadcast else s for a, s in enumerate(strides))
    return Operand(producer.name, from_input, shape, strides, info[producer.name].dtype)


def _constant_axes(operands: Sequence[Operand], shape: tuple[int, ...]) -> set[int]:
    """Axes (longer than 1) along which every operand is a stride-0 view: the result is constant there."""
    return {a for a, n in enumerate(shape) if n > 1 and all(o.strides[a] == 0 for o in operands)}


def _piece_graph(name: str, node: Node, operands: Sequence[Operand], shape: tuple[int, ...]) -> HintGraph:
    """Data ``in<i>`` (each operand's view) -> Load -> a copy of ``node`` named ``op`` -> Output ``out``."""
    g = GraphBuilder(name)
    refs: list[TensorRef] = []
    for i, o in enumerate(operands):
        refs.append(g.data(f"in{i}", list(o.shape), o.dtype, list(o.strides)))
    if node.op.compute_type == ComputeType.INDIRECT_LOAD:
        attr = node.attr.ir_attr
        y = g.indirect_load(
            refs[0],
            refs[1],
            int(attr.dim),
            need_check_negative=bool(attr.need_check_negative),
            need_check_bound=bool(attr.need_check_bound),
            name="op",
        )
    else:
        y = g.op(
            node.type, *refs, name="op", dtype=node.y.dtype, shape=list(shape), **node.attr.ir_attr.explicit()
        )
    g.output(y, OUTPUT)
    return g.build()


# -- running the pieces ----------------------------------------------------------------------
def _compact(value: np.ndarray, piece: Piece) -> np.ndarray:
    """The result as stored in GM: one element along each constant axis."""
    region = tuple(slice(0, n) for n in piece.stored)
    return np.ascontiguousarray(np.asarray(value)[region])


def piece_inputs(piece: Piece, inputs: GraphInputs, results: Mapping[str, np.ndarray]) -> GraphInputs:
    """The GM tensors ``piece`` reads: the fused run's own input buffers, or earlier pieces' stored results."""
    storage: dict[str, np.ndarray] = {}
    logical: dict[str, np.ndarray] = {}
    for i, o in enumerate(piece.operands):
        buf = inputs.storage[o.source] if o.from_input else results[o.source].reshape(-1)
        storage[f"in{i}"] = buf
        logical[f"in{i}"] = view(buf, o.shape, o.strides)
    return GraphInputs(storage, logical, {})


def run_stream(piece: Piece, inputs: GraphInputs, results: Mapping[str, np.ndarray]) -> np.ndarray:
    """A stream piece's stored result, computed with the numpy reference."""
    out = evaluate(piece.graph, piece_inputs(piece, inputs, results).logical)[OUTPUT]
    return _compact(out, piece)


def run_reference(plan: UnfusedPlan, inputs: GraphInputs) -> dict[str, np.ndarray]:
    """Every piece's stored result (by fused-graph node name), all with the numpy reference, in order."""
    results: dict[str, np.ndarray] = {}
    for piece in plan.pieces:
        results[piece.node] = run_stream(piece, inputs, results)
    return results


@attrs.frozen
class UnfusedRun:
    """The unfused graph's result and traffic for one set of inputs."""

    plan: UnfusedPlan
    output: np.ndarray  # the last piece's result: the fused graph's output
    gather_bytes: int  # measured on the twin
    gather_counters: dict[str, int]
    gather_label: str  # the case the lone gather ran
    gather_time: int = 0  # its twin-estimated time (ps)
    core_num: int = 1
    vector_bytes: int = 256  # the platform's register width, for the stream kernels' instructions

    @property
    def stream_bytes(self) -> int:
        return sum(stream_bytes(p) for p in self.plan.streams)

    @property
    def total(self) -> int:
        return self.gather_bytes + self.stream_bytes

    @property
    def time(self) -> int:
        """Estimated time (ps): the lone gather's twin-estimated time and every stream kernel's."""
        return self.gather_time + sum(
            stream_time(p, self.core_num, self.vector_bytes) for p in self.plan.streams
        )


def policy_key(session: TwinSession, sizes: Mapping[str, int], core_num: int, policy: str) -> int | None:
    """The tiling key ``policy`` selects for ``session``'s graph; None for "default" (the host tiling decides)."""
    if policy == "default":
        return None
    scheduled = session.scheduled
    return solve(
        [CaseRef.of(c) for c in scheduled.cases],
        scheduled.size_names,
        sizes,
        core_num,
        scheduled.platform.ub_size,
        scheduled.guards,
        policy=policy,
    ).tiling_key


def run_unfused(
    plan: UnfusedPlan,
    inputs: GraphInputs,
    *,
    core_num: int,
    session: TwinSession | None = None,
    policy: str = "default",
) -> UnfusedRun:
    """Run the pieces in order: stream pieces with the reference, the gather on the twin.

    ``session`` is a :class:`~af_core.twin.TwinSession` of ``plan.gather.graph``
    (compiled here when omitted). The gather runs the case ``policy`` selects
    ("default": the generated host tiling's choice; or an installed policy's
    name), checked against the reference first.
    """
    gather = plan.gather
    sess = session or TwinSession(gather.graph)
    results: dict[str, np.ndarray] = {}
    run = None
    for piece in plan.pieces:
        if piece is not gather:
            results[piece.node] = run_stream(piece, inputs, results)
            continue
        pin = piece_inputs(piece, inputs, results)
        key = policy_key(sess, pin.sizes, core_num, policy)
        run = sess.check(inputs=pin, core_num=core_num, tiling_key=key)
        if not run.ok:
            raise AssertionError(
                f"the lone gather of '{plan.graph.name}' differs from the reference: {run.describe()}"
            )
        results[piece.node] = _compact(run.twin.outputs[OUTPUT], piece)
    assert run is not None
    last = plan.pieces[-1]
    return UnfusedRun(
        plan,
        results[last.node].reshape(last.stored),
        measured_bytes(run.twin.counters),
        dict(run.twin.counters),
        run.template,
        twin_time(run.twin.counters, _serialized(sess, run.template)),
        core_num,
        sess.scheduled.platform.vector_bytes,
    )


def _serialized(session: TwinSession, label: str) -> bool:
    """Whether the case ``label`` of ``session`` is single-buffered, as its tiling spec says."""
    case = next((c for c in session.scheduled.cases if c.label == label), None)
    return case is not None and case.tiling.serialized


@attrs.frozen
class FusedVsUnfused:
    """One graph's fused traffic (selected case, twin-measured) beside its unfused traffic, per policy.

    The same policy selects the fused kernel's case and the lone gather's.
    """

    name: str
    fused: dict[str, tuple[int, str]]  # policy -> (measured bytes, case label)
    unfused: dict[str, UnfusedRun]  # policy -> the unfused run
    agreements: dict[str, Comparison]  # policy -> the unfused chain's output against the fused kernel's
    fused_time: dict[str, int] = attrs.Factory(dict)  # policy -> twin-estimated time (ps)

    @property
    def agree(self) -> bool:
        return all(c.ok for c in self.agreements.values())

    def ratio(self, policy: str = "default") -> float:
        """Fused bytes over unfused bytes under ``policy``: at most 1 when fusing does not lose."""
        total = self.unfused[policy].total
        return self.fused[policy][0] / total if total else float("inf")

    def time_ratio(self, policy: str = "default") -> float:
        """Fused estimated time over unfused estimated time under ``policy``."""
        return self.fused_time[policy] / self.unfused[policy].time


def fused_vs_unfused(
    session: TwinSession,
    inputs: GraphInputs,
    *,
    core_num: int,
    policies: Sequence[str] = ("default", "cost"),
    gather_session: TwinSession | None = None,
) -> FusedVsUnfused:
    """Measure ``session``'s graph fused and unfused on the same inputs, under each of ``policies``.

    ``session`` is the :class:`~af_core.twin.TwinSession` of the fused graph;
    every fused run and every lone gather is checked against the reference,
    and the unfused chain's output against the fused kernel's (``agreements``).
    """
    plan = split(session.graph, inputs.sizes, session.scheduled.info)
    gather_session = gather_session or TwinSession(plan.gather.graph)
    fused: dict[str, tuple[int, str]] = {}
    fused_time: dict[str, int] = {}
    unfused: dict[str, UnfusedRun] = {}
    outputs: dict[str, np.ndarray] = {}
    for policy in policies:
        key = policy_key(session, inputs.sizes, core_num, policy)
        run = session.check(inputs=inputs, core_num=core_num, tiling_key=key)
        if not run.ok:
            raise AssertionError(f"fused '{session.graph.name}' ({policy} policy): {run.describe()}")
        fused[policy] = (measured_bytes(run.twin.counters), run.template)
        fused_time[policy] = twin_time(run.twin.counters, _serialized(session, run.template))
        outputs[policy] = run.twin.outputs[plan.output]
        unfused[policy] = run_unfused(plan, inputs, core_num=core_num, session=gather_session, policy=policy)
    dtype = session.scheduled.info[plan.output].dtype
    exact = not has_math(session.graph)
    agreements = {p: compare(plan.output, unfused[p].output, outputs[p], dtype, exact) for p in policies}
    return FusedVsUnfused(session.graph.name, fused, unfused, agreements, fused_time)
