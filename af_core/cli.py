"""``afc``: the command line of af_core.

    afc plugins                          what is installed, versions, hooks, load errors
    afc compile GRAPH... [-j N] -o DIR       write kernel, tiling, tiling data, infer_shape, proto, report, pictures
    afc graph GRAPH --format mermaid|dot|svg draw the graph and each case's stages and workspaces
    afc explain GRAPH --shape k=v          why each candidate was chosen, dropped or rejected
    afc run GRAPH --shape k=v [--inputs DIR] run on the CPU twin and compare with the reference
    afc demo                             compile the sample graphs and run them on the twin

GRAPH is a JSON graph or a Python file defining ``graph`` (or ``build()``).
Errors print one line and exit with code 2 (``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from rich.console import Console
from rich.table import Table

from af_core.errors import AfError

EXIT_ERROR = 2
EXIT_MISMATCH = 1


def _console() -> Console:
    """Rich on a terminal; plain, wide text when piped (CI logs, files)."""
    if sys.stdout.isatty():
        return Console(highlight=False)
    return Console(highlight=False, width=200, no_color=True, force_terminal=False)


def parse_shape(items: list[str] | None) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for item in items or []:
        for part in item.split(","):
            if not part.strip():
                continue
            if "=" not in part:
                raise ValueError(f"--shape expects name=value, got '{part}'")
            name, value = part.split("=", 1)
            try:
                sizes[name.strip()] = int(value)
            except ValueError:
                raise ValueError(f"--shape {name.strip()} must be an integer, got '{value}'") from None
    return sizes


def _options(args):
    from af_core.autofuser import AutofuserOptions
    from af_core.platform import Platform, current_platform

    plat = current_platform()
    if getattr(args, "cores", None):
        plat = Platform(plat.soc, args.cores, plat.ub_size)
    return AutofuserOptions(platform=plat, force_template=getattr(args, "force_template", None),
                            selection=getattr(args, "selection", None) or "seed")


def _missing_sizes(graph, sizes: dict[str, int]) -> list[str]:
    return [v.name for v in graph.sizes() if v.name not in sizes]


# ---------------------------------------------------------------------------
def cmd_plugins(args) -> int:
    from af_core.registry import get_registry

    registry = get_registry()
    console = _console()
    table = Table(title="af_core plugins")
    for col in ("plugin", "distribution", "version", "hooks", "templates", "ApiCalls"):
        table.add_column(col)
    for info in registry.manager.plugins():
        templates = [e.name for e in registry.entries("template") if e.plugin == info.name]
        calls = [e.name for e in registry.entries("api_call") if e.plugin == info.name]
        table.add_row(info.name, info.distribution, info.version, ", ".join(h.removeprefix("af_") for h in info.hooks),
                      ", ".join(templates) or "-", ", ".join(calls) or "-")
    console.print(table)
    if registry.manager.disabled:
        console.print(f"disabled: {', '.join(registry.manager.disabled)}")
    errors = registry.load_errors
    if errors:
        console.print("[bold red]load errors:[/bold red]")
        for e in errors:
            console.print(f"  {e.plugin} ({e.distribution}): {e.error}")
    else:
        console.print("load errors: none")
    return 0


def _compile_one(job: tuple[str, str, dict, str | None, int | None, str]) -> tuple[str, str, int, int, list[str]]:
    """Compile one graph file into ``out`` (runs in worker processes for -j N)."""
    from af_core.autofuser import Autofuser, AutofuserOptions
    from af_core.platform import Platform, current_platform
    from af_core.report import write_artifacts
    from af_core.samples import load_graph

    path, out, sizes, force, cores, selection = job
    graph = load_graph(path)
    plat = current_platform()
    if cores:
        plat = Platform(plat.soc, cores, plat.ub_size)
    fuser = Autofuser(AutofuserOptions(platform=plat, force_template=force, selection=selection))
    scheduled = fuser.schedule(graph)
    result = fuser.generate(scheduled)
    written = write_artifacts(Path(out), scheduled, result, sizes or None)
    return graph.name, out, len(scheduled.cases), len(scheduled.rejections), written


def cmd_compile(args) -> int:
    from concurrent.futures import ProcessPoolExecutor

    from rich.progress import Progress

    sizes = parse_shape(args.shape)
    out = Path(args.output)
    many = len(args.graph) > 1
    jobs = [(g, str(out / Path(g).stem) if many else str(out), sizes, args.force_template, args.cores, args.selection)
            for g in args.graph]
    console = _console()
    results = []
    failures = []
    with Progress(console=console, disable=not console.is_terminal or not many) as progress:
        task = progress.add_task("compiling", total=len(jobs))
        if args.jobs > 1 and many:
            with ProcessPoolExecutor(max_workers=args.jobs) as pool:
                futures = {pool.submit(_compile_one, job): job for job in jobs}
                for future, job in futures.items():
                    try:
                        results.append(future.result())
                    except Exception as exc:  # report every failing graph, compile the rest
                        failures.append((job[0], exc))
                    progress.advance(task)
        else:
            for job in jobs:
                try:
                    results.append(_compile_one(job))
                except Exception as exc:
                    if not many:
                        raise
                    failures.append((job[0], exc))
                progress.advance(task)
    for name, where, cases, rejections, written in results:
        console.print(f"compiled '{name}': {cases} case(s), {rejections} rejection(s) -> {where}")
        if not many:
            for file in written:
                console.print(f"  {Path(where) / file}")
    for path, exc in failures:
        console.print(f"failed '{path}': {exc}")
    return EXIT_ERROR if failures else 0


def cmd_run(args) -> int:
    import numpy as np

    from af_core.samples import load_graph
    from af_core.twin import TwinSession

    graph = load_graph(args.graph)
    sizes = parse_shape(args.shape)
    missing = _missing_sizes(graph, sizes) if not args.inputs else []
    if missing:
        raise ValueError(f"--shape needs a value for {', '.join(missing)}")
    session = TwinSession(graph, _options(args), sanitize=args.sanitize)
    if args.inputs:
        arrays = {p.stem: np.load(p) for p in sorted(Path(args.inputs).glob("*.npy"))}
        inputs = session.inputs(sizes, arrays=arrays)
    else:
        inputs = session.inputs(sizes, seed=args.seed)
    run = session.check(inputs=inputs, core_num=args.cores)
    _print_runs(_console(), [(graph.name, inputs.sizes, run)])
    return 0 if run.ok else EXIT_MISMATCH


def cmd_explain(args) -> int:
    from af_core.autofuser import Autofuser
    from af_core.explain import explain
    from af_core.samples import load_graph

    graph = load_graph(args.graph)
    sizes = parse_shape(args.shape)
    missing = _missing_sizes(graph, sizes)
    if missing:
        raise ValueError(f"--shape needs a value for {', '.join(missing)}")
    fuser = Autofuser(_options(args))
    scheduled = fuser.schedule(graph)
    report = explain(scheduled, sizes, args.cores, args.ub)
    console = _console()
    m = scheduled.measures
    from af_core.ir.evaluate import eval_int

    env = {**graph.size_env(sizes), "core_num": report.core_num}
    cont, outer = eval_int(m.continuous_bytes, env), eval_int(m.index_outer, env)
    console.print(f"{graph.name} at {', '.join(f'{k}={v}' for k, v in sizes.items()) or '(static)'}: "
                  f"{report.core_num} cores, UB {report.ub_size} B, selection policy {report.policy}")
    console.print(f"seed measures: continuous bytes {cont} (>= {m.thresholds.cacheline} x {m.thresholds.cache_thres}?), "
                  f"index outer product {outer} (>= {report.core_num} x {m.thresholds.core_thres}?)")
    table = Table(title="candidates")
    for col in ("key", "template", "plugin", "status", "score", "cost", "UB B", "workspace B", "DCache B",
                "cores", "why"):
        table.add_column(col)
    for r in report.rows:
        cells = [r.tiling_key, r.template, r.plugin, r.status, r.score, r.cost, r.ub_bytes, r.workspace_bytes,
                 r.dcache_bytes, r.block_dim, r.reason]
        table.add_row(*("-" if c is None else str(c) for c in cells))
    console.print(table)
    if report.error:
        console.print(f"no candidate fits: {report.error}")
        return EXIT_MISMATCH
    return 0


def cmd_graph(args) -> int:
    from af_core.autofuser import Autofuser
    from af_core.pictures import case_dot, case_mermaid, graph_dot, to_mermaid, to_svg
    from af_core.samples import load_graph

    graph = load_graph(args.graph)
    parts: list[tuple[str, str]] = []
    if args.format == "mermaid":
        parts.append(("graph", to_mermaid(graph, title=graph.name)))
    else:
        parts.append(("graph", graph_dot(graph)))
    if not args.no_cases:
        scheduled = Autofuser(_options(args)).schedule(graph)
        for case in scheduled.cases:
            text = case_mermaid(case) if args.format == "mermaid" else case_dot(case)
            parts.append((f"case{case.tiling_key}_{case.template}", text))
    if args.format == "svg":
        parts = [(name, to_svg(text)) for name, text in parts]
    suffix = {"mermaid": ".mmd", "dot": ".dot", "svg": ".svg"}[args.format]
    if args.output:
        out = Path(args.output)
        out.mkdir(parents=True, exist_ok=True)
        for name, text in parts:
            (out / f"{name}{suffix}").write_text(text, encoding="utf-8")
            print(out / f"{name}{suffix}")
    else:
        for name, text in parts:
            print(f"%% {name}" if args.format == "mermaid" else f"// {name}")
            print(text)
    return 0


def _print_runs(console: Console, rows) -> None:
    table = Table(title="CPU twin vs reference")
    for col in ("graph", "shape", "template", "key", "cores", "result", "GM read B", "GM write B",
                "scalar GM", "lines read", "UB peak"):
        table.add_column(col)
    for name, sizes, run in rows:
        c = run.twin.counters
        result = "[green]match[/green]" if run.ok else "[red]MISMATCH[/red]"
        detail = " (bitwise)" if run.ok and all(x.exact for x in run.comparisons) else ""
        table.add_row(name, ",".join(f"{k}={v}" for k, v in sizes.items()), run.template, str(run.twin.tiling_key),
                      str(run.twin.block_dim), result + detail, str(c["gm_read_bytes"]), str(c["gm_write_bytes"]),
                      str(c["scalar_gm_reads"] + c["scalar_gm_writes"]), str(c["cachelines_read"]),
                      str(c["ub_high_water"]))
    console.print(table)
    for name, _sizes, run in rows:
        if not run.ok:
            console.print(f"[red]{name}[/red]: {run.describe()}")


def cmd_demo(args) -> int:
    from rich.progress import Progress

    from af_core.samples import SAMPLES
    from af_core.twin import TwinSession

    console = _console()
    rows = []
    ok = True
    notes = []
    with Progress(console=console, disable=not console.is_terminal) as progress:
        task = progress.add_task("compile + twin runs", total=sum(1 + len(s.shapes) for s in SAMPLES))
        for sample in SAMPLES:
            progress.update(task, description=f"building {sample.name}")
            session = TwinSession(sample.build(), _options(args))
            progress.advance(task)
            notes.append(f"[bold]{sample.name}[/bold]: {sample.description}; cases "
                         f"{', '.join(f'{c.tiling_key}={c.label}' for c in session.scheduled.cases)}; kernel "
                         f"{len(session.result.kernel.splitlines())} lines, "
                         f"{'cached build' if session.build.cached else 'built with g++'}")
            for k, sizes in enumerate(sample.shapes):
                progress.update(task, description=f"running {sample.name}")
                run = session.check(sizes, seed=k, core_num=args.cores)
                ok = ok and run.ok
                rows.append((sample.name, sizes, run))
                progress.advance(task)
    for note in notes:
        console.print(note)
    _print_runs(console, rows)
    console.print("all outputs match the reference" if ok else "[red]some outputs differ[/red]")
    return 0 if ok else EXIT_MISMATCH


# ---------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="afc", description="IndirectLoad autofusion: compile, explain, run.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("plugins", help="list plugins, versions, hooks and load errors")
    p.set_defaults(func=cmd_plugins)

    def graph_args(p, shape_required: bool = False):
        p.add_argument("graph", help="a .json graph or a .py file defining `graph`")
        p.add_argument("--shape", action="append", metavar="NAME=VALUE", required=shape_required,
                       help="a size value (repeatable, or comma-separated)")
        p.add_argument("--force-template", default=None, help="keep only this template's cases")
        p.add_argument("--cores", type=int, default=None, help="core count (default: the platform's)")
        p.add_argument("--selection", choices=("seed", "cost"), default="seed",
                       help="host tiling policy: the seed's scores (default) or the lowest modelled cost")

    p = sub.add_parser("compile", help="write the generated artifacts")
    p.add_argument("graph", nargs="+", help=".json graphs or .py files defining `graph`")
    p.add_argument("--shape", action="append", metavar="NAME=VALUE", help="sizes for the report's explain table")
    p.add_argument("--force-template", default=None, help="keep only this template's cases")
    p.add_argument("--cores", type=int, default=None, help="core count (default: the platform's)")
    p.add_argument("-o", "--output", default="afc-out", help="output directory (one sub-directory per graph "
                   "when several are given)")
    p.add_argument("-j", "--jobs", type=int, default=1, help="compile graphs in N processes")
    p.add_argument("--selection", choices=("seed", "cost"), default="seed",
                   help="host tiling policy: the seed's scores (default) or the lowest modelled cost")

    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("graph", help="draw the graph and each case (stages, workspaces)")
    graph_args(p)
    p.add_argument("--format", choices=("mermaid", "dot", "svg"), default="mermaid")
    p.add_argument("-o", "--output", help="directory for one file per picture (default: stdout)")
    p.add_argument("--no-cases", action="store_true", help="only the graph, not each case")
    p.set_defaults(func=cmd_graph)

    p = sub.add_parser("explain", help="why a template is chosen for a shape")
    graph_args(p, shape_required=False)
    p.add_argument("--ub", type=int, default=None, help="usable UB bytes (default: the platform's)")
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("run", help="run on the CPU twin and compare with the reference")
    graph_args(p)
    p.add_argument("--inputs", help="directory of <Data name>.npy arrays (logical shapes)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sanitize", action="store_true", help="build with ASan and UBSan")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("demo", help="compile the sample graphs and run them on the twin")
    p.add_argument("--cores", type=int, default=None)
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (AfError, ValueError, FileNotFoundError, KeyError) as exc:
        if args.debug:
            traceback.print_exc()
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        first = str(message).strip().splitlines()[0] if str(message).strip() else type(exc).__name__
        print(f"afc: error: {first}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
