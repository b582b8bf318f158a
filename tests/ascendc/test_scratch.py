"""The official-header check's cache: its directories are built in marked scratch directories, and the
scratch that a killed checker left is removed before the next build, nothing else.

A stand-in compiler writes the precompiled header (an empty file) so that no 200 MB build is needed.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from af_core import owned_dirs
from af_core.ascendc import AscendcChecker


def fake_cxx(tmp_path: Path, *, fails: bool = False) -> Path:
    """A compiler that reports a version and writes whatever ``-o`` names (or fails)."""
    script = tmp_path / "fake-cxx"
    body = "exit 1" if fails else 'while [ $# -gt 1 ]; do [ "$1" = -o ] && : > "$2"; shift; done'
    script.write_text(f'#!/bin/sh\n[ "$1" = --version ] && {{ echo "fake c++ 1"; exit 0; }}\n{body}\n')
    script.chmod(0o755)
    return script


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize("fails", [False, True], ids=["built", "g++ fails"])
def test_a_killed_checkers_scratch_goes_before_the_next_build_and_nothing_else(
    ascendc_source, monkeypatch, tmp_path, fails
):
    cache = tmp_path / "cache"
    cache.mkdir()
    host, old = socket.gethostname(), time.time() - 2 * 24 * 3600
    stale = cache / f"pch-{'a' * 24}.k1ll3d"
    stale.mkdir()
    (stale / owned_dirs.MARKER_FILE).write_text(f"{owned_dirs.MAGIC}\n{host} {dead_pid()}\n")
    (stale / "af_ascendc_pch.h.gch").write_bytes(b"\0" * 1024)
    unmarked = cache / f".pch-{'b' * 24}.0ld5cr"  # the name a version before markers used: not af's now
    unmarked.mkdir()
    (unmarked / "af_ascendc_pch.h.gch").write_bytes(b"half")
    ssh = cache / ".ssh"
    ssh.mkdir()
    (ssh / "config").write_text("Host *\n")
    for item in (unmarked, ssh):
        os.utime(item, (old, old))
    monkeypatch.setenv("CXX", str(fake_cxx(tmp_path, fails=fails)))
    checker = AscendcChecker(ascendc_source, cache_dir=cache, pch=True)
    pch = checker.precompiled_header()
    assert not stale.exists()
    assert (unmarked / "af_ascendc_pch.h.gch").read_bytes() == b"half" and unmarked.stat().st_mtime == old
    assert (ssh / "config").read_text() == "Host *\n" and ssh.stat().st_mtime == old
    left = [p.name for p in cache.iterdir() if p.name.startswith("pch-")]
    if fails:
        assert pch is None and left == []  # the failed build's scratch is gone too
    else:
        assert pch is not None and left == [pch.parent.name] and "." not in pch.parent.name
        assert owned_dirs.owner(pch.parent) is not None and Path(f"{pch}.gch").is_file()
