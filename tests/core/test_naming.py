"""The naming layer: C++ identifiers from any name, inert text in comments, literals and pictures."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from af_core import naming
from af_core.naming import RESERVED, c_string, comment, demangle, dot_label, ident, kernel_symbol, markdown

CPP_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
SETTINGS = settings(
    max_examples=400, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


def check_identifier(cid: str) -> None:
    assert CPP_IDENT.match(cid), cid
    assert "__" not in cid and not cid.endswith("_")
    assert cid not in RESERVED


@pytest.mark.parametrize("name", ["s0", "x1", "gather", "index_load", "N", "E", "pi", "beta"])
def test_ordinary_names_stay_readable(name):
    assert ident(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "a-b",
        "x.y",
        "1x",
        "1g",
        "int64_t",
        "GM_ADDR",
        "main",
        "t",
        "block_dim",
        "tiling_key",
        "core_num",
        "ub_size",
        "class",
        "sizes",
        "pipe",
        "blockIdx",
        "workspace",
        "tiling",
        "__x",
        "_Upper",
        "x_gm",
        "c3_rows",
        "AfMin",
        "after",
        "EOF",
        "NDEBUG",
        "",
        "é",
        "x_1",
        "f_k3",
    ],
)
def test_odd_names_are_escaped_to_safe_identifiers(name):
    cid = ident(name)
    assert cid != name
    check_identifier(cid)
    assert demangle(cid) == name


def test_names_that_used_to_collide_stay_distinct():
    assert ident("a-b") != ident("a_b")
    assert len({ident(n) for n in ["a-b", "a_b", "a.b", "a b", "a__b", "afxa_2dxb"]}) == 6


def test_generated_suffixes_never_meet_an_identifier():
    # kernel.py appends _gm, _buf, _<n>; no ident ends like that, so ident(a) + "_gm" != ident(b)
    for name in ["x_gm", "x_buf", "x_1", "x_start", "x_actual", "q_k0"]:
        assert not re.search(r"_(gm|buf|start|actual|[0-9]+|k[0-9]+)\Z", ident(name))


@SETTINGS
@given(name=st.text(max_size=12))
def test_ident_is_a_safe_injective_identifier(name):
    cid = ident(name)
    check_identifier(cid)
    assert demangle(cid) == name


@SETTINGS
@given(a=st.text(max_size=6), b=st.text(max_size=6))
def test_distinct_names_get_distinct_identifiers(a, b):
    if a != b:
        assert ident(a) != ident(b)


@SETTINGS
@given(name=st.text(max_size=300))
def test_kernel_symbol_is_safe_and_bounded(name):
    symbol = kernel_symbol(name)
    assert symbol.startswith("autofuse_")
    check_identifier(symbol)
    assert len(symbol) <= naming.MAX_KERNEL_SYMBOL


@SETTINGS
@given(text=st.text(max_size=80))
def test_comment_text_cannot_end_or_extend_a_comment(text):
    out = comment(text)
    assert out.isascii() and out.isprintable()
    assert "*/" not in out and "/*" not in out and "??" not in out and "\\" not in out
    assert "\n" not in out and "\r" not in out


def _decode_c_string(literal: str) -> bytes:
    assert literal[0] == literal[-1] == '"'
    body = literal[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        if body[i] == "\\":
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
        else:
            assert body[i] not in '"?'
            out.append(ord(body[i]))
            i += 1
    return bytes(out)


@SETTINGS
@given(text=st.text(max_size=40))
def test_c_string_holds_exactly_the_text(text):
    literal = c_string(text)
    assert literal.isascii() and literal.isprintable()
    assert _decode_c_string(literal) == text.encode("utf-8", "surrogatepass")


@SETTINGS
@given(text=st.text(max_size=40))
def test_dot_and_markdown_text_is_inert(text):
    label = dot_label(text)
    assert label.isascii() and "\n" not in label
    assert re.search(r'(?<!\\)(\\\\)*"', label) is None  # every quote is escaped
    md = markdown(text)
    assert md.isascii() and "\n" not in md
    assert re.search(r"(?<!\\)[<>`|\[\]]", md) is None


@SETTINGS
@given(st.text(st.one_of(st.characters(), st.characters(categories=["Cs"]))))
def test_terminal_text_holds_nothing_a_terminal_acts_on(text):
    shown = naming.terminal(text)
    assert shown.isprintable()
    shown.encode("utf-8")  # no lone surrogate
    kept = naming.terminal(text, lines=True)
    assert all(ch.isprintable() or ch in "\n\t" for ch in kept)
    assert kept.count("\n") == text.count("\n")
    if text.isprintable():
        assert shown == kept == text


@pytest.mark.parametrize(
    "text, shown",
    [
        ("a\x1b[2Jb", "a\\x1b[2Jb"),
        ("\u202eevil\u2069", "\\u202eevil\\u2069"),
        ("lone \ud800", "lone \\ud800"),
        ("\x9b31m\r\x07", "\\x9b31m\\r\\x07"),
        ("two\nlines", "two\\nlines"),
        ("donn\u00e9es \u56fe", "donn\u00e9es \u56fe"),
    ],
)
def test_terminal_escapes_as_python_writes_them(text, shown):
    assert naming.terminal(text) == shown
