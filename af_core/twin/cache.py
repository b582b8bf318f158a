"""The twin's build cache on disk: where it is, what af owns in it, and keeping it private and bounded.

The cache is ``AF_TWIN_CACHE`` when set, else ``$XDG_CACHE_HOME/af-twin``,
else ``~/.cache/af-twin``. Because the cache holds executables that af runs,
it must be private: af creates it with mode 0700, and refuses (a
:class:`UsageError` naming the directory and the fix) a path that is not a
directory, or a directory that belongs to another user or that group or
others may write.

af owns only the directories it made there: real directories of the
current user carrying af's owner marker (:mod:`af_core.owned_dirs`). Its
entries are such directories of four kinds: a twin build (``<24 hex
digits>`` with the binary and its checksum file), a compiled host tiling
(``tiling-<24 hex digits>`` with ``libtiling.so``), and the parts every
twin build of one twin-header version and flag set shares: the precompiled
twin headers (``pch-<24 hex digits>``) and the harness main's object
(``harness-<24 hex digits>``). An entry is *used* only when, besides, the
directory, its marker and its compiled file (and a build's binary) are
writable by the user alone and a build's binary matches the SHA-256
recorded at build time. An entry of af's that fails this is removed and
built again; when the name is held by anything that is not af's, that is
left alone and the build stays in its scratch directory, used from there
by this process and removed by the first cleanup after it ends. Scratch
directories (``<entry name>.<suffix>``, marked right after they are made)
hold builds in progress; one left by a killed build (its process gone from
this host, or made on another host more than :data:`STALE_AFTER` ago) is
removed by the next build and by ``afc cache clear``.

Everything else in the directory -- the user's files and directories
whatever their names and ages, symlinks (never followed), other users'
directories, and entries of versions before the marker, which carry none
-- is not af's: never used, evicted, cleaned nor cleared (``afc cache
info`` counts it as "other"; delete old entries by hand). The key of every
entry includes :data:`LAYOUT`, so such old entries never hold a new
entry's name.

An entry's directory mtime is its last use (touched on every use). After a
build, entries are evicted least recently used first until entries and
scratch directories together fit in ``AF_TWIN_CACHE_MAX_MB`` (ASCII digits,
default 2048) megabytes; the entries the build used are never evicted, and
scratch never is.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

import attrs

from af_core import owned_dirs
from af_core.errors import UsageError

#: The owner marker in every directory af makes in the cache (see :mod:`af_core.owned_dirs`).
OWNER_FILE = owned_dirs.MARKER_FILE
#: A scratch directory made on another host is stale once its marker is this old (seconds).
STALE_AFTER = owned_dirs.STALE_AFTER
#: Written beside a cached binary at build time: the SHA-256 of the binary, checked before every use.
CHECKSUM_FILE = "harness.sha256"
#: Part of every entry's key: entries made before owner markers never share a name with a new one.
LAYOUT = "owned-dirs-1"
#: The cache's environment variable.
CACHE_ENV = "AF_TWIN_CACHE"
#: The size bound's environment variable (megabytes) and its default.
MAX_MB_ENV = "AF_TWIN_CACHE_MAX_MB"
DEFAULT_MAX_MB = 2048

_ENTRY_NAME = re.compile(r"(?:tiling-|pch-|harness-)?[0-9a-f]{24}")
_SCRATCH_NAME = owned_dirs.scratch_pattern(_ENTRY_NAME.pattern)
_ASCII_DIGITS = re.compile(r"[0-9]+")


def default_cache_dir() -> Path:
    """``AF_TWIN_CACHE``, else ``$XDG_CACHE_HOME/af-twin``, else ``~/.cache/af-twin``."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "af-twin"


def open_cache(cache_dir: Path, *, create: bool = True) -> Path:
    """``cache_dir`` once it is known to be private (created with mode 0700 when missing and ``create``).

    A :class:`UsageError` when it is not a directory, belongs to another
    user, or group or others may write it: af runs the binaries it finds
    there, so nobody else may be able to put one there.
    """
    try:
        st = os.stat(cache_dir)
    except FileNotFoundError:
        if not create:
            return cache_dir
        try:
            cache_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = os.stat(cache_dir)
        except OSError as exc:
            raise UsageError(
                f"cannot create the twin build cache '{cache_dir}' ({exc.strerror}): "
                f"set {CACHE_ENV} to a directory of your own"
            ) from None
    except OSError as exc:
        raise UsageError(
            f"cannot use the twin build cache '{cache_dir}' ({exc.strerror}): "
            f"set {CACHE_ENV} to a directory of your own"
        ) from None
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(
            f"the twin build cache '{cache_dir}' is not a directory: "
            f"set {CACHE_ENV} to a directory (af creates it when missing)"
        )
    if st.st_uid != os.geteuid():
        raise UsageError(
            f"the twin build cache '{cache_dir}' belongs to uid {st.st_uid}, not to you (uid {os.geteuid()}): "
            f"set {CACHE_ENV} to a directory of your own"
        )
    if not owned_dirs.is_private(st):
        raise UsageError(
            f"the twin build cache '{cache_dir}' may be written by others (mode {stat.S_IMODE(st.st_mode):o}): "
            f"run 'chmod 700 {cache_dir}' or set {CACHE_ENV} to a directory of your own"
        )
    return cache_dir


def max_cache_bytes() -> int:
    """The size bound in bytes from ``AF_TWIN_CACHE_MAX_MB``: ASCII digits only (whitespace around them is
    ignored), so that ``1_0`` or digits of other scripts, which ``int`` would take, are refused."""
    raw = os.environ.get(MAX_MB_ENV, "")
    text = raw.strip()
    if not text:
        return DEFAULT_MAX_MB << 20
    if not _ASCII_DIGITS.fullmatch(text):
        raise UsageError(f"{MAX_MB_ENV} must be a non-negative integer of megabytes, got {ascii(raw)}")
    return int(text) << 20


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _private_file(path: Path) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and owned_dirs.is_private(st)


def _content(entry: Path) -> Path:
    """The file that makes ``entry`` complete: a build's checksum file, a host tiling's library, a shared
    part's one compiled file (``*.gch`` or ``*.o``)."""
    if entry.name.startswith("tiling-"):
        return entry / "libtiling.so"
    if entry.name.startswith(("pch-", "harness-")):
        return next((p for p in sorted(entry.iterdir()) if p.suffix in (".gch", ".o")), entry / "missing")
    return entry / CHECKSUM_FILE


def is_entry(path: Path) -> bool:
    """True for a cache entry of af's: a directory of the user's carrying af's marker, named and filled
    like an entry. Scratch directories (``<name>.<suffix>``), symlinks and unmarked directories never
    are; only entries are evicted or cleared."""
    if not _ENTRY_NAME.fullmatch(path.name) or owned_dirs.owner(path) is None:
        return False
    try:
        return stat.S_ISREG(os.lstat(_content(path)).st_mode)
    except OSError:
        return False


def is_usable(path: Path) -> bool:
    """True for an entry that af may use: besides :func:`is_entry`, its directory, marker and compiled
    file are writable by the user alone (anything else may have been changed by someone else)."""
    try:
        return (
            is_entry(path)
            and owned_dirs.is_private(os.lstat(path))
            and _private_file(path / OWNER_FILE)
            and _private_file(_content(path))
        )
    except OSError:
        return False


def cache_entry_ok(entry: Path) -> bool:
    """True when ``entry`` is a usable twin build whose binary matches the checksum recorded at build time."""
    exe, recorded = entry / "harness", entry / CHECKSUM_FILE
    if not is_usable(entry) or not _private_file(exe):
        return False
    try:
        return file_digest(exe) == recorded.read_text(encoding="utf-8").strip()
    except OSError:
        return False


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


def scratch(cache_dir: Path) -> list[CacheEntry]:
    """af's scratch directories in the cache (builds in progress, and those of killed builds), by name."""
    found = []
    for path in sorted(cache_dir.iterdir()) if cache_dir.is_dir() else []:
        made_by = owned_dirs.owner(path) if _SCRATCH_NAME.fullmatch(path.name) else None
        if made_by is not None:
            found.append(CacheEntry(path, entry_size(path), made_by.made))
    return found


def remove_entry(entry: Path) -> bool:
    """Move an entry of af's out of the way (atomically) and delete it; False if it is gone or not af's."""
    if not _ENTRY_NAME.fullmatch(entry.name) or owned_dirs.owner(entry) is None:
        return False
    aside = entry.with_name(f"{entry.name}.evicted-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        os.rename(entry, aside)
    except OSError:
        return False
    owned_dirs.remove(aside)  # interrupted, it is a marked scratch directory the next cleanup finds
    return True


def discard_entry(entry: Path) -> None:
    """Move a broken cache entry of af's out of the way (atomically) and delete it."""
    remove_entry(entry)


def evict(cache_dir: Path, max_bytes: int, *, keep: Path | Sequence[Path] | None = None) -> list[CacheEntry]:
    """Remove least recently used entries until entries and scratch fit in ``max_bytes``; ``keep`` stays."""
    kept = {keep.name} if isinstance(keep, Path) else {k.name for k in keep or ()}
    found = entries(cache_dir)
    total = sum(e.size for e in found) + sum(s.size for s in scratch(cache_dir))
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
    #: bytes counted against the bound: the entries' and the scratch directories'
    total_bytes: int
    max_bytes: int
    other: int
    scratch: int = 0
    scratch_bytes: int = 0


def cache_info(cache_dir: Path) -> CacheInfo:
    """Where the cache is, its entries, its scratch directories, the bytes they hold, its bound, and how
    many other items (not af's) it holds."""
    found = entries(cache_dir)
    work = scratch(cache_dir)
    names = {e.path.name for e in [*found, *work]}
    other = sum(1 for p in cache_dir.iterdir() if p.name not in names) if cache_dir.is_dir() else 0
    work_bytes = sum(s.size for s in work)
    return CacheInfo(
        cache_dir,
        len(found),
        sum(e.size for e in found) + work_bytes,
        max_cache_bytes(),
        other,
        len(work),
        work_bytes,
    )


@attrs.frozen
class Cleared:
    entries: list[CacheEntry]
    #: scratch directories of killed builds
    scratch: list[CacheEntry]


def clear_cache(cache_dir: Path) -> Cleared:
    """Remove every entry and every stale scratch directory, nothing else; returns what was removed."""
    sizes = {s.path: s for s in scratch(cache_dir)}
    gone = [sizes[p] for p in clean_stale_builds(cache_dir) if p in sizes]
    return Cleared([e for e in entries(cache_dir) if remove_entry(e.path)], gone)


def clean_stale_builds(cache_dir: Path, *, now: float | None = None) -> list[Path]:
    """Remove af's scratch directories of killed builds (:func:`af_core.owned_dirs.is_stale`); returns them."""
    return owned_dirs.clean_stale(cache_dir, _SCRATCH_NAME, now=now)
