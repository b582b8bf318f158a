"""The quarter-vector byte load LoadAlign<T, DIST_UNPACK4_B8> and the low-byte store StoreAlign<T,
DIST_PACK4_B32> on the twin and the official headers.

A vector step of 4-byte values holds 1-byte values in every fourth byte lane: the load reads 64 bytes and
puts byte j in lane 4j with three zero bytes after it (the LoadAlign page's DIST_UNPACK4_B8 row). A vector
function written as generated kernels write it widens them to 4 bytes in two register Casts -- 1 -> 2 bytes
under the mask of the 2-byte lanes (twice the step's elements), 2 -> 4 bytes under the step's mask -- and
stores them; the values are numpy's sign / zero extension, over a tail, and the twin's counters are the
cost model's figures. The twin checks the 64 bytes read against the buffer and refuses the mode on
elements wider than a byte. The other way, a vector of 4-byte integers stores the low byte of each masked-on
lane contiguously (the StoreAlign page's DIST_PACK4_B32 row): the bytes of a 4-byte integer narrowed to
uint8 as the memory Cast keeps its low bits.
"""

from __future__ import annotations

import json

import af_v35_twin_build as twin_build  # loaded by conftest.py
import numpy as np
import pytest
from af_v35_regbase import reg_cost
from af_v35_regbase.reg_cost import LOAD, MASK, STORE, RegInstr

pytestmark = pytest.mark.twin

TRAITS = r"""
constexpr static AscendC::Reg::CastTrait kWiden = {AscendC::Reg::RegLayout::ZERO, AscendC::Reg::SatMode::UNKNOWN,
                                                   AscendC::Reg::MaskMergeMode::ZEROING, AscendC::RoundMode::UNKNOWN};
"""

VF = r"""
template <typename B, typename H, typename W>
__simd_vf__ inline void Widen(__ubuf__ W* dst, __ubuf__ B* src, uint32_t count)
{
    AscendC::Reg::RegTensor<B> b;
    AscendC::Reg::RegTensor<H> h;
    AscendC::Reg::RegTensor<W> w;
    AscendC::Reg::MaskReg mask;
    AscendC::Reg::MaskReg mask16;
    uint32_t halves = count * 2u;
    const uint32_t repeats = (count + 63u) / 64u;
    for (uint32_t i = 0; i < repeats; ++i) {
        mask = AscendC::Reg::UpdateMask<W>(count);
        AscendC::Reg::LoadAlign<B, AscendC::Reg::LoadDist::DIST_UNPACK4_B8>(b, src + i * 64);
        mask16 = AscendC::Reg::UpdateMask<uint16_t>(halves);
        AscendC::Reg::Cast<H, B, kWiden>(h, b, mask16);
        AscendC::Reg::Cast<W, H, kWiden>(w, h, mask);
        AscendC::Reg::StoreAlign(dst + i * 64, w, mask);
    }
}
"""

PACK_VF = r"""
template <typename W>
__simd_vf__ inline void LowBytes(__ubuf__ uint8_t* dst, __ubuf__ W* src, uint32_t count)
{
    AscendC::Reg::RegTensor<W> w;
    AscendC::Reg::MaskReg mask;
    const uint32_t repeats = (count + 63u) / 64u;
    for (uint32_t i = 0; i < repeats; ++i) {
        mask = AscendC::Reg::UpdateMask<W>(count);
        AscendC::Reg::LoadAlign(w, src + i * 64);
        AscendC::Reg::StoreAlign<W, AscendC::Reg::StoreDist::DIST_PACK4_B32>((__ubuf__ W*)(dst + i * 64), w, mask);
    }
}
"""

HARNESS = r"""
#include <cstdio>
#include <string>

template <typename B, typename W>
void Run(uint32_t n, uint32_t srcBytes) {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> bs, bd;
        pipe.InitBuffer(bs, srcBytes);
        pipe.InitBuffer(bd, (n * 4 + 255) / 256 * 256);
        LocalTensor<B> s = bs.Get<B>();
        LocalTensor<W> d = bd.Get<W>();
        for (uint32_t i = 0; i < n; ++i) s.SetValue(i, static_cast<B>(static_cast<int>(i * 37u + 128u)));
        if constexpr (std::is_same<B, int8_t>::value) {
            asc_vf_call<Widen<int8_t, int16_t, int32_t>>((__ubuf__ int32_t*)d.GetPhyAddr(),
                                                         (__ubuf__ int8_t*)s.GetPhyAddr(), n);
        } else {
            asc_vf_call<Widen<uint8_t, uint16_t, uint32_t>>((__ubuf__ uint32_t*)d.GetPhyAddr(),
                                                            (__ubuf__ uint8_t*)s.GetPhyAddr(), n);
        }
        SetFlag<HardEvent::V_S>(EVENT_ID0);
        WaitFlag<HardEvent::V_S>(EVENT_ID0);
        std::printf("out");
        for (uint32_t i = 0; i < n; ++i) std::printf(" %lld", static_cast<long long>(d.GetValue(i)));
        std::printf("\n");
    });
    AfTwin::WriteReportJson(stdout);
}

template <typename W>
void Pack(uint32_t n, uint32_t dstBytes) {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> bs, bd;
        pipe.InitBuffer(bs, (n * 4 + 255) / 256 * 256);
        pipe.InitBuffer(bd, dstBytes);
        LocalTensor<W> s = bs.Get<W>();
        LocalTensor<uint8_t> d = bd.Get<uint8_t>();
        for (uint32_t i = 0; i < n; ++i) s.SetValue(i, static_cast<W>(static_cast<int64_t>(i) * 100003 - 7000000));
        for (uint32_t i = 0; i < dstBytes; ++i) d.SetValue(i, 0xEE);
        SetFlag<HardEvent::S_V>(EVENT_ID0);
        WaitFlag<HardEvent::S_V>(EVENT_ID0);
        asc_vf_call<LowBytes<W>>((__ubuf__ uint8_t*)d.GetPhyAddr(), (__ubuf__ W*)s.GetPhyAddr(), n);
        SetFlag<HardEvent::V_S>(EVENT_ID0);
        WaitFlag<HardEvent::V_S>(EVENT_ID0);
        std::printf("out");
        for (uint32_t i = 0; i < dstBytes; ++i) std::printf(" %u", static_cast<unsigned>(d.GetValue(i)));
        std::printf("\n");
    });
    AfTwin::WriteReportJson(stdout);
}

int main(int argc, char** argv) {
    const std::string c = argc > 1 ? argv[1] : "";
    if (c == "pack_int32" || c == "pack_uint32") {
        const uint32_t pn = static_cast<uint32_t>(std::atoi(argv[2]));
        const uint32_t pb = static_cast<uint32_t>(std::atoi(argv[3]));
        if (c == "pack_int32") Pack<int32_t>(pn, pb);
        else Pack<uint32_t>(pn, pb);
        return 0;
    }
    const uint32_t n = argc > 2 ? static_cast<uint32_t>(std::atoi(argv[2])) : 100u;
    const uint32_t bytes = argc > 3 ? static_cast<uint32_t>(std::atoi(argv[3])) : 256u;
    if (c == "int8") Run<int8_t, int32_t>(n, bytes);
    else if (c == "uint8") Run<uint8_t, uint32_t>(n, bytes);
    else return 2;
    return 0;
}
"""


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(twin_build.KERNEL_HEAD + TRAITS + VF + PACK_VF + HARNESS)


def _step(byte: str, half: str, word: str) -> list[RegInstr]:
    """One step's instructions, as the cost model counts a generated function's."""
    return [
        RegInstr("UpdateMask", word, MASK),
        RegInstr("LoadAlign", byte, LOAD, elements=64),
        RegInstr("UpdateMask", "uint16", MASK),
        RegInstr("Cast", half, src=byte),
        RegInstr("Cast", word, src=half),
        RegInstr("StoreAlign", word, STORE),
    ]


@pytest.mark.parametrize(
    ("case", "types"), [("int8", ("int8", "int16", "int32")), ("uint8", ("uint8", "uint16", "uint32"))]
)
@pytest.mark.parametrize("n", [1, 64, 100, 200])
def test_the_bytes_widen_to_their_sign_or_zero_extension(program, case, types, n):
    rc, out, err = program(case, str(n), "256")
    assert rc == 0 and "AF_TWIN_ERROR" not in err, err
    lines = out.splitlines()
    got = np.array([int(v) for v in next(line for line in lines if line.startswith("out")).split()[1:]])
    raw = (np.arange(n, dtype=np.int64) * 37 + 128) % 256
    want = raw.astype(np.uint8).view(np.int8).astype(np.int64) if case == "int8" else raw
    np.testing.assert_array_equal(got, want)
    report = json.loads(next(line for line in lines if line.startswith("{")))
    steps = -(-n // 64)
    predicted = reg_cost.launch_counters(reg_cost.mix(_step(*types)), steps)
    measured = sum(report[k] for k in ("reg_loads", "reg_stores", "reg_compute", "reg_masks"))
    assert (measured, report["reg_cycles"]) == (predicted["reg_instructions"], predicted["reg_cycles"])
    assert report["reg_load_bytes"] == 64 * steps  # a quarter vector a step


def test_the_load_reads_64_bytes_inside_its_buffer(program):
    """A 32-byte source buffer is too short for one quarter-vector load: the twin reports it."""
    rc, _out, err = program("int8", "20", "32")
    assert rc == 86, err
    error = twin_build.twin_abort(rc, err)
    assert error["kind"] == "ub-out-of-bounds" and "LoadAlign" in error["message"], err


def test_the_functions_pass_the_official_check(checker):
    source = twin_build.kernel_source(
        TRAITS + VF + PACK_VF,
        """
LocalTensor<uint8_t> s = buf.Get<uint8_t>();
asc_vf_call<LowBytes<int32_t>>((__ubuf__ uint8_t*)s.GetPhyAddr(), (__ubuf__ int32_t*)s[256].GetPhyAddr(), 100u);
asc_vf_call<LowBytes<uint32_t>>((__ubuf__ uint8_t*)s.GetPhyAddr(), (__ubuf__ uint32_t*)s[256].GetPhyAddr(), 100u);
asc_vf_call<Widen<int8_t, int16_t, int32_t>>((__ubuf__ int32_t*)s[256].GetPhyAddr(), (__ubuf__ int8_t*)s.GetPhyAddr(), 100u);
asc_vf_call<Widen<uint8_t, uint16_t, uint32_t>>((__ubuf__ uint32_t*)s[256].GetPhyAddr(), (__ubuf__ uint8_t*)s.GetPhyAddr(), 100u);
""",
        ub_bytes=2048,
    )
    twin_build.official_acceptance(checker, source)


def test_twin_refuses_the_mode_on_wider_elements(twin_compile):
    text = twin_build.twin_rejection(
        twin_compile,
        twin_build.vf_kernel(
            "Reg::RegTensor<half> q;\nReg::LoadAlign<half, Reg::LoadDist::DIST_UNPACK4_B8>(q, (__ubuf__ half*)src);"
        ),
    )
    assert "DIST_UNPACK4_B8 load 1-byte elements" in text, text


@pytest.mark.parametrize("case", ["pack_int32", "pack_uint32"])
@pytest.mark.parametrize("n", [1, 64, 100, 200])
def test_the_low_bytes_are_stored_contiguously_under_the_mask(program, case, n):
    """Each masked-on lane's low byte, as the memory Cast to uint8 keeps it; bytes past ``n`` untouched."""
    out_bytes = -(-n // 64) * 64 + 32
    rc, out, err = program(case, str(n), str(out_bytes))
    assert rc == 0 and "AF_TWIN_ERROR" not in err, err
    lines = out.splitlines()
    got = np.array([int(v) for v in next(line for line in lines if line.startswith("out")).split()[1:]])
    values = np.arange(n, dtype=np.int64) * 100003 - 7000000
    np.testing.assert_array_equal(got[:n], values.astype(np.uint64).astype(np.uint8))
    assert (got[n:] == 0xEE).all()  # the lanes the mask leaves off write nothing
    report = json.loads(next(line for line in lines if line.startswith("{")))
    word = "int32" if case == "pack_int32" else "uint32"
    steps = -(-n // 64)
    step = [
        RegInstr("UpdateMask", word, MASK),
        RegInstr("LoadAlign", word, LOAD),
        RegInstr("StoreAlign", word, STORE),
    ]
    predicted = reg_cost.launch_counters(reg_cost.mix(step), steps)
    measured = sum(report[k] for k in ("reg_loads", "reg_stores", "reg_compute", "reg_masks"))
    assert (measured, report["reg_cycles"]) == (predicted["reg_instructions"], predicted["reg_cycles"])
    assert report["reg_store_bytes"] == n  # one byte a masked-on lane


def test_twin_refuses_the_packed_store_on_narrower_elements(twin_compile):
    text = twin_build.twin_rejection(
        twin_compile,
        twin_build.vf_kernel(
            "uint32_t n = 128;\nReg::MaskReg m = Reg::UpdateMask<half>(n);\nReg::RegTensor<half> q;\n"
            "Reg::LoadAlign(q, (__ubuf__ half*)src);\n"
            "Reg::StoreAlign<half, Reg::StoreDist::DIST_PACK4_B32>((__ubuf__ half*)src, q, m);"
        ),
    )
    assert "DIST_PACK4_B32 for 4-byte element registers" in text, text
