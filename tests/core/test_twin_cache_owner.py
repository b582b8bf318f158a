"""The twin cache owns only what af made there, is private, and refuses what it cannot safely use.

No g++ build is needed: entries and scratch directories are faked. The tests
run as root, so they can hand a directory to another uid.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from af_core import owned_dirs
from af_core.errors import UsageError
from af_core.twin.cache import (
    CHECKSUM_FILE,
    OWNER_FILE,
    STALE_AFTER,
    cache_entry_ok,
    cache_info,
    clean_stale_builds,
    clear_cache,
    entries,
    evict,
    file_digest,
    is_entry,
    is_usable,
    max_cache_bytes,
    open_cache,
)

ROOT = Path(__file__).resolve().parents[2]
OTHER_UID = 12345
DAY = 24 * 3600
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="handing a directory to another uid needs root")


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def mark(directory: Path, who: str | None = None) -> Path:
    """``directory`` (created) with an owner marker naming ``who`` ("host pid"; default this process)."""
    directory.mkdir(parents=True, exist_ok=True)
    text = owned_dirs.marker_text() if who is None else f"{owned_dirs.MAGIC}\n{who}\n"
    (directory / OWNER_FILE).write_text(text)
    return directory


def af_entry(cache: Path, name: str, size: int = 1024, mtime: float = 1000) -> Path:
    """A twin build entry af made: marked, private, its binary's checksum recorded."""
    entry = mark(cache / name)
    (entry / "harness").write_bytes(b"\x7fELF" + b"\0" * size)
    (entry / CHECKSUM_FILE).write_text(file_digest(entry / "harness"))
    os.utime(entry, (mtime, mtime))
    return entry


def chown_tree(path: Path, uid: int) -> None:
    for root, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            os.lchown(os.path.join(root, name), uid, -1)
    os.lchown(path, uid, -1)


def snapshot(path: Path) -> dict[str, tuple]:
    """Every item under ``path`` (itself included): kind, mode, owner, mtime and bytes or link target."""
    found = {}
    for item in [path, *sorted(path.rglob("*"))] if not path.is_symlink() else [path]:
        st = os.lstat(item)
        if stat.S_ISLNK(st.st_mode):
            body: bytes | str = os.readlink(item)
        elif stat.S_ISREG(st.st_mode):
            body = item.read_bytes()
        else:
            body = "dir"
        found[str(item.relative_to(path.parent))] = (st.st_mode, st.st_uid, st.st_mtime_ns, body)
    return found


def plant_strangers(cache: Path, outside: Path) -> list[Path]:
    """Things in the cache that af did not make (or that are not the current user's): none may be touched."""
    host = socket.gethostname()
    old = time.time() - 2 * DAY
    hexa, hexb, hexc, hexd = ("a" * 24, "b" * 24, "c" * 24, "d" * 24)
    made: list[Path] = []

    def add(path: Path, mtime: float | None = None) -> Path:
        if mtime is not None:
            for item in [*path.rglob("*"), path]:
                os.utime(item, (mtime, mtime), follow_symlinks=False)
        made.append(path)
        return path

    ssh = cache / ".ssh"
    ssh.mkdir(mode=0o700)
    (ssh / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    add(ssh, old)  # the data loss: a dot-named directory older than a day
    (cache / ".config" / "app").mkdir(parents=True)
    add(cache / ".config")
    (cache / "notes.d").mkdir()
    add(cache / "notes.d", old)
    legacy = cache / hexa  # an entry of a version before markers: named and filled like one
    legacy.mkdir()
    (legacy / "harness").write_bytes(b"old binary")
    (legacy / CHECKSUM_FILE).write_text(file_digest(legacy / "harness"))
    add(legacy, old)
    legacy_scratch = cache / f"{hexa}.k1ll3d00"  # a scratch directory of such a version, owner dead
    legacy_scratch.mkdir()
    (legacy_scratch / "building.owner").write_text(f"{host} {dead_pid()}")
    add(legacy_scratch, old)
    (cache / f"pch-{hexb}").mkdir()
    (cache / f"pch-{hexb}" / "kernel_operator.h.gch").write_bytes(b"gch")
    add(cache / f"pch-{hexb}", old)
    (cache / f"tiling-{hexb}.zz").mkdir()
    add(cache / f"tiling-{hexb}.zz", old)
    (cache / f".pch-{hexb}.abcd").mkdir()  # the official-header check's old scratch name
    add(cache / f".pch-{hexb}.abcd", old)
    (cache / "README").write_text("mine")
    add(cache / "README", old)
    (cache / hexc).write_text("a file named like an entry")
    add(cache / hexc, old)
    add(mark(cache / "mine", f"{host} {dead_pid()}"), old)  # af's marker, a name af never uses
    wrong_magic = cache / f"{hexc}.w1"
    wrong_magic.mkdir()
    (wrong_magic / OWNER_FILE).write_text(f"not af\n{host} {dead_pid()}\n")
    add(wrong_magic, old)
    linked_marker = cache / f"{hexc}.w2"
    linked_marker.mkdir()
    (outside / "marker").write_text(f"{owned_dirs.MAGIC}\n{host} {dead_pid()}\n")
    (linked_marker / OWNER_FILE).symlink_to(outside / "marker")
    add(linked_marker, old)
    target = af_entry(outside, hexd)  # af's entry, elsewhere: a symlink to it is not an entry
    (cache / hexd).symlink_to(target, target_is_directory=True)
    add(cache / hexd)
    dead_scratch = mark(outside / f"{hexd}.gone", f"{host} {dead_pid()}")
    (cache / f"harness-{hexd}.gone").symlink_to(dead_scratch, target_is_directory=True)
    add(cache / f"harness-{hexd}.gone")
    if os.geteuid() == 0:  # marked, but another user's
        theirs = af_entry(cache, "e" * 24)
        chown_tree(theirs, OTHER_UID)
        add(theirs, old)
        their_scratch = mark(cache / f"{'e' * 24}.th31rs", f"{host} {dead_pid()}")
        chown_tree(their_scratch, OTHER_UID)
        add(their_scratch, old)
    return made


def afc(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k != "AF_TWIN_CACHE_MAX_MB"}
    return subprocess.run(
        [sys.executable, "-m", "af_core", *args],
        capture_output=True,
        text=True,
        env={**full, **env},
        timeout=600,
    )


def afc_clear(cache: Path) -> None:
    proc = afc("cache", "clear", env={"AF_TWIN_CACHE": str(cache)})
    assert proc.returncode == 0, proc.stderr


OPERATIONS: dict[str, Callable[[Path], object]] = {
    "build cleanup": clean_stale_builds,
    "eviction to a bound of 0": lambda cache: evict(cache, 0),
    "clear": clear_cache,
    "afc cache clear": afc_clear,
}


# -- the cache owns only what it made ---------------------------------------------------------------------
@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_what_af_did_not_make_survives_cleanup_eviction_and_clear_byte_for_byte(tmp_path, operation):
    cache, outside = tmp_path / "cache", tmp_path / "outside"
    cache.mkdir(mode=0o700)
    outside.mkdir()
    strangers = plant_strangers(cache, outside)
    ours = af_entry(cache, "f" * 24)
    stale = mark(cache / f"{'f' * 24}.k1ll3d", f"{socket.gethostname()} {dead_pid()}")
    before = {p.name: snapshot(p) for p in [*strangers, outside]}
    OPERATIONS[operation](cache)
    assert {p.name: snapshot(p) for p in [*strangers, outside]} == before
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        [p.name for p in strangers]
        + ([ours.name] if operation == "build cleanup" else [])
        + ([stale.name] if operation.startswith("eviction") else [])
    )  # and af's own did go


def test_a_home_directory_as_cache_keeps_an_old_ssh_directory(tmp_path):
    """The data loss: with AF_TWIN_CACHE=$HOME, a build's cleanup deleted ~/.ssh once it was a day old."""
    ssh = tmp_path / ".ssh"
    ssh.mkdir()
    (ssh / "authorized_keys").write_text("ssh-ed25519 AAAA key\n")
    old = time.time() - 2 * DAY
    os.utime(ssh, (old, old))
    assert clean_stale_builds(tmp_path) == []
    assert (ssh / "authorized_keys").read_text() == "ssh-ed25519 AAAA key\n"


def test_an_unmarked_directory_named_like_an_entry_is_not_an_entry(tmp_path):
    legacy = tmp_path / ("a" * 24)
    legacy.mkdir()
    (legacy / "harness").write_bytes(b"binary")
    (legacy / CHECKSUM_FILE).write_text(file_digest(legacy / "harness"))
    assert not is_entry(legacy) and not cache_entry_ok(legacy)
    mark(legacy)
    assert is_entry(legacy) and cache_entry_ok(legacy)  # the marker is the difference
    assert entries(tmp_path)[0].path == legacy


@pytest.mark.parametrize(
    "case",
    [
        "dead here",
        "another host long ago",
        "no marker, old",
        "another host recently",
        "alive here",
        "bad pid",
    ],
)
def test_stale_scratch_is_found_by_its_marker(tmp_path, case):
    host = socket.gethostname()
    scratch = tmp_path / f"pch-{'a' * 24}.x7"
    who = {
        "dead here": f"{host} {dead_pid()}",
        "another host long ago": "elsewhere 42",
        "another host recently": "elsewhere 42",
        "alive here": f"{host} {os.getpid()}",
        "bad pid": f"{host} 1_0",
        "no marker, old": None,
    }[case]
    if who is None:
        scratch.mkdir()
    else:
        mark(scratch, who)
    old = time.time() - STALE_AFTER - 60
    if "long ago" in case or "old" in case:
        for item in [*scratch.iterdir(), scratch]:
            os.utime(item, (old, old))
    removed = clean_stale_builds(tmp_path)
    stale = case in ("dead here", "another host long ago")
    assert removed == ([scratch] if stale else [])
    assert scratch.exists() is not stale


def test_removal_never_follows_a_symlink_inside_a_directory_af_made(tmp_path):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "data").write_text("keep")
    scratch = mark(tmp_path / "cache" / f"{'a' * 24}.x1", f"{socket.gethostname()} {dead_pid()}")
    (scratch / "link").symlink_to(precious, target_is_directory=True)
    (scratch / "sub").mkdir()
    (scratch / "sub" / "link").symlink_to(precious / "data")
    assert clean_stale_builds(tmp_path / "cache") == [scratch]
    assert not scratch.exists() and (precious / "data").read_text() == "keep"


def test_a_finished_build_never_replaces_what_holds_its_name(tmp_path):
    """An empty directory is replaced by a plain rename: af's build then stays in its scratch directory."""
    final = tmp_path / ("a" * 24)
    final.mkdir()

    def fill(work: Path) -> None:
        (work / "harness").write_bytes(b"new")

    built = owned_dirs.build_dir(final, fill, is_usable)
    assert built != final and built.parent == tmp_path and (built / "harness").read_bytes() == b"new"
    assert final.is_dir() and list(final.iterdir()) == []
    assert owned_dirs.owner(built) is not None  # found and removed once this process is gone


def test_a_failed_build_leaves_no_scratch(tmp_path):
    def fill(work: Path) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        owned_dirs.build_dir(tmp_path / ("a" * 24), fill, is_entry)
    assert list(tmp_path.iterdir()) == []


# -- scratch counts toward the bound ----------------------------------------------------------------------
def test_scratch_counts_toward_the_bound_and_cache_info_shows_it(tmp_path):
    entry = af_entry(tmp_path, "a" * 24, size=40 * 1024)
    running = mark(tmp_path / f"{'b' * 24}.r1")  # a build of this process, in progress
    (running / "kernel.o").write_bytes(b"\0" * 80 * 1024)
    info = cache_info(tmp_path)
    assert (info.entries, info.scratch, info.other) == (1, 1, 0)
    assert info.scratch_bytes > 80 * 1024 and info.total_bytes > 120 * 1024
    assert [e.path for e in evict(tmp_path, 100 * 1024)] == [entry]  # the entries alone would fit
    assert running.is_dir()  # scratch of a live build is never evicted
    proc = afc("cache", "info", env={"AF_TWIN_CACHE": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stdout.splitlines() if line.startswith("scratch:")] == [
        "scratch:  1 dir(s), 0.1 MB of the size (builds running, or killed: removed by the next build "
        "or afc cache clear)"
    ]


def test_afc_cache_clear_removes_scratch_of_killed_builds_and_keeps_running_ones(tmp_path):
    dead = mark(tmp_path / f"harness-{'a' * 24}.d1", f"{socket.gethostname()} {dead_pid()}")
    (dead / "af_harness_main.o").write_bytes(b"\0" * 1024)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        running = mark(tmp_path / f"pch-{'a' * 24}.l1", f"{socket.gethostname()} {live.pid}")
        proc = afc("cache", "clear", env={"AF_TWIN_CACHE": str(tmp_path)})
    finally:
        live.kill()
        live.wait()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"removed 0 cache entries and 1 scratch dir(s) of killed builds (0.0 MB) from {tmp_path}",
        "kept 1 scratch dir(s) of builds still running",
    ]
    assert not dead.exists() and running.is_dir()


# -- the cache is private ---------------------------------------------------------------------------------
def test_a_new_cache_is_created_private(tmp_path):
    cache = tmp_path / "deep" / "af-twin"
    assert open_cache(cache) == cache
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert open_cache(tmp_path / "absent", create=False) == tmp_path / "absent"
    assert not (tmp_path / "absent").exists()


def test_a_cache_others_may_write_is_refused_with_the_fix(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    for mode in (0o777, 0o775, 0o757):
        cache.chmod(mode)
        with pytest.raises(UsageError) as caught:
            open_cache(cache)
        assert str(caught.value) == (
            f"the twin build cache '{cache}' may be written by others (mode {mode:o}): "
            f"run 'chmod 700 {cache}' or set AF_TWIN_CACHE to a directory of your own"
        )
    cache.chmod(0o755)  # readable by others is allowed: it holds nothing secret, nobody else can write
    assert open_cache(cache) == cache


@as_root
def test_a_cache_of_another_user_is_refused(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    os.chown(cache, OTHER_UID, -1)
    with pytest.raises(UsageError, match=f"'{cache}' belongs to uid {OTHER_UID}, not to you .*AF_TWIN_CACHE"):
        open_cache(cache)


@pytest.mark.parametrize("command", [("cache", "info"), ("cache", "clear")])
@pytest.mark.parametrize("problem", ["open", "another user's"])
def test_afc_cache_refuses_a_cache_it_may_not_trust(tmp_path, command, problem):
    if problem == "another user's" and os.geteuid() != 0:
        pytest.skip("needs root")
    cache = tmp_path / "cache"
    entry = af_entry(cache, "a" * 24)
    if problem == "open":
        cache.chmod(0o777)
    else:
        os.chown(cache, OTHER_UID, -1)
    proc = afc(*command, env={"AF_TWIN_CACHE": str(cache)})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"afc: error: the twin build cache '{cache}' "), (
        proc.stderr
    )
    assert entry.is_dir()


@pytest.mark.parametrize("change", ["another user's", "writable by others", "binary writable by others"])
def test_an_entry_that_is_not_private_is_never_used(tmp_path, change):
    """Not used; af's own (still the user's) is still cleared, another user's is not af's to remove."""
    if change == "another user's" and os.geteuid() != 0:
        pytest.skip("needs root")
    entry = af_entry(tmp_path, "a" * 24)
    assert cache_entry_ok(entry) and is_usable(entry)
    if change == "another user's":
        chown_tree(entry, OTHER_UID)
    elif change == "writable by others":
        entry.chmod(0o777)
    else:
        (entry / "harness").chmod(0o777)
    assert not cache_entry_ok(entry)
    assert is_usable(entry) is (change == "binary writable by others")  # the binary is checked on use
    theirs = change == "another user's"
    assert [e.path for e in clear_cache(tmp_path).entries] == ([] if theirs else [entry])
    assert entry.exists() is theirs


def test_a_finished_build_is_writable_by_its_owner_alone_whatever_the_umask(tmp_path):
    def fill(work: Path) -> None:
        (work / "harness").write_bytes(b"x")
        (work / "harness").chmod(0o777)
        (work / CHECKSUM_FILE).write_text(file_digest(work / "harness"))

    previous = os.umask(0o002)
    try:
        built = owned_dirs.build_dir(tmp_path / ("a" * 24), fill, cache_entry_ok)
    finally:
        os.umask(previous)
    assert built == tmp_path / ("a" * 24) and cache_entry_ok(built)
    assert stat.S_IMODE((built / "harness").stat().st_mode) == 0o755


# -- AF_TWIN_CACHE naming a file --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "command",
    [
        ("cache", "info"),
        ("cache", "clear"),
        (
            "run",
            str(ROOT / "examples" / "minimal_graph.py"),
            "--shape",
            "s0=6,s1=2,s2=40,s3=32,s4=6,s5=2,s6=16,s7=32",
        ),
    ],
    ids=["info", "clear", "run"],
)
def test_a_cache_path_naming_a_file_is_one_clear_usage_error(tmp_path, command):
    path = tmp_path / "cache-file"
    path.write_text("not a directory")
    proc = afc(*command, env={"AF_TWIN_CACHE": str(path)})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"afc: error: the twin build cache '{path}' is not a directory: "
        "set AF_TWIN_CACHE to a directory (af creates it when missing)"
    ]
    assert path.read_text() == "not a directory"


def test_a_cache_path_under_a_file_is_a_usage_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="twin build cache '.*file/sub' .*AF_TWIN_CACHE"):
        open_cache(tmp_path / "file" / "sub")


# -- AF_TWIN_CACHE_MAX_MB ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("1_0", "'1_0'"),
        ("\u0661\u0660", "'\\u0661\\u0660'"),  # Arabic-Indic digits, which int() takes
        ("\uff11\uff10", "'\\uff11\\uff10'"),  # fullwidth digits
        ("+5", "'+5'"),
        ("0x10", "'0x10'"),
        ("1e3", "'1e3'"),
    ],
)
def test_the_bound_takes_ascii_digits_only(monkeypatch, text, shown):
    monkeypatch.setenv("AF_TWIN_CACHE_MAX_MB", text)
    with pytest.raises(UsageError) as caught:
        max_cache_bytes()
    assert (
        str(caught.value) == f"AF_TWIN_CACHE_MAX_MB must be a non-negative integer of megabytes, got {shown}"
    )


def test_the_bound_ignores_surrounding_whitespace(monkeypatch):
    monkeypatch.setenv("AF_TWIN_CACHE_MAX_MB", " 12\n")
    assert max_cache_bytes() == 12 << 20
