"""Data movement: what a run moved (from the twin's counters) and the least it could.

- ``measured``: reads are the bytes DataCopy moved plus 128 bytes per line
  fill of the data cache that scalar and SIMT reads go through (the twin's
  per-core LRU model); writes are the larger of the DataCopy bytes and the
  distinct lines written x 128.
- ``minimum`` (DESIGN §9): index bytes + output bytes + the distinct input
  cachelines the gather really reads x 128, plus every other input read
  whole (side inputs). "Really reads" means the index values the
  IndirectLoad receives: the index chain (e.g. ``Maxs(0)``, ``Mins(k)``, a
  shift) is evaluated with the reference interpreter first, so a chain that
  maps many index values onto few rows lowers the minimum accordingly (a
  kernel cannot read fewer lines than those rows).
- ``per_lane``: a naive kernel where every output element fetches its input
  element as its own 32-byte sector (no cacheline reuse), plus index and
  output bytes.
- per-core bound (:func:`per_core_bound_bytes`): the minimum for a given
  split of the output over cores, each core reading what its own positions
  need once; what a schedule with that split and private caches cannot go
  below.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np

from af_core.inputs import GraphInputs, view
from af_core.ir.evaluate import eval_shape
from af_core.ir.graph import HintGraph, Node
from af_core.ir.validate import GraphInfo, validate
from af_core.ops.core_ops import normalize_dim
from af_core.ops.opdef import ComputeType
from af_core.reference.interpreter import evaluate_nodes

LINE = 128
SECTOR = 32


@attrs.frozen
class Traffic:
    minimum: int
    per_lane: int
    measured: int
    #: the twin-estimated time (ps): the time model of af_core.schedule.time_model on the twin's counters
    time: int = 0

    @property
    def ratio(self) -> float:
        return self.measured / self.minimum if self.minimum else float("inf")

    @property
    def cost(self) -> int:
        """The twin-estimated time, the measure cases are ranked by (the modelled cost's unit)."""
        return self.time


def measured_bytes(counters: dict[str, int]) -> int:
    reads = counters["gm_read_bytes"] + counters["dcache_misses"] * LINE
    writes = max(counters["gm_write_bytes"], counters["cachelines_written"] * LINE)
    return reads + writes


def _gather_chain_data(graph: HintGraph, il: Node) -> list[Node]:
    """Data nodes read through the IndirectLoad's input (the gathered ones)."""
    out, stack = [], [graph.producer(il, "x1")]
    while stack:
        node = stack.pop()
        if node.op.compute_type == ComputeType.DATA:
            out.append(node)
        else:
            stack.extend(graph.producer(node, p) for p in node.op.inputs)
    return out


def _broadcast_axes(graph: HintGraph, data: Node, target_sizes: Sequence[int]) -> tuple[int, ...]:
    return tuple(i for i, (a, b) in enumerate(zip(data.y.size, target_sizes)) if a == 1 and b != 1)


def used_indices(graph: HintGraph, inputs: GraphInputs, info: GraphInfo | None = None) -> np.ndarray:
    """The index values the (first) IndirectLoad receives on port x2, after its index chain, as int64.

    Evaluated with the reference interpreter on the run's inputs (only the nodes
    upstream of the index port), so the values are those the kernel computes.
    """
    info = info or validate(graph)
    il = graph.nodes_of_type("IndirectLoad")[0]
    index = graph.producer(il, "x2")
    values = evaluate_nodes(graph, inputs.logical, [index.name], inputs.sizes, info=info)[index.name]
    return np.asarray(values).astype(np.int64)


def minimum_bytes(
    graph: HintGraph, inputs: GraphInputs, outputs: dict[str, np.ndarray], info: GraphInfo | None = None
) -> tuple[int, int]:
    """(minimum, per_lane) for one run's inputs."""
    return _least_bytes(graph, inputs, outputs, info, None)


def per_core_bound_bytes(
    graph: HintGraph,
    inputs: GraphInputs,
    outputs: dict[str, np.ndarray],
    per_core: int,
    info: GraphInfo | None = None,
) -> int:
    """The least a kernel can move when each core reads every distinct line of its own positions once:
    the minimum, with input lines counted once per core that needs them instead of once in all.

    The output is split as the SIMT cases split it: core ``c`` computes the
    output elements ``[c * per_core, (c + 1) * per_core)`` in row-major order,
    and a gathered position belongs to the core of the output element it
    feeds (an axis of size 1 in the output, a reduced one, maps all its
    positions to one element). A core needs the gathered lines of its
    positions (128 B each) and the index and side-input elements at them
    (their bytes, as the minimum counts these inputs; an input whose view
    does not lie over the gathered positions counts whole, once). What two
    cores need is counted twice: no schedule with this split and private
    caches reads less; only sharing between cores (an L2) or another split
    does. With one core (``per_core`` at least the output size) it is the
    minimum when every index and side element is used.
    """
    if per_core < 1:
        raise ValueError(f"per_core must be at least 1, got {per_core}")
    return _least_bytes(graph, inputs, outputs, info, per_core)[0]


def _core_of(positions: tuple[int, ...], out_shape: tuple[int, ...], per_core: int) -> np.ndarray:
    """Core of each gathered position (an array of ``positions``' shape) for an output split in shares of
    ``per_core`` elements; axes where the output has size 1 are reduced (or broadcast) away."""
    if len(out_shape) != len(positions):
        raise ValueError(f"output shape {out_shape} and gathered positions {positions} differ in rank")
    linear = np.zeros((1,) * len(positions), dtype=np.int64)
    for axis, size in enumerate(out_shape):
        shape = [1] * len(positions)
        shape[axis] = positions[axis]
        coord = np.arange(positions[axis], dtype=np.int64).reshape(shape) if size != 1 else 0
        linear = linear * size + coord
    return np.broadcast_to(linear // per_core, positions)


def _distinct(units: np.ndarray, cores: np.ndarray | None) -> int:
    """Distinct values of ``units`` (lines or elements); with ``cores`` (same shape), distinct
    (unit, core) pairs."""
    if cores is not None:
        units = units * (int(cores.max(initial=0)) + 1) + cores  # one key per (unit, core)
    return int(np.unique(units).size)


def _least_bytes(
    graph: HintGraph,
    inputs: GraphInputs,
    outputs: dict[str, np.ndarray],
    info: GraphInfo | None,
    per_core: int | None,
) -> tuple[int, int]:
    """(minimum, per_lane); with ``per_core``, input lines are counted once per core (the per-core bound)."""
    info = info or validate(graph)
    env = inputs.sizes
    il = graph.nodes_of_type("IndirectLoad")[0]
    dim = normalize_dim(int(il.attr.ir_attr.dim), len(il.y.size))
    x1 = graph.producer(il, "x1")
    in_shape = eval_shape(info[x1.name].sizes, env)
    idx = used_indices(graph, inputs, info)
    idx_shape = idx.shape
    if il.attr.ir_attr.need_check_negative:
        idx = np.where(idx < 0, idx + in_shape[dim], idx)
    valid = (idx >= 0) & (idx < in_shape[dim])
    cores = None
    if per_core is not None:
        cores = _core_of(idx_shape, tuple(next(iter(outputs.values())).shape), per_core)
    gathered = _gather_chain_data(graph, il)
    total = 0
    per_lane = 0
    for node in graph.nodes():
        if node.op.compute_type != ComputeType.DATA:
            continue
        storage = inputs.storage[node.name]
        itemsize = info[node.name].dtype.itemsize  # bfloat16 storage is held as float32 here
        nbytes = storage.size * itemsize
        shape = eval_shape(info[node.name].sizes, env)
        strides = list(eval_shape(info[node.name].strides, env))
        if node in gathered:
            for axis in _broadcast_axes(graph, node, in_shape):
                strides[axis] = 0
            assert len(shape) == len(in_shape)
            addresses = view(np.arange(storage.size, dtype=np.int64), tuple(in_shape), tuple(strides))
            region = tuple(slice(0, idx_shape[a]) if a != dim else slice(None) for a in range(len(in_shape)))
            picked = np.take_along_axis(addresses[region], np.where(valid, idx, 0), axis=dim)[valid]
            total += _distinct(picked * itemsize // LINE, None if cores is None else cores[valid]) * LINE
            per_lane += int(valid.sum()) * SECTOR
        else:
            per_lane += nbytes
            over = len(shape) == len(idx_shape) and all(a in (1, b) for a, b in zip(shape, idx_shape))
            if cores is None or not over:
                total += nbytes  # index and side inputs are read whole
                continue
            for axis, (a, b) in enumerate(zip(shape, idx_shape)):
                if a == 1 and b != 1:
                    strides[axis] = 0
            # the elements a core's positions use, in bytes, as the minimum counts these inputs
            addresses = view(np.arange(storage.size, dtype=np.int64), tuple(idx_shape), tuple(strides))
            total += _distinct(addresses, cores) * itemsize
    out_bytes = sum(int(np.prod(v.shape)) * info[name].dtype.itemsize for name, v in outputs.items())
    return total + out_bytes, per_lane + out_bytes


def traffic(
    graph: HintGraph,
    inputs: GraphInputs,
    outputs: dict[str, np.ndarray],
    counters: dict[str, int],
    info: GraphInfo | None = None,
    serialized: bool = False,
) -> Traffic:
    minimum, per_lane = minimum_bytes(graph, inputs, outputs, info)
    from af_core.schedule.cost import counted_cost, twin_cores, twin_counters

    time = counted_cost(twin_counters(counters), twin_cores(counters), serialized)
    return Traffic(minimum, per_lane, measured_bytes(counters), time)
