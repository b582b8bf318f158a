"""The twin's build cache: entries are checked before use, broken ones rebuilt, dead builds' scratch removed."""

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
    assert sorted(p.name for p in tmp_path.iterdir()) == [session.build.key]


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
    monkeypatch.setenv("AF_TWIN_CACHE_MAX_MB", "0")  # every entry but the one just built goes
    session = TwinSession(chain_graph(rank=2, dim=1), runner=TwinRunner(cache_dir=tmp_path))
    assert not session.build.cached
    assert sorted(p.name for p in tmp_path.iterdir()) == [session.build.key]
    assert session.check({n: 3 for n in session.scheduled.size_names}).ok
    before = session.build.directory.stat().st_mtime
    os.utime(session.build.directory, (before - 100, before - 100))
    again = TwinSession(chain_graph(rank=2, dim=1), runner=TwinRunner(cache_dir=tmp_path))
    assert again.build.cached and again.build.directory.stat().st_mtime > before - 100  # a use touches it
