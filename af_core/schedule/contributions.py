"""Contributions: score terms and resource formulas a plugin adds to other templates' cases.

After every template proposed, the scheduler calls the ``af_case_contributions``
hook plugin by plugin for every case. A plugin answers with :class:`ScoreTerm`
values (added to the case's score, so they move it under any policy that ranks
by score) and :class:`ResourceFormula` values (new entries of the case's
resources, which reports show and a policy may rank by). What was applied is
recorded on the case with the distribution that contributed it; what could
not be applied (the hook raised, returned something else, a formula names a
symbol the host tiling does not have, a resource name is taken) is a
:class:`ContributionDiagnostic` naming the plugin, and that plugin's
contribution to that case is dropped whole. A contribution never stops a
schedule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import attrs
import sympy

from af_core.errors import CodegenError
from af_core.tiling.int64 import lower
from af_core.tiling.spec import CORE_NUM, UB_SIZE

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")


@attrs.frozen
class ScoreTerm:
    """``expr`` (an int64 formula over sizes, the case's fields, core_num and ub_size) added to the score."""

    name: str
    expr: Any
    reason: str


@attrs.frozen
class ResourceFormula:
    """A new resource ``name`` of the case (e.g. ``l2_bytes``), an int64 formula like a ScoreTerm's."""

    name: str
    expr: Any
    reason: str


@attrs.frozen
class AppliedContribution:
    """A ScoreTerm or ResourceFormula as applied to a case, with who contributed it."""

    kind: str  # "score" | "resource"
    name: str
    expr: sympy.Basic
    reason: str
    plugin: str
    distribution: str


@attrs.frozen
class ContributionDiagnostic:
    """A contribution that was dropped, and why."""

    plugin: str
    distribution: str
    case: str
    reason: str

    def __str__(self) -> str:
        return f"{self.plugin} ({self.distribution}) on {self.case}: {self.reason}"


def _known_symbols(case: Any, size_names: Iterable[str]) -> set[str]:
    return {*size_names, *case.tiling.field_names(), CORE_NUM.name, UB_SIZE.name}


def _checked(item: Any, known: set[str]) -> AppliedContribution | str:
    """The item as an applied contribution (plugin fields left empty), or why it cannot be one."""
    if not isinstance(item, (ScoreTerm, ResourceFormula)):
        return f"returned {type(item).__name__}, not a ScoreTerm or ResourceFormula"
    kind = "score" if isinstance(item, ScoreTerm) else "resource"
    if not isinstance(item.name, str) or not _NAME.match(item.name):
        return f"{kind} contribution name {item.name!r} is not an identifier"
    if not isinstance(item.reason, str):
        return f"{kind} contribution '{item.name}' has a non-text reason"
    expr = item.expr
    if isinstance(expr, int) and not isinstance(expr, bool):
        expr = sympy.Integer(expr)
    if not isinstance(expr, sympy.Expr):  # never sympify text: it would be evaluated
        return f"{kind} contribution '{item.name}' is a {type(item.expr).__name__}, not a sympy expression"
    unknown = sorted(s.name for s in expr.free_symbols if s.name not in known)
    if unknown:
        return (
            f"{kind} contribution '{item.name}' uses {', '.join(unknown)}, which are neither sizes, "
            "fields of the case, core_num nor ub_size"
        )
    try:
        lower(expr)
    except (CodegenError, TypeError, ValueError) as exc:
        return f"{kind} contribution '{item.name}' has no int64 form: {exc}"
    return AppliedContribution(kind, item.name, expr, item.reason, "", "")


def contributions_of(
    result: Any, case: Any, known: set[str], plugin: str, dist: str, taken: set[str]
) -> list[AppliedContribution] | str:
    """One plugin's answer for one case, checked as a whole (all applied or none)."""
    if result is None:
        return []
    if not isinstance(result, (list, tuple)):
        return f"returned {type(result).__name__}, not a list of ScoreTerm / ResourceFormula"
    applied: list[AppliedContribution] = []
    names: set[tuple[str, str]] = set()
    for item in result:
        checked = _checked(item, known)
        if isinstance(checked, str):
            return checked
        if (checked.kind, checked.name) in names:
            return f"returned {checked.kind} contribution '{checked.name}' twice"
        names.add((checked.kind, checked.name))
        if checked.kind == "resource" and checked.name in taken:
            return f"resource '{checked.name}' is already defined for this case"
        applied.append(attrs.evolve(checked, plugin=plugin, distribution=dist))
    return applied


def apply_contributions(
    cases: list, ctx: Any, manager: Any, size_names: Iterable[str]
) -> list[ContributionDiagnostic]:
    """Ask every plugin for each case's contributions and apply the well-formed ones (in plugin order)."""
    size_names = list(size_names)
    diagnostics: list[ContributionDiagnostic] = []
    impls = list(manager.each("af_case_contributions"))
    for case in cases:
        known = _known_symbols(case, size_names)
        for plugin, dist, impl in impls:
            try:
                result = manager.call_one("af_case_contributions", impl, case=case, ctx=ctx)
            except (Exception, SystemExit) as exc:  # a contributor's bug must not stop the schedule
                diagnostics.append(
                    ContributionDiagnostic(plugin, dist, case.label, f"raised {type(exc).__name__}: {exc}")
                )
                continue
            checked = contributions_of(result, case, known, plugin, dist, set(case.tiling.resources))
            if isinstance(checked, str):
                diagnostics.append(ContributionDiagnostic(plugin, dist, case.label, checked))
                continue
            for item in checked:
                if item.kind == "score":
                    case.tiling.score = case.tiling.score + item.expr
                else:
                    case.tiling.resources[item.name] = item.expr
                case.contributions.append(item)
    return diagnostics
