"""Start-up time of ``afc`` and of a first compile: median wall and CPU time of fresh processes, and import times.

    python benchmarks/startup.py              # 20 runs per command, a markdown table on stdout
    python benchmarks/startup.py --runs 50

Each figure is the median of ``--runs`` fresh processes timed around
``subprocess.run`` (the interpreter's own start-up included; the first row
shows it alone), as wall time and as the CPU time (user + system) the
process used. ``afc`` is the console script beside this interpreter, or
``python -m af_core`` when there is none. The last two process rows are the
formula engine's import alone (sympy, the floor of any compile) and a fresh
process that imports the compiler and compiles the seed's minimal graph. The import rows are the cumulative
microseconds ``python -X importtime`` reports for the module, medians too.
Wall-clock figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def afc_command() -> list[str]:
    script = Path(sys.executable).with_name("afc")
    return (
        [str(script)]
        if script.is_file() and os.access(script, os.X_OK)
        else [sys.executable, "-m", "af_core"]
    )


def median_ms(cmd: list[str], runs: int, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system of the child) of ``runs`` fresh processes.

    On a shared machine the wall time grows with the load; the CPU time much less so.
    """
    wall, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(wall) * 1000, statistics.median(cpu) * 1000


def import_ms(module: str, runs: int) -> float:
    """Median cumulative import time of ``module`` (``-X importtime``), in milliseconds."""
    times = []
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"],
            capture_output=True,
            text=True,
            check=True,
        )
        for line in proc.stderr.splitlines():
            parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
            if len(parts) == 3 and parts[2] == module:
                times.append(int(parts[1]) / 1000)
    return statistics.median(times)


#: A fresh process's first compile: what ``Autofuser().compile`` costs a new user, interpreter included.
FIRST_COMPILE = (
    "from af_core.autofuser import Autofuser; from af_core.samples import seed_minimal; "
    "Autofuser().compile(seed_minimal())"
)


def core_only_env() -> dict[str, str]:
    """This environment with every installed ``af_core`` entry point disabled: what an install of af-core alone loads."""
    names = sorted({ep.name for ep in md.entry_points(group="af_core")})
    return {**os.environ, "AF_DISABLE_PLUGINS": ",".join(names)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="processes per figure (default 20)")
    args = parser.parse_args(argv)
    afc = afc_command()
    shown = "afc" if len(afc) == 1 else "python -m af_core"
    load_before = os.getloadavg()[0]
    rows = [
        ("`python -c pass` (the interpreter alone)", median_ms([sys.executable, "-c", "pass"], args.runs)),
        (f"`{shown} --help`", median_ms([*afc, "--help"], args.runs)),
        (f"`{shown} --version`", median_ms([*afc, "--version"], args.runs)),
        (
            f"`{shown} plugins` (every plugin disabled: af-core alone)",
            median_ms([*afc, "plugins"], args.runs, core_only_env()),
        ),
        (f"`{shown} plugins` (every installed plugin)", median_ms([*afc, "plugins"], args.runs)),
        (
            "`python -c 'import sympy'` (the formula engine alone)",
            median_ms([sys.executable, "-c", "import sympy"], args.runs),
        ),
        (
            "import the compiler, compile the seed's minimal graph (every installed plugin)",
            median_ms([sys.executable, "-c", FIRST_COMPILE], args.runs),
        ),
    ]
    imports = [
        ("`import af_core` (`-X importtime`, cumulative)", import_ms("af_core", args.runs)),
        ("`import af_core.cli` (`-X importtime`, cumulative)", import_ms("af_core.cli", args.runs)),
    ]
    print(
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores, "
        f"load average {load_before:.1f} before and {os.getloadavg()[0]:.1f} after, median of {args.runs} runs\n"
    )
    print("| what | median wall ms | median CPU ms |")
    print("|---|---|---|")
    for what, (wall, cpu) in rows:
        print(f"| {what} | {wall:.1f} | {cpu:.1f} |")
    for what, ms in imports:
        print(f"| {what} | {ms:.1f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
