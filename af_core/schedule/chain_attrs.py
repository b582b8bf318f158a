"""The typed attributes of a :attr:`~af_core.backend.Role.VECTOR_CHAIN` node: its steps and its reduce.

:meth:`af_core.schedule.rowtiles.TileBuilder.fuse_chains` writes them, the chain back end reads them.
They were dicts, so a back end that misspelt a key (or a scheduler that dropped one) failed deep in code
generation, or read ``None`` from ``.get`` and generated something else. As attrs classes, a missing or
unknown field is an error where the node is made, and the back end reads attributes mypy checks.

An optional field left at ``None`` is omitted from the ImplGraph's JSON dump
(:meth:`af_core.schedule.impl_graph.ImplGraph.to_json`), as the dicts omitted the key.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from af_core.ir.sizes import Size


def _names(tiles: Iterable[str]) -> tuple[str, ...]:
    return tuple(tiles)


@attrs.frozen
class ChainStep:
    """One elementwise op of the chain, in run order."""

    #: the graph node the step computes (its ImplNode stays, ``fused_into`` the chain)
    name: str
    #: the op type (``Add``, ``Cast``, ``Where`` ...)
    op: str
    #: the tiles it reads: chain inputs or earlier steps' outputs
    inputs: tuple[str, ...] = attrs.field(converter=_names)
    #: the tile it makes
    output: str
    #: a scalar operand (``Adds``' value), when the op has one
    value: float | int | None = None
    #: the tile whose storage the output reuses (computed in place), if any
    inplace: str | None = None


@attrs.frozen
class ChainReduce:
    """The reduce that ends the chain: the reduce node's view of each tile and where it reads and writes.

    A tile holds ``tiles`` rows; each row is ``rows`` groups of ``group`` x ``inner`` values, reduced over
    ``group``; ``src_pitch`` / ``dst_pitch`` are the elements between rows of the input and result tiles.
    """

    kind: str
    rows: Size
    group: Size
    inner: Size
    tiles: Size
    src_pitch: Size
    dst_pitch: Size
    #: the reduce node (kept, ``fused_into`` the chain)
    name: str
    #: the tile it reduces (a step's output or a chain input)
    input: str
    #: the result tile
    output: str
