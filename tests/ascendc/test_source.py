"""Locating the official headers: a tree, a CANN install, a tarball or a directory holding one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
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


DEEP = Path("impl") / "basic_api" / "reg_compute" / "dav_3510" / "af_deep.h"
KERNEL = '#include "kernel_operator.h"\nint AfUse() { return af_value; }\n'

#: One verdict in a fresh process: (ok, cached) of KERNEL against the tree argv[1], cache argv[2].
VERDICT = """
import json, sys
from pathlib import Path
from af_core.ascendc import AscendcChecker, find_source
cache = Path(sys.argv[2])
result = AscendcChecker(find_source(sys.argv[1], cache_dir=cache), cache_dir=cache, pch=False).check(sys.argv[3])
print(json.dumps([result.ok, result.cached]))
"""


def _small_tree(root: Path) -> Path:
    """A header tree of a few files: kernel_operator.h includes a header three levels down in impl/."""
    for rel, text in {
        "include/kernel_operator.h": '#include "dav_3510/af_deep.h"\n',
        "include/basic_api/kernel_tensor.h": "\n",
        "include/kernel_tiling/kernel_tiling.h": "\n",
        DEEP.as_posix(): "inline constexpr int af_value = 1;\n",
        "tests/api/simt_api/common_simt/simt_stub.h": "\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _verdict(tree: Path, cache: Path) -> list[bool]:
    proc = subprocess.run(
        [sys.executable, "-c", VERDICT, str(tree), str(cache), KERNEL], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_an_edited_deep_header_gets_a_new_verdict_even_with_its_size_and_mtime_kept(tmp_path):
    """Cached verdicts of a plain tree are keyed on its files' contents, not on sizes and times."""
    from af_core import toolchain

    if toolchain.compiler_path() is None:
        pytest.skip("no C++ compiler")
    tree, cache = _small_tree(tmp_path / "tree"), tmp_path / "cache"
    assert _verdict(tree, cache) == [True, False]
    assert _verdict(tree, cache) == [True, True]  # the same headers: the stored verdict
    deep = tree / DEEP
    before = deep.stat()
    impl_before = (tree / "impl").stat()
    deep.write_text("inline constexpr int af_value = x;\n")  # same size, no longer valid C++
    os.utime(deep, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = deep.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert (tree / "impl").stat().st_mtime_ns == impl_before.st_mtime_ns
    assert _verdict(tree, cache) == [False, False]


def test_tree_identity_reads_each_file_once_per_process(tmp_path, monkeypatch):
    from af_core.ascendc import source as source_module

    reads: list[Path] = []
    real = source_module.file_digest

    def counted(path: Path) -> str:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(source_module, "file_digest", counted)
    tree = _small_tree(tmp_path / "tree")
    first = find_source(tree, cache_dir=tmp_path)
    assert sorted(p.relative_to(tree).as_posix() for p in reads) == [
        "impl/basic_api/reg_compute/dav_3510/af_deep.h",
        "include/basic_api/kernel_tensor.h",
        "include/kernel_operator.h",
        "include/kernel_tiling/kernel_tiling.h",
        "tests/api/simt_api/common_simt/simt_stub.h",
    ]
    assert find_source(tree, cache_dir=tmp_path).identity == first.identity
    assert len(reads) == 5


def test_tree_identity_follows_directory_links_and_stops_at_loops(tmp_path):
    from af_core.ascendc import source as source_module

    tree = _small_tree(tmp_path / "tree")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "linked.h").write_text("1\n")
    (tree / "impl" / "linked").symlink_to(outside, target_is_directory=True)
    (tree / "impl" / "loop").symlink_to(tree / "impl", target_is_directory=True)
    stubs = tree / "tests" / "api" / "simt_api" / "common_simt"
    rels = [rel for rel, _ in source_module._tree_files(tree, stubs)]
    assert "impl/linked/linked.h" in rels and not any(r.startswith("impl/loop/") for r in rels)

    def identity() -> str:
        source_module._tree_identity.cache_clear()  # as a new process would
        return find_source(tree, cache_dir=tmp_path).identity

    first = identity()
    (outside / "linked.h").write_text("2\n")
    assert identity() != first
