#!/usr/bin/env python3
"""Developer entry point; needs only Python 3.11 and g++.

    python3 dev.py demo    compile the sample graphs, run them on the CPU twin, show the result
    python3 dev.py test    build every test environment (one at a time), then run them (tox, in parallel)
    python3 dev.py bench   run every benchmark and rewrite BENCHMARKS.md (bench -- --only KEY: some steps)
    python3 dev.py tox ... pass anything else to tox

The first call creates .venv/ with tox in it (requirements-dev.txt); tox builds its own
environments from this checkout (nothing is installed system-wide).
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
REQUIREMENTS = ROOT / "requirements-dev.txt"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def ensure_tox() -> Path:
    tox = BIN / "tox"
    if not tox.exists():
        print("creating .venv with tox ...", flush=True)
        venv.EnvBuilder(with_pip=True, clear=False).create(VENV)
        subprocess.run(
            [str(BIN / "python"), "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)], check=True
        )
    return tox


def bench(tox: str, rest: list[str]) -> int:
    """The bench env, with the af_torch env's Python for the steps that compare with torch (built first;
    without it those steps say they did not run)."""
    env = dict(os.environ)
    if "AF_BENCH_TORCH_PYTHON" not in env:
        torch_python = ROOT / ".tox" / "af_torch" / ("Scripts" if os.name == "nt" else "bin") / "python"
        if (
            subprocess.call([tox, "run", "--notest", "-e", "af_torch"], cwd=ROOT) == 0
            and torch_python.exists()
        ):
            env["AF_BENCH_TORCH_PYTHON"] = str(torch_python)
        else:
            print(
                "dev.py bench: the af_torch env could not be built; the torch steps will not run",
                file=sys.stderr,
            )
    return subprocess.call([tox, "run", "-e", "bench", *rest], cwd=ROOT, env=env)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    command, rest = argv[0], argv[1:]
    tox = str(ensure_tox())
    jobs = str(min(2, os.cpu_count() or 1))
    if command == "test":
        # The environments are built one after another first: pip builds a local project in its
        # own folder (build/, *.egg-info), so two environments installing the same af-* package
        # at once can delete each other's files and fail. The tests then run in parallel in the
        # environments already built.
        setup = subprocess.call([tox, "run", "--notest", *rest], cwd=ROOT)
        if setup != 0:
            return setup
        args = [tox, "run-parallel", "-p", jobs, "--parallel-no-spinner", *rest]
    elif command == "bench":
        return bench(tox, rest)
    elif command in ("demo", "lint"):
        args = [tox, "run", "-e", command, *rest]
    elif command == "tox":
        args = [tox, *rest]
    else:
        print(f"unknown command '{command}'\n{__doc__}", file=sys.stderr)
        return 2
    return subprocess.call(args, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
