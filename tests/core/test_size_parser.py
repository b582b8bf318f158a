"""Size expression texts are data: the parser builds sympy objects itself and never evaluates text."""

from __future__ import annotations

import builtins
import json

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from af_core.errors import AscirError
from af_core.ir.serialize import from_json, graph_from_dict, to_json
from af_core.ir.sizes import MAX_DEPTH, MAX_LITERAL, MAX_TEXT, parse, size_symbol, to_text
from af_core.registry import registry_ops
from af_core.testing import seed_style_gather

SYMPY_NAMES = ["S", "N", "Q", "E", "I", "pi", "beta", "gamma", "O", "oo", "zoo", "nan", "Max", "floor"]


def table(*names: str) -> dict[str, sympy.Symbol]:
    return {n: size_symbol(n) for n in names}


def _guard(original):
    """``original`` (eval/exec) that fails on source text; code objects (imports) still run."""

    def guarded(source, *args, **kwargs):
        if isinstance(source, (str, bytes)):
            raise AssertionError(f"text reached an evaluator: {source!r}")
        return original(source, *args, **kwargs)

    return guarded


@pytest.fixture
def no_evaluation(monkeypatch):
    """Evaluating any text (eval/exec of a str, sympy's text parser) during the test fails it."""

    def forbidden(*_args, **_kwargs):
        raise AssertionError("size text reached sympy's parser")

    import sympy.parsing.sympy_parser as sympy_parser

    monkeypatch.setattr(sympy_parser, "parse_expr", forbidden)
    monkeypatch.setattr(sympy, "parse_expr", forbidden)
    monkeypatch.setattr(builtins, "eval", _guard(builtins.eval))
    monkeypatch.setattr(builtins, "exec", _guard(builtins.exec))
    yield


def test_grammar_builds_the_expected_expressions(no_evaluation):
    sym = table("N", "M")
    n, m = sym["N"], sym["M"]
    assert parse("N + 2*M - 3", sym) == n + 2 * m - 3
    assert parse("-(N - 2) * 3", sym) == -3 * (n - 2)
    assert parse("N / 2", sym) == n / 2  # '/' is exact division, as before
    assert parse("--N", sym) == n
    assert parse("Max(N, M, 4) + Min(N, 1)", sym) == sympy.Max(n, m, 4) + sympy.Min(n, 1)
    assert parse("Mod(N, 3) + floor(N/2) + ceiling(M/3)", sym) == (
        sympy.Mod(n, 3) + sympy.floor(n / 2) + sympy.ceiling(m / 3)
    )
    assert parse(str(MAX_LITERAL), sym) == MAX_LITERAL


@pytest.mark.parametrize("name", SYMPY_NAMES + ["class", "core_num", "t", "é", "_x", "x1"])
def test_any_identifier_is_a_size_name(name, no_evaluation):
    sym = table(name)
    expr = parse(f"{name} * 2 + 1", sym)
    assert expr == 2 * sym[name] + 1
    assert expr.free_symbols == {sym[name]}


def test_unknown_names_become_size_symbols():
    assert parse("K + 1", {}) == size_symbol("K") + 1


def test_exec_payload_is_rejected_and_never_runs(tmp_path):
    sentinel = tmp_path / "SENTINEL"
    payload = f"N+(len)((repr)((exec)(\"open({str(sentinel)!r}, 'w')\")))*0"
    with pytest.raises(ValueError, match="not a size expression"):
        parse(payload, table("N"))
    graph = json.loads(to_json(seed_style_gather()))
    graph["axes"][0]["size"] = payload
    with pytest.raises(AscirError) as info:
        graph_from_dict(graph, registry_ops())
    assert info.value.rule == "size-expression" and "axis 'z0' field 'size'" in str(info.value)
    assert not sentinel.exists()


def test_power_is_rejected_before_anything_is_computed():
    with pytest.raises(ValueError, match=r"'\*\*' \(power\)"):
        parse("9**9**9", {})


@pytest.mark.parametrize(
    "text, message",
    [
        ("N(1)", "calls 'N'"),
        ("exec(1)", "calls 'exec'"),
        ("a.b", "character '.'"),
        ("x[0]", "character '\\['"),
        ("'a'", "character"),
        ("1e5", "cannot start with a digit"),
        ("0x10", "cannot start with a digit"),
        ("N/0", "division by zero"),
        ("N/(N-N)", "division by zero"),
        ("Mod(N, 0)", "Mod by zero"),
        ("Mod(N)", "Mod takes 2"),
        ("floor(N, 2)", "floor takes 1"),
        ("Max()", "expected a number"),
        ("N +", "ends where"),
        ("(N", "unbalanced"),
        ("N)", "unbalanced"),
        ("N, 1", "unbalanced ','"),
        ("(N, 1)", "outside a function call"),
        ("", "empty"),
        ("   ", "empty"),
        (str(MAX_LITERAL + 1), "exceeds"),
        ("1" * 40, "exceeds"),
        ("N if 1 else 2", "expected an operator"),
        ("lambda: 1", "character ':'"),
    ],
)
def test_bad_texts_get_a_clear_value_error(text, message, no_evaluation):
    with pytest.raises(ValueError, match=message):
        parse(text, table("N"))


def test_depth_and_length_are_bounded_without_recursion_errors():
    deep = "(" * (MAX_DEPTH + 1) + "N" + ")" * (MAX_DEPTH + 1)
    with pytest.raises(ValueError, match="nested deeper"):
        parse(deep, {})
    with pytest.raises(ValueError, match="nested deeper"):
        parse("-" * (MAX_DEPTH + 1) + "N", {})
    with pytest.raises(ValueError, match="longer than"):
        parse("N+" * MAX_TEXT + "N", {})
    assert parse("(" * (MAX_DEPTH - 1) + "N" + ")" * (MAX_DEPTH - 1), table("N")) == size_symbol("N")


def test_non_text_is_rejected():
    with pytest.raises(ValueError):
        parse(5, {})  # type: ignore[arg-type]


def test_json_round_trip_keeps_odd_size_names():
    from af_core.builders import GraphBuilder, index_select

    g = GraphBuilder("odd")
    x = g.data("x", ["class", "E"], "float32")
    idx = g.data("idx", ["core_num"], "int64")
    g.output(index_select(x, 0, idx), "y")
    graph = g.build()
    text = to_json(graph)
    assert "afx" not in text  # symbol names stay inside; the file speaks the graph's names
    again = from_json(text, registry_ops())
    assert to_json(again) == text
    assert [v.name for v in again.sizes()] == ["class", "E", "core_num"]


# -- properties ------------------------------------------------------------------------------------

NAMES = st.sampled_from(["N", "M", "s0", "E", "I", "pi", "class", "core_num", "Max", "é"])


@st.composite
def texts(draw, depth: int = 0):
    """Random texts of the grammar (and so: the expressions parse accepts)."""
    kind = draw(st.integers(0, 6 if depth < 3 else 1))
    if kind == 0:
        return str(draw(st.integers(0, 1000)))
    if kind == 1:
        return draw(NAMES)
    if kind == 2:
        op = draw(st.sampled_from(["+", "-", "*"]))
        return f"{draw(texts(depth + 1))} {op} {draw(texts(depth + 1))}"
    if kind == 3:
        return f"({draw(texts(depth + 1))}) / {draw(st.integers(1, 9))}"
    if kind == 4:
        return f"-({draw(texts(depth + 1))})"
    if kind == 5:
        fn = draw(st.sampled_from(["Max", "Min"]))
        return f"{fn}({draw(texts(depth + 1))}, {draw(texts(depth + 1))})"
    fn = draw(st.sampled_from(["floor", "ceiling", "Mod"]))
    if fn == "Mod":
        return f"Mod({draw(texts(depth + 1))}, {draw(st.integers(1, 9))})"
    return f"{fn}(({draw(texts(depth + 1))}) / {draw(st.integers(1, 9))})"


SYMBOLS = table("N", "M", "s0", "E", "I", "pi", "class", "core_num", "Max", "é")


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(text=texts())
def test_round_trip_parse_of_to_text(text):
    expr = parse(text, SYMBOLS)
    assert parse(to_text(expr), SYMBOLS) == expr


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(
    text=st.lists(
        st.sampled_from(list("NE1 0+-*/(),.[]'\"_xé:;") + ["**", "exec", "Max(", "Mod("]), max_size=30
    ).map("".join)
)
def test_random_texts_parse_or_fail_cleanly_without_evaluating(text):
    original_eval, original_exec = builtins.eval, builtins.exec
    builtins.eval, builtins.exec = _guard(original_eval), _guard(original_exec)
    try:
        try:
            expr = parse(text, SYMBOLS)
        except ValueError:
            return
    finally:
        builtins.eval, builtins.exec = original_eval, original_exec
    assert isinstance(expr, sympy.Expr)
    assert not expr.has(sympy.zoo, sympy.nan, sympy.oo)


IDENT_CHARS = st.characters(codec="utf-8", categories=["Lu", "Ll", "Lo", "Nd", "Pc", "Mn"])


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(
    names=st.lists(
        st.text(IDENT_CHARS, min_size=1, max_size=5).filter(str.isidentifier),
        min_size=3,
        max_size=3,
        unique=True,
    ),
    nodes=st.lists(st.text(max_size=6), min_size=2, max_size=2, unique=True),
)
def test_json_round_trip_of_random_names(names, nodes):
    from af_core.builders import GraphBuilder, index_select
    from af_core.errors import AscirError

    g = GraphBuilder(nodes[0] + nodes[1])
    try:
        x = g.data(nodes[0], [names[0], names[1]], "float32")
        idx = g.data(nodes[1], [names[2]], "int64")
        g.output(index_select(x, 0, idx), "out")
        graph = g.build()
    except AscirError as exc:  # a node name the builder also generates
        assert exc.rule == "node-unique-name"
        return
    text = to_json(graph)
    again = from_json(text, registry_ops())
    assert to_json(again) == text
    assert [v.name for v in again.sizes()] == names
    assert [a.size for a in again.axes()] == [a.size for a in graph.axes()]
