"""The workload corpus: realistic gather / index_select / embedding cases as graphs.

``af_core/data/workloads.json`` (a copy of the shared corpus, shipped as
package data: the benchmarks and the tests read it through this module) lists
workloads taken from published models. Its ``about`` field defines the compact op
syntax this module parses: ``Name``, ``Name(constant)``,
``Name(side:tensor[shape])`` (a second input broadcast to the data) and
``Name(dtype)`` for the op with the cast role. Graphs are static (the corpus gives concrete shapes); the
index distribution travels with the workload to :func:`af_core.inputs.make_inputs`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import attrs

from af_core.builders import GraphBuilder, TensorRef, embedding, expand_index, gather, index_select
from af_core.errors import UsageError
from af_core.index_distribution import parse_distribution
from af_core.ir.graph import HintGraph
from af_core.naming import printable
from af_core.ops.opdef import CAST
from af_core.registry import lookup_op

_OP = re.compile(r"^(?P<name>[A-Za-z0-9]+)(?:\((?P<arg>[^)]*)\))?$")
_SIDE = re.compile(r"^side(?::(?P<name>\w+)\[(?P<shape>[\d,\s]+)\])?$")


#: Where the corpus is inside the af_core package (package data, see pyproject.toml).
CORPUS = "data/workloads.json"


def corpus_text() -> str:
    """The text of the shipped corpus, read from the installed package (wheel or checkout alike)."""
    return resources.files("af_core").joinpath(CORPUS).read_text(encoding="utf-8")


def apply_op(
    g: GraphBuilder,
    text: str,
    tensor: TensorRef,
    *,
    side_name: str | None = None,
    side_shape: Sequence[int | str] | None = None,
) -> TensorRef:
    """Apply one op written in the corpus syntax to ``tensor``.

    ``Name(side)`` / ``Name(side:t[shape])`` adds a Data input (broadcast to the
    tensor's shape with a Broadcast node when its shape differs) as the op's
    second operand; ``Name(number)`` uses the op's tensor-scalar form (its
    ``OpDef.scalar_form``); ``Name(dtype)`` of an op with the cast role casts.
    """
    m = _OP.match(text.strip())
    if not m:
        raise ValueError(f"cannot parse op '{text}'")
    name, arg = m["name"], (m["arg"] or "").strip()
    opdef = lookup_op(name)
    if opdef is not None and CAST in opdef.roles:
        return g.cast(tensor, arg)
    if not arg:
        return g.op(name, tensor)
    side = _SIDE.match(arg)
    if side:
        shape = list(side_shape) if side_shape is not None else list(tensor.shape)
        if side["shape"]:
            shape = [int(v) for v in side["shape"].split(",")]
        operand = g.data(side["name"] or side_name or g._name("side"), shape, tensor.dtype)
        if list(shape) != list(tensor.shape):
            operand = g.broadcast(operand, tensor.shape)
        return g.op(name, tensor, operand)
    scalar = opdef.scalar_form if opdef is not None and opdef.scalar_form else name
    return g.op(scalar, tensor, value=float(arg))


@attrs.frozen
class Workload:
    name: str
    source: str
    op: str
    family: str
    distribution: str
    graph: HintGraph
    raw: dict[str, Any]

    @property
    def input_shape(self) -> list[int]:
        return list(self.raw["input"]["shape"])

    @property
    def index_shape(self) -> list[int]:
        return list(self.raw["index"]["shape"])


def build_graph(case: dict[str, Any]) -> HintGraph:
    g = GraphBuilder(case["name"])
    x = g.data("x" if case["op"] != "embedding" else "weight", case["input"]["shape"], case["input"]["dtype"])
    for text in case.get("pre_input") or []:
        x = apply_op(g, text, x)
    index = g.data("index", case["index"]["shape"], case["index"]["dtype"])
    for text in case.get("pre_index") or []:
        index = apply_op(g, text, index)
    negative = case["index"].get("distribution") == "with_negative"
    if case["op"] == "gather":
        if index.rank < x.rank:
            # a row gather: each index value picks whole rows of the trailing axes
            if case.get("pre_index"):
                raise ValueError(f"workload '{case['name']}': a row gather cannot have index ops")
            index = expand_index(index, x.shape[index.rank :])
        y = gather(x, case["dim"], index, need_check_negative=negative)
    elif case["op"] == "index_select":
        y = index_select(x, case["dim"], index, need_check_negative=negative)
    elif case["op"] == "embedding":
        y = embedding(x, index, need_check_negative=negative)
    else:
        raise ValueError(f"workload '{case['name']}': unknown op '{case['op']}'")
    for text in case.get("post") or []:
        y = apply_op(g, text, y)
    if case.get("reduce"):
        y = g.reduce(case["reduce"]["op"], y, case["reduce"]["axes"])
    g.output(y, "y")
    return g.build()


def _distribution(case: dict[str, Any]) -> str:
    """The case's index distribution, parsed now so that a bad name fails at load, naming the case."""
    text = case["index"].get("distribution", "uniform")
    try:
        parse_distribution(text)
    except UsageError as exc:
        raise UsageError(
            f"workload '{printable(str(case['name']), 60)}': index.distribution: {exc}"
        ) from None
    return str(text)


def load_workloads(path: str | Path | None = None, names: list[str] | None = None) -> list[Workload]:
    """The workloads of the corpus at ``path`` (default: the shipped one), or only those in ``names``."""
    data = json.loads(Path(path).read_text(encoding="utf-8") if path is not None else corpus_text())
    out = []
    for case in data["cases"]:
        if names and case["name"] not in names:
            continue
        out.append(
            Workload(
                case["name"],
                case.get("source", ""),
                case["op"],
                case.get("family", ""),
                _distribution(case),
                build_graph(case),
                case,
            )
        )
    return out
