"""The twin cache's location, its size bound with least-recently-used eviction, and ``afc cache info|clear``.

Entries are faked (a directory named, filled and marked like one): no g++ build is needed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from af_core import owned_dirs
from af_core.errors import UsageError
from af_core.twin.cache import (
    CHECKSUM_FILE,
    OWNER_FILE,
    clear_cache,
    default_cache_dir,
    entries,
    evict,
    is_entry,
    max_cache_bytes,
    touch,
)

KB = 1024


def marked(directory: Path) -> Path:
    """``directory``, created, with the owner marker this process writes."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / OWNER_FILE).write_text(owned_dirs.marker_text())
    return directory


def fake_entry(cache: Path, n: int, size: int, mtime: float) -> Path:
    """A twin build entry of about ``size`` bytes, last used at ``mtime``."""
    entry = marked(cache / f"{n:024x}")
    (entry / "harness").write_bytes(b"\0" * size)
    (entry / CHECKSUM_FILE).write_text("0" * 64)
    os.utime(entry, (mtime, mtime))
    return entry


MARKER_BYTES = len(owned_dirs.marker_text())


def names(paths) -> list[str]:
    return sorted(p.name for p in paths)


# -- location ---------------------------------------------------------------------------------------------
def test_default_location_honours_af_twin_cache_then_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv("AF_TWIN_CACHE", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("AF_TWIN_CACHE")
    assert default_cache_dir() == tmp_path / "xdg" / "af-twin"
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "af-twin"


# -- bound ------------------------------------------------------------------------------------------------
def test_bound_defaults_to_2048_mb_and_reads_the_environment(monkeypatch):
    monkeypatch.delenv("AF_TWIN_CACHE_MAX_MB", raising=False)
    assert max_cache_bytes() == 2048 << 20
    monkeypatch.setenv("AF_TWIN_CACHE_MAX_MB", "5")
    assert max_cache_bytes() == 5 << 20


@pytest.mark.parametrize("text", ["-1", "lots", "1.5"])
def test_a_bad_bound_is_a_usage_error_naming_the_variable(monkeypatch, text):
    monkeypatch.setenv("AF_TWIN_CACHE_MAX_MB", text)
    with pytest.raises(UsageError, match=f"AF_TWIN_CACHE_MAX_MB .*'{text}'"):
        max_cache_bytes()


# -- what is an entry -------------------------------------------------------------------------------------
def test_only_directories_named_and_filled_like_entries_are_entries(tmp_path):
    entry = fake_entry(tmp_path, 1, 10, 1000)
    tiling = marked(tmp_path / f"tiling-{2:024x}")
    (tiling / "libtiling.so").write_bytes(b"x")
    scratch = tmp_path / f"{3:024x}.abcd"  # a build in progress
    scratch.mkdir()
    (scratch / OWNER_FILE).write_text("host 1")
    (scratch / CHECKSUM_FILE).write_text("0")
    unmarked = tmp_path / f"{4:024x}"  # the right name, no checksum file
    unmarked.mkdir()
    stranger = tmp_path / "notes"
    stranger.mkdir()
    (stranger / CHECKSUM_FILE).write_text("0")
    link = tmp_path / f"{5:024x}"
    link.symlink_to(entry, target_is_directory=True)
    assert [is_entry(p) for p in (entry, tiling, scratch, unmarked, stranger, link)] == [
        True,
        True,
        False,
        False,
        False,
        False,
    ]
    assert names(e.path for e in entries(tmp_path)) == [entry.name, tiling.name]


# -- eviction ---------------------------------------------------------------------------------------------
def test_eviction_removes_least_recently_used_first_until_the_entries_fit(tmp_path):
    old = fake_entry(tmp_path, 1, 40 * KB, 1000)
    middle = fake_entry(tmp_path, 2, 40 * KB, 2000)
    new = fake_entry(tmp_path, 3, 40 * KB, 3000)
    removed = evict(tmp_path, 100 * KB)
    assert [e.path for e in removed] == [old]
    assert names(tmp_path.iterdir()) == names([middle, new])
    removed = evict(tmp_path, 50 * KB)
    assert [e.path for e in removed] == [middle]
    assert evict(tmp_path, 50 * KB) == []  # within the bound: nothing more goes


def test_touching_an_entry_makes_it_the_most_recently_used(tmp_path):
    first = fake_entry(tmp_path, 1, 40 * KB, 1000)
    second = fake_entry(tmp_path, 2, 40 * KB, 2000)
    touch(first)  # used now
    removed = evict(tmp_path, 50 * KB)
    assert [e.path for e in removed] == [second]


def test_the_entry_just_built_is_never_evicted(tmp_path):
    just_built = fake_entry(tmp_path, 1, 80 * KB, 1000)  # oldest and alone over the bound
    other = fake_entry(tmp_path, 2, 10 * KB, 2000)
    removed = evict(tmp_path, 50 * KB, keep=just_built)
    assert [e.path for e in removed] == [other]
    assert names(tmp_path.iterdir()) == [just_built.name]


def test_shared_build_parts_are_entries_and_every_part_a_build_used_is_kept(tmp_path):
    pch = marked(tmp_path / f"pch-{'a' * 24}")
    (pch / "kernel_operator.h.gch").write_bytes(b"\0" * 40 * KB)
    main = marked(tmp_path / f"harness-{'b' * 24}")
    (main / "af_harness_main.o").write_bytes(b"\0" * 10 * KB)
    scratch = marked(tmp_path / f"pch-{'a' * 24}.x1y2")  # a precompiled header being built
    (scratch / "kernel_operator.h.gch").write_bytes(b"\0" * KB)
    empty = marked(tmp_path / f"harness-{'c' * 24}")  # nothing compiled in it: not an entry
    assert is_entry(pch) and is_entry(main) and not is_entry(scratch) and not is_entry(empty)
    build = fake_entry(tmp_path, 1, 10 * KB, 3000)
    old = fake_entry(tmp_path, 2, 10 * KB, 1000)
    for entry, when in ((pch, 2000), (main, 2000)):
        os.utime(entry, (when, when))
    assert names(e.path for e in evict(tmp_path, 0, keep=[build, pch, main])) == [old.name]
    assert names(p for p in tmp_path.iterdir()) == names([build, pch, main, scratch, empty])


def test_eviction_leaves_scratch_other_files_and_symlink_targets_alone(tmp_path):
    cache = tmp_path / "cache"
    outside = fake_entry(tmp_path / "elsewhere", 9, 80 * KB, 500)
    (cache / f"{9:024x}").parent.mkdir()
    (cache / f"{9:024x}").symlink_to(outside, target_is_directory=True)
    scratch = cache / f"{3:024x}.abcd"
    scratch.mkdir()
    (scratch / "harness").write_bytes(b"\0" * 80 * KB)
    (cache / "README").write_text("mine")
    entry = fake_entry(cache, 1, 80 * KB, 1000)
    removed = evict(cache, 0)
    assert [e.path for e in removed] == [entry]
    assert names(cache.iterdir()) == names([cache / f"{9:024x}", scratch, cache / "README"])
    assert (outside / "harness").stat().st_size == 80 * KB


def test_clear_removes_entries_only(tmp_path):
    a = fake_entry(tmp_path, 1, 10, 1000)
    b = fake_entry(tmp_path, 2, 20, 2000)
    (tmp_path / "README").write_text("mine")
    cleared = clear_cache(tmp_path)
    assert names(e.path for e in cleared.entries) == names([a, b]) and cleared.scratch == []
    # the binaries, their checksum files and markers
    assert sum(e.size for e in cleared.entries) == 10 + 20 + 2 * (64 + MARKER_BYTES)
    assert names(tmp_path.iterdir()) == ["README"]


# -- afc cache info | clear -------------------------------------------------------------------------------
def afc(*args: str, cache: Path, max_mb: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "AF_TWIN_CACHE": str(cache)}
    env.pop("AF_TWIN_CACHE_MAX_MB", None)
    if max_mb is not None:
        env["AF_TWIN_CACHE_MAX_MB"] = max_mb
    return subprocess.run([sys.executable, "-m", "af_core", *args], capture_output=True, text=True, env=env)


def test_afc_cache_info_reports_location_entries_size_and_bound(tmp_path):
    fake_entry(tmp_path, 1, 1 << 20, 1000)
    fake_entry(tmp_path, 2, 1 << 20, 2000)
    (tmp_path / "README").write_text("mine")
    proc = afc("cache", "info", cache=tmp_path, max_mb="64")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"location: {tmp_path}"
    assert lines[1] == "entries:  2"
    assert lines[2] == "size:     2.0 MB"
    assert lines[3].startswith("bound:    64.0 MB (AF_TWIN_CACHE_MAX_MB")
    assert lines[4].startswith("other:    1 item(s)")


def test_afc_cache_clear_reports_what_it_freed_and_keeps_other_files(tmp_path):
    fake_entry(tmp_path, 1, 1 << 20, 1000)
    (tmp_path / "README").write_text("mine")
    proc = afc("cache", "clear", cache=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"removed 1 cache entry (1.0 MB) from {tmp_path}",
        "kept 1 item(s) that are not af's (never removed)",
    ]
    assert names(tmp_path.iterdir()) == ["README"]
    again = afc("cache", "clear", cache=tmp_path)
    assert again.stdout.splitlines()[0] == f"removed 0 cache entries (0.0 MB) from {tmp_path}"


def test_afc_cache_info_with_a_bad_bound_is_a_one_line_usage_error(tmp_path):
    proc = afc("cache", "info", cache=tmp_path, max_mb="lots")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "afc: error: AF_TWIN_CACHE_MAX_MB must be a non-negative integer of megabytes, got 'lots'"
    ]
