"""Directories af makes inside a cache directory, and the one rule for removing any of them: only its own.

A cache directory is whatever the user names (``AF_TWIN_CACHE=$HOME`` is
allowed), so a name or an age proves nothing about who made a directory
there. Every directory af makes in a cache carries :data:`MARKER_FILE`, a
small file whose first line is :data:`MAGIC` and whose second names the host
and process that made it. af removes a directory only when it is a real
directory (not a symlink) of the current user holding such a marker, and the
caller removes only names of its own patterns; anything else -- the user's
files, directories made by versions of af before markers -- is never removed.

A build happens in a *scratch* directory ``<final name>.<random>`` (mode
0700, marked right after it is made) and is renamed to its final name when
complete, marker and all, so a reader never sees half a build; only a
process killed between making the directory and finishing the marker leaves
one that is never removed (empty, or holding nothing but a marker cut
short). A scratch
directory left behind by a killed process is *stale*: its maker no longer
runs on this host, or it was made on another host and its marker is older
than :data:`STALE_AFTER`. Removal deletes the marker last, so a removal that
is itself interrupted leaves a directory that is still found and removed
later.

A leaf module: the standard library only.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import stat
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: The owner marker in every directory af makes in a cache.
MARKER_FILE = "af-owner"
#: The marker's first line; it also tells a person who finds the file what it is.
MAGIC = "af-owned-dir 1: made by af, which may remove this directory"
#: A scratch directory made on another host is stale once its marker is this old (seconds).
STALE_AFTER = 24 * 3600

_MAX_MARKER_BYTES = 4096
_PID = re.compile(r"[0-9]{1,10}")


@dataclass(frozen=True)
class Owner:
    """Who made a directory (from its marker) and when the marker was written."""

    host: str
    pid: int
    made: float


def scratch_pattern(entry_pattern: str) -> re.Pattern[str]:
    """Names of the scratch directories of entries named by ``entry_pattern`` (a regex): ``<entry>.<suffix>``."""
    return re.compile(rf"(?:{entry_pattern})\.[A-Za-z0-9_-]+")


def marker_text() -> str:
    """The marker this process writes: the magic line, then ``<host> <pid>``."""
    return f"{MAGIC}\n{socket.gethostname()} {os.getpid()}\n"


def is_private(st: os.stat_result) -> bool:
    """True when the current user owns the file and neither group nor others may write it."""
    return st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def owner(directory: Path) -> Owner | None:
    """The maker named by ``directory``'s marker; None unless it is the current user's real directory
    holding a regular marker file of the current user whose first line is :data:`MAGIC`."""
    try:
        st = os.lstat(directory)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            return None
        # no symlink, and no FIFO that would block the read
        fd = os.open(directory / MARKER_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            mst = os.fstat(fd)
            if not stat.S_ISREG(mst.st_mode) or mst.st_uid != os.geteuid():
                return None
            data = os.read(fd, _MAX_MARKER_BYTES)
        finally:
            os.close(fd)
        magic, who, *_ = data.decode("utf-8").split("\n")
        host, pid = who.split(" ")
    except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    if magic != MAGIC or not host or not _PID.fullmatch(pid):
        return None
    return Owner(host, int(pid), mst.st_mtime)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False  # never written by a process; 0 would address this process group
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, owned by another user
    return True


def is_stale(made_by: Owner, now: float | None = None) -> bool:
    """True when the scratch directory's maker is gone: dead on this host, or elsewhere and long ago."""
    if made_by.host == socket.gethostname():
        return not _alive(made_by.pid)
    return (time.time() if now is None else now) - made_by.made > STALE_AFTER


def make_scratch(parent: Path, name: str) -> Path:
    """A new directory ``parent/<name>.<random>`` (mode 0700) carrying this process's marker."""
    work = Path(tempfile.mkdtemp(prefix=f"{name}.", dir=parent))
    (work / MARKER_FILE).write_text(marker_text(), encoding="utf-8")
    return work


def remove(directory: Path) -> bool:
    """Delete ``directory`` if af made it (see :func:`owner`), its marker last; False if it is not af's.

    The tree is walked through directory descriptors opened without following
    symlinks, so a symlink inside (or put in its place meanwhile) is removed
    as a link and its target is never touched.
    """
    if owner(directory) is None:
        return False
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        for child in os.scandir(fd):
            if child.name == MARKER_FILE:
                continue
            if child.is_dir(follow_symlinks=False):
                shutil.rmtree(child.name, ignore_errors=True, dir_fd=fd)
            else:
                _unlink(child.name, fd)
        _unlink(MARKER_FILE, fd)
    finally:
        os.close(fd)
    try:
        os.rmdir(directory)
    except OSError:
        pass  # something was added meanwhile: it stays, unmarked, and is never removed
    return True


def _unlink(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass


def seal(directory: Path) -> None:
    """Take group and other write permission off everything in ``directory`` (symlinks are left as they are).

    Files keep the modes g++ and Python gave them under the user's umask; a
    finished entry must be writable by its owner alone to be used.
    """
    for root, dirs, files in os.walk(directory, followlinks=False):
        for name in [*dirs, *files, ""]:
            path = os.path.join(root, name) if name else root
            st = os.lstat(path)
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                os.chmod(path, stat.S_IMODE(st.st_mode) & ~(stat.S_IWGRP | stat.S_IWOTH))


def publish(work: Path, final: Path) -> bool:
    """Seal the finished scratch ``work`` and rename it to ``final``; False when ``final`` exists already.

    An existing ``final`` is never replaced, not even an empty directory (a
    plain rename would silently replace that one).
    """
    seal(work)
    if os.path.lexists(final):
        return False
    try:
        os.rename(work, final)
    except OSError:
        if os.path.lexists(final):  # made meanwhile, by a concurrent build of the same thing
            return False
        raise
    return True


def build_dir(final: Path, fill: Callable[[Path], None], usable: Callable[[Path], bool]) -> Path:
    """``final`` built by ``fill`` in a scratch directory beside it and renamed into place; where it is now.

    When ``final`` appeared meanwhile and is ``usable`` (a concurrent build
    of the same thing), it is used and this build's scratch removed. When
    ``final`` is taken by something that is not usable (not af's, or not
    private), it is left alone and the build stays in its scratch directory,
    which the caller uses from there and the first cleanup after this
    process ends removes. A failing or interrupted ``fill`` leaves nothing.
    """
    work = make_scratch(final.parent, final.name)
    try:
        fill(work)
        if publish(work, final):
            return final
        if usable(final):
            remove(work)
            return final
        return work
    except BaseException:
        remove(work)
        raise


def clean_stale(parent: Path, scratch_name: re.Pattern[str], *, now: float | None = None) -> list[Path]:
    """Remove the stale scratch directories of ``parent`` whose names match ``scratch_name``; returns them."""
    removed = []
    for path in sorted(parent.iterdir()) if parent.is_dir() else []:
        if not scratch_name.fullmatch(path.name):
            continue
        made_by = owner(path)
        if made_by is not None and is_stale(made_by, now) and remove(path):
            removed.append(path)
    return removed
