"""Elementwise chains in registers against memory-based vector calls, per corpus workload (twin counters).

For every corpus workload and each of the SIMD and SK-like cases, the kernel is generated twice -- as
shipped (each run of elementwise ops one register vector function) and with the optional ``vector_chain``
role hidden from the scheduler and the register tile gather and offsets off (every elementwise op and the
reduce one memory-based vector call, the gather the memory-based ``AscendC::Gather`` on offsets the
memory-based calls compute: the kernels before register vector functions) -- and both run on the CPU twin,
which must agree with the
reference. Per output element it prints: UB bytes the vector work moves (memory-based calls: their
operand bytes, ``vector_ub_bytes``; register path: ``reg_load_bytes`` + ``reg_store_bytes`` on top of the
calls that remain), the issued vector work (memory-based calls, each covering a whole tile; register
instructions, each covering one vector) and the twin's ``reg_cycles`` (single-issue cycles of the register
instructions from the documented Ascend 950 throughput table, see the twin's README).

Both templates hold the whole input slice along the gathered axis in UB, so on most workloads (tables of
10^4..10^5 rows) they have no case at the corpus shape. Those rows run at the corpus shape with only the
gathered axis shortened, to the longest of 8192, 4096, ..., 16 at which the case fits (the index
distribution, dtypes, chain and every other size stay): the figures are per output element, and the
gathered axis's length enters them only through how many rows a tile holds.

Run: ``python benchmarks/regbase_chains.py`` (prints a Markdown table).
"""

from __future__ import annotations

import math
from contextlib import contextmanager

from af_v35_regbase.api_calls.indirect_load import IndirectLoadRegApiCall

from af_core.autofuser import AutofuserOptions
from af_core.errors import AfError
from af_core.explain import explain
from af_core.schedule import rowtiles
from af_core.schedule.cost import twin_counters
from af_core.twin import TwinSession
from af_core.workloads import Workload, build_graph, load_workloads

CORES = 48
#: Lengths the gathered axis is shortened to, longest first, when a case has no fit at the corpus shape.
SHORTER_AXES = (8192, 4096, 2048, 1024, 512, 256, 128, 64, 32, 16)


@contextmanager
def memory_path_only():
    """Hide the vector_chain role from the scheduler (every elementwise op and reduce stays one vector call)
    and turn the register tile gather and the register offsets of a full index tile off."""
    installed = rowtiles.installed
    gather, offsets = IndirectLoadRegApiCall.register_gather, IndirectLoadRegApiCall.register_offsets
    rowtiles.installed = lambda role: False  # type: ignore[assignment]
    IndirectLoadRegApiCall.register_gather = False
    IndirectLoadRegApiCall.register_offsets = False
    try:
        yield
    finally:
        rowtiles.installed = installed  # type: ignore[assignment]
        IndirectLoadRegApiCall.register_gather = gather
        IndirectLoadRegApiCall.register_offsets = offsets


def measure(graph, distribution, template: str) -> dict[str, float | str] | None:
    """Run ``template``'s first case of ``graph`` on the twin (checked against the reference); the twin's
    vector work per output element, its API calls and its gather form, or None when no case runs."""
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    case = next(iter(session.scheduled.cases), None)
    if case is None or explain(session.scheduled, {}, core_num=CORES).rows[0].status == "dropped":
        return None  # decided by the Python tiling, before the kernel is built
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
        # the register Gather in its own function or in the offsets function (4-byte data)
        "form": "registers"
        if any(f"asc_vf_call<AfGather{f}Vf_" in session.result.kernel for f in ("", "Fused"))
        else "memory",
    }


def shortened(w: Workload, length: int, positions: int | None = None):
    """The workload's graph with its gathered axis ``length`` long and, with ``positions``, the index's first
    axis (and the data's, when the gather is along a later axis) that long too; every other size, dtype and
    op kept."""
    raw = {**w.raw, "name": w.name}
    raw["input"] = {**w.raw["input"], "shape": list(w.raw["input"]["shape"])}
    raw["index"] = {**w.raw["index"], "shape": list(w.raw["index"]["shape"])}
    shape = raw["input"]["shape"]
    axis = w.raw["dim"] % len(shape)
    shape[axis] = length
    if positions is not None:
        raw["index"]["shape"][0] = positions
        if axis > 0:
            shape[0] = positions
        for key in ("post", "pre_input"):
            raw[key] = [_side_with_batch(text, positions) for text in raw.get(key) or []]
    return build_graph(raw)


def _side_with_batch(text: str, positions: int) -> str:
    """An op of the corpus syntax whose side input's first axis follows the index's first axis."""
    head, sep, rest = text.partition("[")
    if not sep:
        return text
    dims = rest.rstrip(")]").split(",")
    return f"{head}[{','.join([str(positions), *dims[1:]])}])"


def measured(w: Workload, template: str, measure_both) -> tuple[str, dict | None, dict | None]:
    """(shape note, after, before) at the corpus shape, else at the longest shortened gathered axis that fits,
    else with the index's first axis shortened too (the longest that fits with the shortest gathered axis,
    then the longest gathered axis with it); ``measure_both(graph)`` returns (after, before) or None.
    A case that fits at some lengths fits at every shorter one, so each search stops at its first fit."""
    both = measure_both(w.graph)
    if both is not None:
        return "corpus", *both
    full = w.raw["input"]["shape"][w.raw["dim"] % len(w.raw["input"]["shape"])]
    batch = w.raw["index"]["shape"][0]

    def first_fit(tries):
        for length, positions in tries:
            try:
                found = measure_both(shortened(w, length, positions))
            except (AfError, ValueError):
                found = None
            if found is not None:
                return length, positions, found
        return None

    hit = first_fit((length, None) for length in SHORTER_AXES if length < full)
    if hit is None:
        short = min(SHORTER_AXES)
        rows = first_fit((short, n) for n in SHORTER_AXES if n < batch)
        if rows is not None:
            longer = first_fit((length, rows[1]) for length in SHORTER_AXES if short < length < full)
            hit = longer or rows
    if hit is None:
        return "no shape fits", None, None
    length, positions, found = hit
    note = f"gathered axis {full} -> {length}"
    if positions is not None:
        note += f", positions {batch} -> {positions}"
    return note, *found


def main() -> None:
    rows = []
    for w in load_workloads():
        for template in ("simd", "sklike"):

            def both(graph, template=template, w=w):
                after = measure(graph, w.distribution, template)
                if after is None:
                    return None
                with memory_path_only():
                    before = measure(graph, w.distribution, template)
                # the memory path holds more scratch tiles, so it may not fit where the registers do: the
                # comparison needs both, and the search goes on to a shorter shape
                return None if before is None else (after, before)

            note, after, before = measured(w, template, both)
            if after is None or before is None:
                rows.append(f"| {w.name} | {template} | {note} | - | - | - | - | - | - | - | - |")
                continue
            rows.append(
                f"| {w.name} | {template} | {note} | {before['ub']:.1f} | {after['ub']:.1f} | "
                f"{before['calls']:.4f} | {after['calls']:.4f} | {before['reg']:.3f} | {after['reg']:.3f} | "
                f"{after['cycles']:.3f} | {int(after['vf'])} |"
            )
    print(
        "| workload | case | shape | UB B / out elem, before | UB B / out elem, after | "
        "vector calls / out elem, before | vector calls / out elem, after | register instr / out elem, before | "
        "register instr / out elem, after | modelled register cycles / out elem | asc_vf_call launches |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
