"""Our stand-ins for the few headers the CANN host headers include but do not ship.

``securec.h`` (a bounds-checked C library the metadef headers call),
``graph/operator_reg.h`` (the graph engine's, included by
``register/op_def.h``) and ``platform/soc_spec.h`` (CANN's platform
package's, included by asc-devkit's ``platform_ascendc.h``). Each file under
``standins/`` says what it declares and why; none declares the CANN API that
generated code calls (a test scans them), so every such call is checked
against the official declarations.
"""

from __future__ import annotations

from pathlib import Path

from af_core.ascendc.cache import files_digest

STANDIN_DIR = Path(__file__).resolve().parent / "standins"


def standin_files() -> list[Path]:
    return files_digest(STANDIN_DIR, "*.h")[0]


def standins_digest() -> str:
    """A hash of every stand-in's relative path and content: part of every cached verdict's key."""
    return files_digest(STANDIN_DIR, "*.h")[1]
