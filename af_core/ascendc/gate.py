"""Every kernel the twin builds also passes the official check, when asked.

The twin accepts what our emulation accepts. With ``AF_ASCENDC_CHECK`` set,
:func:`require_official` (called by the twin runner before each build) type
-checks the kernel against the official headers first, so a test suite or an
``afc run`` cannot prove a kernel right on the twin that the real API would
reject. Values:

- ``1``: required; no official headers found is an error;
- ``auto``: checked when ``AF_ASCENDC_SRC`` names headers, skipped when it
  names nothing (a machine without the asc-devkit extract): the first skip of
  a process says so in one warning line on stderr, and :func:`skip_reason`
  tells reports why;
- unset, empty or ``0``: off.

One checker serves the process (its results are cached on disk by kernel
hash, so a kernel built by many tests is checked once).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from af_core.ascendc.check import AscendcChecker
from af_core.ascendc.source import SOURCE_ENV, find_source
from af_core.errors import CodegenError

CHECK_ENV = "AF_ASCENDC_CHECK"

_lock = threading.Lock()
_checker: AscendcChecker | None = None
_checker_for: tuple[str, str] | None = None
_warned = False


class OfficialCheckError(CodegenError):
    """A generated kernel that the official AscendC headers reject (a bug of the generator or a plugin)."""


def _mode() -> str:
    value = os.environ.get(CHECK_ENV, "").strip().lower()
    return "" if value in ("", "0", "off", "no") else value


def skip_reason() -> str | None:
    """Why twin builds in this environment skip the official check; None when they do not skip.

    Only ``auto`` skips, and only when ``AF_ASCENDC_SRC`` names nothing that
    exists (with headers named but unusable, the check fails instead).
    """
    mode = _mode()
    src = os.environ.get(SOURCE_ENV, "")
    if mode != "auto" or (src and (os.path.exists(src) or Path(src).expanduser().exists())):
        return None
    if not src:
        return f"{CHECK_ENV}=auto and {SOURCE_ENV} is not set"
    return f"{CHECK_ENV}=auto and {SOURCE_ENV} names {src!r}, which does not exist"


def _warn_skipped(reason: str) -> None:
    """One stderr line, the first time a process skips the check."""
    global _warned
    with _lock:
        if _warned:
            return
        _warned = True
    print(
        f"afc: warning: official AscendC header check skipped ({reason}): "
        "kernels built on the twin are not type-checked against the official headers",
        file=sys.stderr,
    )


def _shared_checker(mode: str) -> AscendcChecker | None:
    global _checker, _checker_for
    reason = skip_reason()
    if reason is not None:
        _warn_skipped(reason)
        return None
    where = (mode, os.environ.get(SOURCE_ENV, ""))
    with _lock:
        if _checker is None or _checker_for != where:
            _checker, _checker_for = AscendcChecker(find_source()), where
        return _checker


def require_official(kernel: str, kernel_name: str, headers: Mapping[str, str] | None = None) -> None:
    """Raise :class:`OfficialCheckError` when the check is on and the official headers reject ``kernel``.

    ``headers``: the files the kernel includes beside it (its tiling-data header).
    """
    mode = _mode()
    if not mode:
        return
    checker = _shared_checker(mode)
    if checker is None:
        return
    result = checker.check(kernel, headers)
    if not result.ok:
        raise OfficialCheckError(
            f"kernel '{kernel_name}' fails the official AscendC check "
            f"({CHECK_ENV}={mode}):\n{result.describe(limit=8)}"
        )
