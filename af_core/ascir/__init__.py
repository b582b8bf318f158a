"""The pyautofuse-compatible ASCIR surface: ``from af_core import ascir``.

Scripts written for pyautofuse run with only their import line changed:
``ascir.utils.set_platform``, ``ascir.HintGraph``, ``ascir.ops.<Op>(name[, graph])``,
``ascir.SizeExpr`` and ``ascir.dtypes.<name>``.
"""

from af_core import dtypes
from af_core.ascir import ops, utils
from af_core.ir.graph import Axis, HintGraph, Node
from af_core.ir.sizes import SizeExpr

__all__ = ["Axis", "HintGraph", "Node", "SizeExpr", "dtypes", "ops", "utils"]
