"""``af_torch.explain(model, *inputs)``: which aten ops fuse, which stay in torch and why.

The model is exported (dimension 0 of each input dynamic), decomposed to core
aten ops and partitioned; each region runs once on the twin with the given
inputs, which tells the template the host tiling chose for that shape and
the bytes the twin counted. The table compares the fused kernel's measured
GM traffic with the least traffic the region needs (``af_core.traffic``) and
with the same ops run as single-op kernels (``af_core.unfused``).
Traffic of the same ops run as separate kernels is not shown: it would need
a twin kernel per op, which the back end does not build for ops without a
gather, and a modelled figure would not be a measurement.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import torch
from torch.utils import _pytree as pytree

from af_core import naming
from af_torch.compile import CompiledProgram, compile_exported, export


@attrs.define
class RegionReport:
    name: str
    fused_ops: list[str]
    template: str
    sizes: dict[str, int]
    measured_bytes: int
    minimum_bytes: int
    unfused_bytes: int | None  # the same ops as single-op kernels (af_core.unfused), None if not measured
    artifacts: str
    notes: list[str]
    templates: dict[int, str] = attrs.Factory(dict)  # other batch sizes -> template the host tiling picks


@attrs.define
class Explanation:
    """The region table of one model and the ops left to torch."""

    model: str
    regions: list[RegionReport]
    left: dict[str, tuple[str, str]]  # FX node -> (aten op, reason)
    matches_eager: bool

    def table(self) -> str:
        p = naming.printable
        lines = [f"model {p(self.model)}: {len(self.regions)} fused region(s)"]
        if not self.regions:
            lines.append("  no fusible region: the model runs unchanged in torch")
        for r in self.regions:
            sizes = ", ".join(f"{k}={v}" for k, v in r.sizes.items()) or "static"
            lines.append(f"  region {p(r.name)}: {' -> '.join(r.fused_ops)}")
            lines.append(
                f"    template {p(r.template)} for {sizes}; twin-counted GM traffic "
                f"{r.measured_bytes} B (least possible {r.minimum_bytes} B; "
                + (
                    f"as separate kernels {r.unfused_bytes} B)"
                    if r.unfused_bytes is not None
                    else "as separate kernels: not measured)"
                )
            )
            if r.templates:
                picks = ", ".join(f"{b} -> {p(t)}" for b, t in r.templates.items())
                lines.append(f"    host tiling for other batch sizes: {picks}")
            lines.append(f"    artifacts {p(r.artifacts)}")
            lines.extend(f"    note: {p(n)}" for n in r.notes)
        if self.left:
            lines.append("  left to torch:")
            groups: dict[tuple[str, str], list[str]] = {}
            for node, (op, why) in sorted(self.left.items()):
                groups.setdefault((op, why), []).append(node)
            for (op, why), nodes in sorted(groups.items(), key=lambda item: item[1][0]):
                if len(nodes) == 1:
                    lines.append(f"    {p(nodes[0])} ({p(op)}): {p(why)}")
                else:  # one line per op and reason: 60 views of T5Attention are one line
                    shown = ", ".join(p(n) for n in nodes[:3]) + (", ..." if len(nodes) > 3 else "")
                    lines.append(f"    {p(op)} x{len(nodes)} ({shown}): {p(why)}")
        lines.append(f"  fused result equals eager: {'yes' if self.matches_eager else 'NO'}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _unfused_bytes(kernel) -> int | None:
    """GM bytes of the region's ops run as single-op kernels on the last call's inputs.

    The gather runs alone on the twin, each other op is a streaming kernel
    reading its operands and writing its result (:mod:`af_core.unfused`).
    """
    from af_core.errors import AfError
    from af_core.unfused import run_unfused, split
    from af_torch.runtime import session_for

    inputs = kernel.last_inputs
    if inputs is None:
        return None
    session = session_for(kernel.region)
    try:
        plan = split(kernel.region.graph, inputs.sizes, session.scheduled.info)
        return run_unfused(plan, inputs, core_num=session.scheduled.platform.core_num).total
    except AfError:
        return None


def _artifacts(kernel) -> str:
    from af_torch.runtime import session_for

    return str(session_for(kernel.region).build.directory)


def templates_for_batches(kernel, batches: Sequence[int]) -> dict[int, str]:
    """The template the host tiling (its Python mirror, ``af_core.tiling.solve``) picks per batch size.

    The batch is every size symbol bound to dimension 0 of a region input;
    the other sizes keep the values of the region's last run. A size the
    tiling refuses shows as ``no case fits``.
    """
    from af_core.errors import AfError
    from af_core.tiling.solve import solve_scheduled
    from af_torch.runtime import session_for

    region, last = kernel.region, kernel.last
    if last is None:
        return {}
    batch_symbols = {s for _p, d, s in region.bindings if d == 0} | {
        x.symbol for x in region.derived if x.dim == 0
    }
    if not batch_symbols:
        return {}
    scheduled = session_for(region).scheduled
    out = {}
    for batch in batches:
        sizes = {k: (batch if k in batch_symbols else v) for k, v in last.sizes.items()}
        try:
            out[int(batch)] = scheduled.case(solve_scheduled(scheduled, sizes).tiling_key).label
        except AfError:
            out[int(batch)] = "no case fits"
    return out


def explain(
    model: torch.nn.Module,
    *inputs: Any,
    dynamic_batch: bool = True,
    batches: Sequence[int] = (),
    dynamic_shapes: Any = None,
) -> Explanation:
    """Partition ``model`` for ``inputs``, run every region once and report.

    ``batches``: other batch sizes to show the host tiling's template choice for.
    ``dynamic_shapes``: torch.export's argument (default: dimension 0 of every input dynamic).
    """
    model = model.eval()
    program: CompiledProgram = compile_exported(
        export(model, inputs, dynamic_batch=dynamic_batch, dynamic_shapes=dynamic_shapes),
        type(model).__name__,
    )
    with torch.no_grad():
        got = program(*inputs)
        expected = model(*inputs)
    got_t, got_spec = pytree.tree_flatten(got)
    exp_t, exp_spec = pytree.tree_flatten(expected)
    same = got_spec == exp_spec and all(
        torch.allclose(a.float(), b.float(), rtol=3.2e-2 if b.dtype == torch.bfloat16 else 4e-3, atol=1e-4)
        if isinstance(b, torch.Tensor)
        else a == b
        for a, b in zip(got_t, exp_t, strict=True)
    )
    part = program.fused.partition
    reports = []
    for kernel in program.kernels:
        last = kernel.last
        r = kernel.region
        reports.append(
            RegionReport(
                r.graph.name,
                r.fused_ops,
                last.template if last else "-",
                last.sizes if last else {},
                last.measured_bytes if last else 0,
                last.minimum_bytes if last else 0,
                _unfused_bytes(kernel),
                _artifacts(kernel),
                r.notes,
                templates_for_batches(kernel, batches),
            )
        )
    left = {n: (part.left_ops.get(n, "?"), why) for n, why in part.left.items()}
    return Explanation(type(model).__name__, reports, left, same)


def explain_file(
    path: str, inputs: Sequence[torch.Tensor] | None = None, batches: Sequence[int] = ()
) -> Explanation:
    """``afc torch FILE.py``: the file defines ``model`` and ``example_inputs`` (it is run as Python code)."""
    import runpy

    namespace = runpy.run_path(path, run_name="__af_torch__")
    if "model" not in namespace or "example_inputs" not in namespace:
        raise ValueError(f"{path} must define 'model' and 'example_inputs'")
    example = inputs if inputs is not None else namespace["example_inputs"]
    if callable(example):
        example = example()
    return explain(namespace["model"], *tuple(example), batches=batches)
