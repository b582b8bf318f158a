"""The gather's offsets of a full index tile in registers against the memory-based calls (twin counters).

For every corpus workload and each of the SIMD and SK-like cases that runs at the workload's shape and
computes the offsets of a full index tile (the others -- a compact, broadcast index -- keep their offset
paths and are left out), the kernel is generated twice: as shipped (the offsets one register vector
function, ``AfGatherIndexVf``) and with the register form off
(``IndirectLoadRegApiCall.register_offsets = False``: the memory-based ``AfGatherOffsetsVector``, the
kernels before); both run on the CPU twin, which must agree with the reference. Per output element it
prints the UB bytes the vector work moves (``vector_ub_bytes`` of the memory-based calls plus the register
loads' and stores' bytes), the memory-based vector calls, the register instructions and the twin's
modelled ``reg_cycles``, and the issued API calls (the contract's ``api_calls``) of each form.

Run: ``python benchmarks/regbase_index_pre.py`` (prints a Markdown table).
"""

from __future__ import annotations

from contextlib import contextmanager

from af_v35_regbase.api_calls.indirect_load import IndirectLoadRegApiCall
from regbase_chains import measure  # the same twin run and per-element counters (benchmarks/ is on the path)

from af_core.autofuser import AutofuserOptions
from af_core.twin import TwinSession
from af_core.workloads import load_workloads


@contextmanager
def register_offsets(on: bool):
    """Generate a full index tile's offsets in registers (``on``) or with the memory-based calls."""
    before = IndirectLoadRegApiCall.register_offsets
    IndirectLoadRegApiCall.register_offsets = on
    try:
        yield
    finally:
        IndirectLoadRegApiCall.register_offsets = before


def main() -> None:
    rows = []
    for w in load_workloads():
        for template in ("simd", "sklike"):
            kernel = TwinSession(w.graph, AutofuserOptions(force_template=template)).result.kernel
            if "asc_vf_call<AfGatherIndexVf" not in kernel:
                continue
            with register_offsets(True):
                after = measure(w.graph, w.distribution, template)
            if after is None:
                continue
            with register_offsets(False):
                before = measure(w.graph, w.distribution, template)
            assert before is not None, (w.name, template)
            rows.append(
                f"| {w.name} | {template} | {before['ub']:.2f} | {after['ub']:.2f} | "
                f"{before['calls']:.4f} | {after['calls']:.4f} | {before['reg']:.3f} | {after['reg']:.3f} | "
                f"{before['cycles']:.3f} | {after['cycles']:.3f} | {int(before['api'])} | {int(after['api'])} |"
            )
    print(
        "| workload | case | UB B / out elem, before | UB B / out elem, after | vector calls / out elem, "
        "before | vector calls / out elem, after | register instr / out elem, before | register instr / out "
        "elem, after | modelled register cycles / out elem, before | modelled register cycles / out elem, "
        "after | API calls, before | API calls, after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
