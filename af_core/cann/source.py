"""Find the CANN host headers (metadef) that generated host code is checked against.

Generated host code (tiling functions, infer-shape functions, op
registration) is written against CANN's metadef headers, which are not part
of asc-devkit. Accepted forms, for the given directory or file:

- an extracted metadef tree (``inc/external``, ``inc``, ``pkg_inc``), or a
  directory whose single subdirectory is one (the tarball's layout);
- a directory holding exactly one ``metadef-*.tar.xz`` (or ``.tar.gz``), or
  that tarball itself: unpacked once into the check's cache, keyed by the
  tarball's content hash (built in a temporary directory renamed into place;
  the source is never written, it may be read-only).

Without an explicit location, ``AF_CANN_SRC`` names one; without that, the
``shared/cann-metadef`` directory beside a source checkout (the place the
tox environments use for the AscendC headers too).
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import attrs

from af_core import toolchain
from af_core.ascendc.cache import default_cache_dir, digest, tarballs, unpack_once
from af_core.errors import AfError

SOURCE_ENV = "AF_CANN_SRC"
#: Include directories of the metadef tree, in search order. ``inc/external/asc`` holds
#: ``register/op_def.h`` (OpDef, ``OP_ADD``), which generated code includes as ``register/...``.
INCLUDE_DIRS = ("inc/external", "inc/external/asc", "inc", "pkg_inc")
_TARBALL_PATTERNS = ("metadef-*.tar.xz", "metadef-*.tar.gz", "metadef-*.tgz")
#: The checkout this package lives in: the parent of ``af_core/``.
_CHECKOUT = Path(__file__).resolve().parents[2]


class CannSourceError(AfError):
    """No usable CANN host headers (metadef, or the asc-devkit platform header) at the given place."""


@attrs.frozen
class MetadefSource:
    """A metadef header tree ready for g++.

    ``identity`` changes whenever the headers may differ (the tarball's hash,
    or for a plain tree its path and a digest of its files); cached verdicts
    are keyed by it.
    """

    root: Path
    identity: str
    origin: str

    def include_dirs(self) -> list[Path]:
        return [self.root / rel for rel in INCLUDE_DIRS]

    def contains(self, path: str | Path) -> bool:
        try:
            return Path(os.path.normpath(path)).resolve().is_relative_to(self.root.resolve())
        except OSError:
            return False


def checkout_default(*parts: str) -> Path | None:
    """``<checkout>/../shared/<parts>`` when this package runs from a source checkout, else None."""
    if not (_CHECKOUT / "pyproject.toml").is_file():
        return None  # an installed package: there is no checkout to be beside
    return _CHECKOUT.parent / "shared" / Path(*parts)


def _is_tree(path: Path) -> bool:
    return (path / "inc" / "external").is_dir()


def _find_root(path: Path) -> Path | None:
    """The tree itself, or its single top-level directory (``metadef/`` in the tarball)."""
    if _is_tree(path):
        return path
    children = [c for c in path.iterdir() if c.is_dir()] if path.is_dir() else []
    if len(children) == 1 and _is_tree(children[0]):
        return children[0]
    return None


def _unpack(tarball: Path, cache_dir: Path) -> MetadefSource:
    """``tarball`` unpacked into ``cache_dir/src-<hash>`` (once)."""
    final, key = unpack_once(tarball, cache_dir)
    root = _find_root(final)
    if root is None:
        raise CannSourceError(f"CANN headers: the tarball '{tarball}' holds no inc/external")
    return MetadefSource(root, key, f"tarball {tarball}")


def _tarballs(directory: Path) -> list[Path]:
    return tarballs(directory, _TARBALL_PATTERNS)


def _given(location: str | Path | None) -> Path:
    given = location if location is not None else os.environ.get(SOURCE_ENV)
    if given:
        return Path(given).expanduser()
    default = checkout_default("cann-metadef")
    if default is None or not default.exists():
        raise CannSourceError(
            f"no CANN host headers given: set {SOURCE_ENV} to a metadef tree, a directory holding "
            "metadef-*.tar.xz, or that tarball"
        )
    return default


def find_metadef(location: str | Path | None = None, *, cache_dir: Path | None = None) -> MetadefSource:
    """The metadef tree at ``location`` (default ``AF_CANN_SRC``, then the checkout's shared directory).

    Raises :class:`CannSourceError` saying what was looked at when none is found.
    """
    path = _given(location)
    if not path.exists():
        raise CannSourceError(f"CANN headers: '{path}' does not exist")
    cache = cache_dir or default_cache_dir()
    if path.is_file():
        if not path.name.startswith("metadef-") or not tarfile.is_tarfile(path):
            raise CannSourceError(f"CANN headers: '{path}' is not a metadef-*.tar.xz tarball")
        return _unpack(path, cache)
    tree = _find_root(path)
    if tree is not None:
        dirs = [d for d in (tree / "inc", tree / "pkg_inc") if d.is_dir()]
        return MetadefSource(tree, digest(str(tree.resolve()), toolchain.tree_digest(dirs)), f"tree {tree}")
    tarballs = _tarballs(path)
    if len(tarballs) == 1:
        return _unpack(tarballs[0], cache)
    if tarballs:
        names = ", ".join(t.name for t in tarballs)
        raise CannSourceError(f"CANN headers: '{path}' holds several tarballs ({names}); name one")
    raise CannSourceError(f"CANN headers: '{path}' has no inc/external and no metadef-*.tar.xz")
