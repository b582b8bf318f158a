"""Elementwise chains in registers against memory-based vector calls, per corpus workload (twin counters).

For every corpus workload and each of the SIMD and SK-like cases that runs at the workload's shape, the
kernel is generated twice -- as shipped (each run of elementwise ops one register vector function) and
with the optional ``vector_chain`` role hidden from the scheduler and the register tile gather off (every
elementwise op and the reduce one memory-based vector call, the gather the memory-based ``AscendC::Gather``:
the kernels before register vector functions) -- and both run on the CPU twin, which must agree with the
reference. Per output element it prints: UB bytes the vector work moves (memory-based calls: their
operand bytes, ``vector_ub_bytes``; register path: ``reg_load_bytes`` + ``reg_store_bytes`` on top of the
calls that remain), the issued vector work (memory-based calls, each covering a whole tile; register
instructions, each covering one vector) and the twin's ``reg_cycles`` (single-issue cycles of the register
instructions from the documented Ascend 950 throughput table, see the twin's README).

Run: ``python benchmarks/regbase_chains.py`` (prints a Markdown table).
"""

from __future__ import annotations

import math
from contextlib import contextmanager

from af_v35_regbase.api_calls.indirect_load import IndirectLoadRegApiCall

from af_core.autofuser import AutofuserOptions
from af_core.errors import AfError
from af_core.schedule import rowtiles
from af_core.schedule.cost import twin_counters
from af_core.twin import TwinSession
from af_core.workloads import load_workloads

CORES = 48


@contextmanager
def memory_path_only():
    """Hide the vector_chain role from the scheduler (every elementwise op and reduce stays one vector call)
    and turn the register tile gather off."""
    installed, gather = rowtiles.installed, IndirectLoadRegApiCall.register_gather
    rowtiles.installed = lambda role: False  # type: ignore[assignment]
    IndirectLoadRegApiCall.register_gather = False
    try:
        yield
    finally:
        rowtiles.installed = installed  # type: ignore[assignment]
        IndirectLoadRegApiCall.register_gather = gather


def measure(graph, distribution, template: str) -> dict[str, float | str] | None:
    """Run ``template``'s first case of ``graph`` on the twin (checked against the reference); the twin's
    vector work per output element, its API calls and its gather form, or None when no case runs."""
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    case = next(iter(session.scheduled.cases), None)
    if case is None:
        return None
    inputs = session.inputs({}, seed=1, distribution=distribution)
    try:
        run = session.check(inputs=inputs, core_num=CORES, tiling_key=case.tiling_key)
    except AfError:
        return None
    if not run.ok:
        raise AssertionError(f"{graph.name} {template}: {run.describe()}")
    c = run.twin.counters
    out = sum(math.prod(v.shape) for v in run.reference.values())
    return {
        "ub": (c["vector_ub_bytes"] + c["reg_load_bytes"] + c["reg_store_bytes"]) / out,
        "calls": c["vector_calls"] / out,
        "reg": (c["reg_loads"] + c["reg_stores"] + c["reg_compute"] + c["reg_masks"]) / out,
        "vf": c["vf_calls"],
        "cycles": c["reg_cycles"] / out,
        "api": twin_counters(c)["api_calls"],
        "form": "registers" if "asc_vf_call<AfGatherVf_" in session.result.kernel else "memory",
    }


def main() -> None:
    rows = []
    for w in load_workloads():
        for template in ("simd", "sklike"):
            after = measure(w.graph, w.distribution, template)
            if after is None:
                continue
            with memory_path_only():
                before = measure(w.graph, w.distribution, template)
            assert before is not None
            rows.append(
                f"| {w.name} | {template} | {before['ub']:.1f} | {after['ub']:.1f} | {before['calls']:.4f} | "
                f"{after['calls']:.4f} | {after['reg']:.3f} | {after['cycles']:.3f} | {int(after['vf'])} |"
            )
    print(
        "| workload | case | UB B / out elem, memory calls | UB B / out elem, registers | "
        "vector calls / out elem, before | vector calls / out elem, after | register instr / out elem | "
        "modelled register cycles / out elem | asc_vf_call launches |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
