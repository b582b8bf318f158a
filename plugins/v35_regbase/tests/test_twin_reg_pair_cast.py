"""Cast<float, int64_t> of a RegTraitNumTwo register on the twin and the official headers.

A vector function converting int64 values to float32 loads 64 of them into a RegTraitNumTwo register
(``LoadAlign`` of one is the dual load ``DIST_DINTLV_B32``: the low words in ``reg[0]``, the high words in
``reg[1]``) and converts them with the register ``Cast`` (the 3510 pair sequence: MaskInterleave, Interleave,
two vcvt s642f32, DeInterleave). The twin gives every rounding mode's float32 of the exact 64-bit value, zero
under the mask's off lanes, counts the sequence as reg_cost.CAST_B64_PAIR does, and reports a load past its
buffer. The official headers accept the form; they and the twin reject a register pair as the destination.
"""

from __future__ import annotations

import af_v35_twin_build as twin_build  # loaded by conftest.py
import numpy as np
import pytest
from af_v35_regbase import reg_cost
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.twin

MODES = ("CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC", "CAST_ROUND")


def _function(mode: str) -> str:
    return f"""
constexpr AscendC::Reg::CastTrait kTrait_{mode} = {{AscendC::Reg::RegLayout::ZERO, AscendC::Reg::SatMode::UNKNOWN,
    AscendC::Reg::MaskMergeMode::ZEROING, AscendC::RoundMode::{mode}}};
__simd_vf__ inline void Convert_{mode}(__ubuf__ float* dst, __ubuf__ int64_t* src, uint32_t count)
{{
    AscendC::Reg::RegTensor<int64_t, AscendC::Reg::RegTraitNumTwo> wide;
    AscendC::Reg::RegTensor<float> out;
    AscendC::Reg::MaskReg mask = AscendC::Reg::UpdateMask<float>(count);
    AscendC::Reg::LoadAlign(wide, src);
    AscendC::Reg::Cast<float, int64_t, kTrait_{mode}>(out, wide, mask);
    AscendC::Reg::StoreAlign(dst, out, mask);
}}
"""


HARNESS = (
    r"""
#include <cstdio>

namespace {
"""
    + "".join(_function(mode) for mode in MODES)
    + r"""
// stdin: mode count buffer_bytes, then count int64 values. One step: the values converted to float32 with
// the mode (0 .. 4 in MODES order) from a buffer of buffer_bytes; prints 64 floats as bits (the lanes past
// count must stay as the output buffer held them) and the twin's report.
void Run() {
    uint32_t mode = 0, count = 0, bytes = 0;
    if (std::scanf("%u %u %u", &mode, &count, &bytes) != 3) std::exit(3);
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> in, out;
        pipe.InitBuffer(in, bytes);
        pipe.InitBuffer(out, 256);
        LocalTensor<int64_t> x = in.Get<int64_t>();
        LocalTensor<float> y = out.Get<float>();
        for (uint32_t i = 0; i < bytes / 8; ++i) {
            long long v = 0;
            if (i < count && std::scanf("%lld", &v) != 1) std::exit(3);
            x.SetValue(i, static_cast<int64_t>(v));
        }
        for (uint32_t i = 0; i < 64; ++i) y.SetValue(i, -7.0f);
        SetFlag<HardEvent::S_V>(EVENT_ID0);
        WaitFlag<HardEvent::S_V>(EVENT_ID0);
        auto* dst = (__ubuf__ float*)y.GetPhyAddr();
        auto* src = (__ubuf__ int64_t*)x.GetPhyAddr();
        if (mode == 0) asc_vf_call<Convert_CAST_RINT>(dst, src, count);
        if (mode == 1) asc_vf_call<Convert_CAST_FLOOR>(dst, src, count);
        if (mode == 2) asc_vf_call<Convert_CAST_CEIL>(dst, src, count);
        if (mode == 3) asc_vf_call<Convert_CAST_TRUNC>(dst, src, count);
        if (mode == 4) asc_vf_call<Convert_CAST_ROUND>(dst, src, count);
        SetFlag<HardEvent::V_S>(EVENT_ID0);
        WaitFlag<HardEvent::V_S>(EVENT_ID0);
        std::printf("out");
        for (uint32_t i = 0; i < 64; ++i) {
            const float f = y.GetValue(i);
            uint32_t bits = 0;
            std::memcpy(&bits, &f, 4);
            std::printf(" %u", bits);
        }
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


def _run(program, mode: str, values: list[int], buffer_bytes: int = 512):
    head = f"{MODES.index(mode)} {len(values)} {buffer_bytes}\n"
    return program(stdin=head + " ".join(map(str, values)) + "\n")


def _float32(value: int, mode: str) -> np.float32:
    """The float32 of the exact integer ``value`` rounded by ``mode``: the two float32 neighbours of the value
    found from the nearest one and compared as exact integers (a float32 of magnitude 2^24 or more is one)."""
    near = np.float32(value)  # numpy rounds int -> float32 to nearest, ties to even
    exact = int(near)
    if exact == value:
        return near
    below = near if exact < value else np.nextafter(near, np.float32(-np.inf))
    above = near if exact > value else np.nextafter(near, np.float32(np.inf))
    if mode == "CAST_RINT":
        return near
    if mode == "CAST_FLOOR":
        return below
    if mode == "CAST_CEIL":
        return above
    if mode == "CAST_TRUNC":
        return below if value > 0 else above
    # CAST_ROUND: to nearest, ties away from zero
    low_gap, high_gap = value - int(below), int(above) - value
    if low_gap != high_gap:
        return below if low_gap < high_gap else above
    return above if value > 0 else below


EDGES = [
    0,
    1,
    -1,
    2**24 + 1,
    2**31,
    -(2**31) - 1,
    2**32 + 2**8,  # a tie at 2^32: ulp 512, the value halfway
    2**32 + 3 * 2**8,
    2**40 + 2**16 + 1,  # just past a tie: rounds up in every nearest mode
    2**63 - 1,
    -(2**63),
    -(2**63) + 2**39,  # a tie at -2^63 (ulp 2^40)
    (2**55) + (2**31),  # a tie at 2^55 with an odd neighbour below
    123456789012345678,
]


def _check(program, mode: str, values: list[int]) -> dict:
    rc, out, err = _run(program, mode, values)
    assert rc == 0 and "AF_TWIN_ERROR" not in err, err
    report, rows = twin_build.report_and_rows(out, "out")
    got = np.array(rows["out"], dtype=np.uint32)
    want = np.array([_float32(v, mode) for v in values], dtype=np.float32).view(np.uint32)
    np.testing.assert_array_equal(got[: len(values)], want, err_msg=mode)
    assert (got[len(values) :] == np.float32(-7.0).view(np.uint32)).all()  # masked off: not stored
    return report


@pytest.mark.parametrize("mode", MODES)
def test_each_rounding_mode_converts_the_exact_int64(program, mode):
    """Ties, values one past a tie and the int64 edges give the float32 the mode picks from the exact value
    (no double rounding through the words)."""
    _check(program, mode, EDGES)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=64),
    st.sampled_from(MODES),
)
def test_random_int64_values_convert_like_the_reference(program, values, mode):
    _check(program, mode, values)


def test_the_pair_cast_is_counted_as_the_cost_model_counts_it(program):
    """One dual load of 512 bytes, the Cast's four computing instructions and one mask instruction, one store;
    the cycles those of reg_cost (the dual load 2, the Cast's sequence, the store 1)."""
    report = _check(program, "CAST_RINT", EDGES)
    cast = reg_cost.issue(reg_cost.RegInstr("Cast", "float32", src="int64"))
    assert (cast.compute, cast.masks) == (4, 1)
    assert (report["reg_loads"], report["reg_load_bytes"]) == (1, 512)
    assert report["reg_compute"] == cast.compute
    assert report["reg_masks"] == 1 + cast.masks  # the UpdateMask and the MaskInterleave
    assert report["reg_cycles"] == 2 + cast.cycles + 1, report


def test_a_pair_load_past_its_buffer_is_reported(program):
    """The load of a RegTraitNumTwo register reads 512 bytes even for one value: 256 bytes are too short."""
    rc, _out, err = _run(program, "CAST_RINT", [5], buffer_bytes=256)
    error = twin_build.twin_abort(rc, err)
    assert error["kind"] == "ub-out-of-bounds" and "LoadAlign" in error["message"], err


PAIR_CAST = twin_build.vf_kernel(
    """
    uint32_t n = 64;
    static constexpr Reg::CastTrait trait = {Reg::RegLayout::ZERO, Reg::SatMode::UNKNOWN, Reg::MaskMergeMode::ZEROING,
                                      RoundMode::CAST_RINT};
    Reg::RegTensor<int64_t, Reg::RegTraitNumTwo> wide;
    Reg::RegTensor<float> out;
    Reg::MaskReg mask = Reg::UpdateMask<float>(n);
    Reg::LoadAlign(wide, src);
    Reg::Cast<float, int64_t, trait>(out, wide, mask);
    Reg::StoreAlign((__ubuf__ float*)src, out, mask);
    """,
    "int64_t",
)


def test_official_headers_accept_the_pair_cast(checker):
    twin_build.official_acceptance(checker, PAIR_CAST)


def test_twin_accepts_the_pair_cast(twin_compile):
    twin_build.twin_acceptance(twin_compile, PAIR_CAST)


# A RegTraitNumTwo destination: the 3510 CastImpl of the pair form asserts "RegTensor dstReg can only be
# RegTraitNumOne"; the twin has no float register pair and rejects it too.
ILLEGAL_PAIR_DESTINATION = PAIR_CAST.replace(
    "Reg::RegTensor<float> out;", "Reg::RegTensor<float, Reg::RegTraitNumTwo> out;"
).replace("Reg::StoreAlign((__ubuf__ float*)src, out, mask);", "")


def test_twin_rejects_a_pair_destination(twin_compile):
    text = twin_build.twin_rejection(twin_compile, ILLEGAL_PAIR_DESTINATION)
    assert "RegTraitNumTwo" in text, text


def test_official_headers_reject_a_pair_destination(checker):
    text = twin_build.official_rejection(checker, ILLEGAL_PAIR_DESTINATION, in_file="reg_compute")
    assert "RegTraitNumOne" in text, text


# Cast<half, int64_t> from the pair: the 3510 CastImpl falls through every form it dispatches (its final
# static_assert joins the forms with && and so never fires) and issues nothing; the twin refuses it rather
# than emulate a conversion that does not happen.
PAIR_TO_HALF = (
    PAIR_CAST.replace("Reg::RegTensor<float> out;", "Reg::RegTensor<half> out;")
    .replace("Cast<float, int64_t, trait>", "Cast<half, int64_t, trait>")
    .replace("StoreAlign((__ubuf__ float*)src", "StoreAlign((__ubuf__ half*)src")
)


def test_twin_rejects_a_pair_cast_to_half(twin_compile):
    text = twin_build.twin_rejection(twin_compile, PAIR_TO_HALF)
    assert "int64_t -> float" in text, text
