"""The numbers of DESIGN §9, measured: the twin and compile sections of BENCHMARKS.md.

    python benchmarks/run_benchmarks.py                 # every section, markdown on stdout
    python benchmarks/run_benchmarks.py -o FILE
    python benchmarks/run_benchmarks.py --only compile,tiling
    python benchmarks/run_benchmarks.py --body --only corpus   # one section's tables (regenerate.py)

``benchmarks/regenerate.py`` (``python3 dev.py bench``) runs each section as a step of BENCHMARKS.md.

Sections: new graph -> first twin result beside torch.compile's first call,
compile latency (schedule + codegen, no g++), generated host tiling
(ns per call, a generated C++ micro-benchmark), g++ build time, data movement
on a fixed suite and on the workload corpus (twin counters against the
minimum and the one-read-per-lane baseline), fused against the same graphs
run as single-op kernels (af_core.unfused), and selection quality on a
shape sweep. Wall-clock figures depend on the machine; data movement and
selection do not (the twin counts, it does not time).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from af_core import toolchain
from af_core.autofuser import Autofuser
from af_core.builders import GraphBuilder, embedding, gather
from af_core.errors import AfError
from af_core.samples import installed_samples, seed_minimal
from af_core.testing import chain_graph
from af_core.tiling.solve import CaseRef, solve
from af_core.traffic import per_core_bound_bytes, traffic
from af_core.twin import TwinSession
from af_core.twin.runner import TwinRunner
from af_core.workloads import load_workloads

CORES = 48
console = Console(stderr=True)


def median_ms(fn, runs: int = 15) -> tuple[float, float]:
    """Median wall and median CPU milliseconds (this process, user + system) of ``fn()``, after one warm-up."""
    fn()  # warm
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall) * 1000, statistics.median(cpu) * 1000


def table(headers: list[str], rows: list[list[object]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


# -- compile latency -----------------------------------------------------------
def bench_compile() -> str:
    fuser = Autofuser()
    rows = []
    graph = seed_minimal()
    # every artifact read (.files()): the proto, rendered on first read, is part of codegen's work
    wall, cpu = median_ms(lambda: fuser.generate(fuser.schedule(graph)).files())
    rows.append(["seed minimal graph", 0, f"{wall:.1f}", f"{cpu:.1f}"])
    for n in (1, 8, 32, 128):
        ops = tuple(("Relu", "Muls(1.5)", "Exp", "Abs")[i % 4] for i in range(n))
        g = chain_graph(rank=3, dim=1, post=ops)
        wall, cpu = median_ms(lambda g=g: fuser.generate(fuser.schedule(g)).files(), runs=7)
        rows.append([f"chain of {n} op(s) after the gather", n, f"{wall:.1f}", f"{cpu:.1f}"])
    per_op = (float(rows[-1][3]) - float(rows[1][3])) / 127
    text = table(["graph", "ops", "median ms (warm)", "median CPU ms (warm)"], rows)
    text += f"\n\nGrowth: {per_op:.2f} CPU ms per added op between 1 and 128 ops (linear).\n"
    return text + "\n" + bench_compile_cold()


def bench_compile_cold(rounds: int = 15, processes: int = 7) -> str:
    """The minimal graph with cold caches beside warm: a new graph in a warm process, and a fresh process.

    Each figure as wall time and as CPU time (user + system) of the compiling process: on a shared
    machine the wall time grows with the load, the CPU time much less.
    """
    from new_graphs import FRESH_PROCESS, SYMPY_FLOOR, bytecode_env, new_minimal_graph

    fuser = Autofuser()
    same = seed_minimal()

    def timed(graph) -> tuple[float, float]:
        start, start_cpu = time.perf_counter(), time.process_time()
        fuser.generate(fuser.schedule(graph)).files()
        return time.perf_counter() - start, time.process_time() - start_cpu

    timed(same)  # warm: plugins loaded, code paths run
    warm = [timed(same) for _ in range(rounds)]
    new = [timed(graph) for graph in [new_minimal_graph() for _ in range(rounds)]]
    env = bytecode_env()
    subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS], env=env, capture_output=True, check=True, timeout=600
    )
    fresh, whole = [], []
    for _ in range(processes):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", FRESH_PROCESS],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        whole.append((time.perf_counter() - start, cpu))
        fresh.append(tuple(float(v) for v in proc.stdout.split()))
    floor = []
    for _ in range(processes):
        proc = subprocess.run(
            [sys.executable, "-c", SYMPY_FLOOR], env=env, capture_output=True, text=True, check=True
        )
        floor.append(tuple(float(v) for v in proc.stdout.split()))

    def ms(values) -> str:
        return f"{statistics.median(values) * 1000:.1f}"

    imports = ([f[0] for f in fresh], [f[2] for f in fresh])
    firsts = ([f[1] for f in fresh], [f[3] for f in fresh])
    together = ([f[0] + f[1] for f in fresh], [f[2] + f[3] for f in fresh])
    rows = [
        [
            "same graph again (every cache warm)",
            ms([w for w, _ in warm]),
            ms([c for _, c in warm]),
            f"median of {rounds} after one warm-up",
        ],
        [
            "a new graph each round, warm process",
            ms([w for w, _ in new]),
            ms([c for _, c in new]),
            f"median of {rounds} new graphs",
        ],
        [
            "fresh process: imports (`af_core.autofuser`, `af_core.samples`)",
            ms(imports[0]),
            ms(imports[1]),
            f"{processes} processes",
        ],
        [
            "fresh process: first compile (plugins load on first use)",
            ms(firsts[0]),
            ms(firsts[1]),
            f"{processes} processes",
        ],
        [
            "fresh process: imports + first compile",
            ms(together[0]),
            ms(together[1]),
            f"{processes} processes",
        ],
        [
            "fresh process: interpreter start to exit",
            ms([w for w, _ in whole]),
            ms([c for _, c in whole]),
            f"{processes} processes",
        ],
        ["floor: `import sympy` alone", "", ms([f[0] for f in floor]), f"{processes} processes"],
        [
            "floor: sympy's first sum of two symbols (imports sympy.tensor)",
            "",
            ms([f[1] for f in floor]),
            f"{processes} processes",
        ],
    ]
    return (
        "Minimal graph (the seed's, float16 gather on axis 2), cold caches beside warm; fresh processes "
        "with cached bytecode (one unmeasured process writes it first):\n\n"
        + table(["what", "median wall ms", "median CPU ms", "runs"], rows)
        + f"\n\nLoad average at the end: {load_average()}.\n"
    )


# -- host tiling ------------------------------------------------------------------
BENCH_MAIN = r"""
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include "autofuse_tiling_data.h"
// Every heap allocation of the process is counted: the tiling must make none.
extern "C" void* __libc_malloc(size_t);
static volatile long long g_allocs = 0;
extern "C" void* malloc(size_t n) { ++g_allocs; return __libc_malloc(n); }
void* operator new(size_t n) { ++g_allocs; void* p = __libc_malloc(n ? n : 1); if (!p) throw std::bad_alloc(); return p; }
void* operator new[](size_t n) { return operator new(n); }
extern "C" int64_t AutofuseTiling(%(proto)s AutofuseTilingData*, uint32_t*, uint32_t*, uint32_t, uint32_t);
int main() {
    static const int64_t sets[%(nsets)d][%(nsizes)d] = {%(sets)s};
    AutofuseTilingData t;
    uint32_t ws = 0, bd = 0;
    int64_t sink = 0;
    double best = 1e30;
    const long long allocs_before = g_allocs;
    for (int rep = 0; rep < 7; ++rep) {
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < %(calls)d; ++i) {
            const int64_t* s = sets[i %% %(nsets)d];
            sink += AutofuseTiling(%(args)s &t, &ws, &bd, 48, 253952) + t.tiling_key;
        }
        const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
        best = ns / %(calls)d < best ? ns / %(calls)d : best;
    }
    const long long allocs = g_allocs - allocs_before;
    std::printf("%%.1f %%lld %%lld\n", best, allocs, static_cast<long long>(sink));
    return 0;
}
"""


def host_tiling_ns(graph, size_sets: list[dict[str, int]]) -> tuple[float, int, int]:
    """Best-of-7 ns per generated AutofuseTiling call, heap allocations during all calls, case count."""
    fuser = Autofuser()
    scheduled = fuser.schedule(graph)
    result = fuser.generate(scheduled)
    names = list(result.size_names)
    calls = 200000
    source = BENCH_MAIN % {
        "proto": "".join("int64_t, " for _ in names),
        "nsets": len(size_sets),
        "nsizes": max(1, len(names)),
        "sets": ", ".join(
            "{" + ", ".join(str(s[n]) for n in names) + "}" if names else "{0}" for s in size_sets
        ),
        "calls": calls,
        "args": "".join(f"s[{i}], " for i in range(len(names))),
    }
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "tiling.cpp").write_text(result.tiling)
        (d / "autofuse_tiling_data.h").write_text(result.tiling_data)
        (d / "bench.cpp").write_text(source)
        toolchain.build_program(
            ["tiling.cpp", "bench.cpp"],
            d / "bench",
            toolchain.HOST_TILING.replace(pic=False, warnings=()),
            includes=["."],
            what="host tiling benchmark",
        )
        out = subprocess.run([str(d / "bench")], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1]), len(scheduled.cases)


def bench_tiling() -> str:
    import numpy as np

    rng = np.random.default_rng(0)
    rows = []
    seed_sets = []
    for _ in range(64):
        s = [int(v) for v in rng.integers(1, 64, 8)]
        for i in range(4):
            s[4 + i] = min(s[4 + i], s[i]) if i != 2 else s[4 + i]
        seed_sets.append({f"s{i}": v for i, v in enumerate(s)})
    ns, allocs, cases = host_tiling_ns(seed_minimal(), seed_sets)
    rows.append(["seed minimal graph", cases, f"{ns:.1f}", allocs])
    chain_sets = []
    for _ in range(64):
        a = [int(v) for v in rng.integers(1, 200, 3)]
        chain_sets.append(
            {"a0": a[0], "a1": a[1], "a2": a[2], "b0": a[0], "b1": int(rng.integers(1, 50)), "b2": a[2]}
        )
    g = chain_graph(rank=3, dim=1, pre=("Abs",), post=("Exp", "Mul(side)"), reduce=("Sum", (2,)))
    ns, allocs, cases = host_tiling_ns(g, chain_sets)
    rows.append(["gather + pre/post chains + reduce", cases, f"{ns:.1f}", allocs])
    return table(
        [
            "graph",
            "cases evaluated per call",
            "ns per AutofuseTiling call (best of 7 x 200k)",
            "heap allocations in 1.4M calls",
        ],
        rows,
    )


# -- g++ build time and new graph -> first twin result ----------------------------------
def children_cpu() -> float:
    """CPU seconds of this process's finished children (the compilers and twin runs)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def load_average() -> str:
    try:
        return ", ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


STEPS = ("pch", "harness main", "kernel", "tiling", "link")


def first_results(cache: Path, rounds: int = 3) -> list[dict]:
    """New graph -> first twin result for every sample, ``rounds`` times (each round renames the graphs).

    One graph outside the samples is built first, so the parts every build
    shares (precompiled twin headers, harness main) exist, as they do after a
    process's first build; every sample is then new to the cache.
    """
    runner = TwinRunner(cache_dir=cache)
    start = time.perf_counter()
    warm = TwinSession(chain_graph(rank=3, dim=1), runner=runner)
    rows = [
        {
            "name": "(first build: shared parts + kernel)",
            "seconds": time.perf_counter() - start,
            "cpu": None,
            "timings": dict(warm.build.timings),
            "round": -1,
        }
    ]
    samples = installed_samples()
    for rnd in range(rounds):
        for sample in samples:
            graph = sample.build()
            graph.name = f"{graph.name}_{rnd}"
            cpu = children_cpu()
            start = time.perf_counter()
            session = TwinSession(graph, runner=runner)
            run = session.check(sample.shapes[0], seed=1)
            seconds = time.perf_counter() - start
            if not run.ok:
                raise AssertionError(f"{sample.name}: {run.describe()}")
            rows.append(
                {
                    "name": sample.name,
                    "seconds": seconds,
                    "cpu": children_cpu() - cpu,
                    "timings": dict(session.build.timings),
                    "round": rnd,
                }
            )
    return rows


def torch_first_calls(python: str) -> dict[str, float] | str:
    """torch.compile first call of each sample on CPU, run by ``python`` (seconds by sample, or why not)."""
    script = Path(__file__).with_name("torch_first_call.py")
    proc = subprocess.run([python, str(script)], capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        return f"torch run failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}"
    return {k: float(v) for k, v in (line.split() for line in proc.stdout.splitlines() if line.strip())}


def torch_python() -> str | None:
    """An interpreter that imports torch: this one, else ``AF_BENCH_TORCH_PYTHON``; None when neither."""
    import importlib.util
    import os

    if importlib.util.find_spec("torch") is not None:
        return sys.executable
    return os.environ.get("AF_BENCH_TORCH_PYTHON") or None


def bench_first_result() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        rows = first_results(Path(tmp))
    first, rows = rows[0], rows[1:]
    by_name: dict[str, list[dict]] = {}
    for r in rows:
        by_name.setdefault(r["name"], []).append(r)
    python = torch_python()
    torch_times = (
        torch_first_calls(python) if python else "torch is not importable here (set AF_BENCH_TORCH_PYTHON)"
    )
    table_rows = []
    for name, runs in by_name.items():
        med = statistics.median(r["seconds"] for r in runs)
        cpu = statistics.median(r["cpu"] for r in runs)
        parts = {k: statistics.median(r["timings"].get(k, 0.0) for r in runs) for k in STEPS[2:]}
        t = f"{torch_times[name]:.2f}" if isinstance(torch_times, dict) and name in torch_times else "-"
        table_rows.append([name, f"{med:.2f}", f"{cpu:.2f}", *(f"{parts[k]:.2f}" for k in STEPS[2:]), t])
    overall = statistics.median(r["seconds"] for r in rows)
    text = table(
        [
            "sample",
            "af: new graph -> first twin result (s, median)",
            "compiler + run CPU s",
            "kernel s",
            "tiling + harness table s",
            "link s",
            "torch.compile first call (s)",
        ],
        table_rows,
    )
    text += (
        f"\n\n- af, median over {len(by_name)} samples x {len(rows) // len(by_name)} rounds: {overall:.2f} s "
        "(schedule + codegen + g++ + twin run + reference comparison; warm process, shared parts built)\n"
    )
    text += (
        "- the shared parts, built once per twin-header version and flag set: "
        + ", ".join(f"{k} {first['timings'][k]:.2f} s" for k in STEPS[:2] if k in first["timings"])
        + f" (first build of a process on an empty cache: {first['seconds']:.2f} s in all)\n"
    )
    if isinstance(torch_times, dict):
        tmed = statistics.median(torch_times[n] for n in by_name if n in torch_times)
        text += (
            f"- torch.compile (Inductor, CPU) first call of a new function, median over the samples: "
            f"{tmed:.2f} s (warm process: one other function compiled first; "
            f"{torch_times.get('_first_in_process', float('nan')):.2f} s for that one)\n"
        )
    else:
        text += f"- torch.compile: skipped, {torch_times}\n"
    text += f"- load average during the run: {load_average()} (on {os.cpu_count()} cores)\n"
    return text


def bench_build() -> str:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        runner = TwinRunner(cache_dir=Path(tmp))
        for sample in installed_samples():
            fuser = Autofuser()
            result = fuser.generate(fuser.schedule(sample.build()))
            start = time.perf_counter()
            build = runner.build(result)
            seconds = time.perf_counter() - start
            t = build.timings
            rows.append(
                [
                    sample.name,
                    len(result.kernel.splitlines()),
                    f"{seconds:.2f}",
                    *(f"{t[k]:.2f}" if k in t else "cached" for k in STEPS),
                ]
            )
    text = table(
        [
            "graph (all installed templates)",
            "kernel lines",
            "g++ build (s)",
            "precompiled twin headers",
            "harness main",
            "kernel",
            "tiling + infer_shape + harness table",
            "link",
        ],
        rows,
    )
    return text + (
        f"\n\nThe first row builds the shared parts (twin headers precompiled, harness main) in "
        f"parallel; kernel and host side compile in parallel; load average {load_average()}.\n"
    )


def bench_optlevel(
    progress: Progress, levels: tuple[str, ...] = ("-O0", "-Og", "-O1", "-O2"), limit: int | None = None
) -> str:
    """Build time against twin run time per optimisation level, on the corpus shapes (all cases run)."""
    workloads = load_workloads()[:limit]
    task = progress.add_task("optimisation levels", total=len(levels) * len(workloads))
    rows = []
    for level in levels:
        with tempfile.TemporaryDirectory() as tmp:
            runner = TwinRunner(cache_dir=Path(tmp), optimize=level)
            TwinSession(chain_graph(rank=3, dim=1), runner=runner)  # the shared parts, not counted
            build_wall = build_cpu = run_wall = run_cpu = 0.0
            runs = 0
            for w in workloads:
                cpu, start = children_cpu(), time.perf_counter()
                session = TwinSession(w.graph, runner=runner)
                build_wall += time.perf_counter() - start
                build_cpu += children_cpu() - cpu
                inputs = session.inputs({}, seed=1, distribution=w.distribution)
                for case in session.scheduled.cases:
                    cpu, start = children_cpu(), time.perf_counter()
                    try:
                        session.run(inputs, core_num=CORES, tiling_key=case.tiling_key)
                    except AfError:
                        continue
                    run_wall += time.perf_counter() - start
                    run_cpu += children_cpu() - cpu
                    runs += 1
                progress.advance(task)
        rows.append(
            [
                level,
                len(workloads),
                f"{build_wall:.1f}",
                f"{build_cpu:.1f}",
                runs,
                f"{run_wall:.1f}",
                f"{run_cpu:.1f}",
                f"{build_wall + run_wall:.1f}",
            ]
        )
    return (
        table(
            [
                "level",
                "workloads",
                "build wall s",
                "build CPU s",
                "twin runs",
                "run wall s",
                "run CPU s",
                "build + run wall s",
            ],
            rows,
        )
        + f"\n\nLoad average at the end: {load_average()}.\n"
    )


# -- data movement --------------------------------------------------------------------
def workload_session(w) -> TwinSession:
    """A corpus workload's session, compiled with its declared index distribution (the cases predict its
    reuse: distinct lines for HBM, fills of the data caches)."""
    from af_core.options import AutofuserOptions

    return TwinSession(w.graph, options=AutofuserOptions(index_distribution=w.distribution))


def measure_all(session: TwinSession, inputs) -> dict[str, object]:
    """Traffic of every case that fits, of the seed / cost choices and the seed rule's template."""
    sizes = inputs.sizes
    results = {}
    for case in session.scheduled.cases:
        try:
            run = session.check(inputs=inputs, core_num=CORES, tiling_key=case.tiling_key)
        except AfError:
            continue
        if not run.ok:
            raise AssertionError(f"{session.graph.name} {case.label}: {run.describe()}")
        results[case.label] = traffic(
            session.graph,
            inputs,
            run.reference,
            run.twin.counters,
            session.scheduled.info,
            case.tiling.serialized,
        )
    if not results:
        return {}
    refs = [CaseRef.of(c) for c in session.scheduled.cases]
    sched = session.scheduled
    picks = {
        policy: solve(
            refs, sched.size_names, sizes, CORES, sched.platform.ub_size, sched.guards, policy=policy
        )
        .chosen()
        .label
        for policy in ("seed", "cost")
    }
    rule = seed_rule_choice(session, sizes, results)
    best = min(results, key=lambda k: results[k].cost)
    return {"cases": results, **picks, "rule": rule, "best": best}


def seed_rule_choice(session: TwinSession, sizes, results) -> str:
    """The template the seed's fixed rule names (its best-fitting case), SIMT when that one does not fit."""
    from af_core.ir.evaluate import eval_int

    m = session.scheduled.measures
    env = {**sizes, "core_num": CORES}
    cont, outer = eval_int(m.continuous_bytes, env), eval_int(m.index_outer, env)
    t = m.thresholds
    if cont * t.cache_thres.denominator >= t.cacheline * t.cache_thres.numerator:
        want = "simd" if outer * t.core_thres.denominator >= CORES * t.core_thres.numerator else "sklike"
    else:
        want = "simt"
    names = [k for k in results if k.split("/")[0] == want]
    if not names:
        names = [k for k in results if k.split("/")[0] == "simt"]
    return min(names, key=lambda k: results[k].cost)


def ratio(t) -> str:
    return f"{t.ratio:.2f}"


def traffic_row(name: str, measured: dict) -> list[object]:
    cases = measured["cases"]
    per_lane = next(iter(cases.values())).per_lane / next(iter(cases.values())).minimum
    return [
        name,
        measured["seed"],
        ratio(cases[measured["seed"]]),
        measured["cost"],
        ratio(cases[measured["cost"]]),
        measured["best"],
        ratio(cases[measured["best"]]),
        f"{per_lane:.2f}",
        " ".join(f"{k}={ratio(v)}" for k, v in sorted(cases.items())),
    ]


TRAFFIC_HEADERS = [
    "workload",
    "selected (seed policy)",
    "x min",
    "selected (cost policy)",
    "x min",
    "best case (twin-estimated time)",
    "x min",
    "one-read-per-lane x min",
    "every case (x min)",
]


def suite_graphs():
    for width in (4, 16, 64, 256, 1024):  # float32 rows of 16 B .. 4 KiB
        g = GraphBuilder(f"embedding_row_{width * 4}B")
        w = g.data("weight", [20000, width], "float32")
        ids = g.data("ids", [2048], "int64")
        g.output(embedding(w, ids), "y")
        yield g.build(), "uniform"
    for dim in (0, 1, 2):
        for chains in (False, True):
            g = GraphBuilder(f"gather_dim{dim}{'_chains_reduce' if chains else ''}")
            x = g.data("x", [48, 64, 32], "float32")
            shape = [48, 64, 32]
            shape[dim] = 16
            idx = g.data("index", shape, "int32")
            y = gather(x, dim, idx)
            if chains:
                y = g.op("Exp", y)
                y = g.reduce("Sum", y, [2])
            g.output(y, "y")
            yield g.build(), "uniform"


def bench_traffic(progress: Progress) -> tuple[str, list]:
    rows, stats = [], []
    graphs = list(suite_graphs())
    task = progress.add_task("traffic suite", total=len(graphs))
    for graph, dist in graphs:
        session = TwinSession(graph)
        inputs = session.inputs({}, seed=1, distribution=dist)
        measured = measure_all(session, inputs)
        rows.append(traffic_row(graph.name, measured))
        stats.append(measured)
        progress.advance(task)
    return table(TRAFFIC_HEADERS, rows), stats


def bench_corpus(progress: Progress) -> tuple[str, list]:
    rows, stats = [], []
    workloads = load_workloads()
    task = progress.add_task("workload corpus", total=len(workloads))
    for w in workloads:
        session = workload_session(w)
        inputs = session.inputs({}, seed=1, distribution=w.distribution)
        measured = measure_all(session, inputs)
        rows.append(traffic_row(w.name, measured))
        stats.append(measured)
        progress.advance(task)
    return table(TRAFFIC_HEADERS, rows), stats


def target_summary(stats: list, label: str) -> str:
    lines = []
    for policy in ("seed", "cost"):
        within = sum(1 for m in stats if m["cases"][m[policy]].ratio <= 1.25)
        worst = max(stats, key=lambda m: m["cases"][m[policy]].ratio)
        lines.append(
            f"- {label}, {policy} policy: {within}/{len(stats)} selections within 1.25x of the minimum; "
            f"worst {worst['cases'][worst[policy]].ratio:.2f}x ({worst[policy]})"
        )
    return "\n".join(lines)


# -- the cost model's counters against the twin's, and every policy's pick on the corpus -------
def corpus_runs(progress: Progress) -> list[dict]:
    """Every corpus workload's cases that fit, each run once on the twin (checked against the reference):
    per case its twin counters, traffic and predicted counters, and every installed policy's pick."""
    from af_core.registry import get_registry
    from af_core.schedule.cost import COUNTER_NAMES, twin_cores, twin_counters

    policies = get_registry().names("selection_policy")
    out = []
    workloads = load_workloads()
    task = progress.add_task("corpus: counters and policies", total=len(workloads))
    for w in workloads:
        session = workload_session(w)
        inputs = session.inputs({}, seed=1, distribution=w.distribution)
        sch = session.scheduled
        refs = [CaseRef.of(c) for c in sch.cases]
        evaluations = {
            ev.label: ev
            for ev in solve(
                refs, sch.size_names, inputs.sizes, CORES, sch.platform.ub_size, sch.guards
            ).evaluations
        }
        cases = {}
        for case in sch.cases:
            ev = evaluations[case.label]
            if not ev.fits:
                continue
            run = session.check(inputs=inputs, core_num=CORES, tiling_key=case.tiling_key)
            if not run.ok:
                raise AssertionError(f"{w.name} {case.label}: {run.describe()}")
            cases[case.label] = {
                "measured": twin_counters(run.twin.counters),
                "twin": dict(run.twin.counters),
                "predicted": {n: ev.resources.get(n) for n in COUNTER_NAMES},
                "traffic": traffic(
                    session.graph, inputs, run.reference, run.twin.counters, sch.info, case.tiling.serialized
                ),
                "cost": ev.cost,
                "key": ev.tiling_key,
                "cores": twin_cores(run.twin.counters),
                "pred_cores": ev.block_dim,
                "serialized": case.tiling.serialized,
            }
        picks = {}
        for name in policies:
            res = solve(
                refs, sch.size_names, inputs.sizes, CORES, sch.platform.ub_size, sch.guards, policy=name
            )
            picks[name] = res.chosen().label
        out.append({"name": w.name, "distribution": w.distribution, "cases": cases, "picks": picks})
        progress.advance(task)
    return out


def _ratio(predicted, measured) -> str:
    if predicted is None:
        return "-"
    if measured == 0:
        return "exact" if predicted == 0 else "inf"
    return f"{predicted / measured:.2f}"


def bench_counters(runs: list[dict], within: float = 0.25) -> str:
    """Predicted (the case's resource formulas) against measured (the twin) for each counter of the
    contract, per corpus workload and case that fits; a counter is within when both are 0 or their
    ratio is within 1 +- ``within``."""
    from af_core.schedule.cost import COUNTERS, counted_cost

    rows = []
    ok = {c.name: 0 for c in COUNTERS}
    ok_cost = 0
    total = 0
    for r in runs:
        for label, c in sorted(r["cases"].items()):
            total += 1
            row: list[object] = [r["name"], label, r["distribution"]]
            for counter in COUNTERS:
                p, m = c["predicted"][counter.name], c["measured"][counter.name]
                row.append(f"{p} / {m} ({_ratio(p, m)})")
                good = p is not None and ((p == 0 and m == 0) or (m and abs(p / m - 1) <= within))
                ok[counter.name] += bool(good)
            counted = counted_cost(c["measured"], c["cores"], c["serialized"])
            cost_ok = abs(c["cost"] / counted - 1) <= within
            ok_cost += cost_ok
            row.append(f"{c['cost']} / {counted} ({c['cost'] / counted:.2f})")
            rows.append(row)
    text = table(
        [
            "workload",
            "case",
            "index values",
            *[f"{c.name}: predicted / measured" for c in COUNTERS],
            "modelled / twin-estimated time (ps)",
        ],
        rows,
    )
    lines = [f"- {name}: {n}/{total} case rows within +-{within:.0%}" for name, n in ok.items()]
    lines.append(f"- modelled cost against twin-estimated time: {ok_cost}/{total} within +-{within:.0%}")
    return text + "\n\n" + "\n".join(lines) + f"\n- load average at the end: {load_average()}\n"


def _within(predicted, measured, within: float) -> bool:
    return predicted is not None and (
        (predicted == 0 and measured == 0) or (measured and abs(predicted / measured - 1) <= within)
    )


def bench_l2(runs: list[dict], within: float = 0.25) -> str:
    """The two memory levels per corpus case that fits: bytes the cores read from the shared L2
    (``l2_core_bytes``: DataCopy bytes and data-cache fills) and bytes between HBM and L2 (``hbm_bytes``:
    misses and write-backs), predicted by the case (compiled with the workload's index distribution)
    against the twin, beside the distinct lines the case read."""
    from af_core.schedule.cost import LINE_BYTES

    rows = []
    ok_l2 = ok_hbm = modelled = total = 0
    for r in runs:
        for label, c in sorted(r["cases"].items()):
            total += 1
            p, m, t = c["predicted"], c["measured"], c["twin"]
            l2p, l2m = p["l2_core_bytes"], m["l2_core_bytes"]
            ok_l2 += bool(_within(l2p, l2m, within))
            counted = bool(t.get("l2_modelled"))
            modelled += counted
            hbm_p, hbm_m = p["hbm_bytes"], m["hbm_bytes"]
            ok_hbm += counted and bool(_within(hbm_p, hbm_m, within))
            rows.append(
                [
                    r["name"],
                    label,
                    f"{l2p} / {l2m} ({_ratio(l2p, l2m)})",
                    f"{hbm_p} / {hbm_m} ({_ratio(hbm_p, hbm_m)})" if counted else f"{hbm_p} / not modelled",
                    LINE_BYTES * t["cachelines_read"],
                    "-" if not counted or not l2m else f"{t['hbm_read_bytes'] / l2m:.2f}",
                ]
            )
    text = table(
        [
            "workload",
            "case",
            "L2 -> core bytes: predicted / twin",
            "HBM bytes (reads + write-backs): predicted / twin",
            "distinct lines read x 128",
            "HBM read / L2 -> core (twin)",
        ],
        rows,
    )
    lines = [
        f"- L2 -> core bytes: {ok_l2}/{total} case rows predicted within +-{within:.0%}",
        f"- HBM bytes: {ok_hbm}/{modelled} case rows predicted within +-{within:.0%} (the twin counts them "
        f"on {modelled}/{total}; the others' L2 logs passed the twin's bound)",
        f"- load average at the end: {load_average()}",
    ]
    return text + "\n\n" + "\n".join(lines) + "\n"


def bench_time(runs: list[dict], slack: float = 1.10, over: float = 1.25) -> str:
    """Estimated time against the bound per corpus workload, under the default policy: the twin-estimated
    time of its pick and of the best case, and the bound time (the same roofline over the least HBM bytes,
    the DESIGN minimum, with no core work and one launch)."""
    from af_core.policy import DEFAULT_POLICY
    from af_core.schedule.time_model import DEFAULT_CONSTANTS, PS_PER_NS, estimate

    rows = []
    near_bound = near_best = near_bound_bare = 0
    for r in runs:
        cases = r["cases"]
        pick = r["picks"][DEFAULT_POLICY]
        c = cases[pick]
        terms = estimate(c["measured"], c["cores"], c["serialized"])
        best = min(cases, key=lambda k: cases[k]["traffic"].cost)
        least = c["traffic"].minimum
        hbm = -(-least * PS_PER_NS // DEFAULT_CONSTANTS.hbm_bytes_per_ns)
        bound = DEFAULT_CONSTANTS.launch_ns * PS_PER_NS + hbm
        near_bound += terms.total <= over * bound
        near_bound_bare += terms.total - terms.launch <= over * (bound - terms.launch)
        near_best += terms.total <= slack * cases[best]["traffic"].cost
        launch = terms.launch
        rows.append(
            [
                r["name"],
                pick,
                f"{terms.hbm / 1e3:.1f}",
                f"{terms.l2 / 1e3:.1f}",
                f"{terms.core / 1e3:.1f}",
                f"{terms.total / 1e3:.1f}",
                f"{bound / 1e3:.1f}",
                f"{terms.total / bound:.2f}",
                f"{(terms.total - launch) / max(1, bound - launch):.2f}",
                best,
                f"{terms.total / cases[best]['traffic'].cost:.2f}",
            ]
        )
    text = table(
        [
            "workload",
            "default pick",
            "HBM ns",
            "L2 ns",
            "core ns",
            "estimated ns (twin)",
            "bound ns",
            "time / bound",
            "time / bound without the launch",
            "best case (twin-estimated time)",
            "pick / best",
        ],
        rows,
    )
    lines = [
        f"- estimated time within {over}x of the bound: {near_bound}/{len(runs)} workloads "
        f"(without the launch: {near_bound_bare}/{len(runs)})",
        f"- default pick within {slack - 1:.0%} of the best case's twin-estimated time: "
        f"{near_best}/{len(runs)} workloads",
        f"- launch {DEFAULT_CONSTANTS.launch_ns} ns in every estimate and bound (an assumption; the last "
        "ratio column leaves it out)",
    ]
    return text + "\n\n" + "\n".join(lines) + "\n\n" + time_sensitivity(runs, slack) + "\n"


def _time_with(c: dict, which: str, constants) -> int | None:
    """A case's estimated time under other constants: of its predicted counters (``which`` "predicted",
    on the cores its tiling gives) or of the twin's ("measured")."""
    from af_core.schedule.cost import counted_cost

    counters = c[which]
    if any(v is None for v in counters.values()):
        return None
    cores = c["pred_cores"] if which == "predicted" else c["cores"]
    return counted_cost(counters, cores, c["serialized"], constants)


def time_sensitivity(runs: list[dict], slack: float = 1.10) -> str:
    """How the cost policy's corpus picks move when each constant no document gives is halved or doubled:
    picks that change, and picks within ``slack`` of the best case's twin-estimated time under the same
    constants. A case that predicts no counters keeps its modelled cost."""
    from af_core.schedule.time_model import ASSUMED, DEFAULT_CONSTANTS

    def picks(constants) -> dict[str, str]:
        out = {}
        for r in runs:
            cases = r["cases"]
            out[r["name"]] = min(
                cases,
                key=lambda k: (
                    _time_with(cases[k], "predicted", constants) or cases[k]["cost"],
                    cases[k]["key"],
                ),
            )
        return out

    base = picks(DEFAULT_CONSTANTS)
    rows = []
    for name in ASSUMED:
        value = getattr(DEFAULT_CONSTANTS, name)
        for factor in (0.5, 2):
            constants = DEFAULT_CONSTANTS.with_(**{name: max(1, int(value * factor))})
            chosen = picks(constants)
            moved = sorted(k for k in chosen if chosen[k] != base[k])
            good = 0
            for r in runs:
                cases = r["cases"]
                best = min(_time_with(c, "measured", constants) for c in cases.values())
                good += _time_with(cases[chosen[r["name"]]], "measured", constants) <= slack * best
            rows.append(
                [
                    name,
                    f"{value} -> {getattr(constants, name)}",
                    len(moved),
                    ", ".join(f"{k} ({base[k]} -> {chosen[k]})" for k in moved) or "-",
                    f"{good}/{len(runs)}",
                ]
            )
    return (
        "Sensitivity to the assumed constants (cost policy, picks re-made from the predicted counters):\n\n"
        + table(
            ["constant", "value", "picks that change", "which", f"picks within {slack - 1:.0%} of the best"],
            rows,
        )
    )


def bench_reg_cycles(runs: list[dict]) -> str:
    """Register instructions and cycles of the vector functions: predicted (the case's resource formulas)
    against the twin's count, for every corpus case that issues any, and the cycles' part of the
    twin-estimated time's core term (af_core.schedule.time_model)."""
    from af_core.schedule.time_model import DEFAULT_CONSTANTS, core_cycles

    rows = []
    exact = 0
    for r in runs:
        for label, c in sorted(r["cases"].items()):
            p, m = c["predicted"], c["measured"]
            if not (m["reg_instructions"] or p.get("reg_instructions")):
                continue
            exact += p["reg_instructions"] == m["reg_instructions"] and p["reg_cycles"] == m["reg_cycles"]
            cycles = core_cycles(m, DEFAULT_CONSTANTS)
            rows.append(
                [
                    r["name"],
                    label,
                    f"{p['reg_instructions']} / {m['reg_instructions']}",
                    f"{p['reg_cycles']} / {m['reg_cycles']}",
                    f"{m['reg_cycles'] / max(1, m['reg_instructions']):.2f}",
                    f"{m['reg_cycles'] / max(1, cycles):.1%}",
                ]
            )
    text = table(
        [
            "workload",
            "case",
            "reg_instructions: predicted / twin",
            "reg_cycles: predicted / twin",
            "cycles per instruction",
            "share of the core term's cycles (twin)",
        ],
        rows,
    )
    return text + f"\n\n- {exact}/{len(rows)} case rows predict both register counters exactly\n"


def bench_policies(runs: list[dict], slack: float = 1.10) -> str:
    """Every installed policy's pick per corpus workload, against the best case by twin-estimated time and
    by measured bytes."""
    from af_core.policy import DEFAULT_POLICY

    names = sorted({p for r in runs for p in r["picks"]})
    within = {n: [0, 0] for n in names}
    rows = []
    for r in runs:
        cases = r["cases"]
        best_cost = min(cases, key=lambda k: cases[k]["traffic"].cost)
        best_bytes = min(cases, key=lambda k: cases[k]["traffic"].measured)
        row: list[object] = [r["name"], best_cost, best_bytes]
        for n in names:
            t = cases[r["picks"][n]]["traffic"]
            by_cost = t.cost / cases[best_cost]["traffic"].cost
            by_bytes = t.measured / cases[best_bytes]["traffic"].measured
            within[n][0] += by_cost <= slack
            within[n][1] += by_bytes <= slack
            row += [r["picks"][n], f"{by_cost:.2f}", f"{by_bytes:.2f}"]
        rows.append(row)
    headers = ["workload", "best (twin-estimated time)", "best (measured bytes)"]
    for n in names:
        mark = " (default)" if n == DEFAULT_POLICY else ""
        headers += [f"{n}{mark} picks", f"{n}: cost / best", f"{n}: bytes / least"]
    lines = [
        f"- {n}{' (default)' if n == DEFAULT_POLICY else ''}: within {slack - 1:.0%} of the best case in "
        f"{within[n][0]}/{len(runs)} workloads by twin-estimated time, {within[n][1]}/{len(runs)} by measured bytes"
        for n in names
    ]
    return (
        table(headers, rows) + "\n\n" + "\n".join(lines) + f"\n- load average at the end: {load_average()}\n"
    )


# -- where the excess goes: per-core data caches ----------------------------------------
def bench_cores(progress: Progress, over: float = 1.25) -> str:
    """The cost-policy case of every corpus workload above ``over`` x min, run on 48 cores and on 1.

    One core has one data cache: what disappears there is the same line fetched
    by several cores' private caches (the minimum counts each line once).
    """
    rows = []
    workloads = load_workloads()
    task = progress.add_task("1 core vs 48", total=len(workloads))
    for w in workloads:
        progress.advance(task)
        session = workload_session(w)
        inputs = session.inputs({}, seed=1, distribution=w.distribution)
        refs = [CaseRef.of(c) for c in session.scheduled.cases]
        figures = {}
        for cores in (CORES, 1):
            res = solve(
                refs,
                session.scheduled.size_names,
                inputs.sizes,
                cores,
                session.scheduled.platform.ub_size,
                session.scheduled.guards,
                policy="cost",
            )
            run = session.check(inputs=inputs, core_num=cores, tiling_key=res.tiling_key)
            if not run.ok:
                raise AssertionError(f"{w.name} on {cores} core(s): {run.describe()}")
            figures[cores] = (
                res.chosen().label,
                run.twin.counters.get("block_dim", cores),
                traffic(session.graph, inputs, run.reference, run.twin.counters, session.scheduled.info),
                core_share(res.chosen(), run),
            )
        label, used, many, share = figures[CORES]
        if many.ratio <= over:
            continue
        one = figures[1][2]
        excess = many.measured - many.minimum
        gone = (many.measured - one.measured) / excess if excess else 0.0
        least = per_core_bound_bytes(session.graph, inputs, run.reference, share, session.scheduled.info)
        rows.append(
            [
                w.name,
                label,
                used,
                f"{many.ratio:.2f}",
                f"{one.ratio:.2f}",
                f"{100 * gone:.0f}%",
                share,
                f"{least / many.minimum:.2f}",
            ]
        )
    return table(
        [
            "workload",
            "case (cost policy)",
            "cores used",
            "x min on 48 cores",
            "x min on 1 core",
            "excess gone on 1 core",
            "outputs per core",
            "x min if each core read each line of its positions once",
        ],
        rows,
    )


def core_share(chosen, run) -> int:
    """Output elements per core of a run: the case's ``per_core`` tiling field (the SIMT cases), else the
    output split evenly over the cores the run used."""
    if "per_core" in chosen.fields:
        return int(chosen.fields["per_core"])
    outputs = sum(int(v.size) for v in run.reference.values())
    used = max(1, int(run.twin.counters.get("block_dim", 1)))
    return -(-outputs // used)


# -- fused against unfused -------------------------------------------------------------
def bench_unfused(progress: Progress) -> str:
    """Every corpus workload fused against its single-op kernels (af_core.unfused), the default and the
    cost policy each selecting both the fused case and the lone gather's."""
    from af_core.unfused import fused_vs_unfused

    rows = []
    workloads = load_workloads()
    task = progress.add_task("fused vs unfused", total=len(workloads))
    wins = {"default": 0, "cost": 0, "any": 0}
    worse: dict[str, list[str]] = {k: [] for k in wins}
    faster = 0
    slower: list[str] = []
    for w in workloads:
        session = workload_session(w)
        inputs = session.inputs({}, seed=1, distribution=w.distribution)
        m = fused_vs_unfused(session, inputs, core_num=CORES)
        if not m.agree:
            raise AssertionError(f"{w.name}: unfused chain against fused kernel: {m.agreements}")
        fused = {p: m.fused[p][0] for p in ("default", "cost")}
        unfused = {p: m.unfused[p].total for p in ("default", "cost")}
        least = min(unfused.values())
        for key, mine, theirs in (
            ("default", fused["default"], unfused["default"]),
            ("cost", fused["cost"], unfused["cost"]),
            ("any", fused["default"], least),
        ):
            wins[key] += mine <= theirs
            if mine > theirs:
                worse[key].append(f"{w.name} ({mine / theirs:.2f}x)")
        un = m.unfused["default"]
        by_time = m.time_ratio("default")
        faster += by_time <= 1
        if by_time > 1:
            slower.append(f"{w.name} ({by_time:.2f}x)")
        rows.append(
            [
                w.name,
                f"{fused['default']} ({m.fused['default'][1]})",
                f"{un.gather_bytes} ({un.gather_label})",
                un.stream_bytes,
                len(un.plan.streams),
                unfused["default"],
                f"{m.ratio('default'):.3g}",
                f"{fused['cost']} ({m.fused['cost'][1]})",
                f"{unfused['cost']} ({m.unfused['cost'].gather_label})",
                f"{m.ratio('cost'):.3g}",
                f"{fused['default'] / least:.3g}",
                f"{m.fused_time['default'] / 1e3:.1f}",
                f"{un.time / 1e3:.1f}",
                f"{by_time:.3g}",
            ]
        )
        progress.advance(task)
    text = table(
        [
            "workload",
            "fused bytes, default policy (case)",
            "unfused: lone gather, measured (case)",
            "unfused: streaming ops, exact",
            "streaming kernels",
            "unfused bytes",
            "fused / unfused (default)",
            "fused bytes, cost policy (case)",
            "unfused bytes, cost policy (gather case)",
            "fused / unfused (cost)",
            "fused (default) / least unfused",
            "fused estimated ns (default)",
            "unfused estimated ns (default)",
            "fused / unfused by time",
        ],
        rows,
    )
    n = len(workloads)
    text += "\n"
    for key, what in (
        ("default", "default policy for both"),
        ("cost", "cost policy for both"),
        ("any", "fused under the default policy against the smaller unfused figure"),
    ):
        text += f"\n- fused <= unfused on {wins[key]}/{n} workloads ({what})"
        text += f"; worse fused: {', '.join(worse[key])}" if worse[key] else ""
    text += f"\n- fused <= unfused by estimated time on {faster}/{n} workloads (default policy for both"
    text += f"; each streaming kernel at its least time and with its own launch){'; slower fused: ' + ', '.join(slower) if slower else ''}"
    text += f"\n- load average at the end: {load_average()} (on {os.cpu_count()} cores)\n"
    return text


# -- counters repeat across processes -----------------------------------------------------
def aslr_setting() -> str:
    path = Path("/proc/sys/kernel/randomize_va_space")
    return path.read_text().strip() if path.exists() else "unknown"


def bench_repeat(progress: Progress) -> str:
    """Every case that fits of every corpus workload, run twice (two twin processes, each with its own
    address-space layout); a workload counts as identical when every case's counters and stage marks
    match in both runs."""
    workloads = load_workloads()
    task = progress.add_task("counters repeat", total=len(workloads))
    identical, runs, differing = 0, 0, []
    for w in workloads:
        session = workload_session(w)
        inputs = session.inputs({}, seed=1, distribution=w.distribution)
        same = True
        for case in session.scheduled.cases:
            try:
                first = session.run(inputs, core_num=CORES, tiling_key=case.tiling_key)
            except AfError:
                continue
            second = session.run(inputs, core_num=CORES, tiling_key=case.tiling_key)
            runs += 2
            if (first.counters, first.stage_cores) != (second.counters, second.stage_cores):
                same = False
                differing.append(
                    f"{w.name} {case.label}: dcache_misses {first.counters['dcache_misses']} "
                    f"vs {second.counters['dcache_misses']}"
                )
        identical += same
        progress.advance(task)
    text = (
        f"Twin counters identical in two processes for {identical}/{len(workloads)} workloads "
        f"(every case that fits, {runs} twin runs on {CORES} cores; "
        f"/proc/sys/kernel/randomize_va_space = {aslr_setting()}).\n"
    )
    if differing:
        text += "\nDiffering:\n\n" + "\n".join(f"- {d}" for d in differing) + "\n"
    return text


# -- selection on a shape sweep --------------------------------------------------------
def bench_selection(progress: Progress) -> str:
    shapes = []
    for length in (4, 64, 1024):
        for width in (1, 8, 64):
            for batch in (4, 48):
                shapes.append((batch, length, width, max(1, length // 4)))
    graph = chain_graph(rank=3, dim=1)
    session = TwinSession(graph)
    task = progress.add_task("selection sweep", total=len(shapes))
    counts = {"seed": 0, "cost": 0}
    rule_ok = {"seed": 0, "cost": 0}
    rows = []
    for batch, length, width, k in shapes:
        sizes = {"a0": batch, "a1": length, "a2": width, "b0": batch, "b1": k, "b2": width}
        inputs = session.inputs(sizes, seed=2)
        m = measure_all(session, inputs)
        best = m["cases"][m["best"]].cost
        rule = m["cases"][m["rule"]].cost
        row = [f"B={batch} L={length} D={width} K={k}", m["rule"], m["seed"], m["cost"], m["best"]]
        for policy in ("seed", "cost"):
            got = m["cases"][m[policy]].cost
            counts[policy] += got <= 1.10 * best
            rule_ok[policy] += got <= 1.10 * rule
            row.append(f"{got / best:.2f}")
        rows.append(row)
        progress.advance(task)
    n = len(shapes)
    text = table(
        [
            "shape",
            "seed rule picks",
            "selected (seed)",
            "selected (cost)",
            "best by twin-estimated time",
            "seed / best",
            "cost / best",
        ],
        rows,
    )
    text += (
        f"\n\n- seed policy: within 10% of the best in {counts['seed']}/{n} shapes "
        f"({100 * counts['seed'] / n:.0f}%), never worse than the seed rule by >10% in {rule_ok['seed']}/{n}\n"
        f"- cost policy: within 10% of the best in {counts['cost']}/{n} shapes "
        f"({100 * counts['cost'] / n:.0f}%), never worse than the seed rule by >10% in {rule_ok['cost']}/{n}\n"
    )
    return text


def _titled(title: str, fn) -> Callable[[Progress, argparse.Namespace], list[tuple[str, str]]]:
    """A section of one table: ``fn(progress, args)`` gives its markdown."""
    return lambda progress, args: [(title, fn(progress, args))]


def _with_target(title: str, fn, label: str):
    def run(progress: Progress, args: argparse.Namespace) -> list[tuple[str, str]]:
        text, stats = fn(progress)
        return [(title, text + "\n\n" + target_summary(stats, label))]

    return run


_RUNS: dict[int, list[dict]] = {}


def _corpus_runs(progress: Progress) -> list[dict]:
    """The corpus runs the counters and policies sections share (run once per process)."""
    if 0 not in _RUNS:
        _RUNS[0] = corpus_runs(progress)
    return _RUNS[0]


def _counters(progress: Progress, args: argparse.Namespace) -> list[tuple[str, str]]:
    runs = _corpus_runs(progress)
    return [
        ("The cost model's counters against the twin's (corpus, every case that fits)", bench_counters(runs)),
        (
            "Register instructions and cycles of the vector functions (corpus, every case that issues any)",
            bench_reg_cycles(runs),
        ),
    ]


#: Every section: its key (``--only``), what it runs, in the order the document gives them. A section gives
#: one or more (title, markdown) parts.
SECTION_TABLE: dict[str, Callable[[Progress, argparse.Namespace], list[tuple[str, str]]]] = {
    "first": _titled(
        "New graph -> first twin result, beside torch.compile", lambda p, a: bench_first_result()
    ),
    "compile": _titled("Compile latency (schedule + codegen, no g++)", lambda p, a: bench_compile()),
    "tiling": _titled("Generated host tiling", lambda p, a: bench_tiling()),
    "build": _titled("g++ build of the generated sources (CPU twin)", lambda p, a: bench_build()),
    "traffic": _with_target("Data movement: fixed suite", bench_traffic, "suite"),
    "corpus": _with_target("Data movement: workload corpus", bench_corpus, "corpus"),
    "cores": _titled(
        "Where the excess goes: private data caches (corpus workloads above 1.25x, cost policy)",
        lambda p, a: bench_cores(p),
    ),
    "repeat": _titled("Twin counters across processes (corpus)", lambda p, a: bench_repeat(p)),
    "unfused": _titled(
        "Fused against unfused (single-op kernels) on the corpus", lambda p, a: bench_unfused(p)
    ),
    "optlevel": _titled(
        "Optimisation level of twin builds: build time against run time (corpus)",
        lambda p, a: bench_optlevel(p, limit=a.workloads),
    ),
    "selection": _titled(
        "Selection on a shape sweep (gather [B, L, D] along L, K = L/4 indices)",
        lambda p, a: bench_selection(p),
    ),
    "counters": _counters,
    "l2": _titled(
        "The shared L2 on the twin: bytes the cores read from it and bytes it reads from HBM (corpus)",
        lambda p, a: bench_l2(_corpus_runs(p)),
    ),
    "policies": _titled(
        "Selection on the corpus: every policy's pick", lambda p, a: bench_policies(_corpus_runs(p))
    ),
    "time": _titled(
        "Estimated time against the bound (corpus, default policy)", lambda p, a: bench_time(_corpus_runs(p))
    ),
}
#: Sections run only when asked for with --only.
EXTRA_SECTIONS = ("optlevel",)
SECTIONS = tuple(k for k in SECTION_TABLE if k not in EXTRA_SECTIONS)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", help="write the markdown here (default: stdout)")
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help=f"comma-separated subset of {SECTIONS + EXTRA_SECTIONS}"
    )
    parser.add_argument(
        "--workloads", type=int, default=None, help="optlevel: the first N corpus workloads only"
    )
    parser.add_argument(
        "--body",
        action="store_true",
        help="the tables alone, for benchmarks/regenerate.py: no machine line, no heading above the first "
        "part, later parts under ### headings",
    )
    args = parser.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in only if s not in SECTION_TABLE]
    if unknown:
        parser.error(f"unknown section(s) {unknown}; sections: {list(SECTION_TABLE)}")
    parts: list[str] = []
    if not args.body:
        parts.append(
            f"Measured on {platform.machine()}, Python {platform.python_version()}, "
            f"{toolchain.compiler_version()}; twin runs on {CORES} emulated cores.\n"
        )
    with Progress(console=console, disable=not console.is_terminal) as progress:
        for key in SECTION_TABLE:
            if key not in only:
                continue
            for i, (title, text) in enumerate(SECTION_TABLE[key](progress, args)):
                if args.body:
                    parts.append(text if i == 0 else f"### {title}\n\n{text}")
                else:
                    parts.append(f"## {title}\n\n{text}")
    markdown = "\n\n".join(parts) + "\n"
    if args.output:
        Path(args.output).write_text(markdown)
    else:
        sys.stdout.write(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
