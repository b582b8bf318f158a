"""Regenerate BENCHMARKS.md: run every benchmark and write its current tables, each under its command.

    python benchmarks/regenerate.py -o BENCHMARKS.md                  # every step (``python3 dev.py bench``)
    python benchmarks/regenerate.py -o BENCHMARKS.md --only startup   # re-run some steps, keep the others
    python benchmarks/regenerate.py --list                            # the steps and their commands

The document is ``benchmarks/head.md`` (what is measured, the targets, the definitions: the text that does
not change with a run) followed by one section per step of :data:`STEPS`. Each section names the command
that produced it, when it ran, how long it took and the machine's 1-minute load average before and after
(wall-clock figures depend on it; the twin's counters do not), then the step's own output. Sections sit
between ``<!-- step: KEY -->`` / ``<!-- end: KEY -->`` markers, so ``--only`` replaces those steps' sections
and keeps every other section as the last run wrote it.

A step that fails stops the run: the sections of the steps that ran before it are written, the failed
step and those after it keep the text the last run gave them (each section states when it ran), and the
exit status is 1, naming the step. No section ever holds a failed step's partial output. A step that needs what the machine lacks (a Python with torch)
is written as such, with what to install, rather than left out silently. The file is written atomically.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import attrs

from af_core.ascendc.cache import write_atomic

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HEAD = HERE / "head.md"

#: the interpreter a step needs, by the ``needs`` of :class:`Step`
TORCH_ENV = "AF_BENCH_TORCH_PYTHON"


@attrs.frozen
class Step:
    """One section of the document: the command that produces it and how its output becomes markdown."""

    key: str
    title: str
    #: the command, as shown (``python`` is the interpreter running this script, or the torch one)
    argv: tuple[str, ...]
    #: ``markdown``: the command prints the section's body; ``pytest-benchmark``: the body is rendered
    #: from the JSON file the command writes (``{json}`` in ``argv``)
    render: str = "markdown"
    #: ``torch``: runs with the interpreter ``AF_BENCH_TORCH_PYTHON`` names (torch, transformers,
    #: deepctr-torch); without one the section says so
    needs: str = ""
    #: (environment variable, flag): when the variable is set, ``flag VALUE`` is added to the command, and
    #: the command is shown with ``flag $VARIABLE`` (a path of the machine that ran it is not the document's)
    optional: tuple[tuple[str, str], ...] = ()

    def shown(self, env: Mapping[str, str] | None = None) -> str:
        words = [shlex.quote(a) if "{" not in a else a for a in self.argv]
        for var, flag in self.optional:
            if env is not None and env.get(var):
                words += [flag, f"${var}"]
        return " ".join(words)

    def args(self, env: Mapping[str, str]) -> list[str]:
        """The optional flags the environment asks for, with their values."""
        return [part for var, flag in self.optional if env.get(var) for part in (flag, env[var])]


def _run_benchmarks(key: str, title: str) -> Step:
    return Step(key, title, ("python", "benchmarks/run_benchmarks.py", "--body", "--only", key))


#: Every section, in document order.
STEPS: tuple[Step, ...] = (
    Step(
        "pytest-benchmark",
        "Compile latency through pytest-benchmark (schedule + codegen, no g++)",
        ("python", "-m", "pytest", "benchmarks", "--benchmark-only", "-q", "--benchmark-json", "{json}"),
        render="pytest-benchmark",
    ),
    _run_benchmarks("compile", "Compile latency (schedule + codegen, no g++)"),
    Step("startup", "Start-up", ("python", "benchmarks/startup.py", "--runs", "20")),
    _run_benchmarks("first", "New graph -> first twin result, beside torch.compile"),
    _run_benchmarks("tiling", "Generated host tiling"),
    _run_benchmarks("build", "g++ build of the generated sources (CPU twin)"),
    _run_benchmarks("traffic", "Data movement: fixed suite"),
    _run_benchmarks("corpus", "Data movement: workload corpus"),
    _run_benchmarks("cores", "Where the excess goes: private data caches (corpus workloads above 1.25x)"),
    _run_benchmarks("unfused", "Fused against unfused (single-op kernels) on the corpus"),
    _run_benchmarks("selection", "Selection on a shape sweep (gather [B, L, D] along L, K = L/4 indices)"),
    _run_benchmarks("policies", "Selection on the corpus: every policy's pick"),
    _run_benchmarks(
        "counters", "The cost model's counters against the twin's (corpus, every case that fits)"
    ),
    _run_benchmarks(
        "l2", "The shared L2 on the twin: bytes the cores read from it and bytes it reads from HBM (corpus)"
    ),
    _run_benchmarks("time", "Estimated time against the bound (corpus, default policy)"),
    _run_benchmarks("repeat", "Twin counters across processes (corpus)"),
    Step(
        "dedup",
        "The deduplicating row gather (af-indirect-load-dedup) on the corpus",
        ("python", "benchmarks/dedup_corpus.py"),
    ),
    Step(
        "chains",
        "Elementwise chains in registers against memory-based calls",
        ("python", "benchmarks/regbase_chains.py"),
    ),
    Step(
        "gather",
        "The tile gather in registers against the memory-based Gather",
        ("python", "benchmarks/regbase_gather.py"),
    ),
    Step(
        "offsets",
        "The gather's offsets in registers against memory-based calls",
        ("python", "benchmarks/regbase_index_pre.py"),
    ),
    Step("syncs", "Synchronisation statements per kernel", ("python", "benchmarks/twin_sync.py", "syncs")),
    Step(
        "race-cost",
        "The race check's cost on the twin",
        ("python", "benchmarks/twin_sync.py", "cost", "--rounds", "3"),
    ),
    Step(
        "torch-models",
        "PyTorch models: the libraries' own code",
        ("python", "benchmarks/torch_models.py"),
        needs="torch",
        optional=(("AF_BENCH_DLRM", "--dlrm"),),  # a checkout of facebookresearch/dlrm adds DLRM_Net's row
    ),
)

_SECTION = re.compile(r"<!-- step: ([a-z0-9-]+) -->\n.*?<!-- end: \1 -->\n", re.S)


class StepFailed(RuntimeError):
    """A step's command exited non-zero; the message names the step, the command and its output's tail."""


@attrs.frozen
class Ran:
    """What one step gave: its body and the facts its section states about the run."""

    body: str
    command: str
    started: str
    seconds: float
    load_before: float
    load_after: float


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def source_path() -> str:
    """This checkout's packages, for an interpreter that installed copies of them (the af_torch env installs
    af-core, the plugins and af-torch from the checkout as it was then): the source wins."""
    dirs = [ROOT, *sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file())]
    return os.pathsep.join(str(d) for d in [*dirs, ROOT / "frontends" / "torch"])


def _interpreter(step: Step, env: dict[str, str]) -> str | None:
    if step.needs == "torch":
        return env.get(TORCH_ENV) or None
    return sys.executable


def render_pytest_benchmark(data: dict) -> str:
    """The table of a ``--benchmark-json`` file: each test's min, median (ms) and rounds."""
    rows = ["| test | min ms | median ms | rounds |", "|---|---|---|---|"]
    for bench in data.get("benchmarks", []):
        stats = bench["stats"]
        rows.append(
            f"| {bench['name']} | {stats['min'] * 1e3:.1f} | {stats['median'] * 1e3:.1f} | {stats['rounds']} |"
        )
    return "\n".join(rows)


def run_step(
    step: Step, env: dict[str, str], runner: Callable[..., subprocess.CompletedProcess] = subprocess.run
) -> Ran:
    """Run ``step`` from the repository root; :class:`StepFailed` when its command fails."""
    python = _interpreter(step, env)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    if python is None:
        body = (
            f"Not run: no Python with torch. Set {TORCH_ENV} to an interpreter with torch, transformers and "
            "deepctr-torch (`python3 dev.py bench` uses the af_torch env's)."
        )
        return Ran(body, step.shown(env), started, 0.0, _load(), _load())
    with tempfile.TemporaryDirectory(prefix="af-bench-") as scratch:
        json_path = Path(scratch) / "benchmark.json"
        argv = [python if a == "python" else a.replace("{json}", str(json_path)) for a in step.argv]
        argv += step.args(env)
        if step.needs == "torch":
            env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, (source_path(), env.get("PYTHONPATH"))))}
        before, t0 = _load(), time.monotonic()
        done = runner(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        seconds, after = time.monotonic() - t0, _load()
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
            raise StepFailed(f"step '{step.key}' failed (exit {done.returncode}): {step.shown(env)}\n{tail}")
        if step.render == "pytest-benchmark":
            body = render_pytest_benchmark(json.loads(json_path.read_text(encoding="utf-8")))
        else:
            body = done.stdout.strip()
    return Ran(body, step.shown(env), started, seconds, before, after)


def section(step: Step, ran: Ran, cores: int | None = None) -> str:
    """The markdown of one step: heading, the run's facts, the body, between the step's markers."""
    cores = cores or os.cpu_count() or 1
    facts = (
        f"`{ran.command}` · {ran.started} · {ran.seconds:.0f} s · 1-minute load average "
        f"{ran.load_before:.1f} before, {ran.load_after:.1f} after ({cores} cores)"
    )
    return f"<!-- step: {step.key} -->\n## {step.title}\n\n{facts}\n\n{ran.body}\n<!-- end: {step.key} -->\n"


def sections_of(text: str) -> dict[str, str]:
    """The sections of an earlier document, by step key."""
    return {m.group(1): m.group(0) for m in _SECTION.finditer(text)}


def compose(head: str, sections: dict[str, str], steps: Sequence[Step] = STEPS) -> str:
    """The document: the head, then each step's section in :data:`STEPS` order (a step never run says so)."""
    parts = [head.rstrip() + "\n"]
    for step in steps:
        parts.append(
            sections.get(step.key)
            or f"<!-- step: {step.key} -->\n## {step.title}\n\nNot run yet: `{step.shown()}`.\n<!-- end: {step.key} -->\n"
        )
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "-o", "--output", default=str(ROOT / "BENCHMARKS.md"), help="the document (default: BENCHMARKS.md)"
    )
    parser.add_argument("--only", default="", help=f"comma-separated step keys: {[s.key for s in STEPS]}")
    parser.add_argument("--list", action="store_true", help="print each step's key and command, run nothing")
    args = parser.parse_args(argv)
    if args.list:
        for step in STEPS:
            extra = [f"needs {TORCH_ENV}"] if step.needs else []
            extra += [f"{flag} ${var} when {var} is set" for var, flag in step.optional]
            print(f"{step.key}: {step.shown()}" + (f"  ({'; '.join(extra)})" if extra else ""))
        return 0
    keys = {s.key for s in STEPS}
    only = [k.strip() for k in args.only.split(",") if k.strip()]
    unknown = sorted(set(only) - keys)
    if unknown:
        parser.error(f"unknown step(s) {unknown}; steps: {[s.key for s in STEPS]}")
    out = Path(args.output)
    kept = sections_of(out.read_text(encoding="utf-8")) if out.exists() else {}
    env = dict(os.environ)
    fresh: dict[str, str] = {}
    failed: StepFailed | None = None
    for step in STEPS:
        if only and step.key not in only:
            continue
        print(f"[{step.key}] {step.shown()}", file=sys.stderr, flush=True)
        try:
            ran = run_step(step, env)
        except StepFailed as exc:
            failed = exc
            break
        fresh[step.key] = section(step, ran)
        print(f"[{step.key}] {ran.seconds:.0f} s", file=sys.stderr, flush=True)
    write_atomic(out, compose(HEAD.read_text(encoding="utf-8"), {**kept, **fresh}))
    if failed is not None:
        print(f"regenerate: {failed}\nwrote the {len(fresh)} step(s) before it to {out}", file=sys.stderr)
        return 1
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
