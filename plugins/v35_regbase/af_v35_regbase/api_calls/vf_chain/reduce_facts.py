"""The reduces a vector function may end with, and how it moves their rows: the reduce kinds, the same-type
``Reg::Reduce`` forms the 3510 takes, the instructions each kind issues, and whether group rows start and
result rows start on 32-byte blocks (:func:`starts_aligned`, :func:`stores_aligned`).

Three sides read these facts -- the legality of a fused reduce (:func:`legality.reduce_rejection`), the
padding a launch claims (:meth:`api_call.VfChainRegApiCall.read_past_tiles`) and the reduce's code
(:mod:`reduce_text`, the loads of :mod:`moves`) -- and they depend on no register form, so they sit apart
from all three.
"""

from __future__ import annotations

import sympy

from af_core.template_api import ChainReduce, Expr
from af_core.template_api import dtypes as dt

#: Reduce kinds a vector function computes.
REDUCE_KINDS = ("Sum", "Mean", "Max", "Min")
#: Bytes past a tile's last 32-byte block that an unaligned reduce may read: ``LoadUnAlign`` at an address in
#: block ``b`` reads blocks ``b + 1 .. b + 8``, and the last load of a group row starts in the tile's last
#: block at most (tile rows are whole blocks).
UNALIGNED_READ_PAST = 256
#: ``UnalignRegForLoad`` registers a function may declare (the compiler's limit, official page of the type).
UNALIGN_REGS = 4


def starts_aligned(reduce: ChainReduce, dtype: dt.DType) -> bool:
    """Whether every group row (kept inner width) or group (innermost axis) of a reduce is known to start on
    a 32-byte block -- loaded with ``LoadAlign`` -- rather than possibly not -- loaded with ``LoadUnAlign``
    after a ``LoadUnAlignPre``. Tile rows start on blocks; within one, a group row starts every ``inner``
    elements, a group every ``group`` elements (one group per tile row: always at its start)."""
    rows, group, inner = (sympy.sympify(getattr(reduce, k)) for k in ("rows", "group", "inner"))
    per_block = 32 // dt.get(dtype).itemsize
    if inner == 1:
        return bool(rows == 1 or sympy.Mod(group, per_block) == 0)
    return bool(sympy.Mod(inner, per_block) == 0)


def stores_aligned(rows: Expr, inner: Expr, dtype: dt.DType) -> bool:
    """Whether every result row of a reduce over a kept inner width is known to start on a 32-byte block,
    where :func:`reduce_text.reduce_text` stores it with ``StoreAlign``
    (``dst0 + t * dst_pitch + a * inner``): tile rows start on blocks, so one row a tile row, or rows of
    whole blocks. ``Reg::StoreAlign`` takes 32-byte aligned addresses only (the twin stops with
    ``ub-misaligned`` otherwise); the reduce of other rows stays the memory-based ``ReduceRegApiCall``."""
    rows, inner = sympy.sympify(rows), sympy.sympify(inner)
    return bool(rows == 1 or sympy.Mod(inner, 32 // dtype.itemsize) == 0)


_REDUCE_PARAMS = ("tiles", "rows", "group", "inner", "src_pitch", "dst_pitch")
_REDUCE_TYPE = {"Sum": "SUM", "Mean": "SUM", "Max": "MAX", "Min": "MIN"}
#: The same-type forms of ``Reg::Reduce`` the 3510 ReduceSumImpl / ReduceMaxImpl / ReduceMinImpl accept
#: (their static_asserts; MIN takes the MAX list), as far as the twin emulates them (no 64-bit registers).
REG_REDUCE = {
    "SUM": frozenset({"float16", "float32", "int32", "uint32"}),
    "MAX": frozenset({"int16", "uint16", "float16", "float32", "int32", "uint32"}),
}


def reduce_apis(kind: str, horizontal: bool = False) -> tuple[str, ...]:
    """The register instructions (other than loads, stores and ``Reg::Reduce``) a reduce of ``kind``
    issues (:func:`reduce_text.reduce_steps`, :func:`reduce_text.horizontal_steps`)."""
    fold = ("Adds", "Add") if kind in ("Sum", "Mean") else (kind,)
    return (*fold, *(("Select",) if horizontal else ()), *(("Muls",) if kind == "Mean" else ()))
