"""The twin's build cache: entries are checked before use, broken ones rebuilt, dead builds' scratch removed,
the parts every build shares (precompiled twin headers, harness main) built once and kept with the builds."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from af_core.testing import chain_graph
from af_core.twin import TwinSession
from af_core.twin.runner import CHECKSUM_FILE, OWNER_FILE, TwinRunner, clean_stale_builds

pytestmark = pytest.mark.twin


def _shared(runner: TwinRunner) -> list[str]:
    """The names of the shared parts' entries of ``runner``."""
    ident = runner.identity(runner.include_dirs())
    return [f"harness-{ident}", f"pch-{ident}"]


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_truncated_cached_binary_is_rebuilt(tmp_path):
    runner = TwinRunner(cache_dir=tmp_path)
    session = TwinSession(chain_graph(rank=2, dim=1), runner=runner)
    assert not session.build.cached and (session.build.directory / CHECKSUM_FILE).exists()
    sizes = {n: 3 for n in session.scheduled.size_names}
    assert session.check(sizes).ok
    exe = session.build.executable
    exe.write_bytes(exe.read_bytes()[:4096])  # what a full disk or a killed copy leaves
    again = TwinSession(chain_graph(rank=2, dim=1), runner=runner)
    assert again.build.key == session.build.key and not again.build.cached
    assert again.check(sizes).ok
    third = TwinSession(chain_graph(rank=2, dim=1), runner=runner)
    assert third.build.cached  # the rebuilt entry verifies
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([session.build.key, *_shared(runner)])


def test_scratch_of_dead_builds_is_removed_and_live_ones_kept(tmp_path):
    import socket

    host = socket.gethostname()
    dead = tmp_path / "0123abcd.dead1"
    dead.mkdir()
    (dead / OWNER_FILE).write_text(f"{host} {_dead_pid()}")
    live = tmp_path / "0123abcd.live1"
    live.mkdir()
    (live / OWNER_FILE).write_text(f"{host} {os.getpid()}")
    orphan = tmp_path / "0123abcd.orphan"
    orphan.mkdir()
    old = time.time() - 3 * 24 * 3600
    os.utime(orphan, (old, old))
    fresh = tmp_path / "0123abcd.fresh"
    fresh.mkdir()
    entry = tmp_path / "0123abcd"
    entry.mkdir()
    removed = clean_stale_builds(tmp_path)
    assert sorted(p.name for p in removed) == ["0123abcd.dead1", "0123abcd.orphan"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0123abcd", "0123abcd.fresh", "0123abcd.live1"]


def test_a_build_evicts_older_entries_beyond_the_bound_and_keeps_itself(tmp_path, monkeypatch):
    old = tmp_path / ("0" * 24)
    old.mkdir()
    (old / "harness").write_bytes(b"\0" * 4096)
    (old / CHECKSUM_FILE).write_text("0" * 64)
    os.utime(old, (1000, 1000))
    monkeypatch.setenv("AF_TWIN_CACHE_MAX_MB", "0")  # every entry but those the build just used goes
    runner = TwinRunner(cache_dir=tmp_path)
    session = TwinSession(chain_graph(rank=2, dim=1), runner=runner)
    assert not session.build.cached
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([session.build.key, *_shared(runner)])
    assert session.check({n: 3 for n in session.scheduled.size_names}).ok
    before = session.build.directory.stat().st_mtime
    os.utime(session.build.directory, (before - 100, before - 100))
    again = TwinSession(chain_graph(rank=2, dim=1), runner=TwinRunner(cache_dir=tmp_path))
    assert again.build.cached and again.build.directory.stat().st_mtime > before - 100  # a use touches it


def test_the_shared_parts_are_built_once_and_reused_by_the_next_graph(tmp_path):
    runner = TwinRunner(cache_dir=tmp_path)
    first = TwinSession(chain_graph(rank=2, dim=1), runner=runner)
    assert {"pch", "harness main", "kernel", "tiling", "link"} <= set(first.build.timings)
    parts = runner.parts()
    gch = parts.pch / "kernel_operator.h.gch"
    stamp = (gch.stat().st_ino, gch.stat().st_mtime_ns, parts.main.stat().st_mtime_ns)
    second = TwinSession(chain_graph(rank=2, dim=1, post=("Relu",)), runner=runner)
    assert not second.build.cached and second.build.key != first.build.key
    assert "pch" not in second.build.timings and "harness main" not in second.build.timings
    assert (gch.stat().st_ino, gch.stat().st_mtime_ns, parts.main.stat().st_mtime_ns) == stamp
    assert second.check({n: 3 for n in second.scheduled.size_names}).ok
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [first.build.key, second.build.key, *_shared(runner)]
    )
    assert list(second.build.directory.glob("*.o")) == [] and list(second.build.directory.glob("*.gch")) == []


def test_the_kernel_is_compiled_with_the_precompiled_headers(tmp_path):
    """g++ -H marks a precompiled header it used with '!': the kernel's first include is the twin's entry header."""
    from af_core import toolchain

    runner = TwinRunner(cache_dir=tmp_path)
    session = TwinSession(chain_graph(rank=2, dim=1), runner=runner)
    parts = runner.parts()
    (tmp_path / "kernel.cpp").write_text(session.result.kernel)
    unit = toolchain.Unit(
        ("kernel.cpp",),
        "kernel",
        runner.build_flags.replace(extra=("-H",)),
        (str(parts.pch), *runner.include_dirs()),
    )
    done = toolchain.run(unit.command(runner.cxx), what="kernel", cwd=tmp_path)
    assert f"! {parts.pch / 'kernel_operator.h.gch'}" in done.stderr.splitlines()


def test_sanitizer_builds_have_their_own_precompiled_headers(tmp_path):
    plain = TwinRunner(cache_dir=tmp_path)
    sanitized = TwinRunner(cache_dir=tmp_path, sanitize=True)
    dirs = plain.include_dirs()
    assert plain.identity(dirs) != sanitized.identity(dirs)
    session = TwinSession(chain_graph(rank=2, dim=1), runner=sanitized)
    assert session.check({n: 3 for n in session.scheduled.size_names}).ok
    assert (tmp_path / f"pch-{sanitized.identity(dirs)}" / "kernel_operator.h.gch").is_file()
    assert not (tmp_path / f"pch-{plain.identity(dirs)}").exists()


def test_a_parallel_build_gives_the_binary_of_a_serial_one(tmp_path):
    graph = chain_graph(rank=2, dim=1, post=("Exp",))
    serial = TwinSession(graph, runner=TwinRunner(cache_dir=tmp_path / "serial", jobs=1))
    parallel = TwinSession(graph, runner=TwinRunner(cache_dir=tmp_path / "parallel", jobs=2))
    assert serial.build.key == parallel.build.key
    assert serial.build.executable.read_bytes() == parallel.build.executable.read_bytes()
