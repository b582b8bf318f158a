"""Start-up time of ``afc`` and of a first compile: median wall and CPU time of fresh processes, and import times.

    python benchmarks/startup.py              # 20 runs per command, a markdown table on stdout
    python benchmarks/startup.py --runs 50

Each figure is the median of ``--runs`` fresh processes timed around
``subprocess.run`` (the interpreter's own start-up included; the first row
shows it alone), as wall time and as the CPU time (user + system) the
process used. ``afc`` is the console script beside this interpreter, or
``python -m af_core`` when there is none. Two rows are floors of any compile: the formula engine's import
alone (sympy), and sympy's whole part of a process that imports af_core: its import, the modules its first
sum imports, and an exit without the last cyclic collection (af's exit hook,
``af_core/collector.py``). The compile rows are fresh processes that import the compiler and compile
the seed's minimal graph (one also reads every artifact, the proto that is rendered on first read
included); af's share is the first of them minus each floor, printed below the table. The two floors and the two
first-compile rows run interleaved, one of each per round, and a share is the median over the rounds of
the difference within a round: on a shared machine a slow spell then falls on both sides of it. The
import rows are the cumulative microseconds ``python -X importtime`` reports for the module, medians too.
Wall-clock figures depend on the machine and its load.

Every command runs once untimed first, with Python's bytecode caches on and kept in a temporary folder
(``PYTHONPYCACHEPREFIX``; nothing is written beside the sources): the timed processes then read compiled
modules, as they do after ``pip install`` or any earlier run. A machine that sets
``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module of af from source in every process; the
last process row shows that case for the first compile.
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
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path


def afc_command() -> list[str]:
    script = Path(sys.executable).with_name("afc")
    return (
        [str(script)]
        if script.is_file() and os.access(script, os.X_OK)
        else [sys.executable, "-m", "af_core"]
    )


def bytecode_env(prefix: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this environment) with the bytecode caches on, written under ``prefix``."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(prefix)
    return env


def no_bytecode_env() -> dict[str, str]:
    """This environment with no bytecode written or read from a cache prefix: every import compiles the
    sources that have no cache beside them."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def median_ms(cmd: list[str], runs: int, env: Mapping[str, str]) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system of the child) of ``runs`` fresh processes, after
    one untimed run (which writes the bytecode caches ``env`` asks for).

    On a shared machine the wall time grows with the load; the CPU time much less so.
    """
    return medians(interleaved_ms([cmd], runs, env)[0])


def interleaved_ms(
    cmds: list[list[str]], runs: int, env: Mapping[str, str]
) -> list[tuple[list[float], list[float]]]:
    """Per command, the wall and CPU times (ms) of ``runs`` rounds that each run every command once, in
    turn, after one untimed run of each.

    A slow spell of a shared machine then falls on every command of a round alike, and the difference of
    two commands (af's share) is taken within each round, not between medians taken minutes apart.
    """
    for cmd in cmds:
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    times: list[tuple[list[float], list[float]]] = [([], []) for _ in cmds]
    for _ in range(runs):
        for cmd, (wall, cpu) in zip(cmds, times):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
            wall.append((time.perf_counter() - start) * 1000)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return times


def medians(times: tuple[list[float], list[float]]) -> tuple[float, float]:
    return statistics.median(times[0]), statistics.median(times[1])


def share(
    of: tuple[list[float], list[float]], beyond: tuple[list[float], list[float]]
) -> tuple[float, float]:
    """Median over rounds of ``of`` minus ``beyond`` (wall, CPU)."""
    return tuple(statistics.median(a - b for a, b in zip(x, y)) for x, y in zip(of, beyond))  # type: ignore[return-value]


def import_ms(module: str, runs: int, env: Mapping[str, str]) -> float:
    """Median cumulative import time of ``module`` (``-X importtime``), in milliseconds (after one untimed
    import)."""
    times = []
    cmd = [sys.executable, "-X", "importtime", "-c", f"import {module}"]
    subprocess.run(cmd, capture_output=True, check=True, env=env)
    for _ in range(runs):
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
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


#: the first compile, then every artifact read (the proto, a JSON trace of the schedule, is rendered on first
#: read), as ``afc compile`` writes them
FIRST_COMPILE_ALL_ARTIFACTS = (
    "from af_core.autofuser import Autofuser; from af_core.samples import seed_minimal; "
    "Autofuser().compile(seed_minimal()).files()"
)


#: sympy's part of any compile: its import, the modules its first sum imports, and an exit without the
#: last cyclic collection, as a process that imported af_core exits
SYMPY_FLOOR = "import atexit, gc, sympy; atexit.register(gc.freeze); sympy.Symbol('x') + 1"


def core_only_env(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` with every installed ``af_core`` entry point disabled: what an install of af-core alone loads."""
    names = sorted({ep.name for ep in md.entry_points(group="af_core")})
    return {**base, "AF_DISABLE_PLUGINS": ",".join(names)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="processes per figure (default 20)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="af-startup-pycache-") as prefix:
        return report(args.runs, bytecode_env(Path(prefix)))


def report(runs: int, env: dict[str, str]) -> int:
    """Print the table, every process run with ``env`` (bytecode caches on) unless its row says otherwise."""
    afc = afc_command()
    shown = "afc" if len(afc) == 1 else "python -m af_core"
    load_before = os.getloadavg()[0]
    rounds = interleaved_ms(
        [
            [sys.executable, "-c", code]
            for code in ("import sympy", SYMPY_FLOOR, FIRST_COMPILE, FIRST_COMPILE_ALL_ARTIFACTS)
        ],
        runs,
        env,
    )
    sympy_alone, sympy_floor, first_compile, all_artifacts = (medians(r) for r in rounds)
    rows = [
        ("`python -c pass` (the interpreter alone)", median_ms([sys.executable, "-c", "pass"], runs, env)),
        (f"`{shown} --help`", median_ms([*afc, "--help"], runs, env)),
        (f"`{shown} --version`", median_ms([*afc, "--version"], runs, env)),
        (
            f"`{shown} plugins` (every plugin disabled: af-core alone)",
            median_ms([*afc, "plugins"], runs, core_only_env(env)),
        ),
        (f"`{shown} plugins` (every installed plugin)", median_ms([*afc, "plugins"], runs, env)),
        ("`python -c 'import sympy'` (the formula engine alone)", sympy_alone),
        (
            "`import sympy`, one sum (sympy imports more modules on its first sum), the collector frozen at "
            "exit as af's exit hook does (`af_core/collector.py`)",
            sympy_floor,
        ),
        ("import the compiler, compile the seed's minimal graph (every installed plugin)", first_compile),
        ("the same, then every artifact read, the proto (rendered on first read) included", all_artifacts),
        (
            "the same with the last collection kept (`AF_EXIT_COLLECTION=full`)",
            median_ms([sys.executable, "-c", FIRST_COMPILE], runs, {**env, "AF_EXIT_COLLECTION": "full"}),
        ),
        (
            "the same with `PYTHONDONTWRITEBYTECODE=1` (a module with no cache beside its source, as af's in a "
            "checkout, is compiled in every process)",
            median_ms([sys.executable, "-c", FIRST_COMPILE], runs, no_bytecode_env()),
        ),
    ]
    imports = [
        ("`import af_core` (`-X importtime`, cumulative)", import_ms("af_core", runs, env)),
        ("`import af_core.cli` (`-X importtime`, cumulative)", import_ms("af_core.cli", runs, env)),
    ]
    print(
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores, "
        f"load average {load_before:.1f} before and {os.getloadavg()[0]:.1f} after, median of {runs} runs, "
        "bytecode caches on unless a row says otherwise\n"
    )
    print("| what | median wall ms | median CPU ms |")
    print("|---|---|---|")
    for what, (wall, cpu) in rows:
        print(f"| {what} | {wall:.1f} | {cpu:.1f} |")
    for what, ms in imports:
        print(f"| {what} | {ms:.1f} | |")
    print()
    for floor, beyond in (
        (rounds[0], "`import sympy`"),
        (rounds[1], "sympy's import, its first sum and an exit with the collector frozen"),
    ):
        (wall, cpu), (all_wall, _) = share(rounds[2], floor), share(rounds[3], floor)
        print(
            f"- af's share of a first compile beyond {beyond} (median over the {runs} rounds of the "
            f"difference within the round): {wall:.1f} ms wall, {cpu:.1f} ms CPU; with every artifact read "
            f"{all_wall:.1f} ms wall"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
