"""The resources a CANN operator asks of the runtime, made explicit per tiling key.

- **System workspace.** AscendC library calls need a workspace of their own
  in front of the operator's. ``PlatformAscendC::GetLibApiWorkSpaceSize()``
  gives it at run time (16 MiB on dav-3510, ``platform_ascendc.cpp`` of
  asc-devkit); the tiling function asks for it plus the case's workspace.
- **UB.** ``PlatformAscendC::GetCoreMemSize(CoreMemType::UB)`` is the UB
  left after the runtime's reservation (248 KiB of 256 KiB on ascend950,
  the asc-devkit guide's architecture page for 3510); the tiling is solved
  for that value, as the twin solves it for ``Platform.ub_size``.
- **Dynamic UB and the SIMT data cache.** UB is laid out as the kernel's
  static and dynamic part, a reserve, then the SIMT data cache, which takes
  the rest up to 128 KiB and must be at least 32 KiB when SIMT code runs
  (asc-devkit guide, SIMD/SIMT mixed programming, memory hierarchy). The
  tiling function sets the dynamic UB size (``SetDynUBufSize``) of the
  chosen case to UB minus the data cache that case declares
  (its ``dcache_bytes`` resource): a SIMT case keeps its cache, a pure
  vector case may use all of UB.
"""

from __future__ import annotations

import attrs
import sympy

from af_core.schedule.scheduler import ScheduleResult
from af_core.tiling.solve import CaseRef

#: The least SIMT data cache the hardware runs with (asc-devkit guide: below 32 KiB a launch fails a check).
MIN_SIMT_DCACHE = 32 * 1024


@attrs.frozen
class PackageResources:
    """What the generated tiling function assumes of the platform, for the package README and tests."""

    ub_size: int  # UB the schedule was made for (the platform's usable UB)
    ub_total: int
    dcache_reserve: int  # the SIMT data cache the platform carves out of UB
    dcache_cases: tuple[int, ...]  # tiling keys whose case declares a data cache


def resources_for(scheduled: ScheduleResult, refs: list[CaseRef]) -> PackageResources:
    plat = scheduled.platform
    dcache = tuple(
        ref.tiling_key for ref in refs if sympy.sympify(ref.spec.resources.get("dcache_bytes", 0)) != 0
    )
    return PackageResources(plat.ub_size, plat.ub_total, plat.dcache_reserve, dcache)
