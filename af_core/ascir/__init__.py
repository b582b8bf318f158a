"""The pyautofuse-compatible ASCIR surface: ``from af_core import ascir``.

Scripts written for pyautofuse run with only their import line changed:
``ascir.utils.set_platform``, ``ascir.HintGraph``, ``ascir.ops.<Op>(name[, graph])``,
``ascir.SizeExpr`` and ``ascir.dtypes.<name>``.
"""

from af_core import dtypes
from af_core.ascir import ops, utils
from af_core.ir import graph as _graph
from af_core.ir.graph import Axis, Node
from af_core.ir.sizes import SizeExpr
from af_core.ops.table import OpTable
from af_core.registry import registry_ops


class HintGraph(_graph.HintGraph):
    """``ascir.HintGraph(name)``: a graph whose op types are the installed plugins' (their registry's op
    table), as pyautofuse's are the ops it ships."""

    def __init__(self, name: str, ops: OpTable | None = None) -> None:
        super().__init__(name, registry_ops() if ops is None else ops)


__all__ = ["Axis", "HintGraph", "Node", "SizeExpr", "dtypes", "ops", "utils"]
