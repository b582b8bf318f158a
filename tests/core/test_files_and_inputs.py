"""Graph files by name, path-safe names, all-or-nothing writes, lossless input casts."""

from __future__ import annotations

import hashlib
import json
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
from af_core.output_dir import (
    MANIFEST,
    MAX_COMPONENT,
    manifest_text,
    read_manifest,
    safe_component,
    write_owned_tree,
    write_tree,
)
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


@pytest.mark.parametrize("source", ["float16", "float32", "float64"])
@pytest.mark.parametrize("target", ["int32", "int64", "uint8"])
def test_float_indices_cast_without_numpy_warnings(source, target):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's RuntimeWarning (overflow in cast) would fail here
        out = lossless_cast("ids", np.array([0, 3, 7], dtype=source), dt.get(target))
    assert out.tolist() == [0, 3, 7]


@pytest.mark.parametrize(
    "value, target",
    [(2.0**63, "int64"), (-(2.0**63) * 2, "int64"), (2.0**31, "int32"), (256.0, "uint8"), (-1.0, "uint8")],
)
def test_a_float_just_outside_an_int_range_is_refused(value, target):
    with pytest.raises(InputArrayError, match="does not fit"):
        lossless_cast("ids", np.array([0.0, value]), dt.get(target))
    low = -(2.0**63) if target == "int64" else -(2.0**31) if target == "int32" else 0.0
    assert lossless_cast("ids", np.array([low]), dt.get(target)).tolist() == [int(low)]


# -- an output directory af owns through its manifest -----------------------------------------------------
def test_an_owned_directory_loses_only_the_files_af_wrote_before_and_not_again(tmp_path):
    out = tmp_path / "out"
    first = write_owned_tree(out, {"kernel.cpp": "k1", "case1_simd.mmd": "simd", "graph.mmd": "g"})
    assert first.written == sorted(["case1_simd.mmd", "graph.mmd", "kernel.cpp", MANIFEST])
    assert first.removed == []
    (out / "notes.txt").write_text("mine")  # the user's
    (out / "mine").mkdir()
    second = write_owned_tree(out, {"kernel.cpp": "k2", "case3_simt.mmd": "simt", "graph.mmd": "g"})
    assert second.removed == ["case1_simd.mmd"]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [MANIFEST, "case3_simt.mmd", "graph.mmd", "kernel.cpp", "mine", "notes.txt"]
    )
    assert (out / "notes.txt").read_text() == "mine" and (out / "kernel.cpp").read_text() == "k2"
    assert set(read_manifest(out)) == {"kernel.cpp", "case3_simt.mmd", "graph.mmd"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no scratch left


def test_a_listed_file_the_user_changed_or_replaced_is_kept(tmp_path):
    out = tmp_path / "out"
    write_owned_tree(out, {"a.mmd": "a", "b.mmd": "b", "c.mmd": "c", "k.cpp": "k"})
    (out / "a.mmd").write_text("edited by hand")
    (out / "b.mmd").unlink()
    (out / "b.mmd").mkdir()
    outside = tmp_path / "outside.mmd"
    outside.write_text("c")  # the content the manifest lists for c.mmd
    (out / "c.mmd").unlink()
    (out / "c.mmd").symlink_to(outside)
    assert write_owned_tree(out, {"k.cpp": "k"}).removed == []
    assert (out / "a.mmd").read_text() == "edited by hand" and (out / "b.mmd").is_dir()
    assert (out / "c.mmd").is_symlink() and outside.read_text() == "c"


def test_manifest_entries_outside_the_directory_are_ignored(tmp_path):
    out = tmp_path / "out"
    write_owned_tree(out, {"k.cpp": "k"})
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (out / "sub").mkdir()
    (out / "sub" / "deep.txt").write_text("precious")
    listed = manifest_text({"k.cpp": "k", "stale.mmd": "s"})
    entries = {
        "../victim.txt": victim,
        str(victim): victim,
        "sub/deep.txt": out / "sub" / "deep.txt",
        MANIFEST: out / MANIFEST,
    }
    data = json.loads(listed)
    for name, path in entries.items():  # each with the right SHA-256: only the name keeps them
        data["files"][name] = hashlib.sha256(path.read_bytes()).hexdigest()
    (out / MANIFEST).write_text(json.dumps(data))
    (out / "stale.mmd").write_text("s")
    assert set(read_manifest(out)) == {"k.cpp", "stale.mmd"}
    assert write_owned_tree(out, {"k.cpp": "k2"}).removed == ["stale.mmd"]
    assert victim.read_text() == "precious" and (out / "sub" / "deep.txt").read_text() == "precious"


def test_a_manifest_that_is_a_link_or_not_a_manifest_removes_nothing(tmp_path):
    out = tmp_path / "out"
    write_owned_tree(out, {"k.cpp": "k"})
    (out / "user.txt").write_text("u")
    crafted = tmp_path / "crafted.json"
    crafted.write_text(manifest_text({"user.txt": "u"}))
    (out / MANIFEST).unlink()
    (out / MANIFEST).symlink_to(crafted)
    assert read_manifest(out) == {}
    assert write_owned_tree(out, {"k.cpp": "k"}).removed == []
    assert (out / "user.txt").read_text() == "u" and crafted.exists()
    assert not (out / MANIFEST).is_symlink() and set(read_manifest(out)) == {"k.cpp"}
    for text in (
        "{",
        "[]",
        '{"format": "other/1", "files": {"user.txt": "00"}}',
        '{"format": "afc-manifest/1"}',
    ):
        (out / MANIFEST).write_text(text)
        assert read_manifest(out) == {} and write_owned_tree(out, {"k.cpp": "k"}).removed == []
    assert (out / "user.txt").read_text() == "u"


def test_a_failed_owned_write_removes_nothing_and_keeps_the_manifest(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_owned_tree(out, {"k.cpp": "old", "case1_simd.mmd": "simd"})
    before = (out / MANIFEST).read_text()

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError, match="No space left"):
        write_owned_tree(out, {"k.cpp": "new"})
    assert (out / "case1_simd.mmd").read_text() == "simd" and (out / MANIFEST).read_text() == before
    with pytest.raises(OutputError, match="af's manifest"):
        write_owned_tree(out, {MANIFEST: "{}"})


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
