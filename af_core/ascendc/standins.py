"""Our stand-ins for the closed CPU-debug files the official headers include.

The asc-devkit headers, compiled in CPU-debug mode, include ``stub_def.h``,
``stub_fun.h``, ``kernel_fp16.h``, ``kernel_bf16.h`` and
``kernel_vectorized.h`` from a closed library. The files under
``standins/`` replace them with only what a compiler provides: empty
qualifier macros, the builtin enums and register types, ``half`` and
``bfloat16_t`` storage types, and the intrinsics as functions that accept
anything. They declare no AscendC API (a test scans them for it), so every
API a kernel uses is checked against the official declarations.
``kernel_tiling/kernel_tiling.h`` is not a stand-in: it is generated from
the tree's own ``*tilingdata.h`` files with the tree's own script
(:func:`generate_tiling_header`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from af_core.ascendc.cache import build_in_cache, files_digest
from af_core.ascendc.source import AscendcSource, AscendcSourceError

STANDIN_DIR = Path(__file__).resolve().parent / "standins"
TILING_SCRIPT = Path("impl") / "adv_api" / "cmake" / "scripts" / "gen_kernel_tiling_data_def.py"


def standin_files() -> list[Path]:
    return files_digest(STANDIN_DIR, "*.h")[0]


def standins_digest() -> str:
    """A hash of every stand-in's relative path and content: part of every cached verdict's key."""
    return files_digest(STANDIN_DIR, "*.h")[1]


def generate_tiling_header(source: AscendcSource, cache_dir: Path) -> Path | None:
    """The include directory holding ``kernel_tiling/kernel_tiling.h`` for ``source`` (built once).

    None when the tree ships the header already (an installed CANN has it generated).
    """
    if any((d / "kernel_tiling" / "kernel_tiling.h").is_file() for d in source.include_dirs()):
        return None
    final = cache_dir / f"tiling-{source.identity}"
    if (final / "kernel_tiling" / "kernel_tiling.h").is_file():
        return final
    script = source.root / TILING_SCRIPT
    if not script.is_file():
        raise AscendcSourceError(f"{source.root} has no {TILING_SCRIPT} to generate kernel_tiling.h")

    def fill(work: Path) -> None:
        out = work / "kernel_tiling" / "kernel_tiling.h"
        run = subprocess.run(
            [sys.executable, str(script), str(source.root / "include"), str(out)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if run.returncode != 0 or not out.is_file():
            raise AscendcSourceError(f"generating kernel_tiling.h failed: {run.stderr.strip()[-500:]}")

    return build_in_cache(final, fill, lambda d: (d / "kernel_tiling" / "kernel_tiling.h").is_file())
