"""The twin's build cache: entries are checked before use, broken ones rebuilt, dead builds' scratch removed,
the parts every build shares (precompiled twin headers, harness main) built once and kept with the builds."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from af_core import owned_dirs
from af_core.testing import chain_graph
from af_core.twin import TwinSession
from af_core.twin.cache import cache_entry_ok, file_digest
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
    """Only marked scratch directories of af's names go, and only once their maker is gone."""
    host = socket.gethostname()
    key = "0123abcd" * 3

    def scratch(suffix: str, who: str | None, age: float = 0) -> None:
        d = tmp_path / f"{key}.{suffix}"
        d.mkdir()
        if who is not None:
            (d / OWNER_FILE).write_text(f"{owned_dirs.MAGIC}\n{who}\n")
        when = time.time() - age
        os.utime(d / OWNER_FILE if who is not None else d, (when, when))

    scratch("dead1", f"{host} {_dead_pid()}")
    scratch("live1", f"{host} {os.getpid()}")
    scratch("far1", "elsewhere 1", age=3 * 24 * 3600)  # another host's, long ago
    scratch("far2", "elsewhere 1")  # another host's, recent
    scratch("orphan", None, age=3 * 24 * 3600)  # no marker: not af's, however old
    scratch("fresh", None)
    (tmp_path / key).mkdir()
    removed = clean_stale_builds(tmp_path)
    assert sorted(p.name for p in removed) == [f"{key}.dead1", f"{key}.far1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        key,
        *(f"{key}.{s}" for s in ("far2", "fresh", "live1", "orphan")),
    ]


def test_a_build_evicts_older_entries_beyond_the_bound_and_keeps_itself(tmp_path, monkeypatch):
    old = tmp_path / ("0" * 24)
    old.mkdir()
    (old / OWNER_FILE).write_text(owned_dirs.marker_text())
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
    for name, text in session.result.kernel_headers().items():
        (tmp_path / name).write_text(text)
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


# -- the cache owns only what it made, and runs only what is private --------------------------------------
KILLED_BUILD = """
import sys
from pathlib import Path

from af_core.testing import chain_graph
from af_core.twin import TwinSession
from af_core.twin.runner import TwinRunner

TwinSession(chain_graph(rank=2, dim=1, post=tuple(sys.argv[2:])), runner=TwinRunner(cache_dir=Path(sys.argv[1])))
"""


def _killed_build(tmp_path, cache, *post: str) -> None:
    """A build whose process is killed (SIGKILL) by its first compile, as a crash or ``kill -9`` would."""
    wrapper = tmp_path / "cxx-kills-its-caller"
    wrapper.write_text(
        '#!/bin/sh\ncase "$1" in --version|-dumpversion) exec g++ "$@";; esac\nkill -KILL "$PPID"\nexit 1\n'
    )
    wrapper.chmod(0o755)
    env = {**os.environ, "CXX": str(wrapper), "AF_ASCENDC_CHECK": "0"}
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_BUILD, str(cache), *post], env=env, capture_output=True, timeout=600
    )
    assert proc.returncode == -9, proc.stderr


def _unmarked_leftovers(cache) -> list[str]:
    """Scratch directories of the parts a killed process was making when it died, before it had written
    their marker whole: the one window af_core/owned_dirs.py documents. The shared parts are built by two
    threads, so the kill (by one thread's first compile) can land while the other is inside it. Such a
    directory holds nothing but, at most, a marker cut short, and is never removed."""
    found = []
    for entry in cache.iterdir():
        if entry.name != ".ssh" and owned_dirs.owner(entry) is None:
            held = [p.name for p in entry.iterdir()] if entry.is_dir() else None
            assert held in ([], [owned_dirs.MARKER_FILE]), f"{entry.name}: unmarked and holding {held}"
            if held:
                assert not (entry / owned_dirs.MARKER_FILE).read_text().endswith("\n"), entry.name
            assert entry.name.startswith(("pch-", "harness-")) and "." in entry.name, entry.name
            found.append(entry.name)
    return found


def test_scratch_of_a_killed_build_is_removed_by_the_next_build_and_by_afc_cache_clear(tmp_path):
    from af_core.twin.cache import cache_info

    cache = tmp_path / "cache"
    ssh = cache / ".ssh"  # what a cache in $HOME holds, two days old
    ssh.mkdir(parents=True)
    (ssh / "id_ed25519").write_text("secret\n")
    old = time.time() - 2 * 24 * 3600
    for item in (ssh / "id_ed25519", ssh):
        os.utime(item, (old, old))
    _killed_build(tmp_path, cache)
    unmarked = _unmarked_leftovers(cache)
    left = sorted(p.name for p in cache.iterdir() if p.name not in {".ssh", *unmarked})
    assert left and all(n.startswith(("pch-", "harness-")) and "." in n for n in left), left
    assert cache_info(cache).scratch == len(left)  # found by its marker, counted in the size
    runner = TwinRunner(cache_dir=cache)
    session = TwinSession(chain_graph(rank=2, dim=1), runner=runner)
    expected = [".ssh", *unmarked]
    assert sorted(p.name for p in cache.iterdir()) == sorted([*expected, session.build.key, *_shared(runner)])
    _killed_build(tmp_path, cache, "Relu")  # now killed while compiling its kernel (one thread: no window)
    assert cache_info(cache).scratch == 1
    env = {**os.environ, "AF_TWIN_CACHE": str(cache)}
    proc = subprocess.run(
        [sys.executable, "-m", "af_core", "cache", "clear"], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("removed 3 cache entries and 1 scratch dir(s) of killed builds"), (
        proc.stdout
    )
    assert sorted(p.name for p in cache.iterdir()) == sorted(expected)
    assert (ssh / "id_ed25519").read_text() == "secret\n" and ssh.stat().st_mtime == old


@pytest.fixture(scope="module")
def built_cache(tmp_path_factory):
    """A cache holding one build of ``chain_graph(rank=2, dim=1)`` and the parts; its key."""
    cache = tmp_path_factory.mktemp("built") / "cache"
    session = TwinSession(chain_graph(rank=2, dim=1), runner=TwinRunner(cache_dir=cache))
    return cache, session.build.key


def _tree(path) -> dict[str, tuple]:
    return {
        str(p.relative_to(path)): (
            p.lstat().st_mode,
            p.lstat().st_uid,
            p.read_bytes() if p.is_file() else b"",
        )
        for p in [path, *sorted(path.rglob("*"))]
    }


@pytest.mark.parametrize("change", ["another user's", "writable by others", "unmarked"])
def test_an_entry_that_is_not_private_or_not_afs_is_never_run(tmp_path, built_cache, change):
    """A binary with a matching checksum in an entry someone else could have written is not run."""
    if change == "another user's" and os.geteuid() != 0:
        pytest.skip("handing an entry to another uid needs root")
    template, key = built_cache
    cache = tmp_path / "cache"
    shutil.copytree(template, cache, symlinks=True)
    entry, ran = cache / key, tmp_path / "planted-binary-ran"
    (entry / "harness").write_text(f"#!/bin/sh\ntouch '{ran}'\nexit 1\n")
    (entry / CHECKSUM_FILE).write_text(file_digest(entry / "harness"))
    assert cache_entry_ok(entry)  # as planted: only what changes next keeps it from being run
    if change == "another user's":
        for item in [*entry.rglob("*"), entry]:
            os.lchown(item, 12345, -1)
    elif change == "writable by others":
        entry.chmod(0o777)
    else:
        (entry / OWNER_FILE).unlink()
    before = _tree(entry)
    session = TwinSession(chain_graph(rank=2, dim=1), runner=TwinRunner(cache_dir=cache))
    assert not session.build.cached and session.build.key == key
    assert session.check({n: 3 for n in session.scheduled.size_names}).ok
    assert not ran.exists()
    if change == "writable by others":  # af's own entry: rebuilt in place
        assert session.build.directory == entry and cache_entry_ok(entry)
    else:  # not af's: left as it was, the build kept in its own scratch directory
        assert _tree(entry) == before
        assert session.build.directory.name.startswith(f"{key}.") and owned_dirs.owner(
            session.build.directory
        )
