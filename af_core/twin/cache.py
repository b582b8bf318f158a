"""The twin's build cache on disk: where it is, what counts as an entry, and keeping it bounded.

The cache is ``AF_TWIN_CACHE`` when set, else ``$XDG_CACHE_HOME/af-twin``,
else ``~/.cache/af-twin``. It holds four kinds of entries, each a directory:
a twin build (``<24 hex digits>`` with the binary and its checksum file), a
compiled host tiling (``tiling-<24 hex digits>`` with ``libtiling.so``), and
the parts every twin build of one twin-header version and flag set shares:
the precompiled twin headers (``pch-<24 hex digits>``) and the harness
main's object (``harness-<24 hex digits>``). Anything else in the directory
(a build in progress, a user's file) is not an entry and is never evicted or
cleared.

An entry's directory mtime is its last use (touched on every use). After a
build, entries are evicted least recently used first until the entries
together fit in ``AF_TWIN_CACHE_MAX_MB`` (default 2048) megabytes; the entry
just built is never evicted. Symlinks are never followed nor removed.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
from collections.abc import Sequence
from pathlib import Path

import attrs

from af_core.errors import UsageError

#: Written beside a cached binary at build time: the SHA-256 of the binary, checked before every use.
CHECKSUM_FILE = "harness.sha256"
#: In a build's scratch directory while it is being built: "<host> <pid>" of the building process.
OWNER_FILE = "building.owner"
#: Scratch directories with no readable owner are removed once they are this old (seconds).
STALE_AFTER = 24 * 3600
#: The size bound's environment variable (megabytes) and its default.
MAX_MB_ENV = "AF_TWIN_CACHE_MAX_MB"
DEFAULT_MAX_MB = 2048

_BUILD_NAME = re.compile(r"[0-9a-f]{24}")
_TILING_NAME = re.compile(r"tiling-[0-9a-f]{24}")
_PARTS_NAME = re.compile(r"(?:pch|harness)-[0-9a-f]{24}")


def default_cache_dir() -> Path:
    """``AF_TWIN_CACHE``, else ``$XDG_CACHE_HOME/af-twin``, else ``~/.cache/af-twin``."""
    env = os.environ.get("AF_TWIN_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "af-twin"


def max_cache_bytes() -> int:
    """The size bound in bytes from ``AF_TWIN_CACHE_MAX_MB`` (a non-negative integer of megabytes)."""
    text = os.environ.get(MAX_MB_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_MB << 20
    try:
        mb = int(text)
    except ValueError:
        raise UsageError(f"{MAX_MB_ENV} must be a non-negative integer of megabytes, got '{text}'") from None
    if mb < 0:
        raise UsageError(f"{MAX_MB_ENV} must be a non-negative integer of megabytes, got '{text}'")
    return mb << 20


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def cache_entry_ok(entry: Path) -> bool:
    """True when ``entry`` holds a binary whose checksum matches the one recorded when it was built."""
    exe, recorded = entry / "harness", entry / CHECKSUM_FILE
    try:
        return exe.is_file() and file_digest(exe) == recorded.read_text(encoding="utf-8").strip()
    except OSError:
        return False


def is_entry(path: Path) -> bool:
    """True for a cache entry: a real directory (not a symlink) named and filled like one.

    A twin build's entry carries its checksum file, a host tiling's its
    library, a shared part its one compiled file (``*.gch`` or ``*.o``);
    scratch directories of builds (``<key>.<random>``) never match.
    """
    if path.is_symlink() or not path.is_dir():
        return False
    if _BUILD_NAME.fullmatch(path.name):
        marker = path / CHECKSUM_FILE
    elif _TILING_NAME.fullmatch(path.name):
        marker = path / "libtiling.so"
    elif _PARTS_NAME.fullmatch(path.name):
        marker = next((p for p in sorted(path.iterdir()) if p.suffix in (".gch", ".o")), path / "missing")
    else:
        return False
    return marker.is_file() and not marker.is_symlink()


def touch(entry: Path) -> None:
    """Mark ``entry`` as used now (its directory mtime orders eviction)."""
    try:
        os.utime(entry)
    except OSError:
        pass  # evicted meanwhile, or a read-only cache: the entry is still usable


def entry_size(entry: Path) -> int:
    """Bytes of the files under ``entry``, symlinks counted as links (never followed)."""
    total = 0
    for root, _dirs, files in os.walk(entry, followlinks=False):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


@attrs.frozen
class CacheEntry:
    path: Path
    size: int
    mtime: float


def entries(cache_dir: Path) -> list[CacheEntry]:
    """The cache's entries, least recently used first (ties by name, so the order is deterministic)."""
    found = []
    for path in cache_dir.iterdir() if cache_dir.is_dir() else []:
        if not is_entry(path):
            continue
        try:
            mtime = path.lstat().st_mtime
        except OSError:
            continue
        found.append(CacheEntry(path, entry_size(path), mtime))
    return sorted(found, key=lambda e: (e.mtime, e.path.name))


def remove_entry(entry: Path) -> bool:
    """Move an entry out of the way (atomically) and delete it; False if it was already gone."""
    aside = entry.with_name(f"{entry.name}.evicted-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        os.replace(entry, aside)
    except OSError:
        return False
    shutil.rmtree(aside, ignore_errors=True)
    return True


def discard_entry(entry: Path) -> None:
    """Move a broken cache entry out of the way (atomically) and delete it."""
    remove_entry(entry)


def evict(cache_dir: Path, max_bytes: int, *, keep: Path | Sequence[Path] | None = None) -> list[CacheEntry]:
    """Remove least recently used entries until the entries fit in ``max_bytes``; ``keep`` (one or more) stays."""
    kept = {keep.name} if isinstance(keep, Path) else {k.name for k in keep or ()}
    found = entries(cache_dir)
    total = sum(e.size for e in found)
    removed = []
    for e in found:
        if total <= max_bytes:
            break
        if e.path.name in kept:
            continue
        if remove_entry(e.path):
            removed.append(e)
        total -= e.size
    return removed


@attrs.frozen
class CacheInfo:
    directory: Path
    entries: int
    total_bytes: int
    max_bytes: int
    other: int


def cache_info(cache_dir: Path) -> CacheInfo:
    """Where the cache is, how many entries and bytes it holds, its bound, and how many other items."""
    found = entries(cache_dir)
    names = {e.path.name for e in found}
    other = sum(1 for p in cache_dir.iterdir() if p.name not in names) if cache_dir.is_dir() else 0
    return CacheInfo(cache_dir, len(found), sum(e.size for e in found), max_cache_bytes(), other)


def clear_cache(cache_dir: Path) -> list[CacheEntry]:
    """Remove every entry (nothing that is not one); returns what was removed."""
    return [e for e in entries(cache_dir) if remove_entry(e.path)]


def _owner_text() -> str:
    return f"{socket.gethostname()} {os.getpid()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def clean_stale_builds(cache_dir: Path, *, now: float | None = None) -> list[Path]:
    """Remove scratch directories of builds that were killed or failed to clean up; returns them.

    A scratch directory (``<key>.<random>``) names its building process in
    its owner file: it is stale when that process no longer runs on this
    host. One without a readable owner file is stale after ``STALE_AFTER``.
    """
    import time

    now = time.time() if now is None else now
    host = socket.gethostname()
    removed = []
    for d in sorted(cache_dir.iterdir()) if cache_dir.is_dir() else []:
        if "." not in d.name or not d.is_dir() or d.is_symlink():
            continue
        try:
            owner_host, pid = (d / OWNER_FILE).read_text(encoding="utf-8").split()
            stale = owner_host == host and not _alive(int(pid))
        except (OSError, ValueError):
            try:
                stale = now - d.stat().st_mtime > STALE_AFTER
            except OSError:
                continue
        if stale:
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
    return removed
