"""Mermaid flowchart text of a HintGraph (IndirectLoad highlighted)."""

from __future__ import annotations

from af_core.ir.graph import HintGraph, Node
from af_core.ir.sizes import to_text

_CLASS = {
    "indirect_load": "indirect",
    "data": "io",
    "output": "io",
    "workspace": "workspace",
}


def _label(node: Node) -> str:
    y = node.y
    parts = [f"<b>{node.name}</b>", node.type]
    if y.dtype is not None:
        shape = ",".join(to_text(s) for s in (y.size or ()))
        parts.append(f"{y.dtype.name}[{shape}]")
    if node.type == "IndirectLoad":
        parts.append(f"dim={node.attr.ir_attr.dim}")
    text = "<br/>".join(parts)
    return text.replace('"', "'")


def to_mermaid(graph: HintGraph, *, title: str | None = None) -> str:
    ids = {node.name: f"n{i}" for i, node in enumerate(graph.nodes())}
    lines = []
    if title:
        lines += ["---", f"title: {title}", "---"]
    lines.append("flowchart TD")
    for node in graph.nodes():
        shape = ('(["', '"])') if node.op.compute_type in ("data", "output") else ('["', '"]')
        lines.append(f"  {ids[node.name]}{shape[0]}{_label(node)}{shape[1]}")
    lines += [f"  {ids[src.name]} -->|{port}| {ids[dst.name]}" for src, dst, port in graph.edges()]
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
