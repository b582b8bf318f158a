"""The dedup template on the workload corpus: its traffic beside the best other case, and what each policy picks.

    python benchmarks/dedup_corpus.py [-o FILE]

Run it with af-indirect-load-dedup installed beside the built-in templates
(the bench env sets ``AF_DISABLE_PLUGINS=scalar_loop``). Per workload the
template accepts: its measured traffic (x the minimum, DataCopy bytes plus
data-cache line fills, as in the corpus table) and twin-estimated time as
installed (rows under its 4 KiB floor are dropped: "-"), the same with the
floor lowered to 0 (what deduplication alone does to the bytes of short
rows), the best other case by twin-estimated time, and the seed and cost
policies' picks. Workloads the template rejects are listed with the reason.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from run_benchmarks import CORES, measure_all, table, workload_session

from af_core.autofuser import AutofuserOptions
from af_core.errors import AfError, ScheduleError
from af_core.ir.evaluate import eval_int
from af_core.ir.sizes import product
from af_core.registry import get_registry
from af_core.traffic import traffic
from af_core.twin import TwinSession
from af_core.workloads import load_workloads

HEADERS = [
    "workload",
    "row bytes",
    "dedup x min",
    "dedup cost / best other",
    "dedup, no row floor: x min",
    "its cost / best other",
    "best other case",
    "x min",
    "seed picks",
    "cost picks",
]


def forced_dedup(w, inputs) -> tuple[float, int] | str:
    """(x min, twin-estimated time) of the dedup case alone, or the reason it does not run."""
    try:
        s = TwinSession(w.graph, AutofuserOptions(force_template="dedup", index_distribution=w.distribution))
        run = s.check(inputs=inputs, core_num=CORES)
    except ScheduleError as e:
        return next((r.reason for r in e.rejections if r.template == "dedup"), str(e))
    except AfError as e:
        return str(e).splitlines()[0]
    if not run.ok:
        raise AssertionError(f"{w.name} dedup: {run.describe()}")
    t = traffic(s.graph, inputs, run.reference, run.twin.counters, s.scheduled.info)
    return t.ratio, t.cost


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", help="write the markdown here (default: stdout)")
    args = parser.parse_args(argv)
    template = get_registry().get("template", "dedup")
    rows, rejected = [], []
    for w in load_workloads():
        session = workload_session(w)
        inputs = session.inputs({}, seed=1, distribution=w.distribution)
        template.min_row_bytes = 0
        try:
            unfloored = forced_dedup(w, inputs)
        finally:
            del template.min_row_bytes  # back to the class attribute
        if isinstance(unfloored, str):
            rejected.append(f"- {w.name}: {unfloored}")
            continue
        m = measure_all(session, inputs)
        others = {k: v for k, v in m["cases"].items() if k.split("/")[0] != "dedup"}
        best = min(others, key=lambda k: others[k].cost)
        il = w.graph.nodes_of_type("IndirectLoad")[0]
        dim = int(il.attr.ir_attr.dim) % len(il.y.size)
        width = eval_int(product(list(il.y.size[dim + 1 :])), inputs.sizes)
        row_bytes = width * il.y.dtype.itemsize
        installed = m["cases"].get("dedup")
        rows.append(
            [
                w.name,
                str(row_bytes),
                f"{installed.ratio:.2f}" if installed else "- (rows < 4 KiB)",
                f"{installed.cost / others[best].cost:.2f}" if installed else "-",
                f"{unfloored[0]:.2f}",
                f"{unfloored[1] / others[best].cost:.2f}",
                best,
                f"{others[best].ratio:.2f}",
                m["seed"],
                m["cost"],
            ]
        )
    text = table(HEADERS, rows) + "\n\nRejected by the template:\n\n" + "\n".join(rejected) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
