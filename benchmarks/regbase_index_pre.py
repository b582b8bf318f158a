"""The gather's offsets in registers against the memory-based calls (twin counters).

For every corpus workload and each of the SIMD and SK-like cases, the kernel is generated twice: as
shipped (the offsets one register vector function: ``AfGatherIndexVf`` for a full index tile,
``AfGatherCompactVf`` for a compact, broadcast one; for 4-byte data the same function gathers the data
too, ``AfGatherFusedVf``) and with the register form off
(``IndirectLoadRegApiCall.register_offsets = False``: the memory-based ``AfGatherOffsetsVector``, or for a
compact index ``AfGatherOffsetsSuffix`` / the scalar loop; the kernels before); both run on the CPU twin,
which must agree with the reference. A case with no fit at the corpus shape runs at the shortened shape
the chains benchmark picks (``regbase_chains.measured``). Per output element it prints the UB bytes the
vector work moves (``vector_ub_bytes`` of the memory-based calls plus the register loads' and stores'
bytes), the memory-based vector calls, the register instructions and the twin's modelled ``reg_cycles``,
and the issued API calls (the contract's ``api_calls``) of each form.

Run: ``python benchmarks/regbase_index_pre.py`` (prints a Markdown table).
"""

from __future__ import annotations

import re
from contextlib import contextmanager

from af_v35_regbase.api_calls.indirect_load import IndirectLoadRegApiCall
from regbase_chains import (
    measure,
    measured,
)  # the same twin run, counters and shapes (benchmarks/ is on the path)

from af_core.autofuser import AutofuserOptions
from af_core.twin import TwinSession
from af_core.workloads import load_workloads

FORMS = {"AfGatherIndexVf": "full", "AfGatherCompactVf": "compact", "full": "full", "compact": "compact"}


@contextmanager
def register_offsets(on: bool):
    """Generate the offsets in registers (``on``) or with the memory-based calls."""
    before = IndirectLoadRegApiCall.register_offsets
    IndirectLoadRegApiCall.register_offsets = on
    try:
        yield
    finally:
        IndirectLoadRegApiCall.register_offsets = before


def index_form(kernel: str) -> str | None:
    """ "full" or "compact": which offsets function the kernel launches, on its own or gathering 4-byte data
    itself (``AfGatherFusedVf_<dtype>_<full|compact>...``); None: neither."""
    found = re.search(
        r"asc_vf_call<(?:(AfGather(?:Index|Compact)Vf)|AfGatherFusedVf_[a-z0-9]+_(full|compact))", kernel
    )
    return FORMS[found[1] or found[2]] if found else None


def main() -> None:
    rows = []
    for w in load_workloads():
        for template in ("simd", "sklike"):
            form = index_form(TwinSession(w.graph, AutofuserOptions(force_template=template)).result.kernel)
            if form is None:
                continue

            def both(graph, template=template, w=w):
                with register_offsets(True):
                    after = measure(graph, w.distribution, template)
                if after is None:
                    return None
                with register_offsets(False):
                    before = measure(graph, w.distribution, template)
                if before is None:  # the memory path's offsets tile does not fit: a shorter shape is tried
                    return None
                return after, before

            note, after, before = measured(w, template, both)
            if after is None or before is None:
                continue
            rows.append(
                f"| {w.name} | {template} | {form} | {note} | {before['ub']:.2f} | {after['ub']:.2f} | "
                f"{before['calls']:.4f} | {after['calls']:.4f} | {before['reg']:.3f} | {after['reg']:.3f} | "
                f"{before['cycles']:.3f} | {after['cycles']:.3f} | {int(before['api'])} | {int(after['api'])} |"
            )
    print(
        "| workload | case | index | shape | UB B / out elem, before | UB B / out elem, after | vector calls / out "
        "elem, before | vector calls / out elem, after | register instr / out elem, before | register instr / "
        "out elem, after | modelled register cycles / out elem, before | modelled register cycles / out elem, "
        "after | API calls, before | API calls, after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
