"""The dual store StoreAlign<T, DIST_INTLV_B32>(dst, src0, src1, mask) on the twin and the official headers.

A vector function widening int32 values to int64 keeps them as two int32 registers, the low words and the
high words, and stores the pair interleaved: dst[2j] = src0[j], dst[2j + 1] = src1[j]. The StoreDist
table says the mode ignores the mask and writes 2 * VL (512 bytes), so the twin writes all 64 pairs, checks
the 512 bytes lie in one live buffer, counts one store of 512 bytes at 2 cycles, and checks the lanes under
the mask were computed. The official headers accept the form and reject a dual store without interleaving,
as the twin does.
"""

from __future__ import annotations

import af_v35_twin_build as twin_build  # loaded by conftest.py
import numpy as np
import pytest

pytestmark = pytest.mark.twin

HARNESS = (
    r"""
#include <cstdio>

namespace {
// stdin: count buffer_bytes, then count int32 values. One step: the values' low words and their signs
// (Mins 0, Maxs -1) stored as int64 by the dual store into a buffer of buffer_bytes; prints the buffer as
// int64 and the twin's report.
__simd_vf__ inline void Widen(__ubuf__ int32_t* dst, __ubuf__ int32_t* src, uint32_t count)
{
    AscendC::Reg::RegTensor<int32_t> low;
    AscendC::Reg::RegTensor<int32_t> high;
    AscendC::Reg::MaskReg mask = AscendC::Reg::UpdateMask<int32_t>(count);
    AscendC::Reg::LoadAlign(low, src);
    AscendC::Reg::Mins(high, low, 0, mask);
    AscendC::Reg::Maxs(high, high, -1, mask);
    AscendC::Reg::StoreAlign<int32_t, AscendC::Reg::StoreDist::DIST_INTLV_B32>(dst, low, high, mask);
}

void Run() {
    uint32_t count = 0, bytes = 0;
    if (std::scanf("%u %u", &count, &bytes) != 2) std::exit(3);
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> in, out;
        pipe.InitBuffer(in, 256);
        pipe.InitBuffer(out, bytes);
        LocalTensor<int32_t> x = in.Get<int32_t>();
        LocalTensor<int64_t> y = out.Get<int64_t>();
        for (uint32_t i = 0; i < 64; ++i) {
            long v = 0;
            if (i < count && std::scanf("%ld", &v) != 1) std::exit(3);
            x.SetValue(i, static_cast<int32_t>(v));
        }
        for (uint32_t i = 0; i < bytes / 8; ++i) y.SetValue(i, static_cast<int64_t>(-7));
        SetFlag<HardEvent::S_V>(EVENT_ID0);
        WaitFlag<HardEvent::S_V>(EVENT_ID0);
        asc_vf_call<Widen>((__ubuf__ int32_t*)y.GetPhyAddr(), (__ubuf__ int32_t*)x.GetPhyAddr(), count);
        SetFlag<HardEvent::V_S>(EVENT_ID0);
        WaitFlag<HardEvent::V_S>(EVENT_ID0);
        std::printf("out");
        for (uint32_t i = 0; i < bytes / 8; ++i) std::printf(" %lld", static_cast<long long>(y.GetValue(i)));
        std::printf("\n");
    });
    AfTwin::WriteReportJson(stdout);
}
"""
    + twin_build.RUN_MAIN
)


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(twin_build.KERNEL_HEAD + HARNESS)


def _run(program, values, buffer_bytes):
    return program(stdin=f"{len(values)} {buffer_bytes}\n" + " ".join(map(str, values)) + "\n")


@pytest.mark.parametrize("count", [64, 37, 1])
def test_the_pair_is_stored_interleaved_as_int64(program, count):
    """The first `count` int64 values are the int32 values sign-extended; all 64 pairs are written (the mask
    is ignored): past `count` they hold the registers' other lanes, never the buffer's old bytes."""
    rng = np.random.default_rng(count)
    values = rng.integers(-(2**31), 2**31, count).tolist()
    values[:4] = [-(2**31), 2**31 - 1, -1, 0][: min(4, count)]
    rc, out, err = _run(program, values, 1024)
    assert rc == 0 and "AF_TWIN_ERROR" not in err, err
    report, rows = twin_build.report_and_rows(out, "out")
    got = np.array(rows["out"], dtype=np.int64)
    np.testing.assert_array_equal(got[:count], np.array(values, dtype=np.int64))
    assert (got[64:] == -7).all() and (got[count:64] != -7).all()  # 512 bytes written, not one more
    assert (report["reg_stores"], report["reg_store_bytes"]) == (1, 512)
    # LoadAlign 1 + Mins 1 + Maxs 1 + the dual store 2 (128 elements at 64 per cycle); UpdateMask none
    assert report["reg_cycles"] == 5, report


def test_a_dual_store_past_its_buffer_is_reported(program):
    """Even a one-element tail writes 512 bytes: a 256-byte buffer is too short."""
    rc, _out, err = _run(program, [5], 256)
    error = twin_build.twin_abort(rc, err)
    assert error["kind"] == "ub-out-of-bounds" and "StoreAlign" in error["message"], err


DUAL_STORE = twin_build.vf_kernel(
    """
    uint32_t n = 64;
    Reg::RegTensor<int32_t> a;
    Reg::RegTensor<int32_t> b;
    Reg::MaskReg mask = Reg::UpdateMask<int32_t>(n);
    Reg::LoadAlign(a, src);
    Reg::LoadAlign(b, src);
    Reg::StoreAlign<int32_t, Reg::StoreDist::DIST_INTLV_B32>(src, a, b, mask);
    """,
    "int32_t",
)


def test_official_headers_accept_the_dual_store(checker):
    twin_build.official_acceptance(checker, DUAL_STORE)


# The dual store takes the interleaving modes only (CheckStoreDist<2, dist>): DIST_NORM is rejected by the
# official headers and by the twin alike.
ILLEGAL_DUAL_NORM = DUAL_STORE.replace("StoreDist::DIST_INTLV_B32", "StoreDist::DIST_NORM")


def test_twin_rejects_a_dual_store_without_interleaving(twin_compile):
    text = twin_build.twin_rejection(twin_compile, ILLEGAL_DUAL_NORM)
    assert "DIST_INTLV" in text, text


def test_official_headers_reject_a_dual_store_without_interleaving(checker):
    twin_build.official_rejection(checker, ILLEGAL_DUAL_NORM, in_file=None)
