"""The C++ toolchain: the one place that knows the compiler, its flags and how a compile fails.

Every caller that compiles C++ (the twin runner, the native host tiling,
the benchmarks, the tests of the twin headers, the official-header check)
finds the compiler, builds its command lines and runs the compiler here, so
a flag is changed in one place and a failing compile reads the same
everywhere:

- :func:`compiler` is ``$CXX`` or ``g++``; :func:`compiler_version` is the
  first line of its ``--version`` (part of every cache key; asked once per
  process and compiler);
- :class:`Flags` is the one flag set: the language standard, the
  optimisation level (:data:`OPTIMIZE`, chosen by measurement, see
  CHANGELOG.md, "Measurement history"), the twin's define, the warning set the twin headers must
  pass, the sanitizers, position-independent code for shared libraries;
- :func:`compile_units` compiles translation units to objects, several at
  once (``jobs``); :func:`link` makes an executable or shared library;
- :func:`precompile` builds a precompiled header into a directory, built in a
  marked scratch directory (:mod:`af_core.owned_dirs`) and renamed into
  place so that concurrent processes never see half a file;
- :func:`run` runs the compiler; a failure raises :class:`CompileError`
  whose first line carries the compiler's first diagnostic
  (``file:line:col: error: ...``) and whose next lines carry a few more,
  trimmed; the whole output is in ``.log``.

A leaf module: it imports the standard library, :mod:`af_core.errors` and
:mod:`af_core.owned_dirs` only.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from af_core.errors import ToolchainError, TwinError
from af_core.owned_dirs import build_dir

#: The compiler's environment variable and its default.
CXX_ENV = "CXX"
DEFAULT_CXX = "g++"
#: The language standard of every compile.
STANDARD = "-std=c++17"
#: The optimisation level of twin builds: the one with the least build + run time on the corpus
#: (measured with ``python benchmarks/run_benchmarks.py --only optlevel``; the table: CHANGELOG.md,
#: "Measurement history").
OPTIMIZE = "-Og"
#: The twin's define: code under ``#if defined(AF_CPU_TWIN)`` is compiled.
TWIN_DEFINES = ("-DAF_CPU_TWIN=1",)
#: The twin's common template instances (``af_twin/instances.h``): declared extern in a translation unit
#: compiled with the first define, defined in the one object compiled with the second. A twin build
#: compiles its kernel with the first and the harness main with the second, so the kernel's compile
#: does not generate code for them again (about a sixth of its compiler time, see CHANGELOG.md,
#: "Measurement history").
TWIN_EXTERN_INSTANCES = "-DAF_TWIN_EXTERN_INSTANCES=1"
TWIN_INSTANTIATE = "-DAF_TWIN_INSTANTIATE=1"
#: The warnings the twin headers' own tests compile with (warnings are errors there).
STRICT_WARNINGS = ("-Wall", "-Wextra", "-Werror")
#: The warnings the generated host tiling must pass.
TILING_WARNINGS = ("-Wall", "-Werror")
#: AddressSanitizer and UndefinedBehaviorSanitizer, stopping at the first report.
SANITIZE_FLAGS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer")
#: Seconds one compiler process may take.
TIMEOUT_S = 600.0
#: Diagnostics shown in a :class:`CompileError`'s message (the log keeps them all), and their width.
SHOWN_DIAGNOSTICS = 8
SHOWN_WIDTH = 400

_DIAGNOSTIC = re.compile(r"^(?P<where>[^\s:][^:]*:\d+(?::\d+)?): (?P<kind>fatal error|error): (?P<text>.*)$")
_LINKER = re.compile(r"(undefined reference to|multiple definition of|cannot find -l|ld returned)")


class CompileError(TwinError):
    """The compiler rejected a translation unit, or the linker its objects.

    ``diagnostics`` are the error lines (``file:line:col: error: ...``) in the
    order the compiler printed them, ``command`` the failing command line
    and ``log`` the compiler's whole output.
    """

    def __init__(
        self, what: str, returncode: int, log: str, command: Sequence[str], *, workdir: Path | None = None
    ) -> None:
        shown = _shorten(log, workdir)
        self.what = what
        self.returncode = returncode
        self.command = tuple(command)
        self.diagnostics = tuple(first_diagnostics(shown, limit=None))
        head = f"{what} does not compile ({Path(self.command[0]).name} exit {returncode})"
        lines = [_trim(d) for d in self.diagnostics[:SHOWN_DIAGNOSTICS]] or _tail(shown)
        more = len(self.diagnostics) - SHOWN_DIAGNOSTICS
        if more > 0:
            lines.append(f"... and {more} more error(s)")
        first, rest = (lines[0], lines[1:]) if lines else ("no diagnostic printed", [])
        super().__init__("\n".join([f"{head}: {first}", *rest]), log=shown)


def first_diagnostics(log: str, *, limit: int | None = SHOWN_DIAGNOSTICS) -> list[str]:
    """The compiler's error lines (and linker errors) in order, at most ``limit`` (None: all)."""
    found = []
    for line in log.splitlines():
        if _DIAGNOSTIC.match(line) or (_LINKER.search(line) and "collect2" not in line):
            found.append(line.strip())
            if limit is not None and len(found) >= limit:
                break
    return found


def _trim(line: str) -> str:
    return line if len(line) <= SHOWN_WIDTH else line[: SHOWN_WIDTH - 3] + "..."


def _tail(log: str, lines: int = 8) -> list[str]:
    return [_trim(line) for line in log.strip().splitlines()[-lines:]]


def _shorten(log: str, workdir: Path | None) -> str:
    """Paths inside the scratch directory of a build shown relative to it (they name nothing that lasts)."""
    if workdir is None:
        return log
    return log.replace(f"{workdir}{os.sep}", "").replace(str(workdir), ".")


# -- the compiler ------------------------------------------------------------------------------------------
def compiler() -> str:
    """The C++ compiler: ``$CXX``, else ``g++``."""
    return os.environ.get(CXX_ENV) or DEFAULT_CXX


def compiler_path(cxx: str | None = None) -> str | None:
    """The compiler's executable on ``PATH`` (or as given), None when there is none."""
    return shutil.which(cxx or compiler())


@functools.lru_cache(maxsize=8)
def compiler_version(cxx: str | None = None) -> str:
    """The first line of ``cxx --version`` (raises :class:`ToolchainError` when it does not run)."""
    cxx = cxx or compiler()
    try:
        out = subprocess.run(
            [cxx, "--version"], capture_output=True, text=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise ToolchainError(f"C++ compiler '{cxx}' is not usable: {exc}") from None
    return out.splitlines()[0] if out.strip() else cxx


# -- flags -------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Flags:
    """One compile's flags; :meth:`args` is the command-line form, in a fixed order."""

    optimize: str = OPTIMIZE
    defines: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    sanitize: bool = False
    pic: bool = False
    extra: tuple[str, ...] = ()

    def args(self) -> list[str]:
        return [
            STANDARD,
            self.optimize,
            "-g0",
            "-pthread",
            *self.defines,
            *self.warnings,
            *(SANITIZE_FLAGS if self.sanitize else ()),
            *(("-fPIC",) if self.pic else ()),
            *self.extra,
        ]

    def replace(self, **changes: Any) -> Flags:
        return dataclasses.replace(self, **changes)

    def digest(self) -> str:
        """A hash of the flags and the compiler version: part of the key of anything built with them."""
        return digest(" ".join(self.args()), compiler_version())


#: Kernels and the harness on the CPU twin.
TWIN = Flags(defines=TWIN_DEFINES)
#: Programs against the twin headers in the headers' own tests: every warning is an error.
TWIN_STRICT = Flags(defines=TWIN_DEFINES, warnings=STRICT_WARNINGS)
#: The generated host tiling as a shared library loaded in-process.
HOST_TILING = Flags(optimize="-O2", warnings=TILING_WARNINGS, pic=True)


def digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


_tree_memo: dict[str, tuple[tuple, str]] = {}


def tree_digest(dirs: Sequence[str | Path]) -> str:
    """A hash of every file under ``dirs`` (relative names and bytes); recomputed only when a file changed."""
    h = hashlib.sha256()
    for d in dirs:
        root = Path(d)
        files = sorted(p for p in root.rglob("*") if p.is_file())
        stamp = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
        memo = _tree_memo.get(str(root))
        if memo is None or memo[0] != stamp:
            t = hashlib.sha256()
            for p in files:
                t.update(str(p.relative_to(root)).encode())
                t.update(p.read_bytes())
            memo = (stamp, t.hexdigest())
            _tree_memo[str(root)] = memo
        h.update(memo[1].encode())
    return h.hexdigest()


# -- running -----------------------------------------------------------------------------------------------
def run(
    command: Sequence[str],
    *,
    what: str,
    cwd: Path | None = None,
    timeout: float = TIMEOUT_S,
    check: bool = True,
) -> subprocess.CompletedProcess:
    """Run a compiler command; :class:`CompileError` (message: its first diagnostics) when it fails.

    With ``check=False`` a failing compile is returned like any other (the
    caller reads its diagnostics); a compiler that cannot be started is a
    :class:`ToolchainError` either way.
    """
    try:
        proc = subprocess.run(list(command), cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except OSError as exc:
        raise ToolchainError(
            f"C++ compiler '{command[0]}' cannot be run ({exc.strerror or exc}); set {CXX_ENV} or install g++"
        ) from None
    except subprocess.TimeoutExpired:
        raise CompileError(
            what, -1, f"error: the compiler did not finish within {timeout:g} s", command
        ) from None
    if check and proc.returncode != 0:
        raise CompileError(what, proc.returncode, proc.stdout + proc.stderr, command, workdir=cwd)
    return proc


@dataclasses.dataclass(frozen=True)
class Unit:
    """A compile of ``sources`` (relative to the work directory) to objects named after them."""

    sources: tuple[str, ...]
    what: str
    flags: Flags
    includes: tuple[str, ...] = ()

    def objects(self) -> list[str]:
        return [str(Path(s).with_suffix(".o")) for s in self.sources]

    def command(self, cxx: str) -> list[str]:
        return [cxx, *self.flags.args(), *(f"-I{d}" for d in self.includes), "-c", *self.sources]


def compile_units(
    units: Sequence[Unit],
    workdir: Path,
    *,
    jobs: int = 2,
    cxx: str | None = None,
    timings: dict[str, float] | None = None,
) -> list[str]:
    """Compile every unit in ``workdir`` (``jobs`` compiler processes at once); the objects, in order.

    The first failing unit (in the order given) raises its :class:`CompileError`
    once all have finished. ``timings`` receives each unit's wall seconds by ``what``.
    """
    cxx = cxx or compiler()

    def one(unit: Unit) -> tuple[float, CompileError | None]:
        start = time.perf_counter()
        try:
            run(unit.command(cxx), what=unit.what, cwd=workdir)
        except CompileError as exc:
            return time.perf_counter() - start, exc
        return time.perf_counter() - start, None

    if jobs <= 1 or len(units) <= 1:
        outcomes = [one(u) for u in units]
    else:
        with ThreadPoolExecutor(max_workers=min(jobs, len(units))) as pool:
            outcomes = list(pool.map(one, units))
    for unit, (seconds, _) in zip(units, outcomes, strict=True):
        if timings is not None:
            timings[unit.what] = seconds
    for _, error in outcomes:
        if error is not None:
            raise error
    return [obj for unit in units for obj in unit.objects()]


def link(
    objects: Sequence[str | Path],
    output: str,
    workdir: Path,
    flags: Flags,
    *,
    what: str,
    shared: bool = False,
    cxx: str | None = None,
) -> Path:
    """Link ``objects`` into ``workdir/output`` (an executable, or a shared library when ``shared``)."""
    cxx = cxx or compiler()
    command = [cxx, *flags.args(), *(("-shared",) if shared else ()), *map(str, objects), "-o", output]
    run(command, what=what, cwd=workdir)
    return workdir / output


def build_program(
    sources: Sequence[str | Path],
    output: Path,
    flags: Flags,
    *,
    includes: Sequence[str | Path] = (),
    what: str = "program",
    cxx: str | None = None,
) -> Path:
    """Compile and link ``sources`` into the executable ``output`` in one compiler call."""
    cxx = cxx or compiler()
    command = [cxx, *flags.args(), *(f"-I{d}" for d in includes), *map(str, sources), "-o", str(output)]
    run(command, what=what, cwd=output.parent)
    return output


# -- precompiled headers -----------------------------------------------------------------------------------
def precompile(
    header: str,
    directory: Path,
    flags: Flags,
    *,
    includes: Sequence[str | Path] = (),
    text: str | None = None,
    cxx: str | None = None,
    what: str | None = None,
) -> Path:
    """``directory/<header>.gch``: ``header`` precompiled with ``flags``; built once, atomically.

    ``header`` is found on ``includes`` (as ``#include "header"`` would), or
    is written into ``directory`` from ``text``. The directory is built under
    a marked scratch name beside it and renamed into place
    (:func:`af_core.owned_dirs.build_dir`); a concurrent build of the same
    directory that wins the race is used as it is. A precompiled header is
    only valid with the flags it was built with: key ``directory`` by
    :meth:`Flags.digest` (g++ ignores one built with other flags).
    """
    gch = directory / f"{header}.gch"
    if gch.is_file():
        return gch
    directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new cache is private

    def fill(work: Path) -> None:
        precompile_into(header, work, flags, includes=includes, text=text, cxx=cxx, what=what)

    built = build_dir(directory, fill, lambda final: (final / f"{header}.gch").is_file())
    return built / f"{header}.gch"


def precompile_into(
    header: str,
    work: Path,
    flags: Flags,
    *,
    includes: Sequence[str | Path] = (),
    text: str | None = None,
    cxx: str | None = None,
    what: str | None = None,
) -> Path:
    """``work/<header>.gch`` compiled in place: the step of :func:`precompile` for callers that publish
    the directory themselves (the twin cache, which checks more than a file's presence)."""
    if text is not None:
        (work / header).write_text(text, encoding="utf-8")
        source = str(work / header)
    else:
        source = next((str(Path(d) / header) for d in includes if (Path(d) / header).is_file()), header)
    command = [
        cxx or compiler(),
        *flags.args(),
        *(f"-I{d}" for d in includes),
        "-x",
        "c++-header",
        source,
        "-o",
        str(work / f"{header}.gch"),
    ]
    run(command, what=what or f"precompiled header {header}", cwd=work)
    return work / f"{header}.gch"
