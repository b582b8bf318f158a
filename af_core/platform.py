"""The target platform: SoC name, core count and the on-chip budgets.

Figures for SoC "3510" (Ascend A5) follow the public AscendC documentation:
256 KiB of UB of which 248 KiB are usable by kernels, 32 B UB alignment, a
256 B vector register, a 128 B global-memory cacheline and a SIMT data cache
carved out of UB. The vector-core count of the A5 parts is not published, so
it stays a parameter (48 by default, the figure Autofuse's own end-to-end
tests use).

The shared L2 between HBM and the cores only feeds the CPU twin's counters (its
model, ``af_twin/l2.h``, replays the cores' GM accesses through it): 128 MiB
with 128-byte lines. The asc-devkit guide gives both in
``docs/zh/guide/编程指南/高级编程/内存模型/缓存一致性.md``, section
"Cache、Cache Line与缓存副本", table "NPU架构版本3510Cache单元信息" (L2 Cache:
Cache Line 128B/512B, size 128MB; the 2201 table beside it gives 512B and
192MB, the 192MB that ``docs/zh/guide/算子实践参考/SIMD算子性能优化/内存访问/L2-Cache切分.md``,
section 【描述】, assumes for its example); the 128-byte line is also the one
``docs/zh/guide/算子实践参考/SIMT算子性能优化/内存访问/短向量类型提升效率.md``
(section 【描述】) says the processor reads L2 with. No document gives the
associativity: 16 ways is a plain choice.
"""

from __future__ import annotations

import threading

import attrs

KIB = 1024
#: The largest L2 line the twin takes: the twin aligns GM allocations to 2 MiB, so no line holds two.
L2_MAX_LINE = 2 * KIB * KIB
#: Platform fields only the twin's counters use (not written into a kernel's description).
TWIN_ONLY = frozenset({"l2_size", "l2_line", "l2_ways"})


@attrs.frozen
class Platform:
    """Budgets every template and the host tiling reason about."""

    soc: str = "3510"
    core_num: int = 48
    ub_size: int = 248 * KIB  # usable UB bytes per core
    ub_total: int = 256 * KIB
    ub_align: int = 32
    vector_bytes: int = 256
    cacheline: int = 128
    dcache_reserve: int = 32 * KIB  # UB carved out for the SIMT data cache
    simt_max_threads: int = 2048
    simt_warp: int = 32
    l2_size: int = 128 * KIB * KIB  # shared L2 bytes (twin counters only; sources in the module docstring)
    l2_line: int = 128  # L2 line bytes
    l2_ways: int = 16  # L2 associativity: no document gives it

    def __attrs_post_init__(self) -> None:
        if self.core_num <= 0:
            raise ValueError(f"platform core_num must be positive, got {self.core_num}")
        if self.ub_size <= 0 or self.ub_size > self.ub_total:
            raise ValueError(f"platform ub_size must be in (0, {self.ub_total}], got {self.ub_size}")
        line, ways = self.l2_line, self.l2_ways
        if line <= 0 or line & (line - 1) or line > L2_MAX_LINE:
            raise ValueError(f"platform l2_line must be a power of two in [1, {L2_MAX_LINE}], got {line}")
        if ways <= 0:
            raise ValueError(f"platform l2_ways must be at least 1, got {ways}")
        if self.l2_size < line * ways or self.l2_size % (line * ways):
            raise ValueError(
                f"platform l2_size must be a positive multiple of l2_line x l2_ways = {line * ways} bytes "
                f"(one set), got {self.l2_size}"
            )

    def to_dict(self) -> dict[str, object]:
        """The figures code generation depends on (written into each kernel's description); the L2
        fields, which only the twin's counters use, are left out."""
        return attrs.asdict(self, filter=lambda field, _value: field.name not in TWIN_ONLY)


_SUPPORTED_SOCS = {"3510"}
_state = threading.local()
_default = Platform()


def set_platform(soc: str = "3510", core_num: int = 48, ub_size: int = 248 * KIB) -> Platform:
    """Select the platform for graphs built afterwards in this thread.

    Mirrors ``ascir.utils.set_platform(soc, core_num, ub_size)`` of pyautofuse.
    Only the A5 SoC "3510" is supported; other SoCs do not take this path.
    """
    soc = str(soc)
    if soc not in _SUPPORTED_SOCS:
        raise ValueError(f"SoC '{soc}' is not supported: the IndirectLoad path targets A5 (SoC '3510') only")
    plat = Platform(soc=soc, core_num=int(core_num), ub_size=int(ub_size))
    _state.platform = plat
    return plat


def current_platform() -> Platform:
    """The platform set in this thread, or the 3510 default."""
    return getattr(_state, "platform", _default)


def reset_platform() -> None:
    """Return to the default platform (used by tests)."""
    if hasattr(_state, "platform"):
        del _state.platform
