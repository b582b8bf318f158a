"""Pictures of graphs and cases: Mermaid (always), DOT, and SVG through graphviz.

A case picture is its rewritten graph with each stage drawn as a box around
the nodes it runs, GM workspaces as dashed nodes between the stages that
write and read them, and IndirectLoad highlighted. Every name in a picture is
user text and goes through :mod:`af_core.naming` (DOT / Mermaid escaping); SVG
comes from graphviz, which escapes the DOT labels itself.
"""

from __future__ import annotations

import json
import shutil
import subprocess

from af_core.errors import AfError
from af_core.ir.graph import HintGraph, Node
from af_core.ir.mermaid import to_mermaid
from af_core.ir.sizes import to_text
from af_core.naming import dot_label, mermaid_label, printable
from af_core.ops.opdef import ComputeType
from af_core.schedule.case import Case
from af_core.schedule.impl_graph import Storage

__all__ = ["case_dot", "case_mermaid", "graph_dot", "to_mermaid", "to_svg"]


def _parts(node: Node) -> list[str]:
    """The lines of a node's label, as raw (unescaped) text."""
    shape = ",".join(to_text(s) for s in (node.y.size or ()))
    dtype = node.y.dtype.name if node.y.dtype is not None else "?"
    extra = f" dim={node.attr.ir_attr.dim}" if node.type == "IndirectLoad" else ""
    return [node.name, f"{node.type}{extra}", f"{dtype}[{shape}]"]


def _label(node: Node) -> str:
    """A DOT label body (names escaped; lines joined with DOT's ``\\n``)."""
    return "\\n".join(dot_label(p) for p in _parts(node))


def _mlabel(node: Node) -> str:
    """A Mermaid label body (names escaped; lines joined with ``<br/>``)."""
    return "<br/>".join(mermaid_label(p) for p in _parts(node))


def _stage_members(case: Case) -> dict[str, str]:
    """Graph node -> stage name, from the ImplGraph's nodes."""
    members: dict[str, str] = {}
    for stage in case.impl.stages:
        for impl_node in stage.nodes:
            if case.graph.has_node(impl_node.name):
                members.setdefault(impl_node.name, stage.name)
    return members


def _workspace_edges(case: Case) -> list[tuple[str, str, str]]:
    """(workspace, writer node, reader node) for every workspace tensor of the case."""
    edges = []
    for name, tensor in sorted(case.impl.tensors.items()):
        if tensor.location != Storage.WORKSPACE:
            continue
        writers = [n.name for s in case.impl.stages for n in s.nodes if name in n.outputs]
        readers = [n.name for s in case.impl.stages for n in s.nodes if name in n.inputs]
        for w in writers:
            for r in readers:
                edges.append((name, w, r))
    return edges


def case_mermaid(case: Case) -> str:
    graph = case.graph
    ids = {node.name: f"n{i}" for i, node in enumerate(graph.nodes())}
    members = _stage_members(case)
    title = json.dumps(printable(f"{case.label} (tiling key {case.tiling_key})"))
    lines = ["---", f"title: {title}", "---", "flowchart TD"]
    for i, stage in enumerate(case.impl.stages):
        inside = [n for n in graph.nodes() if members.get(n.name) == stage.name]
        label = mermaid_label(f"stage {stage.name} ({stage.used_cores})")
        lines.append(f'  subgraph stage{i}["{label}"]')
        lines += [f'    {ids[n.name]}["{_mlabel(n)}"]' for n in inside]
        lines.append("  end")
    for node in graph.nodes():
        if node.name not in members:
            lines.append(f'  {ids[node.name]}(["{_mlabel(node)}"])')
    lines += [
        f"  {ids[src.name]} -->|{mermaid_label(port)}| {ids[dst.name]}" for src, dst, port in graph.edges()
    ]
    for i, (ws, writer, reader) in enumerate(_workspace_edges(case)):
        wid = f"ws{i}"
        lines.append(f'  {wid}[("{mermaid_label(ws)} (GM workspace)")]')
        if writer in ids and reader in ids:
            lines.append(f"  {ids[writer]} -.-> {wid} -.-> {ids[reader]}")
        lines.append(f"  class {wid} workspace")
    for node in graph.nodes_of_type("IndirectLoad"):
        lines.append(f"  class {ids[node.name]} indirect")
    lines += [
        "  classDef indirect fill:#f9a825,stroke:#f57f17,color:#000,stroke-width:2px",
        "  classDef workspace fill:#ede7f6,stroke:#5e35b1,color:#000,stroke-dasharray:4 2",
    ]
    return "\n".join(lines) + "\n"


def _dot_node(node: Node, ident: str) -> str:
    style = ""
    if node.type == "IndirectLoad":
        style = ', style=filled, fillcolor="#f9a825", penwidth=2'
    elif node.op.compute_type in (ComputeType.DATA, ComputeType.OUTPUT):
        style = ', shape=oval, style=filled, fillcolor="#e3f2fd"'
    return f'  {ident} [label="{_label(node)}", shape=box{style}];'


def graph_dot(graph: HintGraph) -> str:
    ids = {node.name: f"n{i}" for i, node in enumerate(graph.nodes())}
    lines = [
        f'digraph "{dot_label(graph.name)}" {{',
        "  rankdir=TB;",
        "  node [fontname=Helvetica, fontsize=10];",
    ]
    lines += [_dot_node(n, ids[n.name]) for n in graph.nodes()]
    lines += [
        f'  {ids[src.name]} -> {ids[dst.name]} [label="{dot_label(port)}"];'
        for src, dst, port in graph.edges()
    ]
    lines.append("}")
    return "\n".join(lines) + "\n"


def case_dot(case: Case) -> str:
    graph = case.graph
    ids = {node.name: f"n{i}" for i, node in enumerate(graph.nodes())}
    members = _stage_members(case)
    label = dot_label(case.label)
    lines = [
        f'digraph "{label}" {{',
        "  rankdir=TB;",
        "  node [fontname=Helvetica, fontsize=10];",
        f'  label="{label} (tiling key {case.tiling_key})";',
    ]
    for i, stage in enumerate(case.impl.stages):
        lines.append(f"  subgraph cluster_{i} {{")
        lines.append(f'    label="stage {dot_label(stage.name)}"; style=rounded;')
        lines += [
            "  " + _dot_node(n, ids[n.name]) for n in graph.nodes() if members.get(n.name) == stage.name
        ]
        lines.append("  }")
    lines += [_dot_node(n, ids[n.name]) for n in graph.nodes() if n.name not in members]
    lines += [
        f'  {ids[src.name]} -> {ids[dst.name]} [label="{dot_label(port)}"];'
        for src, dst, port in graph.edges()
    ]
    for i, (ws, writer, reader) in enumerate(_workspace_edges(case)):
        lines.append(f'  ws{i} [label="{dot_label(ws)}\\nGM workspace", shape=cylinder, style=dashed];')
        if writer in ids and reader in ids:
            lines.append(f"  {ids[writer]} -> ws{i} [style=dashed]; ws{i} -> {ids[reader]} [style=dashed];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_svg(dot_text: str) -> str:
    """Render DOT with graphviz's ``dot``; a clear error when graphviz is missing."""
    exe = shutil.which("dot")
    if exe is None:
        raise AfError("graphviz 'dot' is not installed; use --format mermaid or --format dot")
    proc = subprocess.run([exe, "-Tsvg"], input=dot_text, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AfError(
            f"graphviz failed: {proc.stderr.strip().splitlines()[0] if proc.stderr else proc.returncode}"
        )
    return proc.stdout
