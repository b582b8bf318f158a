"""The kernels the official-header check covers, chosen for coverage, not count.

- every sample graph (af_core.samples) and the design seed's script;
- the seed graph and the index_select + reduce sample with each template forced;
- per element dtype and template, one kernel chaining every elementwise op that
  accepts the dtype and that the (forced) template schedules for it (binary ops
  take a second input, bool results feed the select op, other dtypes are cast
  back), and one Cast chain to every other dtype the template converts to and
  back: ops, accepted dtypes and what
  a template takes come from the registry, from validating a one-op graph and
  from scheduling it, never from a list written here;
- every reduce op on every dtype it accepts (one reduce per kernel: the fusion
  analysis supports one);
- every workload of the corpus (af_core.workloads): with the precompiled
  header a kernel costs about a second, so the whole corpus fits the budget.

Each kernel holds every template's case (SIMD, SIMT, SK-like and any other
installed) unless a template is forced; a forced kernel is in the set only
where its template proposes a case (a rejection, e.g. SIMD on 8-byte data,
has no kernel to check; the template suites test the rejection itself).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import attrs

from af_core import dtypes as dt
from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.builders import GraphBuilder, TensorRef, index_select
from af_core.errors import AfError, ScheduleError
from af_core.ir.graph import HintGraph
from af_core.platform import reset_platform
from af_core.registry import get_registry

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ("simd", "simt", "sklike")
VECTOR_TEMPLATES = ("simd", "sklike")
DTYPES = tuple(d for d in dt.ALL if d is not dt.bool_)
_SCALAR_VALUE = 3.0


@attrs.frozen
class KernelCase:
    name: str
    build: Callable[[], HintGraph]
    force_template: str | None = None

    def options(self) -> AutofuserOptions:
        return AutofuserOptions(force_template=self.force_template)


def _ops(compute_type: str) -> list:
    return [
        e.value
        for e in sorted(get_registry().entries("op"), key=lambda e: e.name)
        if e.value.compute_type == compute_type
    ]


def _base(g: GraphBuilder, dtype: dt.DType) -> TensorRef:
    x = g.data("x", ["N", "D"], dtype.name)
    idx = g.data("idx", ["K"], "int32")
    return index_select(x, 0, idx)


def _apply(g: GraphBuilder, op, y: TensorRef, n: int) -> TensorRef:
    """``op`` on ``y``: extra inputs are Data of y's dtype (a Where's condition: a comparison of them)."""
    ports = list(op.inputs)
    attrs_ = {a.name: _SCALAR_VALUE for a in getattr(op, "attrs", ()) if a.kind == "float"}
    if len(ports) == 1:
        return g.op(op.name, y, **attrs_)
    if len(ports) == 3:  # a select: condition, y, other
        cond = g.data(f"c{n}", ["K", "D"], "bool")
        return g.op(op.name, cond, y, g.data(f"s{n}", ["K", "D"], y.dtype.name), **attrs_)
    return g.op(op.name, y, g.data(f"s{n}", ["K", "D"], y.dtype.name), **attrs_)


def _accepts(op, dtype: dt.DType) -> bool:
    """Whether a graph with ``op`` on a gathered ``dtype`` tensor validates."""
    g = GraphBuilder("probe")
    try:
        y = _apply(g, op, _base(g, dtype), 0)
        g.output(y, "y")
        g.build()
    except (AfError, ValueError, TypeError):
        return False
    return True


def elementwise_plan() -> dict[str, list[str]]:
    """dtype -> the elementwise ops (by name) accepting it, Cast excluded."""
    plan = {}
    for d in DTYPES:
        plan[d.name] = [op.name for op in _ops("elementwise") if op.name != "Cast" and _accepts(op, d)]
    return plan


def _is_comparison(op, dtype: dt.DType) -> bool:
    g = GraphBuilder("probe")
    try:
        return len(op.inputs) == 2 and _apply(g, op, _base(g, dtype), 0).dtype == dt.bool_
    except (AfError, ValueError, TypeError):
        return False


def _select_op() -> str | None:
    """The three-input op that selects between two tensors with a bool condition, if one is registered."""
    return next((op.name for op in _ops("elementwise") if len(op.inputs) == 3), None)


def _step(g: GraphBuilder, op, y: TensorRef, n: int, dtype: dt.DType) -> TensorRef:
    """``op`` on ``y``, brought back to ``dtype``: a bool result selects between y and a side input,
    another dtype is cast back."""
    out = _apply(g, op, y, n)
    if out.dtype == dtype:
        return out
    if out.dtype == dt.bool_ and _select_op() is not None:
        return g.op(_select_op(), out, y, g.data(f"w{n}", ["K", "D"], dtype.name))
    return g.cast(out, dtype.name)


def _schedules(build: Callable[[], HintGraph], template: str | None) -> bool:
    """Whether ``template`` (forced) proposes a case for the graph: a rejection is not a kernel to check."""
    try:
        Autofuser(AutofuserOptions(force_template=template)).schedule(build())
    except ScheduleError:
        return False
    finally:
        reset_platform()
    return True


@functools.cache
def _template_takes(op_name: str, dtype: dt.DType, template: str) -> bool:
    """Whether the forced template schedules ``op_name`` alone on a gathered ``dtype`` tensor."""
    op = {o.name: o for o in _ops("elementwise")}[op_name]

    def build() -> HintGraph:
        g = GraphBuilder("probe")
        g.output(_step(g, op, _base(g, dtype), 0, dtype), "y")
        return g.build()

    return _schedules(build, template)


def _elementwise_graph(dtype: dt.DType, names: list[str]) -> HintGraph:
    """Chain ``names`` on a gathered tensor, each result brought back to ``dtype`` (see ``_step``)."""
    table = {op.name: op for op in _ops("elementwise")}
    g = GraphBuilder(f"ew_{dtype.name}")
    y = _base(g, dtype)
    for n, name in enumerate(names):
        y = _step(g, table[name], y, n, dtype)
    g.output(y, "y")
    return g.build()


def _cast_targets(dtype: dt.DType) -> list[dt.DType]:
    out = []
    for t in DTYPES:
        if t is dtype:
            continue
        g = GraphBuilder("probe")
        try:
            g.output(g.cast(g.cast(_base(g, dtype), t.name), dtype.name), "y")
            g.build()
        except (AfError, ValueError, TypeError):
            continue
        out.append(t)
    return out


def _cast_graph(dtype: dt.DType, targets: list[dt.DType]) -> HintGraph:
    g = GraphBuilder(f"cast_{dtype.name}")
    y = _base(g, dtype)
    for t in targets:
        y = g.cast(g.cast(y, t.name), dtype.name)
    g.output(y, "y")
    return g.build()


def _reduce_graph(op_name: str, dtype: dt.DType) -> HintGraph:
    g = GraphBuilder(f"reduce_{op_name.lower()}_{dtype.name}")
    g.output(g.reduce(op_name, _base(g, dtype), [1]), "y")
    return g.build()


def _reduce_accepts(op_name: str, dtype: dt.DType) -> bool:
    try:
        _reduce_graph(op_name, dtype)
    except (AfError, ValueError, TypeError):
        return False
    return True


def _seed_script() -> HintGraph:
    from af_core.samples import load_graph

    return load_graph(ROOT / "examples" / "minimal_graph.py")


def workload_cases() -> list[KernelCase]:
    from af_core.workloads import load_workloads

    return [
        KernelCase(f"workload_{w.name}", (lambda graph=w.graph: graph))
        for w in sorted(load_workloads(), key=lambda w: w.name)
    ]


def kernel_cases() -> list[KernelCase]:
    """Every kernel of the broad check, named uniquely (the test ids).

    The op kernels are generated once per template (forced), so a failure in one
    template's code does not hide another's; reduces on SIMT share one scalar
    loop for every dtype, so they are checked on the vector templates only.
    """
    from af_core import samples

    cases = [KernelCase(f"sample_{s.name}", s.build) for s in samples.installed_samples()]
    cases.append(KernelCase("seed_script", _seed_script))
    for t in TEMPLATES:
        cases.append(KernelCase(f"{t}_seed_minimal", samples.seed_minimal, t))
        cases.append(KernelCase(f"{t}_index_select_sum", samples.index_select_sum, t))
    for name, ops in elementwise_plan().items():
        d = dt.get(name)
        targets = _cast_targets(d)
        for t in TEMPLATES:
            # a vector template declines ops without a legal vector form; the SIMT kernel checks those
            chain = [op for op in ops if _template_takes(op, d, t)]
            if chain:
                cases.append(
                    KernelCase(
                        f"{t}_elementwise_{name}", (lambda d=d, chain=chain: _elementwise_graph(d, chain)), t
                    )
                )
            # likewise a vector template has no legal form for some conversions; each target on its own
            taken = [x for x in targets if _schedules(lambda d=d, x=x: _cast_graph(d, [x]), t)]
            if taken:
                cases.append(
                    KernelCase(f"{t}_cast_{name}", (lambda d=d, taken=taken: _cast_graph(d, taken)), t)
                )
    for op in _ops("reduce"):
        for d in DTYPES:
            if _reduce_accepts(op.name, d):
                for t in VECTOR_TEMPLATES:
                    cases.append(
                        KernelCase(
                            f"{t}_reduce_{op.name.lower()}_{d.name}",
                            (lambda name=op.name, d=d: _reduce_graph(name, d)),
                            t,
                        )
                    )
    cases += workload_cases()
    return [c for c in cases if c.force_template is None or _schedules(c.build, c.force_template)]
