"""Writing artifacts: safe names from user text, and all-or-nothing writes.

Output file and directory names can come from user text (graph file names)
or plugin text (template names), so :func:`safe_component` turns any text
into one path component: no separators, no ``..``, no control characters,
bounded length. :func:`write_tree` writes a set of files into a directory
so that a failure half-way (a full disk, a permission error, Ctrl-C) never
leaves a truncated file under the target: everything is written to a
scratch directory beside the files first and then renamed into place.

:func:`write_owned_tree` also makes the directory the writer's: it writes a
manifest (:data:`MANIFEST`) listing each file it wrote with its SHA-256, and
the next write into that directory removes the files the previous manifest
lists that it does not write again (a picture of a case the new kernel does
not have). Only those: an entry that is not a plain file name of the
directory, a file that is no longer a regular file (a symbolic link, a
directory) or whose content changed since is left alone, and so is every
file no manifest lists.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import stat
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from af_core.errors import OutputError

#: Longest path component :func:`safe_component` returns (filesystems allow 255 bytes; keep room for suffixes).
MAX_COMPONENT = 64


def safe_component(text: str, *, limit: int = MAX_COMPONENT) -> str:
    """``text`` as one portable path component: ``[A-Za-z0-9._-]``, no leading dot, at most ``limit`` chars.

    Other characters become ``_``. When the text had to change or be cut, a
    short hash of the original is appended, so two different texts rarely map
    to one name (callers still check for collisions).
    """
    text = unicodedata.normalize("NFC", str(text))
    kept = "".join(ch if (ch.isascii() and (ch.isalnum() or ch in "._-")) else "_" for ch in text)
    kept = kept.lstrip(".") or "_"
    if kept == text and len(kept) <= limit:
        return kept
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{kept[: limit - 9]}-{digest}"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def check_output_dir(out: Path) -> None:
    """Refuse an ``-o`` that exists and is not a directory (before any work is done)."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"output '{out}' exists and is not a directory")


def write_tree(out: Path, files: Mapping[str, str]) -> None:
    """Write ``files`` (name -> text) into directory ``out``, all or nothing per file.

    A new ``out`` appears at once (the scratch directory is renamed to it); in
    an existing ``out`` each file is replaced atomically, so readers see the
    old or the new file, never a truncated one. The scratch directory is
    removed whatever happens.
    """
    _write_tree(Path(out), files, {}, None)


def _write_tree(
    out: Path, files: Mapping[str, str], last: Mapping[str, str], between: Callable[[], None] | None
) -> None:
    """:func:`write_tree` of ``files`` and ``last``; in an existing ``out``, ``between`` runs once
    ``files`` are in place and ``last`` is put in place after it."""
    check_output_dir(out)
    everything = {**files, **last}
    for name in everything:
        if name != safe_component(name):
            raise OutputError(f"refusing to write unsafe file name {name!r}")
    exists = out.is_dir()
    parent = out if exists else out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create output directory '{parent}': {_reason(exc)}") from None
    scratch = (
        parent / f".{safe_component(out.name or 'out', limit=32)}.afc-{os.getpid()}-{secrets.token_hex(4)}"
    )
    try:
        scratch.mkdir()
        for name in sorted(everything):
            with open(scratch / name, "w", encoding="utf-8", newline="") as fh:
                fh.write(everything[name])
                fh.flush()
                os.fsync(fh.fileno())
        if not exists:
            try:
                os.replace(scratch, out)
                return
            except OSError:
                if not out.is_dir():  # created meanwhile by someone else: fall back to file by file
                    raise
        for name in sorted(files):
            os.replace(scratch / name, out / name)
        if between is not None:
            between()
        for name in sorted(last):
            os.replace(scratch / name, out / name)
    except OSError as exc:
        raise OutputError(f"cannot write artifacts to '{out}': {_reason(exc)}") from None
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)


# -- directories a writer owns ----------------------------------------------------------------------------------
#: The manifest :func:`write_owned_tree` writes: ``{"format": MANIFEST_FORMAT, "files": {name: sha256}}``.
MANIFEST = "afc-manifest.json"
MANIFEST_FORMAT = "afc-manifest/1"
#: A manifest larger than this is not read (so nothing is removed).
MAX_MANIFEST_BYTES = 1 << 20
#: Files larger than this are never removed as stale (no artifact is this large).
MAX_LISTED_BYTES = 256 << 20


@dataclass(frozen=True)
class OwnedWrite:
    """What :func:`write_owned_tree` did: the files it wrote (the manifest included) and the files of an
    earlier write it removed, sorted names."""

    written: list[str]
    removed: list[str]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_plain_file(path: Path, limit: int) -> bytes | None:
    """The bytes of ``path`` if it is a regular file (not a link to one) of at most ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(limit + 1)
        return data if len(data) <= limit else None
    except OSError:
        return None
    finally:
        os.close(fd)


def manifest_text(files: Mapping[str, str]) -> str:
    """The manifest listing ``files`` (name -> text, as :func:`write_tree` writes them in UTF-8)."""
    listed = {name: _digest(files[name].encode("utf-8", "surrogatepass")) for name in sorted(files)}
    return json.dumps({"format": MANIFEST_FORMAT, "files": listed}, indent=1) + "\n"


def read_manifest(out: Path) -> dict[str, str]:
    """name -> SHA-256 of the files the manifest in ``out`` lists, the entries it may act on only.

    Nothing (an empty mapping) when there is no manifest, or it is not a
    regular file (a symbolic link is not followed), is too large or is not
    a manifest of this format. Entries that are not one plain file name of
    ``out`` (``../x``, an absolute path, ``a/b``, a hidden name) or the
    manifest itself, and entries without a SHA-256, are dropped.
    """
    raw = _read_plain_file(Path(out) / MANIFEST, MAX_MANIFEST_BYTES)
    if raw is None:
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return {}
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        return {}
    files = data.get("files")
    if not isinstance(files, dict):
        return {}
    return {
        name: digest
        for name, digest in files.items()
        if isinstance(name, str)
        and name != MANIFEST
        and name == safe_component(name)
        and isinstance(digest, str)
        and len(digest) == 64
        and all(ch in "0123456789abcdef" for ch in digest)
    }


def remove_listed(out: Path, listed: Mapping[str, str]) -> list[str]:
    """Remove each file of ``out`` named in ``listed`` (name -> SHA-256) that is still a regular file
    with that content; returns the names removed. Nothing else is touched; a file that cannot be
    removed is left."""
    removed = []
    for name in sorted(listed):
        if name == MANIFEST or name != safe_component(name):
            continue
        path = Path(out) / name
        data = _read_plain_file(path, MAX_LISTED_BYTES)
        if data is None or _digest(data) != listed[name]:
            continue
        try:
            if stat.S_ISREG(os.lstat(path).st_mode):
                path.unlink()
                removed.append(name)
        except OSError:
            continue
    return removed


def write_owned_tree(out: Path, files: Mapping[str, str]) -> OwnedWrite:
    """:func:`write_tree` of ``files`` and of the manifest listing them; the files an earlier manifest
    in ``out`` lists and ``files`` does not name are removed (:func:`remove_listed`) once the new
    files are in place and before the new manifest is, so an interrupted write leaves a manifest
    that still lists them."""
    out = Path(out)
    if MANIFEST in files:
        raise OutputError(f"refusing to write {MANIFEST}: the name of af's manifest")
    check_output_dir(out)
    previous = read_manifest(out) if out.is_dir() else {}
    stale = {name: digest for name, digest in previous.items() if name not in files}
    removed: list[str] = []
    _write_tree(
        out, files, {MANIFEST: manifest_text(files)}, lambda: removed.extend(remove_listed(out, stale))
    )
    return OwnedWrite(sorted([*files, MANIFEST]), removed)
