"""The numpy reference: what a valid HintGraph must compute.

Evaluation follows the topological order; each op's ``reference`` function
computes in a wide type and the interpreter rounds the result to the node's
dtype after every op (float16 natively, bfloat16 via
:mod:`af_core.reference.bfloat16`, integers with wrap-around), which is also
how the generated kernels round. Inputs are logical arrays (shape = the Data
node's sizes); their storage layout (strides) only matters on the twin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from af_core import dtypes as dt
from af_core.errors import AscirError
from af_core.ir.evaluate import eval_shape
from af_core.ir.graph import HintGraph
from af_core.ir.sizes import Expr
from af_core.ir.validate import GraphInfo, validate
from af_core.ops.opdef import ComputeType, RefContext
from af_core.reference.bfloat16 import round_to_bf16


def to_dtype(values: np.ndarray, dtype: dt.DType) -> np.ndarray:
    """Round/convert an array to the interpreter's representation of ``dtype``."""
    values = np.asarray(values)
    if dtype.name == "bfloat16":
        return round_to_bf16(values.astype(np.float32))
    if dtype.is_int and values.dtype.kind == "f":
        # float -> int conversions truncate toward zero, as C++ static_cast does
        with np.errstate(invalid="ignore", over="ignore"):
            return np.trunc(values).astype(np.int64).astype(dtype.np)
    if dtype.is_bool:
        return values.astype(bool)
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(dtype.np)


#: Compute types whose value the reference keeps as its input's array (a view: no memory of its own).
VALUE_PRESERVING = ("load", "store", "output", "workspace", "broadcast")


def evaluate(
    graph: HintGraph,
    inputs: Mapping[str, np.ndarray],
    sizes: Mapping[str, int] | None = None,
    *,
    info: GraphInfo | None = None,
) -> dict[str, np.ndarray]:
    """Outputs of ``graph`` (by Output node name) for the given Data inputs.

    ``inputs`` maps Data node names to logical arrays. ``sizes`` gives the
    value of every dynamic size; sizes that only appear in input shapes are
    deduced from the arrays when omitted.
    """
    info = info or validate(graph)
    values = _run(graph, inputs, sizes, info, list(info.order))
    return {n: values[n] for n in info.order if graph.node(n).op.compute_type == ComputeType.OUTPUT}


def evaluate_nodes(
    graph: HintGraph,
    inputs: Mapping[str, np.ndarray],
    names: Sequence[str],
    sizes: Mapping[str, int] | None = None,
    *,
    info: GraphInfo | None = None,
) -> dict[str, np.ndarray]:
    """The values of the nodes ``names`` (any node, not only outputs), computing only what they depend on.

    For measurements that need an intermediate value, e.g. the index values an
    IndirectLoad really uses after its index chain. Only the Data nodes upstream
    of ``names`` need an array in ``inputs``.
    """
    info = info or validate(graph)
    for name in names:
        if name not in info.nodes:
            raise AscirError("reference-input", "no such node in the graph", node=name)
    needed: set[str] = set()
    stack = list(names)
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        node = graph.node(name)
        stack.extend(graph.producer(node, p).name for p in node.op.inputs)
    values = _run(graph, inputs, sizes, info, [n for n in info.order if n in needed])
    return {name: values[name] for name in names}


def _run(
    graph: HintGraph,
    inputs: Mapping[str, np.ndarray],
    sizes: Mapping[str, int] | None,
    info: GraphInfo,
    order: list[str],
) -> dict[str, np.ndarray]:
    """Evaluate the nodes of ``order`` (topological, closed under producers); their values by name."""
    env = graph.size_env(sizes or {})  # graph names or symbol names -> symbol names
    values: dict[str, np.ndarray] = {}
    data_nodes = [n for n in order if graph.node(n).op.compute_type == ComputeType.DATA]
    for name in data_nodes:
        if name not in inputs:
            raise AscirError("reference-input", "no array given for this Data node", node=name)
        _bind_symbols(info[name].sizes, np.shape(inputs[name]), env)
    for name in order:
        node = graph.node(name)
        ni = info[name]
        if node.op.compute_type == ComputeType.DATA:
            array = np.asarray(inputs[name])
            _check_shape(name, ni.sizes, array.shape, env)
            # inputs may be broadcast views of a small buffer: convert only when the dtype differs
            values[name] = array if array.dtype == ni.dtype.np else to_dtype(array, ni.dtype)
            continue
        shape = eval_shape(ni.sizes, env)
        producers = {p: graph.producer(node, p) for p in node.op.inputs}
        ctx = RefContext(
            node=name,
            inputs={p: values[n.name] for p, n in producers.items()},
            in_dtypes={p: info[n.name].dtype for p, n in producers.items()},
            attrs=node.attr.ir_attr.as_dict(),
            out_dtype=ni.dtype,
            out_shape=shape,
        )
        result = np.asarray(node.op.reference(ctx))
        if result.shape != shape:
            result = np.broadcast_to(result, shape)
        if node.op.compute_type in VALUE_PRESERVING:
            values[name] = result  # same values and dtype: keep views (broadcast inputs stay small)
        else:
            values[name] = to_dtype(result, ni.dtype)
    return values


def _bind_symbols(sizes: Sequence[Expr], shape: tuple[int, ...], env: dict[str, int]) -> None:
    """Take the value of bare size symbols from an input array's shape."""
    import sympy

    for expr, actual in zip(sizes, shape):
        expr = sympy.sympify(expr)
        if expr.is_Symbol and expr.name not in env:
            env[expr.name] = int(actual)


def _check_shape(node: str, sizes: Sequence[Expr], shape: tuple[int, ...], env: dict[str, int]) -> None:
    if len(sizes) != len(shape):
        raise AscirError(
            "reference-input",
            f"array has rank {len(shape)}, the Data node rank {len(sizes)}",
            node=node,
        )
    expected = eval_shape(sizes, env)
    if tuple(expected) != tuple(shape):
        raise AscirError(
            "reference-input",
            f"array shape {tuple(shape)} does not match the Data node's sizes {tuple(expected)}",
            node=node,
        )
