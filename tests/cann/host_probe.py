"""The hand-written control operator of the host check (``probe/``) and its wrong variants."""

from __future__ import annotations

from pathlib import Path

PROBE_DIR = Path(__file__).resolve().parent / "probe"
HOST = "af_probe_host.cpp"
TILING_HEADER = "af_probe_tiling.h"
MACRO_TILING = "af_probe_tilingdata.cpp"


def probe_files(*names: str) -> dict[str, str]:
    """The named files of ``probe/`` as the name -> text mapping the check takes."""
    return {name: (PROBE_DIR / name).read_text(encoding="utf-8") for name in names}


def host_probe() -> dict[str, str]:
    """The positive control: the host source and the tiling header it includes."""
    return probe_files(HOST, TILING_HEADER)


def mutated(files: dict[str, str], name: str, old: str, new: str) -> tuple[dict[str, str], int]:
    """``files`` with the one occurrence of ``old`` in ``name`` replaced, and the line it starts on."""
    text = files[name]
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {name}"
    line = text[: text.index(old)].count("\n") + 1
    return {**files, name: text.replace(old, new)}, line
