"""The scheduler: ask every installed template for cases, keep every rejection.

Templates see a private normalized copy of the graph (rewrites never leak
into the user's graph or into other templates). A template that raises is
turned into a rejection naming its plugin, and so is a value it returns that
is not a well-formed Case or Rejected (checked here, before codegen uses it). Cases are ordered by
``(template, variant)`` and numbered in that order: the tiling keys are
stable across runs and machines for a given set of installed templates.

Then the rules the core applies to every case, whatever its template: the
workspace limit of the options becomes a constraint of each case, and the
plugins' contributions (score terms, resource formulas) are applied. The
selection policy is resolved once here, so tiling, codegen and explain use
the same one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import attrs
import sympy

from af_core.errors import ScheduleError, Unsupported
from af_core.ir.graph import HintGraph
from af_core.ir.sizes import expand_polynomial, expr_text, storage_elements
from af_core.ir.validate import GraphInfo, normalized_copy, validate
from af_core.ops.opdef import ComputeType
from af_core.options import AutofuserOptions
from af_core.platform import Platform
from af_core.policy import SEED, SelectionPolicy
from af_core.registry import Registry, get_registry, use_registry
from af_core.schedule.analysis import FusionAnalysis, analyze
from af_core.schedule.case import Case
from af_core.schedule.contributions import ContributionDiagnostic, apply_contributions
from af_core.schedule.impl_graph import ImplGraph
from af_core.schedule.measures import SelectionMeasures, Thresholds
from af_core.schedule.template import Rejected, ScheduleContext, Template
from af_core.tiling.conditions import Le
from af_core.tiling.solve import Guard
from af_core.tiling.spec import TilingSpec

INT64_MAX = (1 << 63) - 1
#: GM workspace a case may ask for when ``AutofuserOptions.workspace_limit`` is not set (1 GiB).
DEFAULT_WORKSPACE_LIMIT = 1 << 30


@attrs.define
class ScheduleResult:
    """Cases (the pyautofuse "impl graphs") plus everything needed to explain them."""

    graph: HintGraph
    normalized: HintGraph
    info: GraphInfo
    analysis: FusionAnalysis
    measures: SelectionMeasures
    cases: list[Case]
    rejections: list[Rejected]
    platform: Platform
    options: AutofuserOptions
    guards: list[Guard]
    policy: SelectionPolicy = SEED
    diagnostics: list[ContributionDiagnostic] = attrs.Factory(list)
    #: the registry the cases were scheduled with: code generation, explanations and the twin use the same
    registry: Registry = attrs.field(factory=get_registry, eq=False, repr=False)

    def __iter__(self) -> Iterator[Case]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)

    def __bool__(self) -> bool:
        return bool(self.cases)

    @property
    def size_names(self) -> list[str]:
        """The sizes' symbol names (their C++ identifiers): the keys of size values everywhere after
        the graph boundary (``HintGraph.size_env`` translates graph names)."""
        return [v.symbol.name for v in self.normalized.sizes()]

    def case(self, tiling_key: int) -> Case:
        """The case of ``tiling_key``; a key no case has is a KeyError naming it and the keys there are."""
        for c in self.cases:
            if c.tiling_key == tiling_key:
                return c
        keys = ", ".join(str(c.tiling_key) for c in self.cases)
        raise KeyError(f"no case of graph '{self.graph.name}' has tiling key {tiling_key} (keys: {keys})")


def forced_template(options: AutofuserOptions) -> str | None:
    forced = options.force_template or os.environ.get("AF_FORCE_TEMPLATE") or None
    return forced.strip() if forced else None


def runtime_guards(graph: HintGraph, info: GraphInfo, analysis: FusionAnalysis) -> list[Guard]:
    """Checks the host tiling makes before choosing: shape relations and int64 overflow."""
    guards: list[Guard] = []
    il = analysis.indirect_load
    x1 = info[graph.producer(il, "x1").name].sizes
    x2 = info[graph.producer(il, "x2").name].sizes
    dim = analysis.dim
    for axis, (a, b) in enumerate(zip(x1, x2)):
        if axis == dim:
            continue
        diff = expand_polynomial(a - b)
        if diff.is_number and diff >= 0:
            continue
        guards.append(Guard(Le(b, a), f"index size {b} exceeds input size {a} on axis {axis} of '{il.name}'"))
    seen: set[str] = set()
    for name in info.order:
        node = graph.node(name)
        if node.op.compute_type not in (ComputeType.DATA, ComputeType.OUTPUT):
            continue
        ni = info[name]
        span = storage_elements(ni.sizes, ni.strides) * ni.dtype.itemsize
        elems = sympy.Integer(ni.dtype.itemsize)
        for s in ni.sizes:
            elems = elems * s
        for expr in (expand_polynomial(span), expand_polynomial(elems)):
            if expr.is_number or expr_text(expr) in seen:
                continue
            seen.add(expr_text(expr))
            guards.append(Guard(Le(expr, INT64_MAX), f"tensor '{name}' spans more than int64 bytes"))
    return guards


def malformed_case(case: Case, template: str) -> str | None:
    """Why a Case a template returned cannot be used (None when it can): checked before anything uses it."""
    expected = (
        ("template", str),
        ("variant", str),
        ("graph", HintGraph),
        ("impl", ImplGraph),
        ("tiling", TilingSpec),
        ("meta", dict),
        ("plugin", str),
    )
    for field, kind in expected:
        value = getattr(case, field, None)
        if not isinstance(value, kind):
            return f"returned a Case whose {field} is {type(value).__name__}, not {kind.__name__}"
    if case.template != template:
        return f"returned a Case of template '{case.template}'"
    if not case.variant:
        return "returned a Case with an empty variant"
    return None


def _propose(
    entry: Any, norm: HintGraph, il_name: str, ctx: ScheduleContext
) -> tuple[list[Case], list[Rejected]]:
    """One template's cases and rejections; whatever it raises or returns wrong becomes a rejection naming it."""
    copy = norm.copy()
    template: Template = entry.value
    try:
        results = list(template.propose(copy, copy.node(il_name), ctx))
    except Unsupported as exc:  # the contract's "cannot handle this graph"
        return [], [Rejected(entry.name, str(exc), plugin=entry.distribution)]
    except (Exception, SystemExit) as exc:  # a template bug must not stop the others
        return [], [
            Rejected(entry.name, f"template raised {type(exc).__name__}: {exc}", plugin=entry.distribution)
        ]
    cases: list[Case] = []
    rejections: list[Rejected] = []
    for item in results:
        if isinstance(item, Rejected):
            if not isinstance(item.reason, str) or not isinstance(item.template, str):
                item = Rejected(
                    entry.name, f"template returned a Rejected with a non-text reason: {item.reason!r}"
                )
            rejections.append(attrs.evolve(item, plugin=item.plugin or entry.distribution))
        elif isinstance(item, Case):
            why = malformed_case(item, entry.name)
            if why is not None:
                rejections.append(Rejected(entry.name, f"template {why}", plugin=entry.distribution))
                continue
            clash = _size_clash(item, norm)
            if clash is not None:
                rejections.append(Rejected(entry.name, clash, stage="tiling", plugin=entry.distribution))
                continue
            item.plugin = item.plugin or entry.distribution
            cases.append(item)
        else:
            rejections.append(
                Rejected(
                    entry.name,
                    f"template returned {type(item).__name__}, not a Case or Rejected",
                    plugin=entry.distribution,
                )
            )
    return cases, rejections


def _size_clash(case: Case, graph: HintGraph) -> str | None:
    """Formulas mix size and tiling-field symbols by name: a field named like a size symbol is refused."""
    sizes = {v.symbol.name for v in graph.sizes()}
    clash = sorted(sizes.intersection(case.tiling.field_names()))
    if clash:
        return f"tiling field(s) {', '.join(clash)} have the symbol name of a graph size"
    return None


def workspace_limit(options: AutofuserOptions) -> int:
    """The GM workspace bytes a case may ask for (``AutofuserOptions.workspace_limit`` or 1 GiB)."""
    return options.workspace_limit or DEFAULT_WORKSPACE_LIMIT


def limit_workspace(case: Case, limit: int) -> None:
    """Every case: its workspace must not exceed the configured limit (dropped at tiling time if it does)."""
    holds = Le(case.tiling.workspace, limit)
    if holds is not sympy.true:
        case.tiling.require(holds, f"workspace exceeds AutofuserOptions.workspace_limit ({limit} bytes)")


def schedule(
    graph: HintGraph, options: AutofuserOptions, platform: Platform, registry: Registry | None = None
) -> ScheduleResult:
    """Every template of ``registry`` (default: the one in force) proposes cases for ``graph``, run with
    that registry in force (:func:`af_core.registry.use_registry`), so the roles a template asks for are
    filled from it too; the result carries it on to code generation."""
    registry = get_registry() if registry is None else registry
    with use_registry(registry):
        return _schedule(graph, options, platform, registry)


def _schedule(
    graph: HintGraph, options: AutofuserOptions, platform: Platform, registry: Registry
) -> ScheduleResult:
    policy = registry.policy(options.selection)
    info = validate(graph)
    norm, info = normalized_copy(graph, info)
    analysis = analyze(norm)
    thresholds = Thresholds.of(
        options.cache_thres, options.core_thres, options.cacheline or platform.cacheline
    )
    measures = SelectionMeasures.of(norm, analysis.indirect_load, thresholds)
    ctx = ScheduleContext(platform, options, measures, graph.name)
    entries = registry.templates.entries()
    forced = forced_template(options)
    if forced is not None:
        chosen = [e for e in entries if e.name == forced]
        if not chosen:
            raise ScheduleError(
                f"forced template '{forced}' is not installed (installed: "
                f"{', '.join(e.name for e in entries) or 'none'})"
            )
        entries = chosen
    cases: list[Case] = []
    rejections: list[Rejected] = []
    il_name = analysis.indirect_load.name
    for entry in entries:
        found, rejected = _propose(entry, norm, il_name, ctx)
        rejections += rejected
        for case in found:
            if any((c.template, c.variant) == (case.template, case.variant) for c in cases):
                rejections.append(
                    Rejected(
                        entry.name,
                        f"template returned variant '{case.variant}' twice",
                        plugin=entry.distribution,
                    )
                )
            else:
                cases.append(case)
    cases.sort(key=lambda c: (c.template, c.variant))
    limit = workspace_limit(options)
    for key, case in enumerate(cases):
        case.tiling_key = key
        limit_workspace(case, limit)
    diagnostics = apply_contributions(cases, ctx, registry.manager, (v.symbol.name for v in norm.sizes()))
    if not cases:
        detail = "; ".join(str(r) for r in rejections) or "no template plugin is installed"
        raise ScheduleError(
            f"no template plugin proposed a case for graph '{graph.name}': {detail}", rejections
        )
    return ScheduleResult(
        graph,
        norm,
        info,
        analysis,
        measures,
        cases,
        rejections,
        platform,
        options,
        runtime_guards(norm, info, analysis),
        policy,
        diagnostics,
        registry,
    )
