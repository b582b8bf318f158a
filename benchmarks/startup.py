"""Start-up time of ``afc``: median wall time of fresh processes, and the import time of ``af_core``.

    python benchmarks/startup.py              # 20 runs per command, a markdown table on stdout
    python benchmarks/startup.py --runs 50

Each figure is the median of ``--runs`` fresh processes timed around
``subprocess.run`` (the interpreter's own start-up included; the first row
shows it alone). ``afc`` is the console script beside this interpreter, or
``python -m af_core`` when there is none. The import rows are the cumulative
microseconds ``python -X importtime`` reports for the module, medians too.
Wall-clock figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path


def afc_command() -> list[str]:
    script = Path(sys.executable).with_name("afc")
    return [str(script)] if script.is_file() and os.access(script, os.X_OK) else [sys.executable, "-m", "af_core"]


def median_ms(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def import_ms(module: str, runs: int) -> float:
    """Median cumulative import time of ``module`` (``-X importtime``), in milliseconds."""
    times = []
    for _ in range(runs):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                              capture_output=True, text=True, check=True)
        for line in proc.stderr.splitlines():
            parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
            if len(parts) == 3 and parts[2] == module:
                times.append(int(parts[1]) / 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="processes per figure (default 20)")
    args = parser.parse_args(argv)
    afc = afc_command()
    shown = "afc" if len(afc) == 1 else "python -m af_core"
    rows = [
        ("`python -c pass` (the interpreter alone)", median_ms([sys.executable, "-c", "pass"], args.runs)),
        (f"`{shown} --help`", median_ms([*afc, "--help"], args.runs)),
        (f"`{shown} --version`", median_ms([*afc, "--version"], args.runs)),
        (f"`{shown} plugins`", median_ms([*afc, "plugins"], args.runs)),
        ("`import af_core` (`-X importtime`, cumulative)", import_ms("af_core", args.runs)),
        ("`import af_core.cli` (`-X importtime`, cumulative)", import_ms("af_core.cli", args.runs)),
    ]
    print(f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}, median of {args.runs} runs\n")
    print("| what | median ms |")
    print("|---|---|")
    for what, ms in rows:
        print(f"| {what} | {ms:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
