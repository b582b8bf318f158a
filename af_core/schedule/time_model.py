"""The time model: a case's estimated time, a roofline over the memory levels and the cores' work.

Why time and not bytes: with a shared L2, a row ten cores read costs one HBM read and ten L2 -> core
transfers, and neither is free; only a time puts the two levels, the cores' instructions and the fixed
overheads on one scale. The same function turns a case's predicted counters into its modelled time
(the ``cost`` the host tiling minimises) and the twin's counters into the *twin-estimated time*, so the
two differ only by how well the counters are predicted.

Estimated time, in integer picoseconds (the host tiling's int64 contract)::

    launch + max(hbm, l2, core)            double-buffered: copies overlap compute
    launch + max(hbm, l2) + core           single-buffered: they cannot

- ``hbm`` = HBM bytes (L2 misses and write-backs) / HBM bandwidth;
- ``l2`` = bytes between L2 and the cores (DataCopy and data-cache fills in, stores out) / L2 bandwidth;
- ``core`` = the busiest core's cycles / clock: register-instruction cycles (the back end's documented
  per-instruction throughput), API-call issue, SIMT-lane and scalar accesses, spread evenly over the
  cores the case uses;
- ``launch`` = the fixed cost of one kernel launch.

The constants (:class:`TimeConstants`) and where they come from:

- ``hbm_bytes_per_ns`` 1600 and ``l2_bytes_per_ns`` 7000: the asc-devkit guide's L2-cache page
  (``docs/zh/guide/算子实践参考/SIMD算子性能优化/内存访问/L2-Cache切分.md``) gives about 1.6 TB/s for GM
  and about 7 TB/s of mixed read/write bandwidth for L2.
- ``ps_per_cycle`` 1000: no document gives the AI core's clock; the 1 GHz of the Ascend 950 system cycle
  counter (``GetSystemCycle``) stands in for it, as in :mod:`af_core.schedule.cost`. An assumption.
- ``api_call_cycles`` 50: no document gives an API call's issue cost; the order of its scalar set-up
  (tens of cycles). An assumption.
- ``lane_accesses_per_cycle`` 32: no document gives the SIMT unit's access rate; one 32-lane warp
  instruction per cycle. An assumption.
- ``launch_ns`` 3000: no document gives a kernel launch's cost; a few microseconds. An assumption; it is
  the same for every case of one kernel, so it changes no pick, only fused-against-unfused and
  time-against-bound ratios.

BENCHMARKS.md ("Estimated time against the bound", its sensitivity table) shows how the corpus picks move
when each assumed constant is halved or doubled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import sympy

from af_core.tiling.spec import CeilDiv, Max

PS_PER_NS = 1000


@attrs.frozen
class TimeConstants:
    """The time model's constants; the defaults are the cited or assumed figures of the module docstring."""

    hbm_bytes_per_ns: int = 1600
    l2_bytes_per_ns: int = 7000
    ps_per_cycle: int = 1000
    api_call_cycles: int = 50
    lane_accesses_per_cycle: int = 32
    launch_ns: int = 3000

    def with_(self, **changes: int) -> TimeConstants:
        """A copy with some constants replaced (the sensitivity sweep)."""
        return attrs.evolve(self, **changes)


DEFAULT_CONSTANTS = TimeConstants()
#: The constants no document gives (the sensitivity sweep halves and doubles each).
ASSUMED = ("ps_per_cycle", "api_call_cycles", "lane_accesses_per_cycle", "launch_ns")
#: The terms of an estimate, in the order ``afc explain`` shows them.
TERMS = ("hbm", "l2", "core", "launch")


@attrs.frozen
class TimeEstimate:
    """The terms of one estimate and their combination, in picoseconds (formulas or integers alike)."""

    hbm: Any
    l2: Any
    core: Any
    launch: Any
    serialized: bool

    @property
    def total(self) -> Any:
        """``launch + max(hbm, l2, core)``, or ``launch + max(hbm, l2) + core`` when single-buffered."""
        if self.serialized:
            return self.launch + _max(self.hbm, self.l2) + self.core
        return self.launch + _max(self.hbm, self.l2, self.core)

    def bound_by(self) -> str:
        """The term that sets the time (for integers; the first of a tie)."""
        values = {"hbm": self.hbm, "l2": self.l2, "core": self.core}
        return max(values, key=lambda k: values[k])


def _max(*values: Any) -> Any:
    if all(isinstance(v, int) for v in values):
        return max(values)
    return Max(*values)


def _ceil_div(a: Any, b: int) -> Any:
    if isinstance(a, int):
        return -(-a // b)
    return CeilDiv(sympy.sympify(a), b)


def core_cycles(counters: Mapping[str, Any], constants: TimeConstants = DEFAULT_CONSTANTS) -> Any:
    """All cores' cycles: register instructions, API-call issue and lane / scalar accesses."""
    return (
        counters["reg_cycles"]
        + constants.api_call_cycles * counters["api_calls"]
        + _ceil_div(counters["scalar_accesses"], constants.lane_accesses_per_cycle)
    )


def estimate(
    counters: Mapping[str, Any],
    cores: Any,
    serialized: bool = False,
    constants: TimeConstants = DEFAULT_CONSTANTS,
) -> TimeEstimate:
    """The estimate for ``counters`` (the contract's names, :data:`af_core.schedule.cost.COUNTERS`) on
    ``cores`` cores: integers give integers, formulas give formulas."""
    ps = PS_PER_NS
    hbm = _ceil_div(counters["hbm_bytes"] * ps, constants.hbm_bytes_per_ns)
    l2 = _ceil_div((counters["l2_core_bytes"] + counters["write_bytes"]) * ps, constants.l2_bytes_per_ns)
    cycles = core_cycles(counters, constants) * constants.ps_per_cycle
    if isinstance(cores, int) and isinstance(cycles, int):
        core = -(-cycles // max(1, cores))
    else:
        core = CeilDiv(sympy.sympify(cycles), Max(1, cores))
    return TimeEstimate(hbm, l2, core, constants.launch_ns * ps, serialized)
