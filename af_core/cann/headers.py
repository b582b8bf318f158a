"""Everything a host-side type check includes: metadef, asc-devkit's platform header, our stand-ins.

Generated host code includes the CANN host API from two places: metadef
(:mod:`af_core.cann.source`: the op registration, the tiling and infer-shape
contexts) and asc-devkit (``tiling/platform/platform_ascendc.h``: core count,
UB size, workspace). :func:`find_headers` locates both; :func:`skip_reason`
tells a test suite whether they are there. ``AF_CANN_CHECK`` says what a
missing header set means, as ``AF_ASCENDC_CHECK`` does for kernels:
``1`` / ``require`` makes it an error, anything else lets callers skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from af_core.ascendc.source import SOURCE_ENV as ASCENDC_SOURCE_ENV
from af_core.ascendc.source import AscendcSource, AscendcSourceError, find_source
from af_core.cann.source import (
    SOURCE_ENV,
    CannSourceError,
    MetadefSource,
    checkout_default,
    find_metadef,
)
from af_core.cann.standins import STANDIN_DIR

CHECK_ENV = "AF_CANN_CHECK"
#: Where asc-devkit keeps the platform header: ``include/utils/tiling/platform/platform_ascendc.h``.
#: Its parent ``include/utils`` serves the documented ``#include "tiling/platform/platform_ascendc.h"``,
#: the directory itself a plain ``#include "platform_ascendc.h"``.
PLATFORM_DIR = Path("include") / "utils" / "tiling" / "platform"
PLATFORM_HEADER = PLATFORM_DIR / "platform_ascendc.h"


@attrs.frozen
class HostHeaders:
    """The header trees of one host check and their include path."""

    metadef: MetadefSource
    ascendc: AscendcSource

    @property
    def identity(self) -> str:
        return f"{self.metadef.identity}+{self.ascendc.identity}"

    def include_dirs(self) -> list[Path]:
        """metadef's directories, asc-devkit's platform directories, then the stand-ins.

        The stand-ins come last: they only fill gaps, so a header tree that
        ships a real ``securec.h`` or ``graph/operator_reg.h`` is used instead.
        """
        platform = self.ascendc.root / PLATFORM_DIR
        return [*self.metadef.include_dirs(), platform.parent.parent, platform, STANDIN_DIR]

    def classify(self, path: str) -> str:
        """Where a header g++ names lies: ``official``, ``stand-in`` or ``other`` (system headers)."""
        resolved = Path(path).resolve()
        if resolved.is_relative_to(STANDIN_DIR):
            return "stand-in"
        if self.metadef.contains(resolved) or self.ascendc.contains(resolved):
            return "official"
        return "other"


def _asc_location(location: str | Path | None) -> str | Path | None:
    if location is not None or os.environ.get(ASCENDC_SOURCE_ENV):
        return location
    default = checkout_default("ascendc")
    return default if default is not None and default.exists() else None


def find_headers(
    metadef: str | Path | None = None,
    ascendc: str | Path | AscendcSource | None = None,
    *,
    cache_dir: Path | None = None,
) -> HostHeaders:
    """The metadef tree (``AF_CANN_SRC``) and the asc-devkit tree (``AF_ASCENDC_SRC``); either
    defaults to the checkout's shared directory. Raises :class:`CannSourceError` when one is missing."""
    meta = find_metadef(metadef, cache_dir=cache_dir)
    if isinstance(ascendc, AscendcSource):
        asc = ascendc
    else:
        try:
            asc = find_source(_asc_location(ascendc), cache_dir=cache_dir)
        except AscendcSourceError as exc:
            raise CannSourceError(f"host checks need asc-devkit's {PLATFORM_HEADER.name}: {exc}") from None
    if not (asc.root / PLATFORM_HEADER).is_file():
        raise CannSourceError(f"asc-devkit at {asc.root} has no {PLATFORM_HEADER}")
    return HostHeaders(meta, asc)


def _names_something(env: str, default: Path | None) -> str | None:
    """Why ``env`` (or its default) names nothing; None when it names an existing path."""
    given = os.environ.get(env)
    if given:
        return None if Path(given).expanduser().exists() else f"{env} names {given!r}, which does not exist"
    if default is not None and default.exists():
        return None
    return f"{env} is not set"


def skip_reason() -> str | None:
    """Why the host check cannot run here (no metadef or no asc-devkit named); None when it can.

    Only absence counts: a location that exists but holds no usable headers
    is an error of :func:`find_headers`, never a reason to skip.
    """
    reasons = [
        _names_something(SOURCE_ENV, checkout_default("cann-metadef")),
        _names_something(ASCENDC_SOURCE_ENV, checkout_default("ascendc")),
    ]
    found = [r for r in reasons if r is not None]
    return "; ".join(found) if found else None


def available() -> bool:
    """True when both header sets are named (the check may still fail if they are unusable)."""
    return skip_reason() is None


def required() -> bool:
    """``AF_CANN_CHECK`` is ``1`` or ``require``: missing headers are an error, not a skip."""
    return os.environ.get(CHECK_ENV, "").strip().lower() in ("1", "require", "required", "yes", "on")
