"""The installed entry points of one group, found without importing ``importlib.metadata`` where possible.

Every process that compiles looks up the ``af_core`` entry points, and
``importlib.metadata`` costs a fresh process some 12 ms to import (it brings
the ``email`` package, ``zipfile`` and ``csv`` with it) before it reads a
single file. The lookup itself needs far less: the ``entry_points.txt`` of
each distribution on ``sys.path`` and the ``Name`` and ``Version`` lines of its
metadata. :func:`entry_points` reads those directly when discovery is the
standard kind ``importlib.metadata`` would do itself: only the standard path
finder offers distributions, and every ``sys.path`` entry is a directory (or
missing). It finds what ``importlib.metadata`` finds, in the same way:

- distributions are the ``*.dist-info`` and ``*.egg-info`` directories of each
  path entry; a distribution whose normalized name an earlier one had is
  skipped (the first one on the path is the one Python imports);
- ``entry_points.txt`` is read as INI sections of ``name = value`` lines,
  blank lines and ``#`` comments skipped;
- the name and version come from ``METADATA`` (``PKG-INFO`` for egg-info).

Anything else (a zip file on the path, a finder of another kind offering
distributions, a metadata file that cannot be read) goes to
``importlib.metadata``. tests/core/test_entry_points.py compares the two on
every group of every distribution of the environment it runs in and on
synthetic trees.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections import namedtuple
from collections.abc import Iterable, Sequence

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (``afc --version`` reads these)
if TYPE_CHECKING:
    from typing import Any

#: what importlib.metadata's EntryPoint.load accepts as a value: module, optional attribute path, extras
#: (a pattern text: ``re`` compiles it on first use, not when this module is imported)
_VALUE = r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"


class EntryPoint(namedtuple("EntryPoint", "name value group distribution version")):  # noqa: PYI024
    """One entry point (name, value, group), with the distribution that declares it (name, version).

    A named tuple, not an attrs class or typing.NamedTuple: ``afc --version`` reads entry points and
    imports neither attrs nor typing.
    """

    __slots__ = ()
    name: str
    value: str
    group: str
    distribution: str
    version: str

    def load(self) -> Any:
        """Import the module the value names and return the attribute it names (as importlib.metadata)."""
        match = re.match(_VALUE, self.value)
        if match is None:
            raise ValueError(f"entry point '{self.name}' has a malformed value {self.value!r}")
        target: Any = importlib.import_module(match.group("module"))
        for attr in filter(None, (match.group("attr") or "").split(".")):
            target = getattr(target, attr)
        return target


class _Unusual(Exception):
    """Discovery needs importlib.metadata's general path."""


def _normalize(name: str) -> str:
    """importlib.metadata's normalized distribution name: runs of ``-_.`` as one ``_``, lower case."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _standard_finders_only() -> bool:
    """Whether the standard path finder is the only import finder that offers distributions."""
    from importlib.machinery import PathFinder

    return all(finder is PathFinder or not hasattr(finder, "find_distributions") for finder in sys.meta_path)


def _metadata_dirs(path: Iterable[str]) -> Iterable[str]:
    """The ``*.dist-info`` / ``*.egg-info`` directories on ``path``, first distribution of a name only."""
    seen: set[str] = set()
    for entry in path:
        root = entry or "."
        if not os.path.isdir(root):
            if os.path.exists(root):
                raise _Unusual(root)  # a zip file or something else importlib.metadata would open
            continue
        if os.path.basename(root).lower().endswith(".egg"):
            raise _Unusual(root)  # an egg directory: its metadata is its EGG-INFO
        try:
            children = os.listdir(root)  # in the order importlib.metadata lists them
        except OSError as exc:
            raise _Unusual(root) from exc  # unreadable: importlib.metadata decides what it holds
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                if not child.endswith((".dist-info", ".egg-info")):
                    raise _Unusual(child)  # importlib.metadata names it from its metadata, not its stem
                name = _normalize(low.rpartition(".")[0].partition("-")[0])
                if name not in seen:
                    seen.add(name)
                    yield os.path.join(root, child)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise _Unusual(path) from exc


def _name_and_version(meta: str) -> tuple[str, str] | None:
    """The ``Name`` and ``Version`` header lines of a distribution's metadata file (None without one)."""
    text = _read(os.path.join(meta, "METADATA" if meta.lower().endswith(".dist-info") else "PKG-INFO"))
    if text is None:
        return None
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line
        key, sep, value = line.partition(":")
        if sep and not line[:1].isspace():
            fields.setdefault(key.strip().lower(), value.lstrip(" \t"))
    if "name" not in fields or "version" not in fields:
        raise _Unusual(meta)
    return fields["name"], fields["version"]


def _declared(meta: str, group: str) -> list[tuple[str, str]]:
    """The (name, value) pairs of ``group`` in the distribution's ``entry_points.txt``, in file order."""
    text = _read(os.path.join(meta, "entry_points.txt"))
    if text is None:
        return []
    pairs, section = [], None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == group:
            name, _, value = line.partition("=")
            pairs.append((name.strip(), value.strip()))
    return pairs


def _scan(group: str, path: Sequence[str]) -> list[EntryPoint]:
    found = []
    for meta in _metadata_dirs(path):
        pairs = _declared(meta, group)
        if not pairs:
            continue
        identity = _name_and_version(meta)
        if identity is None:
            raise _Unusual(meta)
        found += [EntryPoint(name, value, group, *identity) for name, value in pairs]
    return found


def _from_importlib_metadata(group: str, path: Sequence[str] | None) -> list[EntryPoint]:
    import importlib.metadata as md

    found: list[md.EntryPoint] = []
    if path is None:
        found += md.entry_points(group=group)
    else:  # the same first-of-a-name rule entry_points() applies to sys.path
        seen: set[str] = set()
        for dist in md.distributions(path=list(path)):
            name = getattr(dist, "_normalized_name", None) or _normalize(dist.metadata["Name"] or "")
            if name not in seen:
                seen.add(name)
                found += [ep for ep in dist.entry_points if ep.group == group]
    return [
        EntryPoint(ep.name, ep.value, group, ep.dist.metadata["Name"], ep.dist.metadata["Version"])
        if ep.dist is not None
        else EntryPoint(ep.name, ep.value, group, "unknown", "0")
        for ep in found
    ]


def entry_points(group: str, path: Sequence[str] | None = None) -> list[EntryPoint]:
    """The entry points of ``group`` of the distributions on ``path`` (default ``sys.path``)."""
    if path is None and not _standard_finders_only():
        return _from_importlib_metadata(group, None)
    try:
        return _scan(group, sys.path if path is None else path)
    except _Unusual:
        return _from_importlib_metadata(group, path)
