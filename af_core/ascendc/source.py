"""Find the official AscendC headers (asc-devkit) a kernel is checked against.

Accepted forms, tried in this order for the given directory or file:

- an extracted asc-devkit tree: ``include/kernel_operator.h`` and ``impl/``;
- a CANN install (``ASCEND_HOME_PATH``): the same tree under ``asc/``;
- a directory holding exactly one ``asc-devkit-*.tar.xz`` (or ``.tar.gz``), or
  that tarball itself: unpacked once into the cache, keyed by the tarball's
  content hash (a temporary directory renamed into place; the source stays
  untouched, it may be read-only).

Without an explicit location, ``AF_ASCENDC_SRC`` names one. The SIMT side of
``kernel_operator.h`` includes the CPU-debug SIMT stubs that ship with the
extract under ``tests/api/simt_api/common_simt/``; their directory is part
of the result.
"""

from __future__ import annotations

import functools
import os
import tarfile
from pathlib import Path

import attrs

from af_core.ascendc.cache import default_cache_dir, digest, file_digest, tarballs, unpack_once
from af_core.errors import AfError

SOURCE_ENV = "AF_ASCENDC_SRC"
SIMT_STUBS = Path("tests") / "api" / "simt_api" / "common_simt"
_TARBALL_PATTERNS = ("asc-devkit-*.tar.xz", "asc-devkit-*.tar.gz", "asc-devkit-*.tgz")


class AscendcSourceError(AfError):
    """No usable official AscendC header tree at the given place."""


@attrs.frozen
class AscendcSource:
    """An asc-devkit header tree ready for g++.

    ``identity`` changes whenever the headers may differ (the tarball hash, or
    for a plain directory its path and a digest of every file's relative path
    and content, computed once per process); cached results are keyed by it.
    """

    root: Path
    simt_stubs: Path
    identity: str
    origin: str

    def include_dirs(self) -> list[Path]:
        """The include path of the README's CPU-debug recipe, relative to the tree."""
        rel = (
            ".",
            "include",
            "include/basic_api",
            "include/basic_api/reg_compute",
            "include/simt_api",
            "include/simt_api/cpp",
            "include/c_api",
            "impl",
            "impl/basic_api",
            "impl/basic_api/reg_compute",
            "impl/simt_api",
            "impl/c_api",
        )
        return [self.root / r for r in rel] + [self.simt_stubs]

    def contains(self, path: str | Path) -> bool:
        """Whether ``path`` lies inside the official tree (headers or the SIMT stubs)."""
        try:
            resolved = Path(os.path.normpath(path)).resolve()
        except OSError:
            return False
        return resolved.is_relative_to(self.root.resolve())


def _is_tree(path: Path) -> bool:
    return (path / "include" / "kernel_operator.h").is_file() and (path / "impl").is_dir()


def _simt_stubs(root: Path) -> Path:
    candidate = root / SIMT_STUBS
    if (candidate / "simt_stub.h").is_file():
        return candidate
    for found in sorted(root.rglob("simt_stub.h")):
        return found.parent
    raise AscendcSourceError(
        f"{root} has the AscendC headers but no CPU-debug SIMT stubs (simt_stub.h, "
        f"expected under {SIMT_STUBS})"
    )


def _tree_files(root: Path, stubs: Path) -> list[tuple[str, Path]]:
    """(relative path, path) of every file the check may read: ``include/``, ``impl/`` and the SIMT stubs.

    ``impl/`` also holds the script and ``include/`` the ``*tilingdata.h``
    files that ``kernel_tiling.h`` is generated from. Links to directories are
    followed as g++ follows them, each directory walked once (no link loops).
    """
    found: dict[str, Path] = {}
    walked: set[tuple[int, int]] = set()
    for top in (root / "include", root / "impl", stubs):
        for current, dirs, files in os.walk(top, followlinks=True):
            st = os.stat(current)
            if (st.st_dev, st.st_ino) in walked:
                dirs[:] = []
                continue
            walked.add((st.st_dev, st.st_ino))
            dirs.sort()
            for name in files:
                path = Path(current) / name
                found.setdefault(path.relative_to(root).as_posix(), path)
    return sorted(found.items())


@functools.cache
def _tree_identity(root: Path, stubs: Path) -> str:
    """The tree's path and a digest of its files' relative paths and contents (once per process).

    Keyed on content, not on sizes and times: an edited header deep in
    ``impl/`` changes the identity, and with it every cached verdict's key.
    """
    parts = [str(root.resolve())]
    for rel, path in _tree_files(root, stubs):
        if path.is_file():
            parts += [rel, file_digest(path)]
        else:  # a dangling link, or no regular file
            parts += [rel, f"link to {os.readlink(path)}" if path.is_symlink() else "not a file"]
    return digest(*parts)


def _unpack(tarball: Path, cache_dir: Path) -> tuple[Path, str]:
    """Unpack ``tarball`` into ``cache_dir/src-<hash>`` once; return the tree and the hash."""
    final, key = unpack_once(tarball, cache_dir)
    return _find_root(final) or final, key


def _find_root(path: Path) -> Path | None:
    """The tree itself, its ``asc/`` (CANN install) or its single top-level directory."""
    for candidate in (path, path / "asc"):
        if _is_tree(candidate):
            return candidate
    children = [c for c in path.iterdir() if c.is_dir()] if path.is_dir() else []
    if len(children) == 1 and _is_tree(children[0]):
        return children[0]
    return None


def _tarballs(directory: Path) -> list[Path]:
    return tarballs(directory, _TARBALL_PATTERNS)


def find_source(location: str | Path | None = None, *, cache_dir: Path | None = None) -> AscendcSource:
    """The official header tree at ``location`` (or ``AF_ASCENDC_SRC``).

    Raises :class:`AscendcSourceError` with what was looked at when none is found.
    """
    given = location if location is not None else os.environ.get(SOURCE_ENV)
    if not given:
        raise AscendcSourceError(
            f"no AscendC headers given: set {SOURCE_ENV} or pass --ascendc DIR "
            "(an asc-devkit tree, a directory holding asc-devkit-*.tar.xz, or a CANN install)"
        )
    path = Path(given).expanduser()
    if not path.exists():
        raise AscendcSourceError(f"AscendC headers: '{path}' does not exist")
    cache = cache_dir or default_cache_dir()
    if path.is_file():
        if not path.name.startswith("asc-devkit-") or not tarfile.is_tarfile(path):
            raise AscendcSourceError(f"AscendC headers: '{path}' is not an asc-devkit-*.tar.xz tarball")
        root, key = _unpack(path, cache)
        return AscendcSource(root, _simt_stubs(root), key, f"tarball {path}")
    tree = _find_root(path)
    if tree is not None:
        stubs = _simt_stubs(tree)
        return AscendcSource(tree, stubs, _tree_identity(tree, stubs), f"tree {tree}")
    tarballs = _tarballs(path)
    if len(tarballs) == 1:
        root, key = _unpack(tarballs[0], cache)
        return AscendcSource(root, _simt_stubs(root), key, f"tarball {tarballs[0]}")
    if len(tarballs) > 1:
        raise AscendcSourceError(
            f"AscendC headers: '{path}' holds several tarballs "
            f"({', '.join(t.name for t in tarballs)}); name one"
        )
    raise AscendcSourceError(
        f"AscendC headers: '{path}' has no include/kernel_operator.h with impl/, "
        "no asc/ of a CANN install and no asc-devkit-*.tar.xz"
    )
