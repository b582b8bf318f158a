"""``ascir.ops.<OpType>(name, graph=None)``: node factories for every registered op.

Attribute lookup goes to the op registry, so ops added by a plugin appear
here as soon as the plugin is installed; an unknown name raises
:class:`af_core.errors.UnknownOpError`.
"""

from __future__ import annotations

from af_core.errors import UnknownOpError
from af_core.ir.graph import HintGraph, Node


class _OpFactory:
    __slots__ = ("op_type",)

    def __init__(self, op_type: str) -> None:
        self.op_type = op_type

    def __call__(self, name: str, graph: HintGraph | None = None) -> Node:
        from af_core.registry import lookup_op

        op = lookup_op(self.op_type)  # the registry in force now, as when the factory was made
        if op is None:
            raise UnknownOpError(
                "op-known", f"no installed plugin registers op type '{self.op_type}'", node=name
            )
        return Node(op, name, graph)

    def __repr__(self) -> str:
        return f"ascir.ops.{self.op_type}"


def __getattr__(op_type: str) -> _OpFactory:
    if op_type.startswith("__"):
        raise AttributeError(op_type)
    from af_core.registry import lookup_op

    if lookup_op(op_type) is None:
        raise UnknownOpError("op-known", f"no installed plugin registers op type '{op_type}'")
    return _OpFactory(op_type)


def __dir__() -> list[str]:
    from af_core.registry import get_registry

    return get_registry().ops.names()
