"""Case: one candidate kernel for a graph, as a template proposes it."""

from __future__ import annotations

from typing import Any

import attrs

from af_core.ir.graph import HintGraph
from af_core.naming import ident
from af_core.schedule.impl_graph import ImplGraph
from af_core.tiling.spec import TilingSpec


@attrs.define
class Case:
    """A template's candidate: rewritten graph, ImplGraph, tiling spec, metadata.

    ``variant`` distinguishes several cases of one template (e.g. with and
    without double buffering); ``(template, variant)`` is unique per graph and
    fixes the tiling key order, so keys are stable across runs and machines.
    ``contributions`` records the score terms and resource formulas other
    plugins added (:mod:`af_core.schedule.contributions`), already folded into
    ``tiling``.
    """

    template: str
    variant: str
    graph: HintGraph
    impl: ImplGraph
    tiling: TilingSpec
    meta: dict[str, Any] = attrs.Factory(dict)
    plugin: str = ""
    tiling_key: int = -1
    contributions: list[Any] = attrs.Factory(list)

    @property
    def label(self) -> str:
        """``template`` or ``template/variant``: how reports and ``run.template`` name the case."""
        return self.template if self.variant == "default" else f"{self.template}/{self.variant}"

    @property
    def function_name(self) -> str:
        # the _k<key> suffix makes it unique, so the other parts only need to be valid and readable
        label = ident("".join(ch if ch.isascii() and ch.isalnum() else "_" for ch in self.label))
        return f"{ident(self.impl.name)[:48].rstrip('_')}_{label}_k{self.tiling_key}"
