"""Locating the official headers: a tree, a CANN install, a tarball or a directory holding one."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from af_core.ascendc.source import AscendcSourceError, find_source


@pytest.fixture(scope="module")
def tarball(ascendc_source) -> Path:
    given = Path(os.environ["AF_ASCENDC_SRC"])
    found = [given] if given.is_file() else sorted(given.glob("asc-devkit-*.tar.*"))
    if not found:
        pytest.skip("AF_ASCENDC_SRC names a tree, not a tarball: the unpacking tests need one")
    return found[0]


@pytest.fixture(scope="module")
def unpacked(tarball, tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    return find_source(tarball.parent, cache_dir=cache), cache


def test_directory_with_tarball_unpacks_once_into_the_cache(tarball, unpacked):
    source, cache = unpacked
    assert source.root.is_relative_to(cache)
    assert (source.root / "include" / "kernel_operator.h").is_file()
    assert (source.simt_stubs / "simt_stub.h").is_file()
    mtime = source.root.stat().st_mtime_ns
    again = find_source(tarball, cache_dir=cache)  # the tarball itself, same content hash
    assert again.root == source.root and again.identity == source.identity
    assert source.root.stat().st_mtime_ns == mtime
    assert [p.name for p in cache.iterdir() if p.name.startswith(".")] == []  # no temporaries left


def test_source_directory_is_not_written(tarball, tmp_path):
    def listing():
        return {p.name: p.stat().st_mtime_ns for p in tarball.parent.iterdir()}

    before = listing()
    find_source(tarball.parent, cache_dir=tmp_path)
    assert listing() == before


def test_extracted_tree_and_cann_layout(unpacked, tmp_path):
    source, cache = unpacked
    tree = find_source(source.root, cache_dir=cache)
    assert tree.root == source.root
    cann = tmp_path / "cann"
    cann.mkdir()
    (cann / "asc").symlink_to(source.root, target_is_directory=True)
    assert find_source(cann, cache_dir=cache).root == cann / "asc"


def test_errors_name_what_was_looked_at(tmp_path, monkeypatch):
    monkeypatch.delenv("AF_ASCENDC_SRC", raising=False)
    with pytest.raises(AscendcSourceError, match="AF_ASCENDC_SRC"):
        find_source(cache_dir=tmp_path)
    with pytest.raises(AscendcSourceError, match="does not exist"):
        find_source(tmp_path / "missing", cache_dir=tmp_path)
    with pytest.raises(AscendcSourceError, match="no include/kernel_operator.h"):
        find_source(tmp_path, cache_dir=tmp_path)
    (tmp_path / "asc-devkit-a.tar.xz").write_bytes(b"")
    (tmp_path / "asc-devkit-b.tar.xz").write_bytes(b"")
    with pytest.raises(AscendcSourceError, match="several tarballs"):
        find_source(tmp_path, cache_dir=tmp_path)
    with pytest.raises(AscendcSourceError, match="not an asc-devkit"):
        find_source(tmp_path / "asc-devkit-a.tar.xz", cache_dir=tmp_path)


def test_tree_without_simt_stubs_is_refused(unpacked, tmp_path):
    source, _ = unpacked
    tree = tmp_path / "tree"
    shutil.copytree(source.root / "include", tree / "include", symlinks=True)
    (tree / "impl").mkdir()
    with pytest.raises(AscendcSourceError, match="simt_stub.h"):
        find_source(tree, cache_dir=tmp_path)
