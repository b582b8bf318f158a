"""The twin interface the core itself relies on: exactly the list docs/architecture.md gives.

Everything else a generated kernel calls comes from a back end's ApiCalls
and API sources, so twin headers of any back end (the fake one of these
tests included) need to provide this list and nothing more for the core's
kernel skeleton and harness to compile.
"""

from __future__ import annotations

import re
from pathlib import Path

import fake_backend

import af_core

CORE = Path(af_core.__file__).resolve().parent
DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"

#: What the harness drives (namespace AfTwin).
HARNESS = {
    "Configure",
    "ConfigureL2",
    "RegisterGm",
    "SetGmReadOnly",
    "SetTilingKey",
    "Launch",
    "MarkStage",
    "WriteReportJson",
}
#: What the kernel skeleton prints (namespace AscendC).
SKELETON = {
    "GetBlockIdx",
    "SyncAll",
    "TPipe",
    "TQue",
    "TQueBind",
    "TPosition",
    "TBuf",
    "LocalTensor",
    "GlobalTensor",
    "SetFlag",
    "WaitFlag",
    "HardEvent",
}
#: Macros of the device dialect.
MACROS = {"__aicore__", "__gm__", "__global__", "GM_ADDR", "TILING_KEY_IS"}


def _core_cpp_text() -> str:
    """Every place the core writes kernel or harness C++ from: codegen and twin modules, the harness
    main and its header, every template."""
    files = [
        *(CORE / "codegen").rglob("*.py"),
        *(CORE / "twin").rglob("*.py"),
        *(CORE / "twin").rglob("*.cpp"),
        *(CORE / "twin").rglob("*.h"),
        *CORE.rglob("*.j2"),
    ]
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted(files))


def test_the_core_uses_the_documented_twin_interface():
    text = _core_cpp_text()
    assert set(re.findall(r"\bAfTwin::(\w+)", text)) == HARNESS
    assert set(re.findall(r"\bAscendC::(\w+)", text)) == SKELETON
    assert all(re.search(rf"(?<!\w){name}(?!\w)", text) for name in MACROS)
    doc = " ".join(DOC.read_text(encoding="utf-8").split())
    for name in sorted(HARNESS | SKELETON | {"GM_ADDR", "TILING_KEY_IS"}):
        assert f"`{name}`" in doc or f"`AfTwin::{name}`" in doc, name


def test_the_fake_twin_header_provides_it():
    header = (fake_backend.INCLUDE_DIR / "kernel_operator.h").read_text(encoding="utf-8")
    for name in HARNESS:
        assert re.search(rf"inline void {name}\(", header), name
    for name in SKELETON:
        assert re.search(rf"(class|enum class|inline \w+) {name}\b", header), name
    for name in MACROS:
        assert re.search(rf"#define {name}\b", header), name
