"""The core's own hook implementations (registered as plugin ``af_core``).

The core is a plugin of itself for the ops every template relies on and for
the two selection policies of the design (``seed`` and ``cost``); it
registers no template, no ApiCall and no twin header — those are plugins.
"""

from __future__ import annotations

from collections.abc import Callable

from af_core.hookspecs import hookimpl
from af_core.ops.core_ops import CORE_OPS
from af_core.ops.opdef import OpDef
from af_core.policy import COST, SEED, SelectionPolicy


@hookimpl
def af_register_ops(register: Callable[[OpDef], None]) -> None:
    for op in CORE_OPS:
        register(op)


@hookimpl
def af_register_selection_policies(register: Callable[[SelectionPolicy], None]) -> None:
    register(SEED)
    register(COST)
