"""An op table: where a graph finds the :class:`~af_core.ops.opdef.OpDef` of an op type named by text.

The graph IR resolves op types through the table it is given (``HintGraph(name, ops)``), never through the
plugin registry itself: the registry loads plugins, and the IR sits below it. The edges that build graphs
(``GraphBuilder``, ``ascir.HintGraph``, ``af_core.graph_files``) pass the registry's table
(:func:`af_core.registry.registry_ops`); a test or a tool may pass any other, e.g. :class:`FixedOps`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

import attrs

from af_core.ops.opdef import OpDef


class OpTable(Protocol):
    """Looks up an op type's definition by name (None when the table has no such op) and lists the names
    (sorted: what a graph builder offers as ``g.relu`` and the like)."""

    def lookup(self, op_type: str) -> OpDef | None: ...

    def names(self) -> list[str]: ...


def _by_name(ops: Mapping[str, OpDef]) -> dict[str, OpDef]:
    return dict(ops)


@attrs.frozen
class FixedOps:
    """A table of the given definitions only, by their names."""

    ops: Mapping[str, OpDef] = attrs.field(converter=_by_name)

    @classmethod
    def of(cls, defs: Iterable[OpDef]) -> FixedOps:
        return cls({d.name: d for d in defs})

    def lookup(self, op_type: str) -> OpDef | None:
        return self.ops.get(op_type)

    def names(self) -> list[str]:
        return sorted(self.ops)
