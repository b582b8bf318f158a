"""The twin's mask-register logic (Reg::And / Or / Xor / Not on MaskReg) against numpy and the official headers.

A vector function written as a generated kernel writes it: two comparisons into mask registers, their
And / Or / Xor and the Not of one, each turned into 0 / 1 lanes by a Select and summed with weights 1, 2,
4, 8. The twin runs it over 200 elements (a tail in the last vector); numpy checks every lane, and the Not
stored under a full mask shows the zeroing rule (no lane past the tail turns on). The same function passes
the official type check; a misuse the official headers reject at compile time is rejected by the twin too,
and run-time misuse (a mask never set, masks of two element widths) aborts with a named error.
"""

from __future__ import annotations

import json

import af_v35_twin_build as twin_build  # loaded by conftest.py
import numpy as np
import pytest

pytestmark = pytest.mark.twin


VF_SRC = r"""
// z[i] = (a & b) + 2 (a | b) + 4 (a ^ b) + 8 (!a) with a = x > y, b = x < 0.5 (tail lanes masked);
// w = Select(1, 0, !a) stored under a full mask: 0 past the tail (Not zeroes what its mask leaves off)
__simd_vf__ inline void MaskLogicF32(__ubuf__ float* z, __ubuf__ float* w, __ubuf__ float* x, __ubuf__ float* y,
                                     uint32_t count, uint16_t repeats)
{
    Reg::RegTensor<float> a;
    Reg::RegTensor<float> b;
    Reg::RegTensor<float> one;
    Reg::RegTensor<float> zero;
    Reg::RegTensor<float> t;
    Reg::RegTensor<float> acc;
    Reg::MaskReg mask;
    Reg::MaskReg gt;
    Reg::MaskReg lt;
    Reg::MaskReg both;
    Reg::MaskReg either;
    Reg::MaskReg differ;
    Reg::MaskReg notGt;
    Reg::MaskReg full = Reg::CreateMask<float>();
    Reg::Duplicate(one, 1.0f);
    Reg::Duplicate(zero, 0.0f);
    for (uint16_t i = 0; i < repeats; ++i) {
        mask = Reg::UpdateMask<float>(count);
        Reg::LoadAlign(a, x + i * 64);
        Reg::LoadAlign(b, y + i * 64);
        Reg::Compare<float, CMPMODE::GT>(gt, a, b, mask);
        Reg::Compares<float, CMPMODE::LT>(lt, a, 0.5f, mask);
        Reg::And(both, gt, lt, mask);
        Reg::Or(either, gt, lt, mask);
        Reg::Xor(differ, gt, lt, mask);
        Reg::Not(notGt, gt, mask);
        Reg::Select(acc, one, zero, both);
        Reg::Select(t, one, zero, either);
        Reg::Muls(t, t, 2.0f, mask);
        Reg::Add(acc, acc, t, mask);
        Reg::Select(t, one, zero, differ);
        Reg::Muls(t, t, 4.0f, mask);
        Reg::Add(acc, acc, t, mask);
        Reg::Select(t, one, zero, notGt);
        Reg::StoreAlign(w + i * 64, t, full);
        Reg::Muls(t, t, 8.0f, mask);
        Reg::Add(acc, acc, t, mask);
        Reg::StoreAlign(z + i * 64, acc, mask);
    }
}
"""

BAD_VF_SRC = r"""
__simd_vf__ inline void NeverSet(__ubuf__ float* z, __ubuf__ float* x)
{
    Reg::RegTensor<float> a;
    Reg::MaskReg mask = Reg::CreateMask<float>();
    Reg::MaskReg unset;
    Reg::MaskReg out;
    Reg::LoadAlign(a, x);
    Reg::Not(out, unset, mask);
    Reg::Select(a, a, a, out);
    Reg::StoreAlign(z, a, mask);
}

__simd_vf__ inline void TwoWidths(__ubuf__ float* z, __ubuf__ float* x)
{
    Reg::RegTensor<float> a;
    Reg::MaskReg mask = Reg::CreateMask<float>();
    Reg::MaskReg halves = Reg::CreateMask<half>();
    Reg::MaskReg out;
    Reg::LoadAlign(a, x);
    Reg::And(out, mask, halves, mask);
    Reg::Select(a, a, a, out);
    Reg::StoreAlign(z, a, mask);
}
"""

HARNESS = r"""
#include <cstdio>
#include <cstring>
#include <string>

namespace {

constexpr uint32_t kCount = 200;
constexpr uint16_t kRepeats = 4;
constexpr uint32_t kPadded = 256;

void Run() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> bx, by, bz, bw;
        pipe.InitBuffer(bx, kPadded * 4);
        pipe.InitBuffer(by, kPadded * 4);
        pipe.InitBuffer(bz, kPadded * 4);
        pipe.InitBuffer(bw, kPadded * 4);
        LocalTensor<float> x = bx.Get<float>();
        LocalTensor<float> y = by.Get<float>();
        LocalTensor<float> z = bz.Get<float>();
        LocalTensor<float> w = bw.Get<float>();
        for (LocalTensor<float>* t : {&x, &y}) {
            for (uint32_t i = 0; i < kCount; ++i) {
                float v;
                if (std::scanf("%f", &v) != 1) std::exit(3);
                t->SetValue(i, v);
            }
        }
        asc_vf_call<MaskLogicF32>((__ubuf__ float*)z.GetPhyAddr(), (__ubuf__ float*)w.GetPhyAddr(),
                                  (__ubuf__ float*)x.GetPhyAddr(), (__ubuf__ float*)y.GetPhyAddr(), kCount, kRepeats);
        std::printf("z");
        for (uint32_t i = 0; i < kCount; ++i) std::printf(" %g", z.GetValue(i));
        std::printf("\nw");
        for (uint32_t i = 0; i < kPadded; ++i) std::printf(" %g", w.GetValue(i));
        std::printf("\n");
    });
    AfTwin::WriteReportJson(stdout);
}

template <auto vf>
void RunBad() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> bx, bz;
        pipe.InitBuffer(bx, 256);
        pipe.InitBuffer(bz, 256);
        asc_vf_call<vf>((__ubuf__ float*)bz.Get<float>().GetPhyAddr(), (__ubuf__ float*)bx.Get<float>().GetPhyAddr());
    });
}

}  // namespace

int main(int argc, char** argv) {
    const std::string c = argc > 1 ? argv[1] : "";
    if (c == "logic") Run();
    else if (c == "never_set") RunBad<NeverSet>();
    else if (c == "two_widths") RunBad<TwoWidths>();
    else return 2;
    return 0;
}
"""

PROGRAM = twin_build.KERNEL_HEAD + VF_SRC + BAD_VF_SRC + HARNESS

OFFICIAL_KERNEL = twin_build.kernel_source(
    VF_SRC,
    r"""
    LocalTensor<float> f = buf.Get<float>();
    asc_vf_call<MaskLogicF32>((__ubuf__ float*)f.GetPhyAddr(), (__ubuf__ float*)f[256].GetPhyAddr(),
                              (__ubuf__ float*)f[512].GetPhyAddr(), (__ubuf__ float*)f[768].GetPhyAddr(), 200u,
                              static_cast<uint16_t>(4));
""",
    ub_bytes=4 * 1024,
    name="mask_logic_kernel",
)

# A mask op called with an element type (the MaskReg overloads take none): the template RegTensor overload
# is the only candidate, and its body needs the register's element type, which a MaskReg has not.
ILLEGAL = twin_build.vf_kernel(
    """
    Reg::MaskReg mask = Reg::CreateMask<float>();
    Reg::MaskReg out;
    Reg::Not<float>(out, mask, mask);
    (void)src;
    """
)


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(PROGRAM)


def _run(program, x: np.ndarray, y: np.ndarray):
    stdin = " ".join(f"{v:.9g}" for v in x) + "\n" + " ".join(f"{v:.9g}" for v in y) + "\n"
    rc, out, err = program("logic", stdin=stdin)
    assert rc == 0, err
    lines = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line[:1] in "zw"}
    report = json.loads([line for line in out.splitlines() if line.startswith("{")][0])
    return np.array(lines["z"], dtype=np.float32), np.array(lines["w"], dtype=np.float32), report


def test_mask_logic_matches_numpy_and_zeroes_lanes_past_the_tail(program):
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, 200).astype(np.float32)
    y = rng.uniform(-2, 2, 200).astype(np.float32)
    x[:4] = [0.5, 0.25, np.nan, -0.0]  # the edges: equal to the scalar, below it, NaN (every compare false)
    z, w, report = _run(program, x, y)
    a, b = x > y, x < np.float32(0.5)
    want = (a & b) + 2 * (a | b) + 4 * (a ^ b) + 8 * ~a
    np.testing.assert_array_equal(z, want.astype(np.float32))
    np.testing.assert_array_equal(w[:200], (~a).astype(np.float32))
    assert not w[200:].any()  # Not under the step mask: the 56 lanes past the tail stay off
    # per step: UpdateMask + 4 mask-logic instructions; CreateMask once
    assert report["reg_masks"] == 1 + 4 * 5
    # per step: 2 loads, Compare, Compares, 4 Selects, 3 Muls, 3 Adds, 2 stores (1 cycle each) and the 4
    # mask-logic instructions (1 cycle each, table 5's MaskReg figure); the 2 Duplicates once
    assert report["reg_cycles"] == 2 + 4 * (2 + 2 + 4 + 3 + 3 + 2 + 4)


@pytest.mark.parametrize(
    ("case", "text"),
    [
        ("never_set", "Reg::Not: mask src0 was never set"),
        ("two_widths", "made for 4-, 4- and 2-byte elements"),
    ],
)
def test_mask_logic_misuse_aborts_with_a_named_error(program, case, text):
    twin_build.assert_misuse_aborts(program, case, "reg-mask", text)


def test_twin_rejects_a_mask_op_with_an_element_type(twin_compile):
    twin_build.twin_rejection(twin_compile, ILLEGAL)


def test_mask_logic_passes_the_official_check(checker):
    twin_build.official_acceptance(checker, OFFICIAL_KERNEL)


def test_official_headers_reject_a_mask_op_with_an_element_type(checker):
    twin_build.official_rejection(checker, ILLEGAL)


def test_mask_logic_is_clean_under_the_sanitizers(twin_compile, program):
    """ASan / UBSan build of the same program: the same output, no report."""
    sanitized = twin_compile(PROGRAM, sanitize=True)
    rng = np.random.default_rng(4)
    x, y = rng.uniform(-2, 2, 200), rng.uniform(-2, 2, 200)
    stdin = " ".join(f"{v:.9g}" for v in x) + "\n" + " ".join(f"{v:.9g}" for v in y) + "\n"
    rc, out, err = sanitized("logic", stdin=stdin)
    assert rc == 0, err
    assert out == program("logic", stdin=stdin)[1]
