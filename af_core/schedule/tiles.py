"""UB tiles of a stage: buffers, byte formulas, in-place aliases and release points.

Templates describe their per-tile data as tiles of ``rows x pitch`` elements
(pitch * itemsize a multiple of 32, so rows start on UB blocks). A tile's
buffer is a whole number of 256-byte vector repeats: some vector APIs act
only on whole repeats (on SoC 3510, Compare and Compares assert
``count * sizeof(T) % 256 == 0``), so a back end may round a tile's count
up to whole repeats and still stay inside the buffer. A
:class:`TilePlan` turns that into ImplGraph buffers (queues for data that
crosses MTE2 -> V or V -> MTE3, TBufs for vector scratch), keeps the UB
formula, and after the nodes are known computes where each buffer can be
freed (:meth:`assign_releases`), which codegen turns into ``FreeTensor``.
"""

from __future__ import annotations

import attrs
import sympy

from af_core import dtypes as dt
from af_core.errors import Unsupported
from af_core.ir.sizes import Expr
from af_core.schedule.impl_graph import EVENT_IDS, Buffer, ImplAxis, ImplGraph, ImplTensor, Stage, Storage
from af_core.tiling.conditions import substitute
from af_core.tiling.spec import CORE_NUM, AlignUp, CeilDiv, Max, Min, TilingSpec, field

#: A tile buffer is a whole number of vector repeats (see the module docstring).
REPEAT_BYTES = 256


def pitch_for(width: Expr, dtypes: list[dt.DType]) -> Expr:
    """Elements per tile row so that a row of every given dtype fills whole 32-byte blocks."""
    smallest = min(d.itemsize if not d.is_bool else 1 for d in dtypes)
    return AlignUp(width, 32 // smallest)


@attrs.frozen
class RowTiles:
    """A stage whose rows are cut into tiles spread over the cores: its five tiling fields and five axes.

    The fields (each name after ``prefix``, e.g. ``"gather_"``)::

        tile_max        most rows one tile can hold (the template's UB fit)
        tile            max(1, min(tile_max, ceil(rows / core_num)))   rows per tile
        tiles           ceil(rows / tile)
        tiles_per_core  ceil(tiles / core_num)
        used_cores      ceil(tiles / tiles_per_core)                   the stage's ``used_cores``

    so a tile is as large as UB allows but small enough that every core gets
    one when there are rows for all. The axes: ``merged`` (the rows, merged
    from the graph's axes before the gathered dim), the loop ``<axis>T`` over
    tiles with ``<axis>t`` the rows of a tile, and ``<axis>TB`` / ``<axis>Tb``
    splitting the tiles into the cores and the tiles of one core. Each symbol
    is the tiling field's (:func:`af_core.tiling.spec.field`).
    """

    rows: Expr  # the stage's rows (a tiling field symbol)
    merged: str  # name of the merged row axis
    axis: str  # prefix of the loop axes: <axis>T, <axis>t, <axis>TB, <axis>Tb
    prefix: str = ""  # prefix of the five tiling field names

    @property
    def tile(self) -> sympy.Symbol:
        return field(f"{self.prefix}tile")

    @property
    def tiles(self) -> sympy.Symbol:
        return field(f"{self.prefix}tiles")

    @property
    def tiles_per_core(self) -> sympy.Symbol:
        return field(f"{self.prefix}tiles_per_core")

    @property
    def used_cores(self) -> sympy.Symbol:
        return field(f"{self.prefix}used_cores")

    @property
    def loop(self) -> str:
        """The tile loop's axis (the one a :class:`~af_core.schedule.rowtiles.TileBuilder` runs)."""
        return f"{self.axis}T"

    def over_tiles(self, per_tile: Expr, actual: sympy.Symbol) -> Expr:
        """The sum of ``per_tile`` (a formula of the tile's row count ``actual``) over every tile of the
        stage, all cores: ``tiles - 1`` full tiles of ``tile`` rows and a last one with the rest, as the
        kernel's loop computes ``actual = min(tile, rows - start)``."""
        per_tile = sympy.sympify(per_tile)
        if actual not in per_tile.free_symbols:
            return self.tiles * per_tile
        last = self.rows - (self.tiles - 1) * self.tile
        return (self.tiles - 1) * substitute(per_tile, {actual: self.tile}) + substitute(
            per_tile, {actual: last}
        )

    def axes(self, merged_from: tuple[str, ...]) -> list[ImplAxis]:
        """The five axes, in loop order; ``merged_from`` names the graph axes the rows merge."""
        return [
            ImplAxis(self.merged, "MERGED", self.rows, merged_from),
            ImplAxis(self.loop, "TILE_OUT", self.tiles, (self.merged,)),
            ImplAxis(f"{self.axis}t", "TILE_IN", self.tile, (self.merged,)),
            ImplAxis(f"{self.loop}B", "BLOCK_OUT", self.used_cores, (self.loop,)),
            ImplAxis(f"{self.loop}b", "BLOCK_IN", self.tiles_per_core, (self.loop,)),
        ]

    def add_fields(
        self,
        spec: TilingSpec,
        fit: Expr,
        fit_doc: str,
        *,
        unit: str = "rows",
        used_doc: str = "cores with work",
        at_least: Expr = 1,
    ) -> sympy.Symbol:
        """Append the five fields to ``spec`` (``fit`` is ``tile_max``); returns the ``tile_max`` symbol.

        ``at_least``: rows a tile should hold even when that leaves cores idle (a template's minimum work
        per core); ``tile_max`` still caps it: ``tile = max(1, min(tile_max, max(at_least, ceil(rows /
        core_num))))``.
        """
        p = self.prefix
        tile_max = spec.add(f"{p}tile_max", fit, fit_doc)
        share = CeilDiv(self.rows, CORE_NUM)
        if sympy.sympify(at_least) != 1:
            share = Max(at_least, share)
        spec.add(f"{p}tile", Max(1, Min(tile_max, share)), f"{unit} per tile")
        spec.add(f"{p}tiles", CeilDiv(self.rows, self.tile), "tiles")
        spec.add(f"{p}tiles_per_core", CeilDiv(self.tiles, CORE_NUM), "tiles per core")
        spec.add(f"{p}used_cores", CeilDiv(self.tiles, self.tiles_per_core), used_doc)
        return tile_max


@attrs.define
class TilePlan:
    """The UB buffers of one stage whose tiles hold ``rows`` rows (a tiling field symbol) each."""

    impl: ImplGraph
    stage: Stage
    rows: Expr  # tile rows (a tiling field symbol)
    roots: dict[str, str] = attrs.Factory(dict)
    row_bytes: Expr = sympy.Integer(0)  # UB bytes per tile row (upper bound, linear)
    fixed_bytes: Expr = sympy.Integer(0)  # UB bytes independent of the tile rows (upper bound)
    padded: dict[str, int] = attrs.Factory(dict)  # buffer -> bytes added past its tile (pad)

    def tile(
        self,
        name: str,
        dtype: dt.DType,
        pitch: Expr,
        *,
        position: str = "VECCALC",
        que: bool = False,
        num: int = 1,
        extra_bytes: Expr = 0,
        rows: Expr | None = None,
    ) -> str:
        count = (self.rows if rows is None else rows) * pitch
        size = AlignUp(count * dtype.itemsize + extra_bytes, REPEAT_BYTES)
        if que and self.queue_buffers(position) + num > EVENT_IDS:
            # past the TPipe's event ids: a single TBuf, whose flags codegen places (POSITION_PIPES)
            que, num = False, 1
        self.stage.buffers.append(Buffer(name, "que" if que else "tbuf", position, size, num))
        if rows is None:
            self.row_bytes += pitch * dtype.itemsize * num
            self.fixed_bytes += (sympy.sympify(extra_bytes) + REPEAT_BYTES) * num
        else:
            self.fixed_bytes += (count * dtype.itemsize + sympy.sympify(extra_bytes) + REPEAT_BYTES) * num
        self.impl.add_tensor(ImplTensor(name, dtype, Storage.UB, buffer=name))
        self.roots[name] = name
        return name

    def queue_buffers(self, position: str) -> int:
        """The buffers of this stage's queues at ``position``."""
        return sum(b.num for b in self.stage.buffers if b.kind == "que" and b.position == position)

    def pad(self, tensor: str, extra_bytes: int) -> None:
        """Make the buffer holding the UB tensor ``tensor`` at least ``extra_bytes`` (in whole 32-byte
        blocks) longer than its tile, for a call that may read that far past the tile's last row; a buffer
        padded before keeps the larger padding. The buffer must be one of this stage's."""
        name = self.impl.tensor(tensor).buffer
        want = -(-int(extra_bytes) // 32) * 32
        for i, buffer in enumerate(self.stage.buffers):
            if buffer.name != name:
                continue
            grow = want - self.padded.get(name, 0)
            if grow > 0:
                self.stage.buffers[i] = attrs.evolve(buffer, bytes=buffer.bytes + grow)
                self.fixed_bytes += grow * buffer.num
                self.padded[name] = want
            return
        raise Unsupported(
            f"tile '{tensor}' must be padded by {want} bytes but its buffer {name!r} is not one of stage "
            f"'{self.stage.name}'"
        )

    def mask(self, name: str, pitch: Expr) -> str:
        """A bit mask over a tile (Compare/Select): one bit per element.

        32-byte blocks suffice for a count rounded to whole repeats: pitch is a multiple of 8, so
        ``AlignUp(rows * pitch, 256 / itemsize) / 8 <= AlignUp(rows * pitch / 8, 32)``.
        """
        size = AlignUp(self.rows * CeilDiv(pitch, 8), 32)
        self.stage.buffers.append(Buffer(name, "tbuf", "VECCALC", size))
        self.row_bytes += CeilDiv(pitch, 8)
        self.fixed_bytes += 32
        self.impl.add_tensor(ImplTensor(name, dt.uint8, Storage.UB, buffer=name))
        self.roots[name] = name
        return name

    def fixed(self, name: str, dtype: dt.DType, elements: Expr, *, position: str = "VECCALC") -> str:
        """A scratch buffer that does not scale with the tile rows."""
        size = AlignUp(elements * dtype.itemsize, 32)
        self.stage.buffers.append(Buffer(name, "tbuf", position, size))
        self.fixed_bytes += elements * dtype.itemsize + 32
        self.impl.add_tensor(ImplTensor(name, dtype, Storage.UB, buffer=name))
        self.roots[name] = name
        return name

    def alias(self, name: str, like: str, dtype: dt.DType) -> str:
        """A tensor stored in place of ``like`` (same buffer)."""
        self.impl.add_tensor(ImplTensor(name, dtype, Storage.UB, buffer=self.impl.tensor(like).buffer))
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
            if tensor is None or tensor.location != Storage.UB or tensor.buffer is None:
                continue  # (a UB tensor without a buffer is reported by codegen, which needs one)
            last[tensor.buffer] = (i, name)
    for _buffer, (i, name) in sorted(last.items()):
        stage.nodes[i].attrs.setdefault("release", []).append(name)
