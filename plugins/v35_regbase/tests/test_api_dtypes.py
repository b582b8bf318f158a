"""The 3510 dtype table, its generated twin header and the twin's compile-time checks.

The twin must reject at compile time every element type (and Cast pair) the
official dav_3510 implementation rejects, and accept the ones it accepts.
Both directions are checked for every vector API the twin implements, from
the Python table, with ``g++ -fsyntax-only``: one translation unit holds all
legal calls (it must compile), one all illegal calls (each must fail with its
API's static_assert, seen in the instantiation g++ reports).
"""

from __future__ import annotations

import re
import subprocess

import pytest
from af_v35_regbase import api_dtypes as tab
from af_v35_twin_build import compiler, syntax_check  # loaded by conftest.py

from af_core import dtypes as dt

pytestmark = pytest.mark.twin

DATA = [d.name for d in dt.ALL if not d.is_bool]
BINARY = ("Add", "Sub", "Mul", "Div", "Max", "Min", "And", "Or")
SCALAR = ("Adds", "Muls", "Maxs", "Mins", "Ands")
UNARY = ("Exp", "Ln", "Sqrt", "Rsqrt", "Reciprocal", "Abs", "Relu", "Not")
REDUCE = ("ReduceSum", "ReduceMax", "ReduceMin")
OTHER = ("Duplicate", "Compare", "Compares", "Select", "CreateVecIndex", "Gather", "Truncate")

# The 29 operation/dtype pairs the vector paths used to emit, which the official implementation rejects.
ISSUE_PAIRS = (
    [("Div", "bfloat16"), ("Mul", "int8"), ("Mul", "uint8")]
    + [(api, "bfloat16") for api in ("Exp", "Ln", "Sqrt", "Rsqrt", "Abs")]
    + [("Relu", t) for t in ("bfloat16", "int8", "int16")]
    + [(api, t) for api in ("Adds", "Maxs", "Mins") for t in ("uint16", "uint32")]
    + [("Muls", t) for t in ("int8", "uint8", "uint16", "uint32")]
    + [("ReduceSum", t) for t in ("int8", "uint8", "int16", "uint16")]
    + [(api, t) for api in ("ReduceMax", "ReduceMin") for t in ("int8", "uint8")]
)

# How g++ spells the C++ types in "[with T = ...]".
GXX_NAME = {
    "float16": "half",
    "bfloat16": "bfloat16_t",
    "float32": "float",
    "int8": "signed char",
    "uint8": "unsigned char",
    "int16": "short int",
    "uint16": "short unsigned int",
    "int32": "int",
    "uint32": "unsigned int",
    "int64": "long int",
    "uint64": "long unsigned int",
    "bool": "bool",
}


def _cpp(name: str) -> str:
    return "bool" if name == "bool" else dt.get(name).cpp


def _call(api: str, t: str, i: int) -> str:
    c = _cpp(t)
    if api in BINARY:
        return f"{api}(L<{c}>(), L<{c}>(), L<{c}>(), 8);"
    if api in SCALAR:
        return f"{api}(L<{c}>(), L<{c}>(), static_cast<{c}>(1), 8);"
    if api in UNARY:
        return f"{api}(L<{c}>(), L<{c}>(), 8);"
    if api in REDUCE:
        return f"{api}(L<{c}>(), L<{c}>(), L<{c}>(), 8);"
    if api == "Duplicate":
        return f"Duplicate(L<{c}>(), static_cast<{c}>(0), 8);"
    if api == "CreateVecIndex":
        return f"CreateVecIndex(L<{c}>(), static_cast<{c}>(0), 8u);"
    if api == "Compare":
        return f"Compare(L<uint8_t>(), L<{c}>(), L<{c}>(), CMPMODE::LT, 64u);"
    if api == "Compares":
        return f"Compares(L<uint8_t>(), L<{c}>(), static_cast<{c}>(0), CMPMODE::LT, 64u);"
    if api == "Gather":
        return f"Gather(L<{c}>(), L<{c}>(), L<uint32_t>(), 0u, 8u);"
    if api == "Truncate":
        return f"Truncate<{c}, RoundMode::CAST_FLOOR>(L<{c}>(), L<{c}>(), 8u);"
    if api == "Select":
        return f"Select(L<{c}>(), L<uint8_t>(), L<{c}>(), L<{c}>(), SELMODE::VSEL_TENSOR_TENSOR_MODE, 64u);"
    raise AssertionError(api)


def _unit(calls: list[str]) -> str:
    body = "\n".join(f"[[maybe_unused]] void Case{i}() {{ {call} }}" for i, call in enumerate(calls))
    return (
        '#include "kernel_operator.h"\nusing namespace AscendC;\n'
        "template <class T> LocalTensor<T> L() { return LocalTensor<T>(); }\n" + body + "\n"
    )


def _syntax_check(source: str, tmp_path) -> subprocess.CompletedProcess:
    if compiler() is None:
        pytest.skip("no C++ compiler")
    return syntax_check(source, tmp_path, strict=False)


INSTANTIATION = re.compile(r"In instantiation of .void AscendC::(?P<api>\w+)\(.*\[with (?P<with>[^\]]*)\]")
ASSERTION = re.compile(r"static assertion failed: (?P<api>\w+): (?P<what>[^\n]*)")


def _rejections(stderr: str) -> set[tuple[str, str]]:
    """(API, with-clause) of every static_assert that fired, from g++'s diagnostics."""
    found: set[tuple[str, str]] = set()
    current = None
    for line in stderr.splitlines():
        m = INSTANTIATION.search(line)
        if m:
            current = (m["api"], m["with"])
            continue
        m = ASSERTION.search(line)
        if m and current is not None and m["api"] == current[0] and "3510" in m["what"]:
            found.add(current)
    return found


def _legal_pairs() -> list[tuple[str, str]]:
    pairs = []
    for api in (*BINARY, *SCALAR, *UNARY, *REDUCE, *OTHER):
        for t in tab.BY_API[api].types:
            if t == "bool":
                continue  # bool tensors are never vector data in generated kernels
            pairs.append((api, t))
    return pairs


def _illegal_pairs() -> list[tuple[str, str]]:
    return [
        (api, t)
        for api in (*BINARY, *SCALAR, *UNARY, *REDUCE, *OTHER)
        for t in DATA
        if not tab.accepts(api, t)
    ]


def test_generated_header_is_up_to_date():
    assert tab.HEADER.read_text() == tab.render_header(), (
        "af_twin/api_dtypes.h is out of date: run `python -m af_v35_regbase.api_dtypes`"
    )


def test_table_rows_name_their_source_and_known_types():
    known = {d.name for d in dt.ALL}
    for row in tab.ROWS:
        assert row.source.startswith("kernel_operator_vec_") and row.source.endswith("_impl.h"), row
        assert set(row.types) <= known and set(row.masks) <= known, row
        assert len(set(row.types)) == len(row.types), row
    for (dst, src), modes in tab.CAST.items():
        assert dst in known and src in known and modes, (dst, src)
        assert set(modes) <= set(tab.ROUND_MODES)


def test_issue_pairs_are_illegal_in_the_table():
    assert len(ISSUE_PAIRS) == 29
    for api, t in ISSUE_PAIRS:
        assert not tab.accepts(api, t), (api, t)


def test_twin_accepts_every_legal_type(tmp_path):
    calls = [_call(api, t, i) for i, (api, t) in enumerate(_legal_pairs())]
    calls += [
        f"Cast(L<{_cpp(d)}>(), L<{_cpp(s)}>(), RoundMode::{modes[0]}, 8u);"
        for (d, s), modes in tab.CAST.items()
    ]
    done = _syntax_check(_unit(calls), tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]


def test_twin_takes_exactly_the_truncate_modes_of_the_table(tmp_path):
    legal = [f"Truncate<float, RoundMode::{m}>(L<float>(), L<float>(), 8u);" for m in tab.TRUNCATE_MODES]
    done = _syntax_check(_unit(legal), tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    illegal = [m for m in tab.ROUND_MODES if m not in tab.TRUNCATE_MODES]
    assert illegal == ["CAST_NONE", "CAST_ODD"]
    done = _syntax_check(
        _unit([f"Truncate<half, RoundMode::{m}>(L<half>(), L<half>(), 8u);" for m in illegal]), tmp_path
    )
    assert done.returncode != 0
    assert done.stderr.count("Truncate: round mode not accepted by the 3510 implementation") == len(illegal)


def test_twin_rejects_every_illegal_type_with_its_static_assert(tmp_path):
    illegal = _illegal_pairs()
    assert set(ISSUE_PAIRS) <= set(illegal)
    casts = [(d, s) for d in DATA for s in DATA if (d, s) not in tab.CAST]
    calls = [_call(api, t, i) for i, (api, t) in enumerate(illegal)]
    calls += [f"Cast(L<{_cpp(d)}>(), L<{_cpp(s)}>(), RoundMode::CAST_NONE, 8u);" for d, s in casts]
    done = _syntax_check(_unit(calls), tmp_path)
    assert done.returncode != 0
    found = _rejections(done.stderr)
    missing = []
    for api, t in illegal:
        clause = re.compile(rf"(^|; )T = {re.escape(GXX_NAME[t])}(;|$)")
        if not any(a == api and clause.search(w) for a, w in found):
            missing.append((api, t))
    for d, s in casts:
        if not any(a == "Cast" and w.startswith(f"D = {GXX_NAME[d]}; S = {GXX_NAME[s]};") for a, w in found):
            missing.append(("Cast", f"{d} <- {s}"))
    assert not missing, missing


NEW_CALLS_SRC = r"""
#include "kernel_operator.h"
#include <cstdio>
#include <cstring>
using namespace AscendC;

int main() {
    AfTwin::Launch(1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> a, b;
        pipe.InitBuffer(a, 256);
        pipe.InitBuffer(b, 256);
        LocalTensor<float> f = a.Get<float>();
        f.SetValue(0, 1.0f);
        f.SetValue(1, -0.0f);
        Not(b.Get<float>(), f, 2);
        uint32_t bits[2];
        for (int i = 0; i < 2; ++i) {
            const float v = b.Get<float>().GetValue(i);
            std::memcpy(&bits[i], &v, 4);
        }
        std::printf("not_f %08x %08x\n", bits[0], bits[1]);
        LocalTensor<int16_t> s = a.Get<int16_t>();
        s.SetValue(0, static_cast<int16_t>(-2));
        s.SetValue(1, static_cast<int16_t>(0x1234));
        Ands(s, s, static_cast<int16_t>(255), 2);
        std::printf("ands %d %d\n", s.GetValue(0), s.GetValue(1));
    });
}
"""


def test_twin_not_on_floats_and_ands():
    from af_v35_twin_build import build_and_run

    if compiler() is None:
        pytest.skip("no C++ compiler")
    rc, out, err = build_and_run(NEW_CALLS_SRC)
    assert rc == 0, err
    assert "not_f c07fffff 7fffffff" in out  # ~0x3f800000, ~0x80000000
    assert "ands 254 52" in out  # 0xfffe & 0xff, 0x1234 & 0xff
