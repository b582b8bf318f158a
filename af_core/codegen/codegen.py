"""The Codegen facade: a ScheduleResult in, five artifacts out.

``CodegenResult`` mirrors Autofuse's: ``proto`` (JSON of the scheduled
result), ``tiling_data`` (the AutofuseTilingData header), ``tiling`` (host
tiling C++), ``kernel`` (device C++ with every case behind a tiling key) and
``infer_shape`` (host C++). The same ScheduleResult always gives
byte-identical text: every collection is ordered before it is printed.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import cast

import attrs

from af_core import __version__, naming
from af_core.codegen.api_source import ApiSource, resolve_order
from af_core.codegen.cexpr import CHECKED_HELPERS, INT_HELPERS, CppFormatter, to_cpp
from af_core.codegen.jinja import render
from af_core.codegen.kernel import case_function
from af_core.errors import UsageError
from af_core.ir.sizes import Expr, expr_text, to_text
from af_core.ir.validate import MAX_RANK
from af_core.policy import better_than_best, cpp_names
from af_core.registry import use_registry
from af_core.schedule.scheduler import ScheduleResult
from af_core.tiling.solve import CaseRef, solve_scheduled, struct_field_names

__all__ = ["MAX_RANK", "Codegen", "CodegenResult", "KernelIO", "StaticTiling", "cpp_ident"]


def cpp_ident(name: str) -> str:
    """A C++ identifier for a node name (kernel parameters): :func:`af_core.naming.ident`."""
    return naming.ident(name)


@attrs.frozen
class KernelIO:
    """A kernel argument: the Data/Output node, its dtype and (for outputs) its shape."""

    node: str
    param: str
    dtype: str
    itemsize: int
    sizes: tuple[str, ...]
    strides: tuple[str, ...]
    shape: tuple[Expr, ...] = ()  # ``sizes`` as expressions over the size symbols


@attrs.frozen(slots=False)  # not slotted: ``proto`` is a cached property
class CodegenResult:
    """Every artifact of one schedule (:meth:`files` names them as ``afc compile`` writes them).

    ``proto``, the JSON trace of the schedule (every case's formulas, the selection's measures, the
    ImplGraphs), is rendered when it is first read, by ``render_proto``: printing every formula is the
    largest part of a fresh process's first generate, and a compile whose caller reads only the kernel
    and tiling never needs it. The text is the same whenever it is read (a schedule is not changed
    after it is made).
    """

    tiling_data: str
    tiling: str
    kernel: str
    infer_shape: str
    kernel_name: str
    size_names: tuple[str, ...]
    inputs: tuple[KernelIO, ...]
    outputs: tuple[KernelIO, ...]
    struct_fields: tuple[str, ...]
    static: StaticTiling | None = None  # the baked tiling of a static kernel (Codegen(static=True))
    render_proto: Callable[[], str] = attrs.field(eq=False, repr=False, kw_only=True)

    @functools.cached_property
    def proto(self) -> str:
        """The schedule's JSON trace (``proto.json``), rendered on first read."""
        return self.render_proto()

    def kernel_headers(self) -> dict[str, str]:
        """The generated headers ``kernel`` includes by name (the tiling data it shares with the host)."""
        return {"autofuse_tiling_data.h": self.tiling_data}

    def files(self) -> dict[str, str]:
        """Artifact file names -> contents (what ``afc compile`` writes)."""
        return {
            "kernel.cpp": self.kernel,
            "tiling.cpp": self.tiling,
            "autofuse_tiling_data.h": self.tiling_data,
            "infer_shape.cpp": self.infer_shape,
            "proto.json": self.proto,
        }


@attrs.frozen
class StaticTiling:
    """The tiling of a graph without size symbols, solved when the kernel is generated.

    Autofuse's static-shape path (seed 004): with every size known at compile
    time, the kernel holds its tiling data and tiling key as constants and
    reads nothing from the tiling argument. They are valid for the platform
    they were solved for (``core_num``, ``ub_size``); the host tiling checks it.
    """

    tiling_key: int
    block_dim: int
    workspace_size: int
    core_num: int
    ub_size: int
    values: tuple[int, ...]  # every AutofuseTilingData field, in struct order


class Codegen:
    """Generates all artifacts of a ScheduleResult.

    ``static=True`` takes Autofuse's static-shape path for a graph without
    size symbols: the tiling is solved now for the schedule's platform and
    baked into the kernel (:class:`StaticTiling`); a graph with sizes is
    refused.
    """

    def __init__(self, kernel_name: str | None = None, *, static: bool = False) -> None:
        self.kernel_name = kernel_name
        self.static = static

    def generate(self, scheduled: ScheduleResult) -> CodegenResult:
        """Every artifact of ``scheduled``, generated with the registry it was scheduled with in force (the
        ApiCalls and API sources its cases name are that registry's)."""
        with use_registry(scheduled.registry):
            return self._generate(scheduled)

    def _generate(self, scheduled: ScheduleResult) -> CodegenResult:
        graph = scheduled.normalized
        name = naming.kernel_symbol(self.kernel_name or graph.name)
        # C++ names of the sizes: their symbol names (naming.size_ident of the graph's names)
        size_names = [v.symbol.name for v in graph.sizes()]
        inputs = self._io(scheduled, "data")
        outputs = self._io(scheduled, "output")
        refs = [CaseRef.of(c) for c in scheduled.cases]
        fields = struct_field_names(size_names, refs)
        tiling_data = render("tiling_data.h.j2", name=name, fields=fields, version=__version__)
        baked = self._static(scheduled, fields) if self.static else None
        kernel = self._kernel(scheduled, name, size_names, inputs, outputs, fields, baked)
        tiling = self._tiling(scheduled, name, size_names, refs)
        slots = {n: f"sizes[{i}]" for i, n in enumerate(size_names)}
        infer_shape = render(
            "infer_shape.cpp.j2",
            name=name,
            version=__version__,
            size_names=[v.name for v in graph.sizes()],
            max_rank=MAX_RANK,
            outputs=[(o.node, [to_cpp(s, slots) for s in o.shape]) for o in outputs],
            int_helpers=INT_HELPERS,
        )
        return CodegenResult(
            tiling_data,
            tiling,
            kernel,
            infer_shape,
            name,
            tuple(size_names),
            tuple(inputs),
            tuple(outputs),
            tuple(fields),
            baked,
            render_proto=functools.partial(self._render_proto, scheduled, name, list(fields)),
        )

    # -- pieces ------------------------------------------------------------
    @staticmethod
    def _static(scheduled: ScheduleResult, fields: list[str]) -> StaticTiling:
        sizes = [v.name for v in scheduled.normalized.sizes()]
        if sizes:
            raise UsageError(
                f"static tiling needs every size known when the kernel is generated; graph "
                f"'{naming.printable(scheduled.graph.name)}' has size(s) {', '.join(map(naming.printable, sizes))}"
            )
        plat = scheduled.platform
        solved = solve_scheduled(scheduled, {}, plat.core_num, plat.ub_size)  # TilingError: no case fits
        return StaticTiling(
            solved.tiling_key,
            solved.block_dim,
            solved.workspace_size,
            plat.core_num,
            plat.ub_size,
            tuple(int(solved.struct[f]) for f in fields),
        )

    @staticmethod
    def _io(scheduled: ScheduleResult, kind: str) -> list[KernelIO]:
        graph = scheduled.normalized
        nodes = [n for n in graph.nodes() if n.op.compute_type == kind]
        nodes.sort(key=lambda n: n.attr.ir_attr.index)
        out = []
        for node in nodes:
            ni = scheduled.info[node.name]
            out.append(
                KernelIO(
                    node.name,
                    naming.ident(node.name),
                    ni.dtype.name,
                    ni.dtype.itemsize,
                    tuple(to_text(s) for s in ni.sizes),
                    tuple(to_text(s) for s in ni.strides),
                    tuple(ni.sizes),
                )
            )
        return out

    def _kernel(
        self,
        scheduled: ScheduleResult,
        name: str,
        size_names: list[str],
        inputs: list[KernelIO],
        outputs: list[KernelIO],
        fields: list[str],
        baked: StaticTiling | None = None,
    ) -> str:
        definitions: dict[str, str] = {}
        sources: set[str] = set()
        params = [io.param for io in inputs + outputs]
        param_of = {io.node: io.param for io in inputs + outputs}
        functions = []
        # a static kernel holds the chosen case only: the others can never run
        cases = [c for c in scheduled.cases if baked is None or c.tiling_key == baked.tiling_key]
        for case in cases:
            functions.append(case_function(case, size_names, params, param_of, definitions, sources))
        table = scheduled.registry.api_sources
        api_sources = resolve_order(sources, lambda n: cast("ApiSource | None", table.get(n)))
        return render(
            "kernel.cpp.j2",
            name=name,
            version=__version__,
            graph=scheduled.graph.name,
            fields=fields,
            sources=api_sources,
            definitions=[definitions[k] for k in sorted(definitions)],
            functions=functions,
            cases=cases,
            params=params,
            static=baked,
            static_fields=list(zip(fields, baked.values)) if baked else [],
            int_helpers=INT_HELPERS.replace("static inline", "__aicore__ inline"),
        )

    def _tiling(
        self, scheduled: ScheduleResult, name: str, size_names: list[str], refs: list[CaseRef]
    ) -> str:
        policy = scheduled.policy
        names = cpp_names(policy.order)
        fixed = {"score": "score", "cost": "cost", "block_dim": "bd", "workspace": "ws"}
        cases = []
        for ref in refs:
            k = ref.tiling_key
            local = {f.name: f"c{k}_{f.name}" for f in ref.spec.fields}

            def rename(n: str, local: dict[str, str] = local) -> str:
                return local.get(n, n)

            fmt = CppFormatter(rename, checked=True)
            ranks, ranked = [], True  # ranked: the case defines every resource the policy ranks by
            for term, (var, _best) in zip(policy.order, names):
                if term.resource is None:
                    ranks.append((var, fixed.get(term.quantity, str(k))))
                elif term.resource in ref.spec.resources:
                    ranks.append((var, fmt(ref.spec.resources[term.resource])))
                else:
                    ranked = False
            cases.append(
                {
                    "key": k,
                    "label": ref.label,
                    "fields": [(f"c{k}_{f.name}", fmt(f.expr)) for f in ref.spec.fields],
                    "constraints": [(fmt(c.expr), c.reason) for c in ref.spec.constraints],
                    "score": fmt(ref.spec.score),
                    "cost": fmt(ref.spec.cost),
                    "block_dim": fmt(ref.spec.block_dim),
                    "workspace": fmt(ref.spec.workspace),
                    "ranks": ranks if ranked else None,
                }
            )
        # checked arithmetic (af_core.tiling.int64): a guard leaving int64 rejects the sizes, as in Python
        guards = [(to_cpp(guard.expr, checked=True), guard.message) for guard in scheduled.guards]
        better = better_than_best(policy.order, [v for v, _ in names], [b for _, b in names])
        return render(
            "tiling.cpp.j2",
            name=name,
            version=__version__,
            size_names=size_names,
            cases=cases,
            guards=guards,
            int_helpers=CHECKED_HELPERS,
            policy=policy,
            order=policy.describe(),
            ranks=names,
            better=better,
        )

    def _render_proto(self, scheduled: ScheduleResult, name: str, fields: list[str]) -> str:
        with use_registry(scheduled.registry):
            return self._proto(scheduled, name, fields)

    def _proto(self, scheduled: ScheduleResult, name: str, fields: list[str]) -> str:
        m = scheduled.measures
        str = expr_text  # noqa: A001 - the same texts, each sub-expression printed once
        data = {
            "kernel": name,
            "graph": scheduled.graph.name,
            "generator": f"af_core {__version__}",
            "platform": scheduled.platform.to_dict(),
            "sizes": [{"name": v.name, "max": v.max_value} for v in scheduled.normalized.sizes()],
            "analysis": scheduled.analysis.summary(),
            "selection": {
                "continuous_bytes": str(m.continuous_bytes),
                "index_outer_product": str(m.index_outer),
                "cache_thres": str(m.thresholds.cache_thres),
                "core_thres": str(m.thresholds.core_thres),
                "cacheline": m.thresholds.cacheline,
                "cache_ok": str(m.cache_ok()),
                "core_ok": str(m.core_ok()),
                "score": {str(c.tiling_key): str(c.tiling.score) for c in scheduled.cases},
                "policy": {
                    "name": scheduled.policy.name,
                    "description": scheduled.policy.description,
                    "order": [[t.quantity, t.direction] for t in scheduled.policy.order],
                },
            },
            "tiling_data": fields,
            "candidates": [
                {
                    "tiling_key": c.tiling_key,
                    "template": c.template,
                    "variant": c.variant,
                    "plugin": c.plugin,
                    "meta": {k: str(v) for k, v in sorted(c.meta.items())},
                    "tiling": {
                        "fields": [
                            {"name": f.name, "expr": str(f.expr), "doc": f.doc} for f in c.tiling.fields
                        ],
                        "constraints": [
                            {"expr": str(x.expr), "reason": x.reason} for x in c.tiling.constraints
                        ],
                        "resources": {k: str(v) for k, v in sorted(c.tiling.resources.items())},
                        "score": str(c.tiling.score),
                        "cost": str(c.tiling.cost),
                        "block_dim": str(c.tiling.block_dim),
                        "workspace": str(c.tiling.workspace),
                    },
                    "impl_graph": c.impl.to_dict(),
                    "contributions": [
                        {
                            "kind": a.kind,
                            "name": a.name,
                            "expr": str(a.expr),
                            "reason": a.reason,
                            "plugin": a.plugin,
                            "distribution": a.distribution,
                        }
                        for a in c.contributions
                    ],
                }
                for c in scheduled.cases
            ],
            "selection_policy": scheduled.policy.name,
            "contribution_diagnostics": [
                {"plugin": d.plugin, "distribution": d.distribution, "case": d.case, "reason": d.reason}
                for d in scheduled.diagnostics
            ],
            "rejections": [
                {"template": r.template, "plugin": r.plugin, "stage": r.stage, "reason": r.reason}
                for r in scheduled.rejections
            ],
            "guards": [{"expr": str(g.expr), "message": g.message} for g in scheduled.guards],
        }
        # compact: the indenting encoder is pure Python and cost ~15 ms on a 128-op chain
        # (`python -m json.tool proto.json` pretty-prints it; report.md is the human-readable view)
        return json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"
