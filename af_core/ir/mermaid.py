"""Mermaid flowchart text of a HintGraph (IndirectLoad highlighted).

Names and shapes are user text: labels go through :func:`af_core.naming.mermaid_label`
(markup and quotes as entity codes) and the title is a quoted YAML string.
"""

from __future__ import annotations

import json

from af_core import naming
from af_core.ir.graph import HintGraph, Node
from af_core.ir.sizes import to_text
from af_core.naming import mermaid_label
from af_core.ops.opdef import ComputeType

_CLASS = {
    "indirect_load": "indirect",
    "data": "io",
    "output": "io",
    "workspace": "workspace",
}


def _label(node: Node) -> str:
    y = node.y
    parts = [f"<b>{mermaid_label(node.name)}</b>", mermaid_label(node.type)]
    if y.dtype is not None:
        shape = ",".join(to_text(s) for s in (y.size or ()))
        parts.append(mermaid_label(f"{y.dtype.name}[{shape}]"))
    if node.type == "IndirectLoad":
        parts.append(mermaid_label(f"dim={node.attr.ir_attr.dim}"))
    return "<br/>".join(parts)


def to_mermaid(graph: HintGraph, *, title: str | None = None) -> str:
    ids = {node.name: f"n{i}" for i, node in enumerate(graph.nodes())}
    lines = []
    if title:
        lines += ["---", f"title: {json.dumps(naming.printable(title))}", "---"]
    lines.append("flowchart TD")
    for node in graph.nodes():
        shape = (
            ('(["', '"])') if node.op.compute_type in (ComputeType.DATA, ComputeType.OUTPUT) else ('["', '"]')
        )
        lines.append(f"  {ids[node.name]}{shape[0]}{_label(node)}{shape[1]}")
    lines += [
        f"  {ids[src.name]} -->|{mermaid_label(port)}| {ids[dst.name]}" for src, dst, port in graph.edges()
    ]
    for node in graph.nodes():
        cls = _CLASS.get(node.op.compute_type)
        if cls:
            lines.append(f"  class {ids[node.name]} {cls}")
    lines += [
        "  classDef indirect fill:#f9a825,stroke:#f57f17,color:#000,stroke-width:2px",
        "  classDef io fill:#e3f2fd,stroke:#1e88e5,color:#000",
        "  classDef workspace fill:#ede7f6,stroke:#5e35b1,color:#000,stroke-dasharray:4 2",
    ]
    return "\n".join(lines) + "\n"
