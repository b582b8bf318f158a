"""Which input dimension carries each size symbol: the map a CANN tiling function needs.

On the device side of CANN nobody passes sizes: the tiling function reads
the input shapes from ``gert::TilingContext`` and must recover every size
symbol of the graph from them. Each symbol is bound to the first input
dimension that is exactly that symbol; every other input dimension becomes
a check (its expression over the bound sizes must equal the dimension the
runtime passes). A symbol that is no input dimension on its own (only
inside a product, or only in an output) cannot be recovered, and the graph
is refused naming it: a package whose tiling guessed would run wrong.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import sympy

from af_core.codegen.codegen import KernelIO
from af_core.errors import AfError


class PackageError(AfError):
    """The graph cannot become a CANN operator package; the message names the size or input and why."""


@attrs.frozen
class SizeBinding:
    """Size ``size`` (its C++ name) is dimension ``dim`` of input ``input_index`` (node ``input_node``)."""

    size: str
    input_index: int
    input_node: str
    dim: int


@attrs.frozen
class DimCheck:
    """Dimension ``dim`` of input ``input_index`` must equal ``expr`` over the bound sizes."""

    input_index: int
    input_node: str
    dim: int
    expr: sympy.Expr


@attrs.frozen
class SizeMap:
    """The bindings in size order, and the checks of every other input dimension."""

    bindings: tuple[SizeBinding, ...]
    checks: tuple[DimCheck, ...]
    ranks: tuple[int, ...]  # rank of each input, in kernel-argument order

    def to_json(self) -> dict[str, object]:
        return {
            "sizes": [
                {"size": b.size, "input": b.input_index, "node": b.input_node, "dim": b.dim}
                for b in self.bindings
            ],
            "checked_dims": [
                {"input": c.input_index, "node": c.input_node, "dim": c.dim, "equals": str(c.expr)}
                for c in self.checks
            ],
            "input_ranks": list(self.ranks),
        }


def size_map(size_names: Sequence[str], inputs: Sequence[KernelIO]) -> SizeMap:
    """Bind each size to an input dimension, or raise :class:`PackageError` naming the size and why."""
    where: dict[str, tuple[int, int]] = {}
    for index, io in enumerate(inputs):
        for dim, expr in enumerate(io.shape):
            if isinstance(expr, sympy.Symbol) and expr.name not in where:
                where[expr.name] = (index, dim)
    bindings = []
    for name in size_names:
        if name not in where:
            uses = [
                f"{io.node}[{d}] = {sympy.sstr(e)}"
                for io in inputs
                for d, e in enumerate(io.shape)
                if name in {s.name for s in getattr(e, "free_symbols", ())}
            ]
            why = (
                f"it appears only inside input dimensions ({'; '.join(uses)})"
                if uses
                else "no input dimension mentions it"
            )
            raise PackageError(
                f"size '{name}' cannot be recovered from the input shapes: {why}; a CANN tiling function "
                "reads only input shapes, so make the size a whole dimension of an input"
            )
        index, dim = where[name]
        bindings.append(SizeBinding(name, index, inputs[index].node, dim))
    bound = {(b.input_index, b.dim) for b in bindings}
    checks = tuple(
        DimCheck(index, io.node, dim, sympy.sympify(expr))
        for index, io in enumerate(inputs)
        for dim, expr in enumerate(io.shape)
        if (index, dim) not in bound
    )
    return SizeMap(tuple(bindings), checks, tuple(len(io.shape) for io in inputs))
