"""Controls of the official-header check itself.

A correct hand-written kernel passes; each known-wrong form fails, and the
error comes from the official headers (a static_assert of the dav_3510
implementation or an official declaration), never from our stand-ins. The
stand-ins declare nothing the official API declares.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from af_core.ascendc.standins import STANDIN_DIR, standin_files

KERNELS = Path(__file__).resolve().parent / "kernels"

# A vector kernel with one tensor type T; BODY is the statement under test.
SKELETON = """#include "kernel_operator.h"
using namespace AscendC;
using T = {dtype};
extern "C" __global__ __aicore__ void control_kernel(GM_ADDR x)
{{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096);
    GlobalTensor<T> xGm;
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x));
    LocalTensor<T> a = buf.Get<T>();
    LocalTensor<T> b = buf.GetWithOffset<T>(256, 1024);
    LocalTensor<uint32_t> offsets = buf.GetWithOffset<uint32_t>(256, 2048);
    {body}
}}
"""

#: name -> (element type, statement, where the official check stops it)
WRONG = {
    "div_bf16": ("bfloat16_t", "Div(a, a, b, 64);", "kernel_operator_vec_binary_continuous_impl.h"),
    "exp_bf16": ("bfloat16_t", "Exp(a, b, 64);", "kernel_operator_vec_unary_impl.h"),
    "mul_int8": ("int8_t", "Mul(a, a, b, 64);", "kernel_operator_vec_binary_continuous_impl.h"),
    "reducesum_int8": ("int8_t", "ReduceSum(a, b, a, 64);", "kernel_operator_vec_reduce_impl.h"),
    "muls_uint16": (
        "uint16_t",
        "Muls(a, b, static_cast<uint16_t>(3), 64);",
        "kernel_operator_vec_binary_scalar_impl.h",
    ),
}


def _kernel(dtype: str, body: str) -> str:
    return SKELETON.format(dtype=dtype, body=body)


def test_positive_control_passes(checker):
    result = checker.check((KERNELS / "correct.cpp").read_text(encoding="utf-8"))
    assert result.ok, result.describe()


def test_skeleton_passes_with_legal_calls(checker):
    """The negative controls differ from a passing kernel only in the statement under test."""
    body = (
        "Div(a, a, b, 64); Exp(a, b, 64); Mul(a, a, b, 64); ReduceSum(a, b, a, 64); Muls(a, b, 3.0f, 64); "
        "Gather(a, b, offsets, static_cast<uint32_t>(0), 32); DataCopy(a, xGm, 64);"
    )
    result = checker.check(_kernel("float", body))
    assert result.ok, result.describe()


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_dtype_fails_in_official_headers(name, checker, ascendc_source):
    dtype, body, where = WRONG[name]
    result = checker.check(_kernel(dtype, body))
    assert not result.ok
    first = result.first_error
    assert first.origin == "official", result.describe()
    rel = Path(first.file).resolve().relative_to(ascendc_source.root.resolve()).as_posix()
    assert rel.startswith(("include/", "impl/")) and rel.endswith(where), rel
    assert "static assertion failed" in first.message


def test_const_phy_addr_into_non_const_pointer_fails(checker):
    """GlobalTensor::GetPhyAddr() is `const __gm__ T*` in the official kernel_tensor.h."""
    result = checker.check(_kernel("float", "__gm__ float* p = xGm.GetPhyAddr(); (void)p;"))
    assert not result.ok
    assert result.first_error.origin == "kernel"
    assert re.search(r"invalid conversion from .const .*float\*.* to .float\*", result.first_error.message)


def test_simt_entry_with_const_argument_fails_in_official_stub(checker, ascendc_source):
    """The SIMT path: a const GetPhyAddr() passed to a non-const SIMT parameter is rejected by VF_CALL."""
    text = (KERNELS / "correct.cpp").read_text(encoding="utf-8")
    text = text.replace("const __gm__ float* in,", "__gm__ float* in,")
    result = checker.check(text)
    assert not result.ok
    first = result.first_error
    assert first.origin == "official" and ascendc_source.contains(first.file), result.describe()
    assert "invalid conversion from ‘const float*’" in first.message or "const float*" in first.message


def test_undeclared_launch_bound_macro_fails(checker):
    text = (
        (KERNELS / "correct.cpp").read_text(encoding="utf-8").replace("__launch_bounds__(", "LAUNCH_BOUND(")
    )
    result = checker.check(text)
    assert not result.ok and result.first_error.origin == "kernel"


@pytest.mark.parametrize("dtype", ["int64_t", "uint64_t"])
def test_gather_on_64_bit_types_is_accepted_by_these_headers(dtype, checker):
    """A fact of the type check: a 64-bit count-mode Gather compiles against these headers.

    The 3510 interface refuses 64-bit types only with a run-time ASCENDC_ASSERT
    (kernel_operator_vec_gather_intf_impl.h lists 1-, 2- and 4-byte types; the dav_3510 impl's own
    static_assert allows 8 bytes), so the check cannot see it; the twin makes it a compile error and
    the templates never emit it. If a newer extract turns it into a static_assert, this test says so.
    """
    result = checker.check(_kernel(dtype, "Gather(a, b, offsets, static_cast<uint32_t>(0), 32);"))
    assert result.ok, result.describe()


def test_datacopy_count_not_multiple_of_32_bytes_is_runtime_only(checker):
    """DataCopy by count compiles for any count: the 32-byte rule is a CPU-debug runtime assert."""
    result = checker.check(_kernel("float", "DataCopy(a, xGm, 7);"))
    assert result.ok, result.describe()


def test_simt_expf_without_math_header_is_not_caught(checker):
    """A known gap: the official CPU-debug simt_stub.h includes <cmath>, so without
    simt_api/math_functions.h `expf` still resolves (to the C library's) on the CPU, while the
    device compiler would reject it. If a future extract closes the gap, this test says so."""
    text = (
        (KERNELS / "correct.cpp")
        .read_text(encoding="utf-8")
        .replace('#include "simt_api/math_functions.h"\n', "")
    )
    assert "math_functions.h" not in text
    assert checker.check(text).ok


# ---- the stand-ins declare no AscendC API ---------------------------------------------------------------
#: names a stand-in declares that also occur in the official include/, and why that is no API
SHARED_NAMES = {
    "StoreMode": "the compiler's ::StoreMode enum; the official one is AscendC::Reg::StoreMode",
    "max": "the SIMT compiler's global integer max; the official one is AscendC::Std::max",
    "min": "the SIMT compiler's global integer min; the official one is AscendC::Std::min",
}


def _standin_names() -> set[str]:
    names: set[str] = set()
    for path in standin_files():
        text = path.read_text(encoding="utf-8")
        names |= set(re.findall(r"\b(?:struct|class|enum(?:\s+class)?)\s+([A-Za-z_]\w*)", text))
        names |= set(re.findall(r"\busing\s+([A-Za-z_]\w*)\s*=", text))
        names |= set(re.findall(r"AF_STANDIN_(?:INTRINSIC|BYTE_TYPE)\((\w+)\)", text))
        names |= set(
            re.findall(
                r"^\s*(?:extern\s+)?[\w:<>*&]+(?:\s+[\w:<>*&]+)*\s+\**([A-Za-z_]\w*)\s*[(;]", text, re.M
            )
        )
    return names


def _official_api_names(root: Path) -> set[str]:
    names: set[str] = set()
    for path in (root / "include").rglob("*.h"):
        text = path.read_text(encoding="utf-8", errors="replace")
        names |= set(re.findall(r"\b(?:class|struct)\s+([A-Za-z_]\w*)\s*[{:<]", text))
        names |= set(re.findall(r"__aicore__\s+inline\s+[\w:<>,\s*&]*?\b([A-Za-z_]\w*)\s*\(", text))
    return names


def test_standins_declare_no_ascendc_api(ascendc_source):
    official = _official_api_names(ascendc_source.root)
    assert len(official) > 1000  # the scan found the API
    shared = _standin_names() & official
    assert sorted(shared - set(SHARED_NAMES)) == []
    for path in standin_files():
        text = path.read_text(encoding="utf-8")
        blocks = re.findall(r"namespace\s+AscendC\s*\{(.*?)\}", text, re.S)
        assert all(b.strip() == "extern bool g_isVdeq;" for b in blocks), (
            path.name
        )  # a CPU-debug runtime flag


def test_standins_ship_as_package_data():
    assert {p.name for p in standin_files()} >= {
        "stub_def.h",
        "stub_fun.h",
        "kernel_fp16.h",
        "kernel_bf16.h",
        "kernel_vectorized.h",
    }
    assert STANDIN_DIR.parent.name == "ascendc"


# ---- caching ------------------------------------------------------------------------------------------------
def test_results_are_cached_by_kernel_text(checker):
    text = _kernel("float", "Exp(a, b, 64);")
    first = checker.check(text)
    again = checker.check(text)
    assert again.cached and again.ok == first.ok and again.key == first.key
    assert checker.key(text + "\n") != first.key


def test_precompiled_header_can_be_turned_off(ascendc_source, monkeypatch, tmp_path):
    from af_core.ascendc import AscendcChecker

    monkeypatch.setenv("AF_ASCENDC_PCH", "0")
    plain = AscendcChecker(ascendc_source, cache_dir=tmp_path)
    assert plain.precompiled_header() is None
    assert plain.key("x") != AscendcChecker(ascendc_source, cache_dir=tmp_path, pch=True).key("x")
