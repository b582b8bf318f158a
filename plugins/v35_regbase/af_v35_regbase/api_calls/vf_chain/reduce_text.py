"""The text of a function whose run a reduce ends: the loops over tiles, group rows (or a group's vectors)
and vectors around the run's body, the accumulator started and folded in the memory path's order
(:func:`reduce_steps`, :func:`horizontal_steps`), its result stored -- and how often each loop runs
(:func:`loop_counts`), which the cost model multiplies the calls of each loop by (:func:`reduce_parts`).

Every register call of this text comes from a recorded list: the run's body and loads are the function's
lists of calls, rendered from the lists :func:`reduce_parts` reads, and each call around them is written by a
:class:`_Writer`, which records it with its loop as it writes its line. So the calls the cost model counts
are the ones the text holds by construction, and a list entry that is not a call is refused, naming the
node. The reduce text is kept apart from the loop of :meth:`function._Function.text` because its loops, masks and
stores are its own.
"""

from __future__ import annotations

import sympy

from af_core.template_api import CeilDiv, ChainReduce, Expr, FloorDiv
from af_core.template_api import dtypes as dt
from af_v35_regbase.api_calls.vf_chain.function import RegCall, _Function
from af_v35_regbase.api_calls.vf_chain.reduce_facts import _REDUCE_TYPE
from af_v35_regbase.reg_cost import MASK, STORE, RegInstr


class _Writer:
    """The text of a reduce function, piece by piece: a line of register calls is written by :meth:`calls`,
    which records them in the function's placed calls with the loop the line runs in -- the only way a
    call of the reduce text outside the per-vector body gets written."""

    def __init__(self, fn: _Function) -> None:
        self.fn = fn
        self.parts: list[str] = []

    def code(self, text: str) -> None:
        """Write ``text`` (C++ other than register calls, or already recorded calls' lines) as it is."""
        self.parts.append(text)

    def calls(self, loop: str, indent: str, *calls: RegCall) -> None:
        """Write ``calls`` on one line after ``indent``, each recorded as run once per iteration of ``loop``
        (a key of :func:`loop_counts`)."""
        lines = self.fn.lines(calls, "reduce function")
        self.fn.placed += [(loop, call) for call in calls]
        self.parts.append(indent + " ".join(lines) + "\n")

    def text(self) -> str:
        """Everything written, in order."""
        return "".join(self.parts)


def _reduce_body(fn: _Function, whole: str, indent: str) -> str:
    """The loads (contiguous when ``whole``, the C++ condition that the step's vector is all data, else
    block-masked) and the steps of one vector of a reduce."""
    what = "reduce function"
    loads = (
        [f"if ({whole}) {{"]
        + [f"    {line}" for line in fn.lines(fn.full_loads, what)]
        + ["} else {"]
        + [f"    {line}" for line in fn.lines(fn.tail_loads, what)]
        + ["}"]
        if fn.full_loads
        else []
    )
    lines = [*loads, *fn.lines(fn.unaligned_loads, what), *fn.lines(fn.body, what)]
    return "\n".join(f"{indent}{line}" for line in lines)


def _ureg_declarations(fn: _Function) -> str:
    """The ``UnalignRegForLoad`` registers of an unaligned reduce's loads."""
    return "".join(f"    AscendC::Reg::UnalignRegForLoad {u};\n" for u in fn.uregs)


def reduce_text(fn: _Function, reduce: ChainReduce) -> str:
    """The function body of a run ending in a reduce over a kept inner width (:func:`reduce_steps`)."""
    kind = reduce.kind
    dtype = fn.source.dtype_of(reduce.output)
    value = fn.regs[reduce.input]
    acc = fn.reg(dtype)
    start, fold_in = _reduce_calls(kind, dtype, acc, value)
    lanes = fn.lanes
    inner = _reduce_body(fn, f"(c + 1u) * {fn.lanes}u <= inner", " " * 16)
    out = _Writer(fn)
    out.code(
        "{\n"
        + fn.declarations()
        + _ureg_declarations(fn)
        + f"    const uint32_t chunks = (inner + {lanes - 1}u) / {lanes}u;\n"
        + "    for (uint32_t t = 0; t < tiles; ++t) {\n"
        + "    for (uint32_t a = 0; a < rows; ++a) {\n"
        + "        uint32_t left = inner;\n"
        + "        for (uint32_t c = 0; c < chunks; ++c) {\n"
    )
    out.calls("chunk", " " * 12, _update_mask(fn, "mask", "left"))
    out.code(
        "            for (uint32_t g = 0; g < group; ++g) {\n"
        + f"                const uint32_t o = t * src_pitch + (a * group + g) * inner + c * {lanes}u;\n"
        + inner
        + "\n                if (g == 0) {\n"
    )
    out.calls("first", " " * 20, start)
    out.code("                } else {\n")
    out.calls("fold", " " * 20, fold_in)
    out.code("                }\n" + "            }\n")
    if kind == "Mean":
        out.calls("chunk", " " * 12, RegCall("Muls", dtype.name, (acc, acc, "scale", "mask")))
    at = f"dst0 + t * dst_pitch + a * inner + c * {lanes}u"
    out.calls("chunk", " " * 12, RegCall("StoreAlign", dtype.name, (at, acc, "mask"), kind=STORE))
    out.code("        }\n" + "    }\n" + "    }\n" + "}\n")
    return out.text()


def horizontal_text(fn: _Function, reduce: ChainReduce) -> str:
    """The function body of a run ending in a reduce over the innermost axis (:func:`horizontal_steps`)."""
    kind = reduce.kind
    dtype = fn.source.dtype_of(reduce.output)
    value = fn.regs[reduce.input]
    acc, tmp, res = fn.reg(dtype), fn.reg(dtype), fn.reg(dtype)
    start, fold_in = _horizontal_calls(kind, dtype, acc, tmp, value)
    lanes = fn.lanes
    inner = _reduce_body(fn, f"(c + 1u) * {fn.lanes}u <= group", " " * 12)
    out = _Writer(fn)
    out.code("{\n" + fn.declarations("full") + _ureg_declarations(fn))
    one = RegCall(
        "CreateMask",
        fn.mask_dtype,
        (),
        f"{fn.mask_type}, AscendC::Reg::MaskPattern::VL1",
        kind=MASK,
        result="AscendC::Reg::MaskReg one",
    )
    out.calls("launch", " " * 4, one)
    out.code(
        f"    const uint32_t chunks = (group + {lanes - 1}u) / {lanes}u;\n"
        + "    for (uint32_t t = 0; t < tiles; ++t) {\n"
        + "    for (uint32_t a = 0; a < rows; ++a) {\n"
        + "        uint32_t head = group;\n"
    )
    out.calls("row", " " * 8, _update_mask(fn, "full", "head"))
    for pre in fn.row_pres:
        out.calls("row", " " * 8, pre)
    out.code("        uint32_t left = group;\n" + "        for (uint32_t c = 0; c < chunks; ++c) {\n")
    out.calls("chunk", " " * 12, _update_mask(fn, "mask", "left"))
    out.code(
        f"            const uint32_t o = t * src_pitch + a * group + c * {lanes}u;\n"
        + inner
        + "\n            if (c == 0) {\n"
    )
    out.calls("first", " " * 16, start)
    out.code("            } else {\n")
    out.calls("fold", " " * 16, *fold_in)
    out.code("            }\n" + "        }\n")
    reducer = f"AscendC::Reg::ReduceType::{_REDUCE_TYPE[kind]}"
    out.calls("row", " " * 8, RegCall("Reduce", dtype.name, (res, acc, "full"), reducer))
    if kind == "Mean":
        out.calls("row", " " * 8, RegCall("Muls", dtype.name, (res, res, "scale", "one")))
    first = f"{dtype.cpp}, AscendC::Reg::StoreDist::DIST_FIRST_ELEMENT_B{8 * dtype.itemsize}"
    store = RegCall(
        "StoreAlign", dtype.name, ("dst0 + t * dst_pitch + a", res, "one"), first, kind=STORE, elements=1
    )
    out.calls("row", " " * 8, store)
    out.code("    }\n" + "    }\n" + "}\n")
    return out.text()


def _update_mask(fn: _Function, mask: str, count: str) -> RegCall:
    """``mask = UpdateMask<T>(count)``: the mask of the next ``count`` elements of the function's step
    type."""
    return RegCall("UpdateMask", fn.mask_dtype, (count,), fn.mask_type, kind=MASK, result=mask)


def loop_counts(fn: _Function, reduce: ChainReduce) -> dict[str, Expr]:
    """How often each loop of the reduce function (:func:`reduce_text`, :func:`horizontal_text`) runs
    its body in one launch, over the launch's ``tiles`` x ``rows`` groups: ``vector`` (the run's
    instructions), ``full`` / ``tail`` (the loads of a whole vector of data / of a tail), ``first`` /
    ``fold`` (the accumulator started / folded), ``chunk`` (one vector's width), ``row`` (one group),
    ``launch``."""
    tiles, rows, group, inner = (
        sympy.sympify(getattr(reduce, k)) for k in ("tiles", "rows", "group", "inner")
    )
    groups = tiles * rows
    if inner == 1:  # lane-wise over the group's vectors, then Reduce
        chunks, full = CeilDiv(group, fn.lanes), FloorDiv(group, fn.lanes)
        return {
            "launch": sympy.Integer(1),
            "row": groups,
            "chunk": groups * chunks,
            "vector": groups * chunks,
            "full": groups * full,
            "tail": groups * (chunks - full),
            "first": groups,
            "fold": groups * (chunks - 1),
        }
    chunks, full = CeilDiv(inner, fn.lanes), FloorDiv(inner, fn.lanes)
    return {
        "launch": sympy.Integer(1),
        "chunk": groups * chunks,
        "vector": groups * chunks * group,
        "full": groups * full * group,
        "tail": groups * (chunks - full) * group,
        "first": groups * chunks,
        "fold": groups * chunks * (group - 1),
    }


def reduce_parts(fn: _Function) -> list[tuple[str, list[RegInstr]]]:
    """Every register instruction of a reduce function's text, by the loop it runs in."""
    parts = [
        ("vector", fn.instrs),
        ("full", [call.instr() for call in fn.full_loads]),
        ("tail", [call.instr() for call in fn.tail_loads]),
        ("vector", [call.instr() for call in fn.unaligned_loads]),
    ]
    loops = sorted({loop for loop, _ in fn.placed})
    return parts + [(loop, [call.instr() for where, call in fn.placed if where == loop]) for loop in loops]


# -- the accumulator -------------------------------------------------------------------------------
def horizontal_steps(kind: str, dtype: dt.DType, acc: str, tmp: str, value: str) -> tuple[str, str, str]:
    """(first, fold, reduce) of a reduce over the innermost axis, one group of ``group`` elements.

    The group is walked in vectors: vector 0 starts the accumulator (as in :func:`reduce_steps`), each
    later vector ``c`` is folded in lane by lane under its mask and a ``Select`` keeps the lanes past a
    tail, so lane ``j`` holds ``x[j] op x[j + L] op x[j + 2L] ...`` (``L`` lanes, left to right); then
    ``Reg::Reduce`` folds the lanes into lane 0. For Max / Min and integer sums the order does not change
    the result. A float sum is therefore summed in this order -- per lane along the group, then the
    binary tree the official Reduce page documents (lanes (0, 1), (2, 3), ... first) -- which is not the
    memory path's (a ``ReduceSum`` of the group, or a scalar fold when the group does not fill 32-byte
    blocks); the twin emulates exactly this order and the result stays within the contract's tolerance of
    the reference."""
    first, fold = _horizontal_calls(kind, dtype, acc, tmp, value)
    reducer = f"AscendC::Reg::Reduce<AscendC::Reg::ReduceType::{_REDUCE_TYPE[kind]}>"
    return first.text(), " ".join(c.text() for c in fold), reducer


def _horizontal_calls(
    kind: str, dtype: dt.DType, acc: str, tmp: str, value: str
) -> tuple[RegCall, tuple[RegCall, RegCall]]:
    """The calls of :func:`horizontal_steps`' first (:func:`reduce_steps`' first) and fold (the op into
    ``tmp``, then a Select of it into ``acc`` under the vector's mask)."""
    first, _fold = _reduce_calls(kind, dtype, acc, value)
    op = "Add" if kind in ("Sum", "Mean") else kind
    return first, (
        RegCall(op, dtype.name, (tmp, acc, value, "mask")),
        RegCall("Select", dtype.name, (acc, tmp, acc, "mask")),
    )


def reduce_steps(kind: str, dtype: dt.DType, acc: str, value: str) -> tuple[str, str]:
    """(first, fold): the instruction that starts the accumulator ``acc`` from the group's row 0 and the one
    that folds each later row into it.

    ``out[r, i] = x[r, 0, i] op x[r, 1, i] op ... op x[r, group - 1, i]``, left to right, each op the
    register Add / Max / Min of the tile's dtype -- the order and the per-element rules of the memory path's
    accumulate (``AfReduceRows`` with a kept inner width: DataCopy of row 0, then one Add / Max / Min per
    row), so both give the same bits. Row 0 is copied as ``x + (-0.0)`` for float sums (exact for every
    value, -0 and NaN included), ``x + 0`` for integer sums and ``max(x, x)`` / ``min(x, x)`` otherwise; a
    Mean then scales the sum by ``1 / group`` in float32, as the memory path's Muls does."""
    first, fold = _reduce_calls(kind, dtype, acc, value)
    return first.text(), fold.text()


def _reduce_calls(kind: str, dtype: dt.DType, acc: str, value: str) -> tuple[RegCall, RegCall]:
    """The calls of :func:`reduce_steps`' first and fold."""
    if kind in ("Sum", "Mean"):
        zero = "static_cast<float>(-0.0)" if dtype.is_float else f"static_cast<{dtype.cpp}>(0)"
        return (
            RegCall("Adds", dtype.name, (acc, value, zero, "mask")),
            RegCall("Add", dtype.name, (acc, acc, value, "mask")),
        )
    return RegCall(kind, dtype.name, (acc, value, value, "mask")), RegCall(
        kind, dtype.name, (acc, acc, value, "mask")
    )
