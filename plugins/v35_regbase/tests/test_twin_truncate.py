"""The twin's Truncate<T, roundMode> (rounding to an integral value in the same float type).

Expected values are written out by hand; the dtype and round-mode rules are
the ones of the official dav_3510 TruncateImpl (kernel_operator_vec_vconv_impl.h),
which the twin repeats as static_asserts of the 3510 table (af_twin/api_dtypes.h).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.twin

PROGRAM = r"""
#include "kernel_operator.h"

#include <cstdio>
#include <initializer_list>

using namespace AscendC;

namespace {

template <class T, RoundMode kMode>
void Row(const char* tag, std::initializer_list<float> values) {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> a, b;
        pipe.InitBuffer(a, 64);
        pipe.InitBuffer(b, 64);
        LocalTensor<T> src = a.Get<T>();
        LocalTensor<T> dst = b.Get<T>();
        uint32_t n = 0;
        for (float v : values) src.SetValue(n++, T(v));
        Truncate<T, kMode>(dst, src, n);
        std::printf("%s", tag);
        for (uint32_t i = 0; i < n; ++i) std::printf(" %g", static_cast<double>(static_cast<float>(dst.GetValue(i))));
        std::printf("\n");
    });
}

}  // namespace

int main() {
    const std::initializer_list<float> v = {2.5f, -2.5f, 1.5f, -1.7f, 0.5f, 3.25f};
    Row<float, RoundMode::CAST_RINT>("f_rint", v);
    Row<float, RoundMode::CAST_FLOOR>("f_floor", v);
    Row<float, RoundMode::CAST_CEIL>("f_ceil", v);
    Row<float, RoundMode::CAST_ROUND>("f_round", v);
    Row<float, RoundMode::CAST_TRUNC>("f_trunc", v);
    Row<half, RoundMode::CAST_RINT>("h_rint", v);
    Row<half, RoundMode::CAST_FLOOR>("h_floor", {1000.5f, -0.25f, 2049.0f});
    Row<bfloat16_t, RoundMode::CAST_CEIL>("b_ceil", {1.25f, -1.25f, 300.0f});
    Row<bfloat16_t, RoundMode::CAST_RINT>("b_rint", {0.5f, 1.5f, -2.5f});
    return 0;
}
"""


def rows(stdout: str) -> dict[str, list[float]]:
    out = {}
    for line in stdout.splitlines():
        tag, *values = line.split()
        out[tag] = [float(v) for v in values]
    return out


def test_truncate_modes_on_every_legal_type(twin_run):
    rc, stdout, stderr = twin_run(PROGRAM)
    assert rc == 0, stderr
    got = rows(stdout)
    assert got["f_rint"] == [2, -2, 2, -2, 0, 3]
    assert got["f_floor"] == [2, -3, 1, -2, 0, 3]
    assert got["f_ceil"] == [3, -2, 2, -1, 1, 4]
    assert got["f_round"] == [3, -3, 2, -2, 1, 3]
    assert got["f_trunc"] == [2, -2, 1, -1, 0, 3]
    assert got["h_rint"] == [2, -2, 2, -2, 0, 3]
    assert got["h_floor"] == [1000, -1, 2048]  # 2049 is not a half: it is stored as 2048
    assert got["b_ceil"] == [2, -1, 300]
    assert got["b_rint"] == [0, 2, -2]


ILLEGAL = r"""
#include "kernel_operator.h"
using namespace AscendC;
void F(const LocalTensor<{T}>& d, const LocalTensor<{T}>& s) {{ Truncate<{T}, RoundMode::{MODE}>(d, s, 8u); }}
int main() {{ return 0; }}
"""


@pytest.mark.parametrize(
    "ctype,mode,message",
    [
        ("int32_t", "CAST_FLOOR", "Truncate: element type not accepted by the 3510 implementation"),
        ("float", "CAST_NONE", "Truncate: round mode not accepted by the 3510 implementation"),
        ("half", "CAST_ODD", "Truncate: round mode not accepted by the 3510 implementation"),
    ],
)
def test_truncate_rejects_what_the_official_implementation_rejects(twin_run, ctype, mode, message):
    from af_v35_twin_build import TwinBuildError

    with pytest.raises(TwinBuildError) as info:
        twin_run(ILLEGAL.format(T=ctype, MODE=mode))
    assert message in str(info.value)
