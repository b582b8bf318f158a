"""Type-check generated host C++ against the CANN host headers with g++.

The kernel check (:mod:`af_core.ascendc`) proves a kernel against the
official AscendC API; the host side of an operator -- its tiling function,
infer-shape and infer-datatype functions and its ``OpDef`` registration -- is
C++ against CANN's metadef headers and asc-devkit's ``platform_ascendc.h``,
and is proved here the same way: ``g++ -std=c++17 -fsyntax-only`` on each
``.cpp`` of a set of generated files, with the include path of
:class:`~af_core.cann.headers.HostHeaders`.

The files are written into a private temporary directory under their own
names and compiled from there, so they include each other with
``#include "name.h"`` (found beside the including file; the directory is not
put on the include path, where a generated name could shadow an official
header) and g++ names them by those names in its diagnostics. Verdicts are
cached under a hash of every file's name and text, the header identities,
the stand-ins, the flags and the compiler version; a check of the same files
is then a file read.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import attrs

from af_core import toolchain
from af_core.ascendc.cache import default_cache_dir, digest, write_atomic
from af_core.ascendc.diagnostics import Diagnostic, parse_errors
from af_core.ascendc.source import AscendcSource
from af_core.cann.headers import HostHeaders, find_headers
from af_core.cann.standins import standins_digest
from af_core.errors import AfError

FLAGS = ("-std=c++17", "-fsyntax-only", "-w")
SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx")
TIMEOUT_S = 300
#: The directory of cached verdicts inside the check's cache.
RESULTS = "host-results"
#: A generated file's name: one plain file name, nothing that leaves the directory.
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,200}")
_LOG_LIMIT = 20000


class HostFilesError(AfError, ValueError):
    """Files that cannot be checked: a name that is not a plain file name, or no ``.cpp`` among them."""


@attrs.frozen
class FileCheck:
    """The verdict on one ``.cpp``: ``ok`` when g++ reported no error.

    Each error's ``origin`` is ``source`` (one of the checked files), ``official``
    (inside metadef or asc-devkit), ``stand-in`` or ``other`` (system headers).
    """

    name: str
    ok: bool
    errors: tuple[Diagnostic, ...]
    log: str
    seconds: float

    @property
    def first_error(self) -> Diagnostic | None:
        return self.errors[0] if self.errors else None

    def describe(self, limit: int = 5) -> str:
        if self.ok:
            return f"{self.name}: ok"
        if not self.errors:
            return f"{self.name}: g++ failed without an error line:\n{self.log[-2000:]}"
        shown = [e.format(self.name) for e in self.errors[:limit]]
        more = len(self.errors) - limit
        return "\n".join(shown + ([f"... and {more} more error(s)"] if more > 0 else []))


@attrs.frozen
class HostCheck:
    """The verdict on a set of generated files: one :class:`FileCheck` per ``.cpp``, in name order."""

    key: str
    files: tuple[FileCheck, ...]
    cached: bool

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.files)

    @property
    def failures(self) -> tuple[FileCheck, ...]:
        return tuple(f for f in self.files if not f.ok)

    @property
    def seconds(self) -> float:
        """g++'s time for the whole set (when it was compiled, also for a cached verdict)."""
        return sum(f.seconds for f in self.files)

    def file(self, name: str) -> FileCheck:
        for f in self.files:
            if f.name == name:
                return f
        raise KeyError(name)

    def describe(self, limit: int = 5) -> str:
        return "\n".join(f.describe(limit) for f in self.files)


def _validated(files: Mapping[str, str]) -> dict[str, str]:
    for name in files:
        if not _NAME.fullmatch(name) or name.strip(".") == "":
            raise HostFilesError(f"host check: {name!r} is not a plain file name")
    if not any(name.endswith(SOURCE_SUFFIXES) for name in files):
        raise HostFilesError(f"host check: no {'/'.join(SOURCE_SUFFIXES)} file among {sorted(files)}")
    return dict(sorted(files.items()))


class HostChecker:
    """g++ type checks of generated host files against one set of host headers."""

    def __init__(self, headers: HostHeaders, *, cache_dir: Path | None = None) -> None:
        self.headers = headers
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self.cxx = toolchain.compiler()
        self.identity = digest(
            headers.identity, standins_digest(), " ".join(FLAGS), toolchain.compiler_version(self.cxx)
        )

    def command(self, extra_include_dirs: Iterable[Path] = (), defines: Iterable[str] = ()) -> list[str]:
        """The g++ command line without the file: flags, ``-D`` defines, extra dirs first, then the headers'.

        Every directory is made absolute: g++ runs in the temporary directory of the files.
        """
        dirs = [Path(d).resolve() for d in (*extra_include_dirs, *self.headers.include_dirs())]
        return [self.cxx, *FLAGS, *(f"-D{d}" for d in defines), *(f"-I{d}" for d in dirs)]

    def key(
        self, files: Mapping[str, str], extra_include_dirs: Sequence[Path] = (), defines: Sequence[str] = ()
    ) -> str:
        parts = [self.identity, " ".join(defines)]
        for d in extra_include_dirs:
            parts += [str(d.resolve()), toolchain.tree_digest([d]) if d.is_dir() else "absent"]
        for name, text in sorted(files.items()):
            parts += [name, text]
        return digest(*parts)

    def check(
        self,
        files: Mapping[str, str],
        *,
        extra_include_dirs: Iterable[str | Path] = (),
        defines: Iterable[str] = (),
    ) -> HostCheck:
        """Check every ``.cpp`` of ``files`` (name -> text); cached by content.

        ``defines`` are given to g++ as ``-D`` (``OP_TILING_LIB`` and
        ``OP_PROTO_LIB`` select the other two forms of ``OP_ADD``).
        """
        sources = _validated(files)
        extra = [Path(d) for d in extra_include_dirs]
        flags = [str(d) for d in defines]
        key = self.key(sources, extra, flags)
        stored = self.cache_dir / RESULTS / f"{key}.json"
        if stored.is_file():
            try:
                return HostCheck(key, _from_json(json.loads(stored.read_text(encoding="utf-8"))), True)
            except (ValueError, KeyError, TypeError):
                pass  # a damaged entry is recomputed
        result = HostCheck(key, self._compile(sources, self.command(extra, flags)), False)
        write_atomic(stored, json.dumps(_to_json(result.files), sort_keys=True))
        return result

    def _compile(self, sources: dict[str, str], command: list[str]) -> tuple[FileCheck, ...]:
        checked = []
        with tempfile.TemporaryDirectory(prefix="af-cann-") as tmp:
            work = Path(tmp)
            for name, text in sources.items():
                (work / name).write_text(text, encoding="utf-8")
            for name in sources:
                if name.endswith(SOURCE_SUFFIXES):
                    checked.append(self._compile_one(work, name, command))
        return tuple(checked)

    def _compile_one(self, work: Path, name: str, command: list[str]) -> FileCheck:
        start = time.perf_counter()
        run = toolchain.run([*command, name], what=name, cwd=work, timeout=TIMEOUT_S, check=False)
        seconds = time.perf_counter() - start
        log = run.stderr.replace(f"{work}/", "")

        def classify(path: str) -> str:
            return (
                "source"
                if (work / path).parent == work and (work / path).is_file()
                else self.headers.classify(path)
            )

        errors = tuple(
            attrs.evolve(e, origin="source") if e.origin == "kernel" else e
            for e in parse_errors(log, classify, name)
        )
        ok = run.returncode == 0 and not errors
        return FileCheck(name, ok, errors, "" if ok else log[:_LOG_LIMIT], seconds)


def _to_json(files: tuple[FileCheck, ...]) -> dict:
    return {
        "files": [
            {
                "name": f.name,
                "ok": f.ok,
                "seconds": f.seconds,
                "log": f.log,
                "errors": [attrs.asdict(e) for e in f.errors],
            }
            for f in files
        ]
    }


def _from_json(data: dict) -> tuple[FileCheck, ...]:
    return tuple(
        FileCheck(
            str(f["name"]),
            bool(f["ok"]),
            tuple(Diagnostic(**e) for e in f["errors"]),
            str(f["log"]),
            float(f["seconds"]),
        )
        for f in data["files"]
    )


def check_host(
    files: Mapping[str, str],
    *,
    extra_include_dirs: Iterable[str | Path] = (),
    defines: Iterable[str] = (),
    metadef: str | Path | None = None,
    ascendc: str | Path | AscendcSource | None = None,
    cache_dir: Path | None = None,
) -> HostCheck:
    """Type-check generated host files (name -> text) against the CANN host headers.

    ``metadef`` and ``ascendc`` locate the headers (default ``AF_CANN_SRC`` and
    ``AF_ASCENDC_SRC``, see :func:`~af_core.cann.headers.find_headers`, which
    raises :class:`~af_core.cann.source.CannSourceError` when they are absent).
    """
    _validated(files)  # a bad name is reported before the headers are looked for
    headers = find_headers(metadef, ascendc, cache_dir=cache_dir)
    checker = HostChecker(headers, cache_dir=cache_dir)
    return checker.check(files, extra_include_dirs=extra_include_dirs, defines=defines)
