"""The pipe model's cost on the CPU twin, and the synchronisation statements of the generated kernels.

``cost``: for each installed sample (at its shapes) and each corpus workload, the default pick is built once
and run ``--rounds`` times with the race check off (``AF_TWIN_RACE=off``) and on (the default); it prints
the median wall time of one twin run (the harness process: inputs read, kernel, outputs written) each way
and their ratio. ``syncs``: per graph, the sync statements of the generated kernel.cpp outside twin-only
blocks (SetFlag / WaitFlag pairs, PipeBarriers, SyncAlls, EnQue / DeQue pairs; tools/sync_mutants.py's
``find_syncs``), to compare two versions of the generator.

Run: ``python benchmarks/twin_sync.py cost [--rounds N] [--only NAME ...]`` or
``python benchmarks/twin_sync.py syncs`` (each prints a Markdown table).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("sync_mutants", ROOT / "tools" / "sync_mutants.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["sync_mutants"] = module
    spec.loader.exec_module(module)
    return module


def graphs(only: list[str]):
    """(name, graph, shapes) of the installed samples and the corpus workloads (those in ``only``)."""
    from af_core.samples import installed_samples
    from af_core.workloads import load_workloads

    for s in installed_samples():
        if not only or s.name in only:
            yield s.name, s.build(), s.shapes
    for w in load_workloads():
        if not only or w.name in only:
            yield w.name, w.graph, ({},)


def _timed(session, inputs, race: str) -> float:
    os.environ["AF_TWIN_RACE"] = race
    try:
        start = time.perf_counter()
        run = session.check(inputs=inputs)
        elapsed = time.perf_counter() - start
    finally:
        os.environ.pop("AF_TWIN_RACE", None)
    assert run.ok, run.describe()
    return elapsed


def cost(rounds: int, only: list[str]) -> None:
    from af_core.twin import TwinSession

    print("| graph | shape | template | twin run, check off (ms) | check on (ms) | on / off |")
    print("|---|---|---|---|---|---|")
    ratios = []
    for name, graph, shapes in graphs(only):
        session = TwinSession(graph)
        for sizes in shapes:
            inputs = session.inputs(sizes, seed=1)
            _timed(session, inputs, "on")  # warm the page cache and the build
            off = statistics.median(_timed(session, inputs, "off") for _ in range(rounds))
            on = statistics.median(_timed(session, inputs, "on") for _ in range(rounds))
            template = session.check(inputs=inputs).template
            shape = ", ".join(f"{k}={v}" for k, v in sizes.items()) or "corpus"
            ratios.append(on / off)
            print(f"| {name} | {shape} | {template} | {off * 1e3:.0f} | {on * 1e3:.0f} | {on / off:.2f} |")
    print(
        f"\nmedian on / off {statistics.median(ratios):.2f}, largest {max(ratios):.2f} ({len(ratios)} runs)"
    )


def syncs(only: list[str]) -> None:
    from af_core.autofuser import Autofuser, AutofuserOptions

    tool = _tool()
    print("| graph | flag pairs | lone flags | PipeBarrier | SyncAll | EnQue/DeQue | total |")
    print("|---|---|---|---|---|---|---|")
    for name, graph, _shapes in graphs(only):
        fuser = Autofuser(AutofuserOptions())
        kernel = fuser.generate(fuser.schedule(graph)).kernel
        found = tool.find_syncs(kernel)
        count = {k: sum(1 for s in found if s.kind is k) for k in tool.SyncKind}
        cells = [count[k] for k in tool.SyncKind]
        print(f"| {name} | " + " | ".join(str(c) for c in cells) + f" | {len(found)} |")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("cost", "syncs"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", action="append", default=[])
    args = parser.parse_args(argv)
    if args.what == "cost":
        cost(args.rounds, args.only)
    else:
        syncs(args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
