"""Hook implementations of the v35 RegBase plugin."""

from __future__ import annotations

from pathlib import Path

from af_core import hookimpl

TWIN_INCLUDE = Path(__file__).parent / "twin" / "include"


@hookimpl
def af_twin_include_dirs(platform):
    if platform.soc != "3510":
        return None
    return [TWIN_INCLUDE]
