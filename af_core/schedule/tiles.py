"""UB tiles of a stage: buffers, byte formulas, in-place aliases and release points.

Templates describe their per-tile data as tiles of ``rows x pitch`` elements
(pitch * itemsize a multiple of 32, so rows start on UB blocks). A
:class:`TilePlan` turns that into ImplGraph buffers (queues for data that
crosses MTE2 -> V or V -> MTE3, TBufs for vector scratch), keeps the UB
formula, and after the nodes are known computes where each buffer can be
freed (:meth:`assign_releases`), which codegen turns into ``FreeTensor``.
"""

from __future__ import annotations

import attrs
import sympy

from af_core import dtypes as dt
from af_core.ir.sizes import Expr
from af_core.schedule.impl_graph import Buffer, ImplGraph, ImplTensor, Stage
from af_core.tiling.spec import AlignUp, CeilDiv, Max


def pitch_for(width: Expr, dtypes: list[dt.DType]) -> Expr:
    """Elements per tile row so that a row of every given dtype fills whole 32-byte blocks."""
    smallest = min(d.itemsize if not d.is_bool else 1 for d in dtypes)
    return AlignUp(width, 32 // smallest)


@attrs.define
class TilePlan:
    """The UB buffers of one stage whose tiles hold ``rows`` rows (a tiling field symbol) each."""

    impl: ImplGraph
    stage: Stage
    rows: Expr  # tile rows (a tiling field symbol)
    roots: dict[str, str] = attrs.Factory(dict)
    row_bytes: Expr = sympy.Integer(0)  # UB bytes per tile row (upper bound, linear)
    fixed_bytes: Expr = sympy.Integer(0)  # UB bytes independent of the tile rows (upper bound)

    def tile(self, name: str, dtype: dt.DType, pitch: Expr, *, position: str = "VECCALC", que: bool = False,
             num: int = 1, extra_bytes: Expr = 0, rows: Expr | None = None) -> str:
        count = (self.rows if rows is None else rows) * pitch
        size = AlignUp(count * dtype.itemsize + extra_bytes, 32)
        self.stage.buffers.append(Buffer(name, "que" if que else "tbuf", position, size, num))
        if rows is None:
            self.row_bytes += pitch * dtype.itemsize * num
            self.fixed_bytes += (sympy.sympify(extra_bytes) + 32) * num
        else:
            self.fixed_bytes += (count * dtype.itemsize + sympy.sympify(extra_bytes) + 32) * num
        self.impl.add_tensor(ImplTensor(name, dtype, "UB", buffer=name))
        self.roots[name] = name
        return name

    def mask(self, name: str, pitch: Expr) -> str:
        """A bit mask over a tile (Compare/Select): one bit per element."""
        size = AlignUp(self.rows * CeilDiv(pitch, 8), 32)
        self.stage.buffers.append(Buffer(name, "tbuf", "VECCALC", size))
        self.row_bytes += CeilDiv(pitch, 8)
        self.fixed_bytes += 32
        self.impl.add_tensor(ImplTensor(name, dt.uint8, "UB", buffer=name))
        self.roots[name] = name
        return name

    def fixed(self, name: str, dtype: dt.DType, elements: Expr, *, position: str = "VECCALC") -> str:
        """A scratch buffer that does not scale with the tile rows."""
        size = AlignUp(elements * dtype.itemsize, 32)
        self.stage.buffers.append(Buffer(name, "tbuf", position, size))
        self.fixed_bytes += elements * dtype.itemsize + 32
        self.impl.add_tensor(ImplTensor(name, dtype, "UB", buffer=name))
        self.roots[name] = name
        return name

    def alias(self, name: str, like: str, dtype: dt.DType) -> str:
        """A tensor stored in place of ``like`` (same buffer)."""
        self.impl.add_tensor(ImplTensor(name, dtype, "UB", buffer=self.impl.tensor(like).buffer))
        self.roots[name] = self.roots[like]
        return name

    def ub_bytes(self) -> Expr:
        """Exact UB bytes of the stage's buffers for a given tile (the formula the constraint checks)."""
        return sum((b.total for b in self.stage.buffers), sympy.Integer(0))

    def max_rows(self, budget: Expr) -> Expr:
        """The most tile rows whose buffers fit in ``budget`` bytes (from the linear upper bound)."""
        from af_core.tiling.spec import FloorDiv

        return FloorDiv(Max(0, budget - self.fixed_bytes), Max(1, self.row_bytes))


def assign_releases(stage: Stage, impl: ImplGraph) -> None:
    """Mark, on the last node touching each UB buffer, that the buffer can be freed."""
    last: dict[str, tuple[int, str]] = {}
    for i, node in enumerate(stage.nodes):
        if node.api_call is None:
            continue
        for name in (*node.inputs, *node.outputs):
            tensor = impl.tensors.get(name)
            if tensor is None or tensor.location != "UB":
                continue
            last[tensor.buffer] = (i, name)
    for _buffer, (i, name) in sorted(last.items()):
        stage.nodes[i].attrs.setdefault("release", []).append(name)
