"""The stand-ins fill gaps only: none declares the CANN host API that generated code calls."""

from __future__ import annotations

import re

from af_core.cann.standins import STANDIN_DIR, standin_files, standins_digest

#: Names that must come from the official headers, never from a stand-in.
OFFICIAL_API = (
    "OpDef",
    "OP_ADD",
    "TilingContext",
    "TilingParseContext",
    "InferShapeContext",
    "InferDataTypeContext",
    "IMPL_OP_OPTILING",
    "IMPL_OP_INFERSHAPE",
    "OpImplRegisterV2",
    "PlatformAscendC",
    "platform_ascendc",
    "gert",
    "optiling",
    "NpuArch",
    "REG_OP",
)


def _code(text: str) -> str:
    """``text`` without its comments (which name the API they stand beside)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def test_the_stand_ins_are_the_three_missing_headers():
    names = sorted(p.relative_to(STANDIN_DIR).as_posix() for p in standin_files())
    assert names == ["graph/operator_reg.h", "platform/soc_spec.h", "securec.h"]


def test_stand_ins_declare_no_cann_api():
    for path in standin_files():
        code = _code(path.read_text(encoding="utf-8"))
        for name in OFFICIAL_API:
            assert not re.search(rf"\b{name}\b", code), f"{path.name} declares {name}"


def test_stand_ins_define_no_class():
    """Only ``ge::Operator`` is named, as the declaration op_def.h makes itself; nothing has a body."""
    for path in standin_files():
        code = _code(path.read_text(encoding="utf-8"))
        assert not re.search(r"\b(?:class|struct|union|enum)\s+\w+[^;]*\{", code), path.name
        for declared in re.findall(r"\b(?:class|struct|union|enum)\s+(\w+)", code):
            assert declared == "Operator", f"{path.name} declares {declared}"


def test_the_stand_in_digest_follows_the_files():
    assert standins_digest() == standins_digest()
    assert len(standins_digest()) == 24
