"""Graph, node and size names are user data: every name validation accepts gives C++ that builds and
matches the reference on the twin, and no name or size text runs code anywhere."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.dom.minidom
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from af_core.builders import GraphBuilder, index_select
from af_core.errors import AscirError, TilingError
from af_core.ir.mermaid import to_mermaid
from af_core.ir.serialize import to_json
from af_core.ir.sizes import parse
from af_core.naming import printable
from af_core.pictures import graph_dot
from af_core.tiling.solve import solve_scheduled
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin


def select_graph(graph: str, data: str, index: str, out: str, sizes: tuple[str, str, str]):
    """index_select(data, 0, index) + relu, with every name chosen by the caller."""
    g = GraphBuilder(graph)
    x = g.data(data, [sizes[0], sizes[1]], "float32")
    idx = g.data(index, [sizes[2]], "int64")
    g.output(g.op("Relu", index_select(x, 0, idx, need_check_negative=True)), out)
    return g.build()


def check_every_case(graph, sizes: tuple[str, str, str]) -> TwinSession:
    session = TwinSession(graph)
    values = dict(zip(sizes, (37, 5, 11)))
    inputs = session.inputs(values, seed=3, negative_indices=True)
    chosen = session.check(inputs=inputs, core_num=7)
    assert chosen.ok, chosen.describe()
    # the C++ host tiling chose what the Python twin of it chooses, field for field
    assert chosen.twin.struct == solve_scheduled(session.scheduled, inputs.sizes, 7).struct
    ran = set()
    for case in session.scheduled.cases:
        try:
            run = session.check(inputs=inputs, core_num=7, tiling_key=case.tiling_key)
        except TilingError as exc:  # a case whose own constraints drop these sizes (dedup: rows under 4 KiB)
            assert "does not fit" in str(exc), str(exc)
            continue
        assert run.ok, f"{case.label}: {run.describe()}"
        ran.add(case.template)
    assert {"simd", "simt", "sklike"} <= ran, ran
    return session


NAMED = [
    # (graph name, Data name, index Data name, Output name, size names)
    ("main", "x", "idx", "y", ("S", "N", "Q")),
    ("1g", "a-b", "a_b", "x.y", ("beta", "O", "gamma")),
    ("t", "int64_t", "GM_ADDR", "1x", ("E", "I", "pi")),
    ("class", "t", "block_dim", "class", ("t", "block_dim", "tiling_key")),
    ("tiling", "main", "x_gm", "workspace", ("core_num", "ub_size", "class")),
]


@pytest.mark.parametrize("names", NAMED, ids=[n[0] for n in NAMED])
def test_odd_but_legal_names_build_and_match(names):
    graph, data, index, out, sizes = names
    check_every_case(select_graph(graph, data, index, out, sizes), sizes)


def test_graph_and_node_names_cannot_inject_code(tmp_path):
    sentinel = tmp_path / "SENTINEL"
    payload = f'g */ static int x = std::system("touch {sentinel}"); /*\n#error injected\n// \\'
    sizes = ("n0", "n1", "n2")
    graph = select_graph(
        payload, payload + "x", '"); std::system("touch ' + str(sentinel) + '"); //', "y", sizes
    )
    session = check_every_case(graph, sizes)
    assert not sentinel.exists()
    for text in (
        session.result.kernel,
        session.result.tiling,
        session.result.infer_shape,
        session.runner.harness(session.result),
    ):
        code = re.sub(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*', "", text)  # C++ without literals and comments
        assert "std::system" not in code
        assert re.search(r"^\s*#\s*error", text, re.MULTILINE) is None  # no line of its own


def test_size_text_with_code_is_refused_by_the_cli(tmp_path):
    sentinel = tmp_path / "SENTINEL"
    graph = json.loads(to_json(select_graph("g", "x", "idx", "y", ("n0", "n1", "n2"))))
    graph["axes"][0]["size"] = f"n0+(len)((repr)((exec)(\"open({str(sentinel)!r}, 'w')\")))*0"
    path = tmp_path / "g.json"
    path.write_text(json.dumps(graph))
    env = dict(os.environ)
    env.setdefault("AF_TWIN_CACHE", str(Path.home() / ".cache" / "af-twin"))
    proc = subprocess.run(
        [sys.executable, "-m", "af_core", "compile", str(path), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode != 0
    assert "not a size expression" in proc.stderr
    assert not sentinel.exists()


def test_pictures_escape_names():
    payload = 'a"];\nevil [label="x'
    graph = select_graph(payload, payload + "1", "<script>", "y]|z", ("n0", "n1", "n2"))
    dot = graph_dot(graph)
    for line in dot.splitlines():  # one statement per line, every quote pair balanced after escapes
        assert len(re.findall(r'(?<!\\)"', line.replace("\\\\", ""))) % 2 == 0, line
    assert "evil [" not in dot.replace('evil [label=\\"', "")
    mermaid = to_mermaid(graph, title=graph.name)
    front, body = mermaid.split("flowchart TD\n")
    assert front.splitlines()[1] == "title: " + json.dumps(printable(graph.name))  # a quoted YAML string
    assert "<script>" not in body and "evil [" not in body and '"];' not in body
    from af_core.pictures import to_svg

    try:
        svg = to_svg(dot)
    except Exception:  # graphviz not installed: DOT checks above suffice
        return
    xml.dom.minidom.parseString(svg)
    assert "<script>" not in svg


IDENT_CHARS = st.characters(codec="utf-8", categories=["Lu", "Ll", "Lo", "Nd", "Pc"])


def identifier(draw) -> str:
    name = draw(st.text(IDENT_CHARS, min_size=1, max_size=6))
    return name if name.isidentifier() else "_" + name if ("_" + name).isidentifier() else "s"


@st.composite
def name_sets(draw):
    sizes = []
    while len(sizes) < 3:
        name = identifier(draw)
        if name not in sizes:
            sizes.append(name)
    nodes = draw(st.lists(st.text(max_size=8), min_size=3, max_size=3, unique=True))
    return draw(st.text(max_size=12)), nodes, tuple(sizes)


@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(names=name_sets())
def test_random_names_build_and_match(names):
    graph_name, (data, index, out), sizes = names
    try:
        graph = select_graph(graph_name, data, index, out, sizes)
    except AscirError as exc:  # a node name the builder also generates (<data>_load, ...)
        assert exc.rule == "node-unique-name", str(exc)
        reject()
    check_every_case(graph, sizes)


def test_report_markdown_escapes_names():
    from af_core.autofuser import Autofuser
    from af_core.report import report_markdown

    sizes = ("n0", "n1", "n2")
    graph = select_graph("<script>|x`\n# h", "<img>", "a|b", "y", sizes)
    fuser = Autofuser()
    scheduled = fuser.schedule(graph)
    text = report_markdown(scheduled, fuser.generate(scheduled), dict(zip(sizes, (37, 5, 11))))
    assert "<script>" not in text and "<img>" not in text
    assert "\n# h" not in text
    for line in text.splitlines():
        if line.startswith("|"):  # table rows keep their column count (report, counters, candidates)
            assert len(re.findall(r"(?<!\\)\|", line)) in (7, 12, 18), line


@pytest.mark.parametrize("sizes", [("tile", "tiles", "used_cores"), ("rows", "total", "workspace_bytes")])
def test_sizes_named_like_tiling_fields_stay_sizes(sizes):
    check_every_case(select_graph("g", "x", "idx", "y", sizes), sizes)


def test_a_tiling_field_named_like_a_size_symbol_is_refused():
    from af_core.autofuser import Autofuser
    from af_core.schedule.scheduler import _size_clash

    scheduled = Autofuser().schedule(select_graph("g", "x", "idx", "y", ("N", "n1", "n2")))
    case = scheduled.cases[0]
    assert _size_clash(case, scheduled.normalized) is None
    case.tiling.add("N", 1)
    assert "tiling field(s) N have the symbol name of a graph size" in _size_clash(case, scheduled.normalized)


@st.composite
def positive_size_texts(draw, depth: int = 0):
    """Size texts of the grammar that stay positive integers and print as C++ (no division)."""
    kind = draw(st.integers(0, 4 if depth < 2 else 1))
    if kind == 0:
        return str(draw(st.integers(1, 4)))
    if kind == 1:
        return draw(st.sampled_from(["A", "E", "class"]))
    if kind == 2:
        op = draw(st.sampled_from(["+", "*"]))
        return f"({draw(positive_size_texts(depth + 1))}) {op} {draw(positive_size_texts(depth + 1))}"
    fn = draw(st.sampled_from(["Max", "Min"]))
    return f"{fn}({draw(positive_size_texts(depth + 1))}, {draw(positive_size_texts(depth + 1))})"


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(text=positive_size_texts())
def test_random_size_texts_build_and_match(text):
    g = GraphBuilder("sized")
    symbols = {n: g.graph.create_size(n) for n in ("A", "E", "class", "K")}
    rows = parse(text, symbols)
    x = g.data("x", [rows, "E"], "float32")
    idx = g.data("idx", ["K"], "int64")
    g.output(index_select(x, 0, idx), "y")
    session = TwinSession(g.build())
    values = {"A": 3, "E": 5, "class": 2, "K": 7}
    run = session.check(values, seed=1, core_num=4)
    assert run.ok, f"{text}: {run.describe()}"
    assert run.twin.struct == solve_scheduled(session.scheduled, run.inputs.sizes, 4).struct


def test_cli_takes_sizes_by_the_graphs_names(tmp_path):
    path = tmp_path / "g.json"
    path.write_text(to_json(select_graph("my graph", "a-b", "idx", "out", ("batch", "class", "n"))))
    env = dict(os.environ)
    env.setdefault("AF_TWIN_CACHE", str(Path.home() / ".cache" / "af-twin"))
    for command in ("explain", "run"):
        proc = subprocess.run(
            [sys.executable, "-m", "af_core", command, str(path), "--shape", "batch=40,class=3,n=7"],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr
    assert "match" in proc.stdout


# -- what reaches the terminal ----------------------------------------------------------------------------------
#: Characters a terminal acts on or that reorder or break what it shows: C0 and C1 controls (ESC, BEL,
#: BS, CR, CSI), DEL, the bidi embeddings, overrides and isolates, a mark, separators, lone surrogates.
TERMINAL_HOSTILE = (
    "\x1b\x07\x08\r\x0b\x0c\x7f\x9b\x9d"
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200f\u2028\u2029"
    "\ud800\udbff\udc80\udfff"
)
SIZES = ("n0", "n1", "n2")
SHAPE = "n0=37,n1=5,n2=11"


def hostile_graph_file(directory: Path, graph: str, data: str, index: str, out: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "g.json"
    path.write_text(to_json(select_graph(graph, data, index, out, SIZES)), encoding="utf-8")
    return path


def assert_printable(text: str) -> None:
    """Nothing but printable characters and line breaks: no control, bidi or surrogate character raw."""
    raw = sorted({ch for ch in text if not ch.isprintable() and ch != "\n"})
    assert not raw, (raw, text[-2000:])


@st.composite
def hostile_names(draw):
    """Four names, each with at least one terminal-hostile character among ordinary text."""
    chars = st.one_of(st.sampled_from(TERMINAL_HOSTILE), st.characters(codec="utf-8", max_codepoint=0x2FF))
    names = []
    while len(names) < 4:
        name = draw(st.text(chars, min_size=1, max_size=10)) + draw(st.sampled_from(TERMINAL_HOSTILE))
        if name not in names:
            names.append(name)
    return names


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(names=hostile_names())
def test_compile_and_explain_print_no_hostile_character(names, tmp_path_factory, capsys):
    from af_core import cli

    tmp = tmp_path_factory.mktemp("hostile")
    try:
        path = hostile_graph_file(tmp, *names)
    except AscirError as exc:  # a node name the builder also generates (<data>_load, ...)
        assert exc.rule == "node-unique-name", str(exc)
        reject()
    assert cli.main(["compile", str(path), "-o", str(tmp / "out"), "--shape", SHAPE]) == 0
    compiled = capsys.readouterr()
    assert (tmp / "out" / "kernel.cpp").exists() and "compiled '" in compiled.out
    assert cli.main(["explain", str(path), "--shape", SHAPE]) == 0
    explained = capsys.readouterr()
    assert "candidates" in explained.out
    for text in (compiled.out, compiled.err, explained.out, explained.err):
        assert_printable(text)


def test_the_cli_prints_only_through_the_terminal_layer():
    """afc's own output has two doors, say() and the console of _console(): no bare print, no direct
    write to sys.stdout or sys.stderr elsewhere, no second console."""
    import ast

    from af_core import cli

    tree = ast.parse(Path(cli.__file__).read_text(encoding="utf-8"))
    doors = {"say", "write", "flush", "_console"}  # say(), _Stdout's methods, the console's maker
    found: dict[str, set[str]] = {}
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if not isinstance(node, ast.Call):
                continue
            text = ast.unparse(node.func)
            if text in ("print", "Console", "TerminalConsole") or re.fullmatch(
                r"sys\.std(out|err)\.(write|flush|buffer\.write)", text
            ):
                found.setdefault(func.name, set()).add(text)
    assert set(found) <= doors, found
    assert all("print" not in calls for calls in found.values()), found


def test_run_prints_no_hostile_character_and_keeps_its_table(tmp_path):
    """One twin build: every hostile character in every name, the table printed whole."""
    names = [f"{kind}{TERMINAL_HOSTILE}" for kind in ("g", "x", "idx", "y")]
    path = hostile_graph_file(tmp_path, *names)
    env = dict(os.environ)
    env.setdefault("AF_TWIN_CACHE", str(Path.home() / ".cache" / "af-twin"))
    for command in (
        ["compile", str(path), "-o", str(tmp_path / "out")],
        ["run", str(path), "--shape", SHAPE],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "af_core", *command],
            capture_output=True,
            env=env,
            timeout=900,
        )
        out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")  # strict: every byte UTF-8
        assert proc.returncode == 0, err
        assert_printable(out)
        assert_printable(err)
    assert "CPU twin vs reference" in out and "match" in out
    assert "g\\x1b\\x07\\x08\\r" in out  # the graph's name, escaped
