"""Where the official-header check keeps what it can reuse.

One directory holds the unpacked asc-devkit tarballs (keyed by the tarball's
content hash), the precompiled headers and the per-kernel results. It is
``AF_ASCENDC_CACHE`` when set, else ``$XDG_CACHE_HOME/af-ascendc``, else
``~/.cache/af-ascendc``. Everything is written to a temporary name first and
renamed into place, so parallel checkers never see half a file.

The directories (``src-<key>``, ``tiling-<key>``, ``pch-<key>``) are built
in marked scratch directories (:mod:`af_core.owned_dirs`); before building
one, the scratch directories that killed checkers left are removed -- only
those, found by their marker and name, never anything else in the directory.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from af_core import owned_dirs

CACHE_ENV = "AF_ASCENDC_CACHE"
#: Names of the scratch directories the check builds its directories in.
SCRATCH_NAME = owned_dirs.scratch_pattern(r"(?:src|tiling|pch)-[0-9a-f]{24}")


def default_cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "af-ascendc"


def digest(*parts: str | bytes) -> str:
    """A short stable hash of ``parts`` (each one length-prefixed, so no two joins collide)."""
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()[:24]


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:24]


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def build_in_cache(final: Path, fill: Callable[[Path], None], usable: Callable[[Path], bool]) -> Path:
    """``final`` (in the cache) built by ``fill`` in a marked scratch directory, after removing the
    stale scratch directories of killed checkers; where it ended up (:func:`af_core.owned_dirs.build_dir`)."""
    final.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new cache is private
    owned_dirs.clean_stale(final.parent, SCRATCH_NAME)
    return owned_dirs.build_dir(final, fill, usable)


def unpack_once(tarball: Path, cache_dir: Path) -> tuple[Path, str]:
    """``tarball`` unpacked into ``cache_dir/src-<content hash>`` once (the source is only read; a tree
    unpacked meanwhile by another process is used as it is); the directory and the hash."""
    import tarfile

    key = file_digest(tarball)
    final = cache_dir / f"src-{key}"
    if not final.is_dir():

        def fill(work: Path) -> None:
            with tarfile.open(tarball) as tar:
                tar.extractall(work, filter="data")

        final = build_in_cache(final, fill, Path.is_dir)
    return final, key


def tarballs(directory: Path, patterns: tuple[str, ...]) -> list[Path]:
    """The files of ``directory`` matching any of ``patterns``, sorted."""
    return sorted({p for pattern in patterns for p in directory.glob(pattern)})


def files_digest(directory: Path, pattern: str) -> tuple[list[Path], str]:
    """The files under ``directory`` matching ``pattern`` (sorted) and a hash of their relative paths and
    contents (the stand-ins' part of every cached verdict's key)."""
    files = sorted(p for p in directory.rglob(pattern) if p.is_file())
    parts: list[str | bytes] = []
    for p in files:
        parts += [p.relative_to(directory).as_posix(), p.read_bytes()]
    return files, digest(*parts)
