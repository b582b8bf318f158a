"""The cost model: counters a case predicts, and one combination that turns counters into cost.

Two separate parts, so each can be checked on its own:

1. **Counters** (:data:`COUNTERS`). Each case predicts, as named resource
   formulas of its tiling spec (shown by ``afc explain`` and in
   ``proto.json``), the counters the CPU twin measures when it runs the
   case: bytes DataCopy reads from GM, bytes written to GM, line fills of
   the per-core data cache, API calls, scalar GM accesses, the register
   instructions of vector functions with their cycles, and the two levels
   of the memory hierarchy: bytes between the shared L2 and the cores, and
   bytes HBM delivers to L2 or takes from it (L2 misses and write-backs).
   :func:`twin_counters` reads the same quantities from a twin report, so
   prediction and measurement compare name by name (the ``counters`` and
   ``l2`` benchmark sections do it on the whole corpus).
2. **Cost** (:func:`counted_cost`): the estimated time in picoseconds of
   :mod:`af_core.schedule.time_model`, a roofline over HBM, L2 and the
   cores' work plus the launch. The same function applied to the twin's
   counters is the *twin-estimated time* that benchmarks rank cases by, so
   the modelled cost and the measured one differ only by how well the
   counters are predicted. The time model's module docstring cites its
   constants or says that none is documented.

The byte constants below remain for the formulas that build counters:

- :data:`LINE_BYTES` (128): a data-cache line fill moves one 128-byte line
  (the line size of the A5 SIMT data cache and of L2, the twin's models).
- :data:`SECTOR_BYTES` (32): the bytes :func:`modelled_cost` charges a
  scattered access, for templates that predict no counters.

The host tiling evaluates the same formulas; lower cost is better.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import sympy

from af_core.ir.sizes import Expr
from af_core.schedule.time_model import DEFAULT_CONSTANTS, TimeConstants, estimate
from af_core.tiling.spec import CORE_NUM, CeilDiv, FloorDiv, Min, TilingSpec

LINE_BYTES = 128
#: Bytes per scattered access in :func:`modelled_cost`.
SECTOR_BYTES = 32


@attrs.frozen
class Counter:
    """One counter of the contract: the resource name a case predicts it under, and how the twin counts it."""

    name: str
    twin: str
    about: str


COUNTERS: tuple[Counter, ...] = (
    Counter(
        "read_bytes", "gm_read_bytes", "bytes DataCopy / DataCopyPad move GM -> UB (workspaces included)"
    ),
    Counter(
        "write_bytes",
        "max(gm_write_bytes, 128 x cachelines_written)",
        "bytes written to GM, at line granularity (DataCopy stores, or lane stores counted by lines)",
    ),
    Counter("line_fills", "dcache_misses", "128-byte line fills of the per-core data cache (SIMT, GetValue)"),
    Counter(
        "api_calls",
        "vector_calls + datacopy_calls + vf_calls",
        "vector and DataCopy API calls and vector-function launches, all cores",
    ),
    Counter(
        "scalar_accesses", "scalar_gm_reads + scalar_gm_writes", "scalar and SIMT-lane GM reads and writes"
    ),
    Counter(
        "reg_instructions",
        "reg_loads + reg_stores + reg_compute + reg_masks",
        "register instructions of vector functions (loads, stores, computing, mask), all cores",
    ),
    Counter(
        "reg_cycles",
        "reg_cycles",
        "single-issue cycles of those instructions from the back end's documented throughput, all cores",
    ),
    Counter(
        "l2_core_bytes",
        "l2_read_bytes",
        "bytes the cores read from the shared L2: read_bytes + 128 x line_fills",
    ),
    Counter(
        "hbm_bytes",
        "hbm_read_bytes + hbm_write_bytes",
        "bytes between HBM and L2: L2 misses and write-backs (the distinct lines read, and the output)",
    ),
)
COUNTER_NAMES: tuple[str, ...] = tuple(c.name for c in COUNTERS)


def twin_counters(report: Mapping[str, int]) -> dict[str, int]:
    """The contract's counters from a twin report (``WriteReportJson`` keys).

    The L2 counters: when the twin's L2 log passed its bound (``l2_modelled`` 0; a few huge lane
    gathers), HBM bytes are not counted and stand at the bound with no reuse between cores (every line
    the cores read, and the writes); a report without L2 keys (an older twin) reads the same way.
    """
    read = int(report["gm_read_bytes"])
    write = max(int(report["gm_write_bytes"]), LINE_BYTES * int(report["cachelines_written"]))
    fills = int(report["dcache_misses"])
    l2_core = int(report.get("l2_read_bytes", read + LINE_BYTES * fills))
    if report.get("l2_modelled"):
        hbm = int(report["hbm_read_bytes"]) + int(report["hbm_write_bytes"])
    else:
        hbm = hbm_without_reuse(l2_core, write)
    return {
        "read_bytes": read,
        "write_bytes": write,
        "line_fills": fills,
        # a register vector function is one issued call, as a case predicts a fused run (one node)
        "api_calls": int(report.get("vector_calls", 0))
        + int(report.get("datacopy_calls", 0))
        + int(report.get("vf_calls", 0)),
        "scalar_accesses": int(report.get("scalar_gm_reads", 0)) + int(report.get("scalar_gm_writes", 0)),
        "reg_instructions": sum(
            int(report.get(k, 0)) for k in ("reg_loads", "reg_stores", "reg_compute", "reg_masks")
        ),
        "reg_cycles": int(report.get("reg_cycles", 0)),
        "l2_core_bytes": l2_core,
        "hbm_bytes": hbm,
    }


def hbm_without_reuse(l2_core_bytes: Any, write_bytes: Any) -> Any:
    """HBM bytes when no line is shared between cores: every line a core reads comes from HBM, and the
    writes go back (a case that predicts no HBM bytes, and a twin run whose L2 was not modelled)."""
    return l2_core_bytes + write_bytes


def twin_cores(report: Mapping[str, int]) -> int:
    """The cores a twin run used (its block_dim)."""
    return max(1, int(report.get("block_dim", 1)))


def counted_cost(
    counters: Mapping[str, Any],
    cores: Any,
    serialized: bool = False,
    constants: TimeConstants = DEFAULT_CONSTANTS,
) -> Any:
    """Cost from the counters on ``cores`` cores: the estimated time in picoseconds (symbolic formulas or
    measured integers alike)."""
    return estimate(counters, cores, serialized, constants).total


@attrs.frozen
class CounterModel:
    """A case's predicted counters; :meth:`apply` records them on a tiling spec with the cost they give.

    Each field is a formula over the case's sizes and tiling fields (an int
    for a constant), predicting the twin counter of the same name in
    :data:`COUNTERS` for one launch on all cores. The register counters
    depend on the code the back end writes, so a template takes them from
    its ApiCalls (:meth:`~af_core.codegen.api_call.ApiCall.predicted_counters`,
    summed over a row-tile stage's tiles by
    :meth:`~af_core.schedule.rowtiles.TileBuilder.call_counters`); a case
    without vector functions leaves them 0.
    """

    read_bytes: Expr = 0
    write_bytes: Expr = 0
    line_fills: Expr = 0
    api_calls: Expr = 0
    scalar_accesses: Expr = 0
    reg_instructions: Expr = 0
    reg_cycles: Expr = 0
    #: None: every line the cores read comes from HBM once per core (no reuse across cores), plus the
    #: writes; a gather whose rows repeat across cores predicts its distinct lines instead.
    hbm_bytes: Expr | None = None

    def resources(self) -> dict[str, Expr]:
        """The counters as resource formulas, keyed by counter name (``l2_core_bytes`` derived)."""
        out = {
            name: sympy.sympify(getattr(self, name))
            for name in COUNTER_NAMES
            if name not in ("l2_core_bytes", "hbm_bytes")
        }
        out["l2_core_bytes"] = out["read_bytes"] + LINE_BYTES * out["line_fills"]
        out["hbm_bytes"] = (
            hbm_without_reuse(out["l2_core_bytes"], out["write_bytes"])
            if self.hbm_bytes is None
            else sympy.sympify(self.hbm_bytes)
        )
        return out

    def cost(self, cores: Expr, serialized: bool = False) -> Expr:
        """The modelled cost: :func:`counted_cost` of these counters on ``cores`` cores."""
        return sympy.sympify(counted_cost(self.resources(), cores, serialized))

    def apply(self, spec: TilingSpec, serialized: bool = False) -> None:
        """Add the counters to ``spec.resources`` and set ``spec.cost`` (and ``spec.serialized``) from
        them, on the cores ``spec.block_dim`` says (set it first)."""
        spec.resources.update(self.resources())
        spec.serialized = serialized
        spec.cost = self.cost(spec.block_dim, serialized)


def storage_bytes(sizes: Sequence[Expr], strides: Sequence[Expr], itemsize: int) -> Expr:
    """Bytes a tensor view spans in GM: one element plus (size - 1) x stride per axis (broadcast axes,
    stride 0, add nothing), so a tensor broadcast to a large shape counts its stored bytes once."""
    span = sympy.Integer(1)
    for size, stride in zip(sizes, strides):
        span = span + (sympy.sympify(size) - 1) * sympy.sympify(stride)
    return span * itemsize


def gcd_with_line(stride_bytes: Expr, at_least: int = 1) -> Expr:
    """gcd(stride, 128) as a formula (a power of two), for a stride that is a multiple of ``at_least``.

    Rows ``stride`` bytes apart start at offsets that are multiples of this
    within a line; a constant when the stride is.
    """
    stride_bytes = sympy.sympify(stride_bytes)
    if stride_bytes.is_Integer:
        return sympy.Integer(max(at_least, math.gcd(int(stride_bytes), LINE_BYTES)))
    g = sympy.Integer(at_least)
    step = at_least
    while step < LINE_BYTES:
        multiple = 1 - Min(1, stride_bytes - 2 * step * FloorDiv(stride_bytes, 2 * step))
        g = g + step * multiple
        step *= 2
    return g


def run_line_bytes(run_bytes: Expr, stride_bytes: Expr | None = None, itemsize: int = 1) -> Expr:
    """Line bytes (128 per line, on average) a ``run_bytes`` contiguous run touches when runs start
    ``stride_bytes`` apart.

    A run at offset ``o`` within its first line touches ``ceil((run + o) / 128)``
    lines. Runs start at a row (``stride`` bytes apart) plus a whole number
    of runs into it, so ``o`` is a multiple of ``g = gcd(stride, run, 128)``;
    over those offsets the lines average ``(run + 128 - g) / 128``, i.e.
    ``run + 128 - g`` bytes. Without a stride, ``g`` is the item size (any
    element offset).
    """
    if stride_bytes is None:
        return run_bytes + LINE_BYTES - itemsize
    by_run = gcd_with_line(run_bytes, itemsize)
    if by_run == itemsize or sympy.sympify(stride_bytes) == sympy.sympify(run_bytes):
        g = by_run  # the run alone already fixes the granularity (an element run, or a whole row)
    else:
        by_stride = gcd_with_line(stride_bytes, itemsize)
        g = (
            Min(by_run, by_stride)
            if not (by_run.is_Integer and by_stride.is_Integer)
            else min(by_run, by_stride)
        )
    return run_bytes + LINE_BYTES - g


def gather_read_bytes(
    index_values: Expr,
    run_bytes: Expr,
    rows: Expr | None = None,
    slice_bytes: Expr | None = None,
    cores: Expr = 1,
    cache_bytes: int | None = None,
    stride_bytes: Expr | None = None,
    itemsize: int = 1,
) -> Expr:
    """Bytes a cache-line-based gather fills when ``cores`` cores split ``index_values`` reads evenly.

    Per index value, the lines of its contiguous run (``run_bytes``; at the
    offsets rows ``stride_bytes`` apart can start at, :func:`run_line_bytes`;
    without a stride, half a line of misalignment on average). When the input
    slices a core's values can point into (its share of ``rows`` outer rows of
    ``slice_bytes`` each, at least one) fit its data cache of
    ``cache_bytes``, a line it fetched once serves every later value in it, so
    the core reads at most those slices; when they do not fit, random reads
    evict each other and every value pays for its lines. The data caches are
    per core: two cores reading one line both pay for it. Index values are
    assumed uniform: repeats (a skewed distribution) that the cache serves are
    not seen, so skewed workloads fill fewer lines than this predicts.
    """
    if stride_bytes is None:
        per_value = LINE_BYTES * CeilDiv(run_bytes, LINE_BYTES) + LINE_BYTES // 2
    else:
        per_value = run_line_bytes(run_bytes, stride_bytes, itemsize)
    if rows is None or slice_bytes is None or cache_bytes is None:
        return index_values * per_value
    per_core = CeilDiv(index_values, cores) * per_value
    footprint = CeilDiv(rows, cores) * LINE_BYTES * (CeilDiv(slice_bytes, LINE_BYTES) + 1)
    fits = Min(1, FloorDiv(cache_bytes, footprint))  # 1 when the footprint fits the cache, else 0
    return cores * (per_core - fits * (per_core - Min(per_core, footprint)))


def modelled_cost(
    gm_bytes: Expr,
    *,
    scattered: Expr = 0,
    api_calls: Expr = 0,
    serialized: bool = False,
    cores: Expr = CORE_NUM,
) -> Expr:
    """The estimated time of a case that predicts only its GM bytes, scattered accesses (a 32-byte sector
    each) and API calls: every byte through L2 from HBM once, the calls spread over ``cores`` (pass the
    case's ``block_dim``). A ``serialized`` case sets ``spec.serialized`` too, which the benchmarks and
    ``afc explain`` read.

    Kept for templates that do not predict counters; :class:`CounterModel` is
    the contract the built-in templates follow.
    """
    moved = sympy.sympify(gm_bytes) + SECTOR_BYTES * sympy.sympify(scattered)
    counters = {name: sympy.Integer(0) for name in COUNTER_NAMES}
    counters.update(
        read_bytes=moved, l2_core_bytes=moved, hbm_bytes=moved, api_calls=sympy.sympify(api_calls)
    )
    return sympy.sympify(counted_cost(counters, cores, serialized))
