"""The tile gather in registers against the memory-based Gather, per corpus workload (twin counters).

For every corpus workload and each of the SIMD and SK-like cases that runs at the workload's shape, the
kernel is generated twice -- as shipped (the gather of 2- and 4-byte data a register vector function:
``LoadAlign`` of the element indices, ``Reg::Gather``, ``StoreAlign``) and with the register form off
(``IndirectLoadRegApiCall.register_gather = False``: the memory-based ``AscendC::Gather`` on byte offsets,
the kernels before) -- and both run on the CPU twin, which must agree with the reference. Per output
element it prints the UB bytes the vector work moves (``vector_ub_bytes`` of the memory-based calls plus
``reg_load_bytes`` + ``reg_store_bytes``), the memory-based vector calls, the register instructions
(loads -- the Gather is one --, stores, computing, masks) and the twin's ``reg_cycles``, and the issued API
calls (the contract's ``api_calls``) of each form: the same for 2-byte data (one memory-based call becomes
one launch), one launch fewer per tile for 4-byte data, which the offsets function gathers itself.

Run: ``python benchmarks/regbase_gather.py`` (prints a Markdown table).
"""

from __future__ import annotations

from contextlib import contextmanager

from af_v35_regbase.api_calls.indirect_load import IndirectLoadRegApiCall
from regbase_chains import measure  # the same twin run and per-element counters (benchmarks/ is on the path)

from af_core.workloads import load_workloads


@contextmanager
def register_gather(on: bool):
    """Generate the tile gather in registers (``on``) or with the memory-based Gather."""
    before = IndirectLoadRegApiCall.register_gather
    IndirectLoadRegApiCall.register_gather = on
    try:
        yield
    finally:
        IndirectLoadRegApiCall.register_gather = before


def main() -> None:
    rows = []
    for w in load_workloads():
        for template in ("simd", "sklike"):
            with register_gather(True):
                after = measure(w.graph, w.distribution, template)
            if after is None:
                continue
            with register_gather(False):
                before = measure(w.graph, w.distribution, template)
            assert before is not None, (w.name, template)
            rows.append(
                f"| {w.name} | {template} | {after['form']} | {before['ub']:.1f} | {after['ub']:.1f} | "
                f"{before['calls']:.4f} | {after['calls']:.4f} | {before['reg']:.3f} | {after['reg']:.3f} | "
                f"{before['cycles']:.3f} | {after['cycles']:.3f} | {int(before['api'])} | {int(after['api'])} |"
            )
    print(
        "| workload | case | gather form | UB B / out elem, before | UB B / out elem, after | "
        "vector calls / out elem, before | vector calls / out elem, after | register instr / out elem, "
        "before | register instr / out elem, after | modelled register cycles / out elem, before | "
        "modelled register cycles / out elem, after | API calls, before | API calls, after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
