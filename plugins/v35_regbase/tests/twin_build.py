"""Compile C++ programs against the CPU twin headers and run them.

Every call builds from scratch in a fresh directory: nothing is cached. A build
failure (including any warning, since warnings are errors here) raises
:class:`TwinBuildError` carrying the compiler's output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import af_v35_regbase

INCLUDE_DIR = Path(af_v35_regbase.__file__).parent / "twin" / "include"

# The flags the project builds kernels with, plus the warning set the headers must pass.
BASE_FLAGS = ("-std=c++17", "-O1", "-g0", "-pthread", "-DAF_CPU_TWIN=1")
WARNING_FLAGS = ("-Wall", "-Wextra", "-Werror")
SANITIZE_FLAGS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer")
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
    return shutil.which(os.environ.get("CXX", "g++"))


def build(source: str, workdir: Path, *, sanitize: bool = False, extra_flags: Sequence[str] = ()) -> Path:
    """Compile `source` in `workdir`; return the executable's path."""
    cxx = compiler()
    if cxx is None:
        raise TwinBuildError("no C++ compiler found (set CXX or install g++)")
    workdir.mkdir(parents=True, exist_ok=True)
    src = workdir / "prog.cpp"
    exe = workdir / "prog"
    src.write_text(source)
    cmd = [cxx, *BASE_FLAGS, *WARNING_FLAGS, f"-I{INCLUDE_DIR}"]
    if sanitize:
        cmd += SANITIZE_FLAGS
    cmd += [*extra_flags, str(src), "-o", str(exe)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise TwinBuildError(f"{' '.join(cmd)}\n{done.stdout}{done.stderr}")
    return exe


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
