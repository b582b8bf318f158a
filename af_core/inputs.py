"""Kernel inputs: global-memory storage and the logical views the graph sees.

A Data node describes a *view* of a global buffer (sizes + strides, where a
stride of 0 broadcasts). The twin needs the buffer itself (``storage``), the
reference needs the view (``logical``). Inputs are generated storage-first,
so broadcast and non-contiguous views are consistent by construction; user
arrays are checked for consistency when packed into storage.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

from af_core import dtypes as dt
from af_core.errors import AscirError, InputArrayError, UsageError
from af_core.index_distribution import DistributionKind, IndexDistribution, parse_distribution
from af_core.ir import sizes as ir_sizes
from af_core.ir.evaluate import eval_shape
from af_core.ir.graph import HintGraph, Node
from af_core.ir.validate import GraphInfo, validate
from af_core.ops.core_ops import normalize_dim
from af_core.ops.opdef import ComputeType
from af_core.reference.interpreter import to_dtype


@attrs.define
class GraphInputs:
    """Storage (what global memory holds) and logical views, per Data node name."""

    storage: dict[str, np.ndarray]
    logical: dict[str, np.ndarray]
    sizes: dict[str, int]


def storage_elements(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    """Elements a strided view spans (:func:`af_core.ir.sizes.storage_elements`); an empty view spans none."""
    if any(n == 0 for n in shape):
        return 0
    return int(ir_sizes.storage_elements(shape, strides))


def view(storage: np.ndarray, shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """The logical array a Data node sees in ``storage`` (read-only view)."""
    item = storage.itemsize
    return np.lib.stride_tricks.as_strided(
        storage, shape=shape, strides=tuple(s * item for s in strides), writeable=False
    )


def index_inputs(graph: HintGraph) -> dict[str, tuple[Node, int]]:
    """Data nodes that feed an IndirectLoad index port -> (IndirectLoad, dim).

    The walk goes upstream from port x2 through Load and elementwise ops, so
    an index pre-chain still marks its Data input as an index.
    """
    found: dict[str, tuple[Node, int]] = {}
    for il in graph.nodes_of_type("IndirectLoad"):
        stack = [graph.producer(il, "x2")]
        while stack:
            node = stack.pop()
            if node.op.compute_type == ComputeType.DATA:
                found.setdefault(node.name, (il, il.attr.ir_attr.dim))
                continue
            stack.extend(graph.producer(node, p) for p in node.op.inputs)
    return found


def _data_facts(
    graph: HintGraph, info: GraphInfo, node: Node, env: Mapping[str, int]
) -> tuple[dt.DType, tuple[int, ...], tuple[int, ...]]:
    ni = info[node.name]
    return ni.dtype, eval_shape(ni.sizes, env), eval_shape(ni.strides, env)


@attrs.frozen
class InputDraw:
    """The options of :func:`make_inputs` besides the seed, as one value a session can compare with
    the defaults (a run on given inputs draws nothing, so options given with them are an error)."""

    negative_indices: bool = False
    out_of_range: float = 0.0
    positive: bool = False
    distribution: str | IndexDistribution = "uniform"

    def changed(self) -> list[str]:
        """The names of the options that differ from their defaults, in declaration order."""
        default = InputDraw()
        return [
            f.name
            for f in attrs.fields(InputDraw)
            if getattr(self, f.name) != getattr(default, f.name)
            and not (f.name == "distribution" and parse_distribution(self.distribution) == _UNIFORM)
        ]

    def make(
        self, graph: HintGraph, sizes: Mapping[str, int], seed: int, info: GraphInfo | None
    ) -> GraphInputs:
        return make_inputs(
            graph,
            sizes,
            seed=seed,
            negative_indices=self.negative_indices,
            out_of_range=self.out_of_range,
            positive=self.positive,
            distribution=self.distribution,
            info=info,
        )


_UNIFORM = IndexDistribution()


def make_inputs(
    graph: HintGraph,
    sizes: Mapping[str, int],
    *,
    seed: int = 0,
    negative_indices: bool = False,
    out_of_range: float = 0.0,
    positive: bool = False,
    distribution: str | IndexDistribution = "uniform",
    info: GraphInfo | None = None,
) -> GraphInputs:
    """Random inputs for every Data node.

    Index inputs draw from ``[0, input.size(dim))`` (``[-size, size)`` with
    ``negative_indices``), a fraction ``out_of_range`` (0 .. 1) of them outside any
    valid range; ``distribution`` is one of the workload corpus names
    (:mod:`af_core.index_distribution`; another name is a ``UsageError``).
    Float data is normal (or positive with ``positive``).
    """
    parsed = parse_distribution(distribution)
    if not 0.0 <= out_of_range <= 1.0:
        raise UsageError(
            f"out_of_range is the fraction of index values to spoil, 0 .. 1, not {out_of_range!r}"
        )
    info = info or validate(graph)
    rng = np.random.default_rng(seed)
    env = graph.size_env(sizes)
    indices = index_inputs(graph)
    storage: dict[str, np.ndarray] = {}
    logical: dict[str, np.ndarray] = {}
    for node in graph.nodes():
        if node.op.compute_type != ComputeType.DATA:
            continue
        dtype, shape, strides = _data_facts(graph, info, node, env)
        count = storage_elements(shape, strides)
        if node.name in indices:
            il, dim = indices[node.name]
            src = graph.producer(il, "x1")
            in_shape = eval_shape(info[src.name].sizes, env)
            extent = in_shape[normalize_dim(dim, len(in_shape))]
            values = _index_values(rng, count, extent, shape, dtype, parsed, negative_indices, out_of_range)
        else:
            values = _data_values(rng, count, dtype, positive)
        values = to_dtype(values, dtype)
        storage[node.name] = values
        logical[node.name] = view(values, shape, strides)
    return GraphInputs(storage, logical, env)


def _data_values(rng: np.random.Generator, count: int, dtype: dt.DType, positive: bool) -> np.ndarray:
    if dtype.is_float:
        values = rng.standard_normal(count).astype(np.float32)
        return np.abs(values) + np.float32(0.25) if positive else values
    if dtype.is_bool:
        return rng.integers(0, 2, count).astype(bool)
    if dtype.kind == "u":
        return rng.integers(0, 100, count)
    low = 1 if positive else -50
    return rng.integers(low, 50, count)


def _index_values(
    rng: np.random.Generator,
    count: int,
    extent: int,
    shape: tuple[int, ...],
    dtype: dt.DType,
    distribution: IndexDistribution,
    negative: bool,
    out_of_range: float,
) -> np.ndarray:
    if count == 0:  # no index to draw (the input axis may be empty too)
        return np.zeros(0, dtype=np.int64)
    values = _DRAW[distribution.kind](rng, count, extent, shape, distribution)
    values = values.astype(np.int64)
    if negative:
        flip = rng.random(count) < 0.5
        values = np.where(flip, values - extent, values)
    if out_of_range > 0:
        bad = rng.random(count) < out_of_range
        wild = np.where(
            rng.random(count) < 0.5,
            extent + rng.integers(0, 7, count),
            -extent - 1 - rng.integers(0, 7, count),
        )
        values = np.where(bad, wild, values)
    return values


def _zipf(
    rng: np.random.Generator, count: int, extent: int, shape: tuple[int, ...], d: IndexDistribution
) -> np.ndarray:
    ranks = rng.zipf(d.alpha, count) - 1
    perm = rng.permutation(extent)
    return perm[np.minimum(ranks, extent - 1)]


def _unique(
    rng: np.random.Generator, count: int, extent: int, shape: tuple[int, ...], d: IndexDistribution
) -> np.ndarray:
    return rng.permutation(max(extent, count))[:count] % extent


def _unique_per_row(
    rng: np.random.Generator, count: int, extent: int, shape: tuple[int, ...], d: IndexDistribution
) -> np.ndarray:
    row = shape[-1] if shape else 1
    rows = -(-count // row)
    values = np.concatenate([rng.permutation(extent)[: min(row, extent)] for _ in range(rows)])
    if len(values) < count:
        values = np.resize(values, count)
    return values[:count] % extent


def _repeat(
    rng: np.random.Generator, count: int, extent: int, shape: tuple[int, ...], d: IndexDistribution
) -> np.ndarray:
    base = rng.integers(0, extent, -(-count // d.repeat))
    return np.repeat(base, d.repeat)[:count]


def _duplicates(
    rng: np.random.Generator, count: int, extent: int, shape: tuple[int, ...], d: IndexDistribution
) -> np.ndarray:
    pool = rng.integers(0, extent, max(1, count // 4))
    return pool[rng.integers(0, len(pool), count)]


def _with_negative(
    rng: np.random.Generator, count: int, extent: int, shape: tuple[int, ...], d: IndexDistribution
) -> np.ndarray:
    return rng.integers(-extent, extent, count)


def _uniform(
    rng: np.random.Generator, count: int, extent: int, shape: tuple[int, ...], d: IndexDistribution
) -> np.ndarray:
    return rng.integers(0, extent, count)


#: one drawing function per kind (a kind without a row is a KeyError the table test catches)
_DRAW = {
    DistributionKind.UNIFORM: _uniform,
    DistributionKind.ZIPF: _zipf,
    DistributionKind.UNIQUE: _unique,
    DistributionKind.UNIQUE_PER_ROW: _unique_per_row,
    DistributionKind.REPEAT: _repeat,
    DistributionKind.DUPLICATES: _duplicates,
    DistributionKind.WITH_NEGATIVE: _with_negative,
}


def input_sizes(
    graph: HintGraph,
    arrays: Mapping[str, np.ndarray],
    sizes: Mapping[str, int] | None = None,
    *,
    info: GraphInfo | None = None,
) -> dict[str, int]:
    """``sizes`` (keyed by symbol name), with every size an axis of a Data node is alone deduced from
    the shape of its array in ``arrays`` (a given size wins)."""
    info = info or validate(graph)
    env = graph.size_env(sizes or {})
    import sympy

    for node in graph.nodes():
        if node.op.compute_type == ComputeType.DATA and node.name in arrays:
            for expr, n in zip(info[node.name].sizes, np.shape(arrays[node.name])):
                expr = sympy.sympify(expr)
                if expr.is_Symbol:
                    env.setdefault(expr.name, int(n))
    return env


def pack_inputs(
    graph: HintGraph,
    arrays: Mapping[str, np.ndarray],
    sizes: Mapping[str, int] | None = None,
    *,
    info: GraphInfo | None = None,
) -> GraphInputs:
    """Storage for user-given logical arrays (checked against stride-0 broadcasts)."""
    info = info or validate(graph)
    env = input_sizes(graph, arrays, sizes, info=info)
    storage: dict[str, np.ndarray] = {}
    logical: dict[str, np.ndarray] = {}
    for node in graph.nodes():
        if node.op.compute_type != ComputeType.DATA:
            continue
        if node.name not in arrays:
            raise AscirError("input-missing", "no array given for this Data node", node=node.name)
        dtype, shape, strides = _data_facts(graph, info, node, env)
        array = lossless_cast(node.name, np.asarray(arrays[node.name]), dtype)
        if array.shape != shape:
            raise AscirError(
                "input-shape",
                f"array shape {array.shape} does not match the Data node's sizes {shape}",
                node=node.name,
            )
        buf = np.zeros(storage_elements(shape, strides), dtype=array.dtype)
        target = np.lib.stride_tricks.as_strided(
            buf, shape=shape, strides=tuple(s * buf.itemsize for s in strides)
        )
        target[...] = array
        if not np.array_equal(view(buf, shape, strides), array, equal_nan=dtype.is_float):
            raise AscirError(
                "input-broadcast",
                "array differs along an axis the Data node broadcasts (stride 0) or aliases",
                node=node.name,
            )
        storage[node.name] = buf
        logical[node.name] = view(buf, shape, strides)
    return GraphInputs(storage, logical, env)


def _first_where(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(mask)[0])


def _refuse(name: str, array: np.ndarray, mask: np.ndarray, dtype: dt.DType, why: str) -> InputArrayError:
    at = _first_where(mask)
    value = (array[at] if at else array[()]).item()
    return InputArrayError(
        f"input array '{name}' ({array.dtype}) holds {value!r} at index {at}, which {why} "
        f"{dtype.name}; convert it yourself if that is intended"
    )


def lossless_cast(name: str, array: np.ndarray, dtype: dt.DType) -> np.ndarray:
    """``array`` in the representation of ``dtype``, refusing any conversion that changes a value.

    Integers must fit the target's range, floats given for an integer or
    bool input must be whole (and 0/1 for bool), integers given for a float
    input must be exactly representable, and no finite float may overflow to
    infinity. Rounding a float to a narrower float is the one change
    allowed: it is what storing the value in that type means.
    """
    kind = array.dtype.kind
    if kind not in "biuf":
        raise InputArrayError(
            f"input array '{name}' has dtype {array.dtype}; expected numbers for {dtype.name}"
        )
    converted = to_dtype(array, dtype)
    if array.size == 0 or kind == "b":
        return converted
    if dtype.is_bool:
        bad = (array != 0) & (array != 1)
        if bad.any():
            raise _refuse(name, array, bad, dtype, "is not 0 or 1 for")
        return converted
    if dtype.is_int:
        info = np.iinfo(dtype.np)
        if kind == "f":
            with np.errstate(invalid="ignore"):
                bad = ~np.isfinite(array) | (array != np.trunc(array))
            if bad.any():
                raise _refuse(name, array, bad, dtype, "is not a whole number for")
        if kind in "iu":
            wide = array.astype(object)  # exact for any integer
            bad = np.asarray((wide < info.min) | (wide > info.max), dtype=bool)
        else:
            # in float64, against bounds it holds exactly (-2^(n-1) or 0, and 2^n or 2^(n-1)): the
            # limits in the array's own type would round (2^63 - 1 becomes 2^63) or overflow float16
            wide = array.astype(np.float64)
            bad = (wide < float(info.min)) | (wide >= float(info.max + 1))
        if bad.any():
            raise _refuse(name, array, bad, dtype, "does not fit")
        return converted
    back = np.asarray(converted, dtype=np.float64)
    if kind in "iu":
        bad = np.asarray(back.astype(object) != array.astype(object), dtype=bool) | ~np.isfinite(back)
        if bad.any():
            raise _refuse(name, array, bad, dtype, "is not exactly representable in")
        return converted
    with np.errstate(invalid="ignore"):
        bad = np.isfinite(array) & ~np.isfinite(back)
    if bad.any():
        raise _refuse(name, array, bad, dtype, "overflows")
    return converted
