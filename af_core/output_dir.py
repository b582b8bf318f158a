"""Writing artifacts: safe names from user text, and all-or-nothing writes.

Output file and directory names can come from user text (graph file names)
or plugin text (template names), so :func:`safe_component` turns any text
into one path component: no separators, no ``..``, no control characters,
bounded length. :func:`write_tree` writes a set of files into a directory
so that a failure half-way (a full disk, a permission error, Ctrl-C) never
leaves a truncated file under the target: everything is written to a
scratch directory beside the files first and then renamed into place.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import unicodedata
from collections.abc import Mapping
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
    out = Path(out)
    check_output_dir(out)
    for name in files:
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
        for name in sorted(files):
            with open(scratch / name, "w", encoding="utf-8", newline="") as fh:
                fh.write(files[name])
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
    except OSError as exc:
        raise OutputError(f"cannot write artifacts to '{out}': {_reason(exc)}") from None
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
