"""Graph files by name, path-safe names, all-or-nothing writes, lossless input casts."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from af_core import dtypes as dt
from af_core import graph_files
from af_core.errors import GraphFileError, InputArrayError, OutputError
from af_core.graph_files import graph_kind, json_depth, load_graph
from af_core.inputs import lossless_cast
from af_core.ir.serialize import to_json
from af_core.output_dir import MAX_COMPONENT, safe_component, write_tree
from af_core.reference.interpreter import to_dtype
from af_core.samples import seed_minimal


@pytest.mark.parametrize(
    "name, kind",
    [("g.json", "json"), ("g.JSON", "json"), ("g.Json", "json"), ("g.py", "python"), ("a.b.py", "python")],
)
def test_graph_kind_from_the_name(tmp_path, name, kind):
    assert graph_kind(tmp_path / name) == kind


@pytest.mark.parametrize("name", ["g.PY", "g.pyc", "g.txt", "g", "g.json.bak", "g.py~"])
def test_other_names_are_refused(tmp_path, name):
    with pytest.raises(GraphFileError, match="must end in .json"):
        graph_kind(tmp_path / name)


def test_json_depth_skips_strings():
    assert json_depth('{"a": [1, [2]]}') == 3
    assert json_depth('{"a": "[[[[\\"[[["}') == 1
    assert json_depth("[]" * 50) == 1


def test_json_graphs_load_and_odd_files_fail_with_one_message(tmp_path, monkeypatch):
    path = tmp_path / "g.JSON"
    path.write_text(to_json(seed_minimal()))
    assert load_graph(path).name == "indirect_load_minimal_graph"
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"name": "\xff"}')
    with pytest.raises(GraphFileError, match="not UTF-8"):
        load_graph(bad)
    bad.write_text('{"format": ' + "1" * 5000 + "}")
    with pytest.raises(GraphFileError, match="not JSON"):
        load_graph(bad)
    monkeypatch.setattr(graph_files, "MAX_GRAPH_FILE_BYTES", 100)
    with pytest.raises(GraphFileError, match="more than the limit"):
        load_graph(path)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=200))
def test_safe_component_is_one_portable_component(text):
    name = safe_component(text)
    assert 0 < len(name) <= MAX_COMPONENT
    assert all(ch.isascii() and (ch.isalnum() or ch in "._-") for ch in name)
    assert not name.startswith(".") and name not in (".", "..")
    if name == text:  # unchanged only when already safe
        assert len(text) <= MAX_COMPONENT


def test_safe_component_keeps_distinct_texts_distinct():
    assert safe_component("a-b") == "a-b"
    assert safe_component("a/b") != safe_component("a\\b") != safe_component("a_b")
    assert safe_component("x" * 300) != safe_component("x" * 301)


def test_write_tree_new_and_existing_directories(tmp_path):
    out = tmp_path / "out"
    write_tree(out, {"a.txt": "one", "b.txt": "two"})
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "b.txt"]
    (out / "mine.txt").write_text("user file")
    write_tree(out, {"a.txt": "three"})
    assert (out / "a.txt").read_text() == "three" and (out / "mine.txt").read_text() == "user file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    with pytest.raises(OutputError, match="unsafe file name"):
        write_tree(out, {"../escape.txt": "x"})
    with pytest.raises(OutputError, match="not a directory"):
        write_tree(out / "a.txt", {"c.txt": "x"})


def test_write_tree_failure_leaves_the_old_files_and_no_scratch(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_tree(out, {"a.txt": "old a", "b.txt": "old b"})
    real_fsync = os.fsync
    calls = []

    def failing_fsync(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(OutputError, match="No space left on device"):
        write_tree(out, {"a.txt": "new a", "b.txt": "new b"})
    assert (out / "a.txt").read_text() == "old a" and (out / "b.txt").read_text() == "old b"
    with pytest.raises(OutputError):
        calls.clear()
        write_tree(tmp_path / "fresh", {"a.txt": "new a", "b.txt": "new b"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize(
    "values, dtype, text",
    [
        (
            np.array([1, (1 << 32) + 1], dtype=np.int64),
            "int32",
            "holds 4294967297 at index (1,), which does not fit",
        ),
        (np.array([[0.0, 1.7]]), "int64", "holds 1.7 at index (0, 1), which is not a whole number"),
        (np.array([np.inf]), "int32", "not a whole number"),
        (np.array([-1], dtype=np.int16), "uint8", "does not fit uint8"),
        (np.array([2], dtype=np.int8), "bool", "is not 0 or 1"),
        (np.array([(1 << 24) + 1]), "float32", "not exactly representable in float32"),
        (np.array([1e6]), "float16", "overflows float16"),
        (np.array(["1"]), "int32", "expected numbers"),
        (np.array([1 + 2j]), "float32", "expected numbers"),
    ],
)
def test_lossy_casts_are_refused(values, dtype, text):
    with pytest.raises(InputArrayError, match=text.replace("(", r"\(").replace(")", r"\)")) as info:
        lossless_cast("arr", values, dt.get(dtype))
    assert "'arr'" in str(info.value)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    st.sampled_from(["int8", "int32", "uint8", "float16", "bfloat16", "bool"]),
    st.lists(st.integers(-3000, 3000), min_size=1, max_size=20),
)
def test_a_cast_is_refused_exactly_when_it_would_change_a_value(name, ints):
    dtype = dt.get(name)
    source = np.array(ints, dtype=np.int64)
    if dtype.is_bool:
        source = np.abs(source) % 2
    with np.errstate(over="ignore", invalid="ignore"):
        changes = bool((np.asarray(to_dtype(source, dtype), dtype=np.float64) != source).any())
    try:
        cast = lossless_cast("arr", source, dtype)
    except InputArrayError:
        assert changes
        return
    assert not changes
    np.testing.assert_array_equal(cast, to_dtype(source, dtype))
