"""``ascir.utils``: platform selection, as in pyautofuse."""

from af_core.platform import current_platform, set_platform

__all__ = ["set_platform", "current_platform"]
