"""``AutofuserOptions``: what a user sets for one fuser, read by the scheduler, tiling and codegen.

It sits below the scheduler (templates receive it in their
:class:`~af_core.schedule.template.ScheduleContext`), so it imports nothing
of the pipeline; :mod:`af_core.autofuser` re-exports it under its pyautofuse name.
"""

from __future__ import annotations

import attrs

from af_core.index_distribution import IndexDistribution, parse_distribution
from af_core.platform import Platform
from af_core.policy import DEFAULT_POLICY


def _distribution(value: str | IndexDistribution | None) -> IndexDistribution | None:
    """A declared distribution parsed (a bad name is a UsageError naming it), ``None`` kept."""
    return None if value is None else parse_distribution(value)


@attrs.define
class AutofuserOptions:
    """Options of a fuser.

    ``tiling_lib_path`` and ``tiling_lib_codegen_symbol`` exist for pyautofuse
    compatibility (the host tiling is generated in-process, not by a library).
    ``force_template`` keeps only one template's cases (also ``AF_FORCE_TEMPLATE``).
    ``cache_thres`` / ``core_thres`` / ``cacheline`` are the seed's selection
    thresholds (``cacheline`` defaults to the platform's). ``workspace_limit``
    caps the GM workspace every case may ask for (default 1 GiB; the scheduler
    adds the constraint to each case, whatever its template). ``selection``
    names the host tiling's policy, one of the installed selection policies
    (:mod:`af_core.policy`): the core's ``"cost"`` (lowest modelled cost
    among the cases that fit, scores ignored; the default, chosen on the
    corpus benchmark) and ``"seed"`` (highest score, ties by modelled cost —
    the design's rule), or one a plugin registers. An
    unknown name is a :class:`~af_core.policy.PolicyError` listing the
    installed ones. ``index_distribution`` declares how the index values are
    drawn (a name of :mod:`af_core.index_distribution` such as ``"zipf1.15"``,
    or a parsed one): with concrete sizes the cases then predict the distinct
    lines HBM delivers and the data-cache fills from it; ``None`` (the
    default) predicts from the sizes alone.
    """

    tiling_lib_path: str = ""
    tiling_lib_codegen_symbol: str = ""
    platform: Platform | None = None
    force_template: str | None = None
    cache_thres: float = 0.5
    core_thres: float = 0.5
    cacheline: int | None = None
    kernel_name: str | None = None
    workspace_limit: int | None = None  # bytes; cases needing more are dropped at tiling time
    selection: str = attrs.field(default=DEFAULT_POLICY)
    index_distribution: IndexDistribution | None = attrs.field(default=None, converter=_distribution)

    @selection.validator
    def _installed_policy(self, attribute: attrs.Attribute[str], value: str) -> None:
        from af_core.registry import lookup_policy

        lookup_policy(value)
