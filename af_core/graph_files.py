"""Reading graph files: JSON is data, only ``.py`` files are code.

A graph file is user data and may be hostile. The kind of file is decided by
its name alone, never by its content: a name ending in ``.json`` (any case)
is parsed as JSON and never evaluated; a name ending in ``.py`` (exactly) is
run as a Python program, on purpose, and may do anything a Python program
can. Every other name is refused, so a stray ``graph.JSON.bak`` or a
directory never reaches the Python runner. Every failure raises a
:class:`GraphFileError` with a one-line message naming the file, or an
``AscirError`` for JSON that parses but breaks a rule: a
:class:`~af_core.errors.GraphFormatError` when it does not fit the format
(docs/graph-format.md: types, required fields, limits, no key twice in one
object, no ``NaN`` or ``Infinity``), naming the node, the field and the rule.
"""

from __future__ import annotations

import runpy
from pathlib import Path

from af_core.errors import AfError, GraphFileError
from af_core.ir.graph import HintGraph

#: Graph files larger than this are refused before being read (a graph of thousands of ops is far smaller).
MAX_GRAPH_FILE_BYTES = 64 << 20
#: JSON nested deeper than this is refused (a graph is at most a few levels deep).
MAX_JSON_DEPTH = 64


def graph_kind(path: Path) -> str:
    """``"json"`` or ``"python"`` from the file name; other names raise :class:`GraphFileError`."""
    if path.name.lower().endswith(".json"):
        return "json"
    if path.name.endswith(".py"):
        return "python"
    raise GraphFileError(
        f"graph file '{path}' must end in .json (a graph) or .py (a Python program defining `graph`)"
    )


def json_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in JSON text, counted without parsing (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _read_text(path: Path) -> str:
    if not path.exists():
        raise GraphFileError(f"graph file '{path}' does not exist")
    if path.is_dir():
        raise GraphFileError(f"graph file '{path}' is a directory")
    if not path.is_file():
        raise GraphFileError(f"graph file '{path}' is not a regular file")
    try:
        size = path.stat().st_size
        if size > MAX_GRAPH_FILE_BYTES:
            raise GraphFileError(
                f"graph file '{path}' has {size} bytes, more than the limit of {MAX_GRAPH_FILE_BYTES}"
            )
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise GraphFileError(f"graph file '{path}' is not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise GraphFileError(f"cannot read graph file '{path}': {exc.strerror or exc}") from None


def load_json_graph(path: Path) -> HintGraph:
    """A graph from a JSON file; nothing in it is evaluated."""
    from af_core.ir.schema import loads
    from af_core.ir.serialize import graph_from_dict
    from af_core.registry import registry_ops

    text = _read_text(path)
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise GraphFileError(f"graph file '{path}' nests {depth} levels deep (at most {MAX_JSON_DEPTH})")
    try:
        data = loads(text)
    except ValueError as exc:  # JSONDecodeError, and int literals too long for int()
        raise GraphFileError(f"graph file '{path}' is not JSON: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise GraphFileError(f"graph file '{path}' nests too deeply") from None
    try:
        return graph_from_dict(data, registry_ops())
    except RecursionError:
        raise GraphFileError(f"graph file '{path}' nests too deeply") from None


def load_python_graph(path: Path) -> HintGraph:
    """Run a Python graph script (code, on purpose) and take its ``graph`` or ``build()``."""
    _read_text(path)  # the same existence, kind and encoding checks as JSON files
    try:
        namespace = runpy.run_path(str(path), run_name="__afc_graph__")
    except SyntaxError as exc:
        raise GraphFileError(f"graph script '{path}' line {exc.lineno}: syntax error: {exc.msg}") from None
    except AfError:
        raise
    except (Exception, SystemExit) as exc:
        raise GraphFileError(f"graph script '{path}' raised {_describe(exc)}") from exc
    if isinstance(namespace.get("graph"), HintGraph):
        return namespace["graph"]
    if callable(namespace.get("build")):
        try:
            graph = namespace["build"]()
        except AfError:
            raise
        except (Exception, SystemExit) as exc:
            raise GraphFileError(f"build() of graph script '{path}' raised {_describe(exc)}") from exc
        if isinstance(graph, HintGraph):
            return graph
    graphs = [v for v in namespace.values() if isinstance(v, HintGraph)]
    if len(graphs) == 1:
        return graphs[0]
    raise GraphFileError(
        f"graph script '{path}' defines no 'graph' variable or 'build()' function returning a HintGraph"
    )


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def load_graph(path: str | Path) -> HintGraph:
    """A graph from a ``.json`` file (data) or a ``.py`` file (a program defining ``graph`` or ``build()``)."""
    path = Path(path)
    if graph_kind(path) == "json":
        return load_json_graph(path)
    return load_python_graph(path)
