"""Compile C++ programs against the CPU twin headers and run them.

Every program is built in a fresh directory, with the flags of
:mod:`af_core.toolchain` (the twin's, plus the warning set the headers must
pass); only the twin headers are precompiled, once per header version and
flag set, in the twin cache (a program that includes ``kernel_operator.h``
first uses them; one built with extra flags never does). A build failure
(including any warning, since warnings are errors here) raises
:class:`TwinBuildError` carrying the compiler's output.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import af_v35_regbase

from af_core import toolchain
from af_core.twin.cache import default_cache_dir

INCLUDE_DIR = Path(af_v35_regbase.__file__).parent / "twin" / "include"

# The flags the project builds kernels with, plus the warning set the headers must pass.
BASE_FLAGS = tuple(toolchain.TWIN.args())
WARNING_FLAGS = toolchain.STRICT_WARNINGS
SANITIZE_FLAGS = toolchain.SANITIZE_FLAGS
#: ``main`` of a multi-case test program: runs the ``kCases`` entry named by argv[1] (exit 2 if unknown)
CASE_MAIN = r"""
int main(int argc, char** argv) {
    const std::string name = argc > 1 ? argv[1] : "";
    for (const Case& c : kCases) {
        if (name == c.name) {
            c.fn();
            return 0;
        }
    }
    std::fprintf(stderr, "unknown case '%s'\n", name.c_str());
    return 2;
}
"""
SANITIZE_ENV = {
    "ASAN_OPTIONS": "abort_on_error=0:detect_leaks=0",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
}


class TwinBuildError(RuntimeError):
    """g++ rejected a twin program."""


def compiler() -> str | None:
    """Path of the C++ compiler ($CXX or g++), or None when there is none."""
    return toolchain.compiler_path()


def precompiled_headers(flags: toolchain.Flags) -> Path:
    """The directory holding ``kernel_operator.h.gch`` for ``flags`` (built on first use)."""
    key = toolchain.tree_digest([INCLUDE_DIR]) + flags.digest()
    directory = default_cache_dir() / f"pch-{toolchain.digest(key)[:24]}"
    toolchain.precompile(
        "kernel_operator.h", directory, flags, includes=[INCLUDE_DIR], what="the twin headers (precompiled)"
    )
    return directory


def build(source: str, workdir: Path, *, sanitize: bool = False, extra_flags: Sequence[str] = ()) -> Path:
    """Compile `source` in `workdir`; return the executable's path."""
    if compiler() is None:
        raise TwinBuildError("no C++ compiler found (set CXX or install g++)")
    workdir.mkdir(parents=True, exist_ok=True)
    src = workdir / "prog.cpp"
    exe = workdir / "prog"
    src.write_text(source)
    flags = toolchain.TWIN_STRICT.replace(sanitize=sanitize, extra=tuple(extra_flags))
    includes = [INCLUDE_DIR] if extra_flags else [precompiled_headers(flags), INCLUDE_DIR]
    try:
        toolchain.build_program([src], exe, flags, includes=includes, what="twin test program")
    except toolchain.CompileError as exc:
        raise TwinBuildError(f"{' '.join(exc.command)}\n{exc.log}") from None
    return exe


def syntax_check(
    source: str, workdir: Path, *, strict: bool = True, extra_flags: Sequence[str] = ()
) -> subprocess.CompletedProcess:
    """``g++ -fsyntax-only`` over `source` against the twin (``strict``: warnings are errors)."""
    cxx = compiler()
    if cxx is None:
        raise TwinBuildError("no C++ compiler found (set CXX or install g++)")
    workdir.mkdir(parents=True, exist_ok=True)
    src = workdir / "unit.cpp"
    src.write_text(source)
    base = toolchain.TWIN_STRICT if strict else toolchain.TWIN
    flags = base.replace(extra=tuple(extra_flags))
    includes = [INCLUDE_DIR] if extra_flags else [precompiled_headers(flags), INCLUDE_DIR]
    command = [cxx, *flags.args(), *(f"-I{d}" for d in includes), "-fsyntax-only", str(src)]
    return toolchain.run(command, what="twin syntax check", check=False, timeout=600)


def syntax_errors(source: str, workdir: Path, *, strict: bool = True, extra_flags: Sequence[str] = ()) -> str:
    """The compiler's output of :func:`syntax_check` ('' when `source` compiles)."""
    done = syntax_check(source, workdir, strict=strict, extra_flags=extra_flags)
    return "" if done.returncode == 0 else done.stderr


def run(
    exe: Path,
    args: Sequence[str] = (),
    *,
    stdin: str | None = None,
    sanitize: bool = False,
    timeout: float = 60.0,
) -> tuple[int, str, str]:
    """Run a built program; return (returncode, stdout, stderr)."""
    env = dict(os.environ)
    if sanitize:
        env.update(SANITIZE_ENV)
    done = subprocess.run(
        [str(exe), *map(str, args)], input=stdin, capture_output=True, text=True, timeout=timeout, env=env
    )
    return done.returncode, done.stdout, done.stderr


def build_and_run(
    source: str,
    args: Sequence[str] = (),
    *,
    stdin: str | None = None,
    sanitize: bool = False,
    extra_flags: Sequence[str] = (),
    timeout: float = 60.0,
) -> tuple[int, str, str]:
    """Compile `source` in a temporary directory, run it once, return (returncode, stdout, stderr)."""
    with tempfile.TemporaryDirectory(prefix="af-twin-") as tmp:
        exe = build(source, Path(tmp), sanitize=sanitize, extra_flags=extra_flags)
        return run(exe, args, stdin=stdin, sanitize=sanitize, timeout=timeout)
