"""Mutation testing of the synchronisation in generated kernels: every sync a case executes must matter.

For a graph, the tool finds each synchronisation statement of the generated kernel.cpp (the API headers
are inlined into it, so their syncs are there too): a SetFlag / WaitFlag pair, a PipeBarrier, a SyncAll,
and a queue's EnQue with the DeQue that takes the buffer back. It builds the kernel once with every
statement wrapped as ``AF_PROBE(k); if (!AF_MUTANT(k)) { ... }`` (AfTwin::Probe / Mutant of af_twin/runtime.h
on the twin, nothing on the device), plus a
second mutant per pair and barrier that moves it to another pipe, and runs:

- each case at each shape with no mutant: the probes say which syncs the case executes, and the run must
  match the reference;
- each executed mutant: it is *killed* when the twin reports it (a race, a flag misuse, a queue misuse)
  or the output no longer matches the reference, on the platform's cores or, tried next, on one core
  (every tile on one core: a sync between consecutive tiles has something to order); otherwise it
  *survives*.

A surviving removal is a sync that orders nothing at the shapes tried: codegen should stop emitting it (or
a shape that needs it should be added). Usage::

    python tools/sync_mutants.py [--sample NAME ...] [--workload NAME ...] [--template T] [--json OUT]

With no --sample / --workload it runs every installed sample at its sample shapes.
"""

from __future__ import annotations

import argparse
import enum
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence

import attrs

#: the run-time switch of the instrumented kernel (af_twin/runtime.h Mutant)
MUTANT_ENV = "AF_TWIN_MUTANT"

_SET = re.compile(
    r"^(?P<indent>\s*)(?P<ns>(?:AscendC::)?)SetFlag<(?P<hns>(?:AscendC::)?)HardEvent::(?P<ev>\w+)>\((?P<id>.*)\);\s*$"
)
_WAIT = re.compile(r"^\s*(?:AscendC::)?WaitFlag<(?:AscendC::)?HardEvent::(?P<ev>\w+)>\((?P<id>.*)\);\s*$")
_BARRIER = re.compile(r"^(?P<indent>\s*)(?P<ns>(?:AscendC::)?)PipeBarrier<(?P<pipe>PIPE_\w+)>\(\);\s*$")
_SYNC_ALL = re.compile(r"^\s*(?:AscendC::)?SyncAll(?:<[^>]*>)?\(\);\s*$")
_ENQUE = re.compile(r"^(?P<indent>\s*)(?P<queue>\w+)\.EnQue\((?P<tile>\w+)\);\s*$")
_DEQUE = re.compile(
    r"^(?P<head>\s*AscendC::LocalTensor<[^>]+>\s+\w+\s*=\s*)(?P<queue>\w+)\.DeQue<[^>]+>\(\);\s*$"
)

#: the pipes a moved flag or barrier may take instead of its own
_PIPES = ("MTE2", "MTE3", "S", "V")
#: the twin's pipe numbers (af_twin/hb_state.h HbPipe), for MoveCovers
_PIPE_INDEX = {"S": 0, "V": 1, "MTE2": 2, "MTE3": 3}
_BARRIER_PIPES = ("PIPE_V", "PIPE_MTE2", "PIPE_MTE3")


class SyncKind(enum.Enum):
    FLAG_PAIR = "flag pair"
    FLAG = "lone flag"
    BARRIER = "PipeBarrier"
    SYNC_ALL = "SyncAll"
    QUEUE = "EnQue/DeQue"


class MutantKind(enum.Enum):
    REMOVE = "remove"
    MOVE = "other pipe"


@attrs.frozen
class Sync:
    """One synchronisation statement (or pair) of a kernel: its lines (0-based) and text."""

    kind: SyncKind
    lines: tuple[int, ...]
    text: str


@attrs.frozen
class Mutant:
    """Mutant ``id`` of ``sync``."""

    id: int
    sync: Sync
    kind: MutantKind


def _moved_event(event: str) -> str:
    src, dst = event.split("_", 1)
    return next(f"{p}_{dst}" for p in _PIPES if p not in (src, dst))


def _twin_only_lines(lines: Sequence[str]) -> set[int]:
    """Lines inside ``#if defined(AF_CPU_TWIN)`` (or ``#ifdef AF_CPU_TWIN``) blocks: twin-only checks, which the
    device never runs, so their syncs are not the kernel's."""
    inside: set[int] = set()
    stack: list[bool] = []  # per open #if: whether it is the twin-only branch
    for i, line in enumerate(lines):
        text = line.strip()
        if text.startswith("#if"):
            stack.append("AF_CPU_TWIN" in text and "!" not in text)
        elif text.startswith("#else") or text.startswith("#elif"):
            if stack:
                stack[-1] = False
        elif text.startswith("#endif"):
            if stack:
                stack.pop()
        elif any(stack):
            inside.add(i)
    return inside


def find_syncs(kernel: str) -> list[Sync]:
    """The synchronisation statements of ``kernel`` outside its twin-only blocks, in line order."""
    lines = kernel.splitlines()
    syncs: list[Sync] = []
    used: set[int] = set()
    pending: dict[str, list[int]] = {}  # queue -> lines of EnQues not yet matched by a DeQue
    twin_only = _twin_only_lines(lines)
    for i, line in enumerate(lines):
        if i in used or i in twin_only:
            continue
        m = _SET.match(line)
        if m:
            w = _WAIT.match(lines[i + 1]) if i + 1 < len(lines) else None
            if w and w["ev"] == m["ev"] and w["id"] == m["id"]:
                syncs.append(Sync(SyncKind.FLAG_PAIR, (i, i + 1), line.strip()))
                used.add(i + 1)
            else:
                syncs.append(Sync(SyncKind.FLAG, (i,), line.strip()))
            continue
        if _WAIT.match(line):
            syncs.append(Sync(SyncKind.FLAG, (i,), line.strip()))
        elif _BARRIER.match(line):
            syncs.append(Sync(SyncKind.BARRIER, (i,), line.strip()))
        elif _SYNC_ALL.match(line):
            syncs.append(Sync(SyncKind.SYNC_ALL, (i,), line.strip()))
        elif (e := _ENQUE.match(line)) is not None:
            pending.setdefault(e["queue"], []).append(i)
        elif (d := _DEQUE.match(line)) is not None and pending.get(d["queue"]):
            enq = pending[d["queue"]].pop(0)
            syncs.append(Sync(SyncKind.QUEUE, (enq, i), f"{lines[enq].strip()} ... {line.strip()}"))
    syncs.sort(key=lambda s: s.lines[0])
    return syncs


def mutants_of(syncs: Sequence[Sync]) -> list[Mutant]:
    """A removal per sync, and a move to another pipe per flag pair and barrier."""
    out: list[Mutant] = []
    for s in syncs:
        out.append(Mutant(len(out), s, MutantKind.REMOVE))
    for s in syncs:
        if s.kind in (SyncKind.FLAG_PAIR, SyncKind.BARRIER):
            out.append(Mutant(len(out), s, MutantKind.MOVE))
    return out


def instrument(kernel: str, mutants: Sequence[Mutant]) -> str:
    """``kernel`` with every mutant behind its run-time switch and a probe before each sync."""
    lines = kernel.splitlines()
    by_sync: dict[Sync, list[Mutant]] = {}
    for m in mutants:
        by_sync.setdefault(m.sync, []).append(m)
    for sync, ms in by_sync.items():
        remove = next(m for m in ms if m.kind is MutantKind.REMOVE)
        move = next((m for m in ms if m.kind is MutantKind.MOVE), None)
        first = lines[sync.lines[0]]
        indent = first[: len(first) - len(first.lstrip())]
        k = remove.id
        if sync.kind is SyncKind.QUEUE:
            enq, deq = sync.lines
            e = _ENQUE.match(lines[enq])
            d = _DEQUE.match(lines[deq])
            assert e is not None and d is not None
            lines[enq] = f"{indent}AF_PROBE({k}); if (!AF_MUTANT({k})) {{ {lines[enq].strip()} }}"
            lines[deq] = f"{d['head']}AF_MUTANT({k}) ? {e['tile']} : {lines[deq].split('=', 1)[1].strip()}"
            continue
        body = " ".join(lines[i].strip() for i in sync.lines)
        moved = ""
        if move is not None:
            if sync.kind is SyncKind.FLAG_PAIR:
                event = _SET.match(lines[sync.lines[0]])["ev"]  # type: ignore[index]
                other = body.replace(f"HardEvent::{event}>", f"HardEvent::{_moved_event(event)}>")
                src, new = event.split("_", 1)[0], _moved_event(event).split("_", 1)[0]
                other = f"AF_MOVE_COVERS({move.id}, {_PIPE_INDEX[src]}, {_PIPE_INDEX[new]}); {other}"
            else:
                pipe = _BARRIER.match(lines[sync.lines[0]])["pipe"]  # type: ignore[index]
                other = body.replace(pipe, next(p for p in _BARRIER_PIPES if p != pipe))
            moved = f"if (AF_MUTANT({move.id})) {{ {other} }} else "
        lines[sync.lines[0]] = f"{indent}AF_PROBE({k}); {moved}if (!AF_MUTANT({k})) {{ {body} }}"
        for i in sync.lines[1:]:
            lines[i] = ""
    head = next(i for i, line in enumerate(lines) if line.startswith("#include")) + 1
    lines[head:head] = PROBE_MACROS.splitlines()
    return "\n".join(lines) + "\n"


#: the switches of an instrumented kernel: the twin's probes and mutants, nothing on the device (so the
#: instrumented kernel still type-checks against the official headers)
PROBE_MACROS = """\
#if defined(AF_CPU_TWIN)
#define AF_PROBE(k) AfTwin::Probe(k)
#define AF_MUTANT(k) AfTwin::Mutant(k)
#define AF_MOVE_COVERS(k, from, to) AfTwin::MoveCovers(k, from, to)
#else
#define AF_PROBE(k) ((void)0)
#define AF_MUTANT(k) false
#define AF_MOVE_COVERS(k, from, to) ((void)0)
#endif
"""


@attrs.frozen
class Outcome:
    """What one mutant did on one case at one shape."""

    mutant: Mutant
    case: str
    sizes: Mapping[str, int]
    killed: bool
    how: str
    weaker: bool = True  # a moved flag: the twin found it carrying less than the original somewhere


@attrs.frozen
class Report:
    """The mutation run of one graph."""

    graph: str
    syncs: tuple[Sync, ...]
    mutants: tuple[Mutant, ...]
    executed: frozenset[int]  # mutant ids whose sync some case ran
    outcomes: tuple[Outcome, ...]
    tried: tuple[tuple[str, dict[str, int]], ...]  # (case, sizes) that ran
    kernel: str  # the generated kernel the mutants were made of

    def covered(self, m: Mutant) -> bool:
        """A surviving queue-pair removal whose flag a later EnQue of a queue at the same position covers
        before the DeQue (a SetFlag orders every earlier instruction of its pipe, so of two tiles loaded one
        after the other and dequeued together only the second EnQue's flag orders anything)."""
        if m.sync.kind is not SyncKind.QUEUE or m.kind is not MutantKind.REMOVE:
            return False
        lines = self.kernel.splitlines()
        positions = {
            name: pos for pos, name in re.findall(r"TQue<AscendC::TPosition::(\w+), \d+> (\w+);", self.kernel)
        }
        bound = r"TQueBind<AscendC::TPosition::(\w+), AscendC::TPosition::(\w+), \d+> (\w+);"
        positions.update({name: f"{a}_{b}" for a, b, name in re.findall(bound, self.kernel)})
        enq, deq = m.sync.lines
        own = _ENQUE.match(lines[enq])
        assert own is not None
        for line in lines[enq + 1 : deq]:
            other = _ENQUE.match(line)
            if other and positions.get(other["queue"], "?") == positions.get(own["queue"], "!"):
                return True
        return False

    def equivalent(self, m: Mutant) -> bool:
        """A surviving moved flag the twin found, in every run of it, carrying at least what the original
        carried (its new source pipe already knew complete every instruction the old one would have
        signalled): it orders a superset of what the original ordered, so no run can tell them apart."""
        if m.kind is not MutantKind.MOVE or m.sync.kind is not SyncKind.FLAG_PAIR:
            return False
        runs = [o for o in self.outcomes if o.mutant.id == m.id]
        return bool(runs) and not any(o.killed or o.weaker for o in runs)

    def excused(self, m: Mutant) -> bool:
        """A survivor left out of the score: a covered queue pair or an equivalent moved flag."""
        return self.covered(m) or self.equivalent(m)

    def survivors(self) -> list[Mutant]:
        """Executed mutants that no run killed."""
        killed = {o.mutant.id for o in self.outcomes if o.killed}
        return [m for m in self.mutants if m.id in self.executed and m.id not in killed]

    def score(self) -> float:
        """Killed executed mutants over executed mutants, the covered queue pairs and equivalent moved
        flags left out."""
        executed = [m for m in self.mutants if m.id in self.executed and not self.excused(m)]
        lost = [m for m in self.survivors() if not self.excused(m)]
        return 1.0 if not executed else 1.0 - len(lost) / len(executed)


def _bits(counters: Mapping[str, int], prefix: str) -> set[int]:
    """The ids set in the report's bit-mask counters ``<prefix><word>`` (64 ids a word)."""
    hit = set()
    for key, mask in counters.items():
        if key.startswith(prefix) and key[len(prefix) :].isdigit():
            word = int(key[len(prefix) :])
            hit |= {word * 64 + b for b in range(64) if (int(mask) >> b) & 1}
    return hit


def _probes(counters: Mapping[str, int]) -> set[int]:
    return _bits(counters, "probes")


def mutate_graph(graph, shapes: Sequence[Mapping[str, int]], *, template: str | None = None) -> Report:
    """Run every mutant of ``graph``'s kernel on every case (or ``template``'s) at every shape."""
    from af_core.autofuser import Autofuser, AutofuserOptions
    from af_core.errors import TilingError, TwinError
    from af_core.twin import TwinSession

    options = AutofuserOptions(force_template=template) if template else AutofuserOptions()
    fuser = Autofuser(options)
    kernel = fuser.generate(fuser.schedule(graph)).kernel
    syncs = find_syncs(kernel)
    mutants = mutants_of(syncs)
    os.environ.pop(MUTANT_ENV, None)
    session = TwinSession(graph, options, kernel=instrument(kernel, mutants))
    executed: set[int] = set()
    outcomes: list[Outcome] = []
    tried: list[tuple[str, dict[str, int]]] = []
    for case in session.scheduled.cases:
        for sizes in shapes:
            try:
                inputs = session.inputs(sizes, seed=1)
            except TilingError:
                break  # no case fits this shape
            try:
                base = session.check(inputs=inputs, tiling_key=case.tiling_key)
            except TilingError:
                continue  # the case does not fit this shape
            except TwinError as exc:
                raise RuntimeError(f"{graph.name} {case.label} at {dict(sizes)}, no mutant: {exc}") from None
            tried.append((case.label, dict(sizes)))
            if not base.ok:
                raise RuntimeError(f"{graph.name} {case.label} at {dict(sizes)}: {base.describe()}")
            hit = _probes(base.twin.counters)
            ran = [m for m in mutants if _remove_id(mutants, m) in hit]
            executed |= {m.id for m in ran}
            for m in ran:
                # on the platform's cores, then, for a survivor, on one core: every tile of the shape then runs
                # on that core one after another, so a sync ordering one tile's accesses after the previous
                # tile's (a buffer reused) has a previous tile to order
                for cores in (None, 1):
                    os.environ[MUTANT_ENV] = str(m.id)
                    weaker = True
                    try:
                        run = session.check(inputs=inputs, tiling_key=case.tiling_key, core_num=cores)
                        killed, how = (not run.ok), ("" if run.ok else "mismatch")
                        weaker = m.id in _bits(run.twin.counters, "uncovered")
                    except TwinError as exc:
                        killed, how = True, str(exc).splitlines()[0][:200]
                    finally:
                        os.environ.pop(MUTANT_ENV, None)
                    outcomes.append(Outcome(m, case.label, dict(sizes), killed, how, weaker))
                    if killed:
                        break
    return Report(
        graph.name, tuple(syncs), tuple(mutants), frozenset(executed), tuple(outcomes), tuple(tried), kernel
    )


def _remove_id(mutants: Sequence[Mutant], m: Mutant) -> int:
    """The probe id of ``m``'s sync (its removal mutant's id)."""
    return next(x.id for x in mutants if x.sync == m.sync and x.kind is MutantKind.REMOVE)


def describe(report: Report) -> str:
    executed = [m for m in report.mutants if m.id in report.executed]
    covered = [m for m in report.survivors() if report.covered(m)]
    equivalent = [m for m in report.survivors() if report.equivalent(m)]
    lines = [
        f"{report.graph}: {len(report.syncs)} syncs, {len(report.mutants)} mutants, {len(executed)} executed "
        f"on {len(report.tried)} (case, shape) runs, {len(executed) - len(report.survivors())} killed, "
        f"{len(covered)} queue pairs covered, {len(equivalent)} equivalent moves, score {report.score():.0%}"
    ]
    for m in report.survivors():
        what = "covered" if report.covered(m) else "equivalent" if report.equivalent(m) else "survives"
        lines.append(
            f"  {what}: {m.kind.value} of {m.sync.kind.value} at line {m.sync.lines[0] + 1}: {m.sync.text}"
        )
    return "\n".join(lines)


#: --reduced: the bytes of one slice along the gathered axis (the rows a row-loading case holds in UB), and
#: the positions along the index's last axis (one tile row of a row-loading case)
REDUCED_TABLE_BYTES = 32768
REDUCED_INDEX = 64


def reduced_graph(case: Mapping[str, object]):
    """The workload ``case`` (a corpus entry) with its gathered axis cut so that one slice along it holds at
    most :data:`REDUCED_TABLE_BYTES` bytes (at least 2 entries), and its index's last axis to at most
    :data:`REDUCED_INDEX` positions when no side input's shape depends on it; None when both already are.
    The graph's ops, dtypes and other axes stay the corpus ones."""
    import copy

    from af_core import dtypes as dt
    from af_core.workloads import build_graph

    raw = copy.deepcopy(dict(case))
    shape = list(raw["input"]["shape"])
    dim = int(raw.get("dim", 0)) % len(shape)
    inner = dt.get(raw["input"]["dtype"]).itemsize
    for n in shape[dim + 1 :]:
        inner *= int(n)
    rows = max(2, REDUCED_TABLE_BYTES // inner)
    index = list(raw["index"]["shape"])
    # the index's last axis too, unless a side input's shape (written into the op's text) follows it
    sides = any("side:" in str(t) for t in [*(raw.get("pre_input") or []), *(raw.get("post") or [])])
    positions = index[-1] if sides else min(index[-1], REDUCED_INDEX)
    if shape[dim] <= rows and positions == index[-1]:
        return None
    shape[dim] = min(shape[dim], rows)
    index[-1] = positions
    raw["input"]["shape"] = shape
    raw["index"]["shape"] = index
    raw["name"] = f"{raw['name']}_reduced"
    return build_graph(raw)


def lower_row_floor(nbytes: int) -> None:
    """Every registered template with a shortest row (``min_row_bytes``) takes rows from ``nbytes`` bytes,
    as the templates' own tests do to run short rows."""
    from af_core.registry import get_registry

    registry = get_registry()
    for name in registry.names("template"):
        template = registry.get("template", name)
        if hasattr(template, "min_row_bytes"):
            template.min_row_bytes = nbytes


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", action="append", default=[], help="an installed sample (repeatable)")
    parser.add_argument("--workload", action="append", default=[], help="a corpus workload (repeatable)")
    parser.add_argument(
        "--template",
        action="append",
        default=[],
        help="keep only this template's cases (repeatable: one run each)",
    )
    parser.add_argument(
        "--reduced",
        action="store_true",
        help="run each --workload also with its gathered axis cut to a table of at most "
        f"{REDUCED_TABLE_BYTES} bytes per slice (NAME@reduced), where the row-loading cases fit UB",
    )
    parser.add_argument(
        "--row-floor",
        type=int,
        default=None,
        help="lower the shortest row of every template that has one (min_row_bytes) to this many bytes",
    )
    parser.add_argument("--json", default=None, help="write the per-graph figures here")
    parser.add_argument("--table", action="store_true", help="end with a Markdown table of the runs")
    args = parser.parse_args(argv)
    from af_core.errors import ScheduleError
    from af_core.samples import installed_samples
    from af_core.workloads import load_workloads

    jobs = []
    for s in installed_samples():
        if s.name in args.sample or not (args.sample or args.workload):
            jobs.append((s.name, s.build(), s.shapes))
    for w in load_workloads(names=args.workload) if args.workload else []:
        jobs.append((w.name, w.graph, ({},)))
        if args.reduced:
            small = reduced_graph(w.raw)
            if small is not None:
                jobs.append((f"{w.name}@reduced", small, ({},)))
    if args.row_floor is not None:
        lower_row_floor(args.row_floor)
    figures = []
    for name, graph, shapes in jobs:
        for template in args.template or [None]:
            try:
                report = mutate_graph(graph, shapes, template=template)
            except ScheduleError as exc:  # the template refuses the graph
                print(f"[{template}] {name}: {str(exc).splitlines()[0]}", flush=True)
                continue
            print(f"[{template or 'every template'}] " + describe(report), flush=True)
            executed = [m for m in report.mutants if m.id in report.executed]
            figures.append(
                {
                    "graph": name,
                    "template": template or "all",
                    "runs": len(report.tried),
                    "syncs": len(report.syncs),
                    "executed": len(executed),
                    "killed": len(executed) - len(report.survivors()),
                    "covered": sum(1 for m in report.survivors() if report.covered(m)),
                    "equivalent": sum(1 for m in report.survivors() if report.equivalent(m)),
                    "score": report.score(),
                    "survivors": [
                        {"kind": m.kind.value, "sync": m.sync.kind.value, "text": m.sync.text}
                        for m in report.survivors()
                        if not report.excused(m)
                    ],
                }
            )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=1)
    if args.table:
        print(
            "\n| graph | template | (case, shape) runs | executed mutants | killed | covered queue pairs | "
            "equivalent moves | survivors | score |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for f in figures:
            if f["runs"]:
                lost = "; ".join(sorted({f"{x['kind']}: {x['sync']}" for x in f["survivors"]})) or "-"
                print(
                    f"| {f['graph']} | {f['template']} | {f['runs']} | {f['executed']} | {f['killed']} | "
                    f"{f['covered']} | {f['equivalent']} | {lost} | {f['score']:.0%} |"
                )
    ran = [f for f in figures if f["runs"]]
    return 1 if any(f["score"] < 1.0 for f in ran) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
