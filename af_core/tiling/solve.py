"""Python twin of the generated host tiling: same formulas, same choice.

Every expression is lowered once (:mod:`af_core.tiling.int64`) and evaluated
with the int64 contract the C++ follows: each operation's result must fit
int64 and divisors must be non-zero, else the guard rejects the sizes or the
case does not fit. The order is the C++'s: fields, then constraints (stopping
at the first false one), then block_dim, workspace, score and cost. The
differential tests hold the two to agreement on success, failure and every
field.

Choice rule (also in the C++): drop cases whose constraints fail, then rank
the others by the selection policy's lexicographic order
(:mod:`af_core.policy`; default ``cost``: lowest modelled cost; ``seed``: highest score, then lowest modelled
cost), full ties going to the lowest tiling key. A policy that ranks by a
resource evaluates that formula with the same int64 contract; a case that
lacks it, or whose value leaves int64, does not fit under that policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import attrs
import sympy

from af_core.errors import TilingError
from af_core.naming import demangle
from af_core.policy import DEFAULT_POLICY, SelectionPolicy
from af_core.registry import lookup_policy
from af_core.tiling.int64 import Int64Failure, evaluate
from af_core.tiling.spec import TilingSpec

if TYPE_CHECKING:
    from af_core.platform import Platform


# What tiling reads of a scheduled case and of a schedule, as protocols: the schedule layer sits above this
# one and calls into it, so naming its classes here, even for the type checker only, would close an import
# cycle (tools/check_layers.py counts TYPE_CHECKING imports). ``af_core.schedule.case.Case`` and
# ``af_core.schedule.scheduler.ScheduleResult`` satisfy them.
class TiledCase(Protocol):
    """A scheduled case as tiling sees it."""

    @property
    def tiling_key(self) -> int: ...
    @property
    def template(self) -> str: ...
    @property
    def tiling(self) -> TilingSpec: ...
    @property
    def label(self) -> str: ...


class _SizeEnv(Protocol):
    def size_env(self, sizes: Mapping[str, int]) -> dict[str, int]: ...


class TiledSchedule(Protocol):
    """A schedule as :func:`solve_scheduled` reads it."""

    @property
    def cases(self) -> Sequence[TiledCase]: ...
    @property
    def normalized(self) -> _SizeEnv: ...
    @property
    def platform(self) -> Platform: ...
    @property
    def size_names(self) -> Sequence[str]: ...
    @property
    def guards(self) -> Sequence[Guard]: ...
    @property
    def policy(self) -> SelectionPolicy: ...


INT64_MAX = (1 << 63) - 1
UINT32_MAX = (1 << 32) - 1


@attrs.frozen
class CaseRef:
    """A case as tiling sees it: key, template name and spec."""

    tiling_key: int
    template: str
    spec: TilingSpec
    label: str = ""

    @classmethod
    def of(cls, case: TiledCase) -> CaseRef:
        """The tiling view of a scheduled case (its key, template, tiling spec and label)."""
        return cls(case.tiling_key, case.template, case.tiling, case.label)


@attrs.frozen
class CaseEvaluation:
    tiling_key: int
    template: str
    label: str
    fields: dict[str, int]
    fits: bool
    reason: str | None
    score: int | None
    cost: int | None
    resources: dict[str, int | None]
    block_dim: int | None
    workspace: int | None
    ranked: dict[str, int] = attrs.Factory(dict)  # checked values of the resources the policy ranks by

    def quantities(self) -> dict[str, int]:
        """What a selection policy compares (only for a case that fits)."""
        assert (
            self.score is not None
            and self.cost is not None
            and self.block_dim is not None
            and self.workspace is not None
        ), "only a case that fits has the quantities a policy compares"
        values = {
            "score": self.score,
            "cost": self.cost,
            "block_dim": self.block_dim,
            "workspace": self.workspace,
            "tiling_key": self.tiling_key,
        }
        values.update({f"resource:{k}": v for k, v in self.ranked.items()})
        return values


@attrs.frozen
class TilingResult:
    tiling_key: int
    block_dim: int
    workspace_size: int
    struct: dict[str, int]  # every AutofuseTilingData field, as the C++ writes it
    evaluations: tuple[CaseEvaluation, ...]

    def chosen(self) -> CaseEvaluation:
        return next(e for e in self.evaluations if e.tiling_key == self.tiling_key)


@attrs.frozen
class Guard:
    """A graph-level runtime check of the host tiling (sizes, overflow, shape relations)."""

    expr: sympy.Basic
    message: str


def _value(expr: sympy.Basic, env: Mapping[str, int]) -> int:
    """The checked int64 value of ``expr`` (raises :class:`Int64Failure`)."""
    return evaluate(expr, env)


def _report_value(expr: sympy.Basic, env: Mapping[str, int]) -> int | None:
    """An exact value for reports (resources are not part of the C++), None if undefined."""
    try:
        return evaluate(expr, env, checked=False)
    except Int64Failure:
        return None


def struct_field_names(size_names: Sequence[str], cases: Sequence[CaseRef]) -> list[str]:
    names = ["block_dim", "tiling_key", "workspace_size", *size_names]
    for case in cases:
        names += [f"c{case.tiling_key}_{f.name}" for f in case.spec.fields]
    return names


def evaluate_case(case: CaseRef, env: Mapping[str, int], ranked: Sequence[str] = ()) -> CaseEvaluation:
    """Fields, constraints and quantities of one case; ``ranked``: resources a policy ranks by."""
    local = dict(env)
    fields: dict[str, int] = {}

    def dropped(reason: str, block_dim: int | None = None, workspace: int | None = None) -> CaseEvaluation:
        return CaseEvaluation(
            case.tiling_key,
            case.template,
            case.label,
            fields,
            False,
            reason,
            None,
            None,
            resources,
            block_dim,
            workspace,
        )

    resources: dict[str, int | None] = {}
    for f in case.spec.fields:
        try:
            local[f.name] = fields[f.name] = _value(f.expr, local)
        except Int64Failure as exc:
            return dropped(f"field {f.name} leaves int64 ({exc})")
    resources.update({k: _report_value(v, local) for k, v in case.spec.resources.items()})
    for c in case.spec.constraints:
        try:
            holds = _value(c.expr, local)
        except Int64Failure as exc:
            return dropped(f"{c.reason} (its check leaves int64: {exc})")
        if not holds:
            return dropped(c.reason)
    try:
        block_dim = _value(case.spec.block_dim, local)
        workspace = _value(case.spec.workspace, local)
        score = _value(case.spec.score, local)
        cost = _value(case.spec.cost, local)
    except Int64Failure as exc:
        return dropped(f"block_dim, workspace, score or cost leaves int64 ({exc})")
    if not 1 <= block_dim <= local["core_num"]:
        return dropped(f"block_dim {block_dim} outside [1, core_num]", block_dim, workspace)
    if not 0 <= workspace <= UINT32_MAX:
        return dropped(f"workspace {workspace} bytes exceeds the uint32 limit", block_dim, workspace)
    values: dict[str, int] = {}
    for name in ranked:
        if name not in case.spec.resources:
            return dropped(
                f"the selection policy ranks by resource {name}, which this case does not define",
                block_dim,
                workspace,
            )
        try:
            values[name] = _value(case.spec.resources[name], local)
        except Int64Failure as exc:
            return dropped(
                f"resource {name}, which the selection policy ranks by, leaves int64 ({exc})",
                block_dim,
                workspace,
            )
    return CaseEvaluation(
        case.tiling_key,
        case.template,
        case.label,
        fields,
        True,
        None,
        score,
        cost,
        resources,
        block_dim,
        workspace,
        values,
    )


def _struct(
    cases: Sequence[CaseRef], size_names: Sequence[str], env: Mapping[str, int], ev: CaseEvaluation
) -> dict[str, int]:
    assert ev.block_dim is not None and ev.workspace is not None, "only a fitting case gets a struct"
    struct = {name: 0 for name in struct_field_names(size_names, cases)}
    struct.update({"block_dim": ev.block_dim, "tiling_key": ev.tiling_key, "workspace_size": ev.workspace})
    struct.update({n: env[n] for n in size_names})
    struct.update({f"c{ev.tiling_key}_{k}": v for k, v in ev.fields.items()})
    return struct


def _environment(
    size_names: Sequence[str],
    sizes: Mapping[str, int],
    core_num: int,
    ub_size: int,
    guards: Sequence[Guard],
) -> dict[str, int]:
    env: dict[str, int] = {}
    for name in size_names:
        if name not in sizes:
            raise TilingError(f"no value for size '{name}'")
        value = int(sizes[name])
        if value <= 0 or value > INT64_MAX:
            raise TilingError(f"size {name}={value} must be a positive int64")
        env[name] = value
    env["core_num"] = int(core_num)
    env["ub_size"] = int(ub_size)
    for guard in guards:
        names = sorted(s.name for s in sympy.sympify(guard.expr).free_symbols if s.name in env)
        at = ", ".join(f"{demangle(n)}={env[n]}" for n in names)
        try:
            holds = _value(guard.expr, env)
        except Int64Failure as exc:
            raise TilingError(f"{guard.message} at sizes {at} (its check leaves int64: {exc})") from None
        if not holds:
            raise TilingError(f"{guard.message} at sizes {at}")
    return env


def as_policy(policy: SelectionPolicy | str) -> SelectionPolicy:
    """A policy object, looking a name up among the installed policies."""
    return policy if isinstance(policy, SelectionPolicy) else lookup_policy(policy)


def solve(
    cases: Sequence[CaseRef],
    size_names: Sequence[str],
    sizes: Mapping[str, int],
    core_num: int,
    ub_size: int,
    guards: Sequence[Guard] = (),
    policy: SelectionPolicy | str = DEFAULT_POLICY,
) -> TilingResult:
    """Evaluate every case for concrete sizes and pick one, like the C++ does.

    ``policy`` (a :class:`SelectionPolicy` or an installed policy's name) orders
    the cases that fit; e.g. "seed": highest score, then lowest cost, then
    lowest key; "cost": lowest cost, then lowest key.
    """
    policy = as_policy(policy)
    env = _environment(size_names, sizes, core_num, ub_size, guards)
    evaluations = tuple(evaluate_case(case, env, policy.resources) for case in cases)
    best: CaseEvaluation | None = None
    for ev in evaluations:
        if not ev.fits:
            continue
        if best is None or policy.rank(ev.quantities()) > policy.rank(best.quantities()):
            best = ev
    if best is None:
        reasons = "; ".join(f"key {e.tiling_key} ({e.template}): {e.reason}" for e in evaluations)
        raise TilingError(f"no case fits sizes {dict(sizes)} on {core_num} cores: {reasons}")
    assert best.block_dim is not None and best.workspace is not None  # a fitting case has both
    return TilingResult(
        best.tiling_key, best.block_dim, best.workspace, _struct(cases, size_names, env, best), evaluations
    )


def solve_for_case(
    cases: Sequence[CaseRef],
    size_names: Sequence[str],
    sizes: Mapping[str, int],
    core_num: int,
    ub_size: int,
    guards: Sequence[Guard],
    tiling_key: int,
) -> TilingResult:
    """The tiling data that runs one given case (it must fit), bypassing the choice."""
    env = _environment(size_names, sizes, core_num, ub_size, guards)
    evaluations = tuple(evaluate_case(case, env) for case in cases)
    ev = next((e for e in evaluations if e.tiling_key == tiling_key), None)
    if ev is None:
        raise TilingError(f"no case has tiling key {tiling_key}")
    if not ev.fits:
        raise TilingError(f"key {tiling_key} ({ev.template}) does not fit: {ev.reason}")
    assert ev.block_dim is not None and ev.workspace is not None  # a fitting case has both
    return TilingResult(
        ev.tiling_key, ev.block_dim, ev.workspace, _struct(cases, size_names, env, ev), evaluations
    )


def solve_scheduled(
    scheduled: TiledSchedule,
    sizes: Mapping[str, int],
    core_num: int | None = None,
    ub_size: int | None = None,
    *,
    tiling_key: int | None = None,
) -> TilingResult:
    """:func:`solve` for every case of a ScheduleResult (the platform supplies defaults).

    With ``tiling_key``, the tiling data of that case instead of the chosen one.
    """
    refs = [CaseRef.of(c) for c in scheduled.cases]
    sizes = scheduled.normalized.size_env(sizes)  # the graph's size names -> symbol names
    core_num = core_num or scheduled.platform.core_num
    ub_size = ub_size or scheduled.platform.ub_size
    if tiling_key is not None:
        return solve_for_case(
            refs, scheduled.size_names, sizes, core_num, ub_size, scheduled.guards, tiling_key
        )
    return solve(refs, scheduled.size_names, sizes, core_num, ub_size, scheduled.guards, scheduled.policy)
