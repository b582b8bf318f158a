"""The target platform: SoC name, core count and the on-chip budgets.

Figures for SoC "3510" (Ascend A5) follow the public AscendC documentation:
256 KiB of UB of which 248 KiB are usable by kernels, 32 B UB alignment, a
256 B vector register, a 128 B global-memory cacheline and a SIMT data cache
carved out of UB. The vector-core count of the A5 parts is not published, so
it stays a parameter (48 by default, the figure Autofuse's own end-to-end
tests use).
"""

from __future__ import annotations

import threading

import attrs

KIB = 1024


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

    def __attrs_post_init__(self) -> None:
        if self.core_num <= 0:
            raise ValueError(f"platform core_num must be positive, got {self.core_num}")
        if self.ub_size <= 0 or self.ub_size > self.ub_total:
            raise ValueError(f"platform ub_size must be in (0, {self.ub_total}], got {self.ub_size}")

    def to_dict(self) -> dict[str, object]:
        return attrs.asdict(self)


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
