"""The twin is no more permissive than the official 3510 API: const GM pointers, the SIMT math header,
the packed offsets of 1-/2-byte Gather and its element types, the UB budget of a VF_CALL kernel, and
stale scalar reads of GM lines other cores wrote.

Runtime rules run as cases of one program (argv[1] names the case; an abort case ends with exit
status 86 and one ``AF_TWIN_ERROR`` line); compile-time rules are checked with ``g++ -fsyntax-only``,
which must fail with the twin's message.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
from af_v35_twin_build import CASE_MAIN  # loaded by conftest.py

pytestmark = pytest.mark.twin

ERROR_LINE = re.compile(r"AF_TWIN_ERROR kind=(?P<kind>[a-z-]+) core=(?P<core>-?\d+): (?P<message>.*)")


def syntax_errors(source: str, tmp_path, flags=()) -> str:
    """g++ -fsyntax-only over `source` against the twin; the compiler's output ('' when it compiles)."""
    tb = sys.modules["af_v35_twin_build"]
    if tb.compiler() is None:
        pytest.skip("no C++ compiler")
    return tb.syntax_errors(source, tmp_path, extra_flags=flags)


# ---------------------------------------------------------------------------
# Compile-time rules.


def test_gm_get_phy_addr_is_read_only_and_the_offset_form_writable(tmp_path):
    ok = r"""
#include "kernel_operator.h"
void F(AscendC::GlobalTensor<float>& g) {
    const __gm__ float* in = g.GetPhyAddr();
    __gm__ float* out = g.GetPhyAddr(0);
    out[1] = in[0];
}
"""
    assert syntax_errors(ok, tmp_path) == ""
    bad = ok.replace("const __gm__ float* in = g.GetPhyAddr();", "__gm__ float* in = g.GetPhyAddr();")
    errors = syntax_errors(bad, tmp_path)
    assert "invalid conversion from 'const float*' to 'float*'" in errors.replace("‘", "'").replace("’", "'")


SIMT_MATH = r"""
__simt_vf__ inline void Lanes(__gm__ float* out, float x)
{
    out[0] = expf(x) + logf(x) + sqrtf(x) + exp2f(x) + fabsf(x);
}
"""


def test_simt_math_without_its_header_does_not_compile(tmp_path):
    errors = syntax_errors('#include "kernel_operator.h"\n' + SIMT_MATH, tmp_path)
    for name in ("expf", "logf", "sqrtf", "exp2f", "fabsf"):
        assert (
            f'{name}() is a SIMT math function: #include \\"simt_api/math_functions.h\\"' in errors
            or f'{name}() is a SIMT math function: #include "simt_api/math_functions.h"' in errors
        ), name


@pytest.mark.parametrize("order", ["after", "before"])
def test_simt_math_with_its_header_computes_in_float(twin_run, order):
    includes = ['#include "kernel_operator.h"', '#include "simt_api/math_functions.h"']
    if order == "before":
        includes.reverse()
    source = (
        "\n".join(includes)
        + "\n#include <cstdio>\n#include <cstring>\n"
        + SIMT_MATH
        + r"""
int main() {
    float out = 0.0f;
    AfTwin::RegisterGm(&out, sizeof out, "out");
    AfTwin::Launch(1, [&] { AscendC::Simt::VF_CALL<Lanes>(AscendC::Simt::Dim3(1), &out, 2.0f); });
    unsigned bits;
    std::memcpy(&bits, &out, 4);
    std::printf("%08x\n", bits);
}
"""
    )
    rc, out, err = twin_run(source)
    assert rc == 0, err
    x = np.float32(2.0)
    terms = [np.exp(x), np.log(x), np.sqrt(x), np.exp2(x), np.abs(x)]
    want = np.float32(0.0)
    for t in terms:
        want = np.float32(want + np.float32(t))
    got = np.frombuffer(bytes.fromhex(out.strip()), dtype=">u4").view(">f4")[0]
    assert abs(float(got) - float(want)) <= 1e-5 * abs(float(want))


@pytest.mark.parametrize("ctype", ["int64_t", "uint64_t"])
def test_gather_has_no_64_bit_form(tmp_path, ctype):
    source = f"""
#include "kernel_operator.h"
void F(const AscendC::LocalTensor<{ctype}>& d, const AscendC::LocalTensor<{ctype}>& s,
       const AscendC::LocalTensor<uint32_t>& o) {{
    AscendC::Gather(d, s, o, 0, 8);
}}
"""
    errors = syntax_errors(source, tmp_path)
    assert "Gather on 3510 supports" in errors and "(no 64-bit types)" in errors


# ---------------------------------------------------------------------------
# Runtime rules: one program, one case per argv[1].

RUNTIME_SRC = (
    r"""
#include "kernel_operator.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace AscendC;
using Buf = TBuf<TPosition::VECCALC>;

namespace {

template <class T>
__gm__ T* G(std::vector<T>& v) { return reinterpret_cast<__gm__ T*>(v.data()); }

// A source of n elements (value i at index i, as 16 bits), offsets `off`, base `base`: prints what Gather read.
template <class T>
void GatherPacked(uint32_t n, std::vector<uint32_t> off, uint32_t base) {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf s, o, d;
        pipe.InitBuffer(s, n * sizeof(T));
        pipe.InitBuffer(o, 64);
        pipe.InitBuffer(d, 64);
        LocalTensor<T> src = s.Get<T>();
        for (uint32_t i = 0; i < n; ++i) {
            uint16_t v = static_cast<uint16_t>(i ^ (i >> 16));
            T t;
            std::memcpy(&t, &v, sizeof(T));
            src.SetValue(i, t);
        }
        LocalTensor<uint32_t> offsets = o.Get<uint32_t>();
        for (uint32_t i = 0; i < off.size(); ++i) offsets.SetValue(i, off[i]);
        LocalTensor<T> dst = d.Get<T>();
        Gather(dst, src, offsets, base, static_cast<uint32_t>(off.size()));
        std::printf("got");
        for (uint32_t i = 0; i < off.size(); ++i) {
            T t = dst.GetValue(i);
            uint16_t v = 0;
            std::memcpy(&v, &t, sizeof(T));
            std::printf(" %u", static_cast<unsigned>(v));
        }
        std::printf("\n");
    });
}

__simt_vf__ void Nop() {}

// kAfter: bytes InitBuffer'd after the VF_CALL (the budget of a VF_CALL kernel applies to the whole kernel).
template <uint32_t kBefore, uint32_t kAfter, bool kVf>
void VfBudget() {
    AfTwin::Configure(253952, 32768);
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf a, b;
        pipe.InitBuffer(a, kBefore);
        if (kVf) Simt::VF_CALL<Nop>(Simt::Dim3(4));
        if (kAfter) pipe.InitBuffer(b, kAfter);
    });
    std::printf("ub %llu\n", static_cast<unsigned long long>(AfTwin::LastCounters().ub_high_water));
}

// Core 1 caches a workspace line, core 0 writes it (SetValue or DataCopy), SyncAll, core 1 reads it again.
// kFix: 0 none, 1 DataCacheCleanAndInvalid of the line, 2 of the entire data cache, 3 core 1 first reads
// the line only after the SyncAll.
template <int kFix, bool kMte>
void CrossCore() {
    std::vector<int32_t> ws(64, 7);
    AfTwin::RegisterGm(ws.data(), ws.size() * 4, "ws");
    AfTwin::Launch(2, [&] {
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(G(ws), 64);
        const int64_t core = GetBlockIdx();
        int32_t before = 0;
        if (core == 1 && kFix != 3) before = g.GetValue(5);
        SyncAll();
        if (core == 0) {
            if (kMte) {
                TPipe pipe;
                Buf b;
                pipe.InitBuffer(b, 32);
                LocalTensor<int32_t> t = b.Get<int32_t>();
                Duplicate(t, 42, 8);
                DataCopy(g, t, 8);
            } else {
                g.SetValue(5, 42);
            }
        }
        SyncAll();
        if (core == 1) {
            if (kFix == 1) DataCacheCleanAndInvalid<int32_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(g[5]);
            if (kFix == 2) DataCacheCleanAndInvalid<int32_t, CacheLine::ENTIRE_DATA_CACHE, DcciDst::CACHELINE_OUT>(g);
            const int32_t after = g.GetValue(5);
            std::printf("read %d %d\n", static_cast<int>(before), static_cast<int>(after));
        }
    });
}

// The writer itself re-reads its own line: not another core's write, so not stale.
void OwnWrite() {
    std::vector<int32_t> ws(64, 7);
    AfTwin::RegisterGm(ws.data(), ws.size() * 4, "ws");
    AfTwin::Launch(1, [&] {
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(G(ws), 64);
        const int32_t a = g.GetValue(3);
        g.SetValue(3, 9);
        std::printf("read %d %d\n", static_cast<int>(a), static_cast<int>(g.GetValue(3)));
    });
}

// Compare / Compares of n int32 elements (every element compared with 3 / with a tile of 3s).
template <bool kScalar>
void CompareCount(uint32_t n) {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf a, b, m;
        pipe.InitBuffer(a, 1024);
        pipe.InitBuffer(b, 1024);
        pipe.InitBuffer(m, 256);
        LocalTensor<int32_t> x = a.Get<int32_t>();
        LocalTensor<int32_t> y = b.Get<int32_t>();
        for (uint32_t i = 0; i < 256; ++i) {
            x.SetValue(i, static_cast<int32_t>(i));
            y.SetValue(i, 3);
        }
        LocalTensor<uint8_t> mask = m.Get<uint8_t>();
        if (kScalar) {
            Compares(mask, x, 3, CMPMODE::LT, n);
        } else {
            Compare(mask, x, y, CMPMODE::LT, n);
        }
        std::printf("mask %u\n", static_cast<unsigned>(mask.GetValue(0)));
    });
}

struct Case {
    const char* name;
    void (*fn)();
};

const Case kCases[] = {
    {"half_in_range", [] { GatherPacked<half>(80000, {0, 2, 131070, 30}, 0); }},
    {"half_base", [] { GatherPacked<half>(80000, {0, 2, 20}, 131072); }},
    {"half_packed", [] { GatherPacked<half>(80000, {0, 131070, 131072, 2}, 0); }},
    {"int8_in_range", [] { GatherPacked<int8_t>(70000, {0, 1, 65535}, 0); }},
    {"int8_packed", [] { GatherPacked<int8_t>(70000, {65535, 65536 + 7}, 0); }},
    {"vf_fit", VfBudget<221184, 0, true>},
    {"vf_before", VfBudget<221216, 0, true>},
    {"vf_after", VfBudget<200000, 21216, true>},
    {"no_vf_full_ub", VfBudget<253952, 0, false>},
    {"stale_setvalue", CrossCore<0, false>},
    {"stale_datacopy", CrossCore<0, true>},
    {"fresh_line", CrossCore<1, true>},
    {"fresh_all", CrossCore<2, false>},
    {"first_read_after_sync", CrossCore<3, true>},
    {"own_write", OwnWrite},
    {"compares_whole_repeat", [] { CompareCount<true>(64); }},
    {"compare_whole_repeats", [] { CompareCount<false>(128); }},
    {"compares_partial_repeat", [] { CompareCount<true>(8); }},
    {"compare_partial_repeat", [] { CompareCount<false>(72); }},
};

}  // namespace
"""
    + CASE_MAIN
)


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(RUNTIME_SRC)


@pytest.fixture(scope="module")
def program_super_kernel(twin_compile):
    return twin_compile(RUNTIME_SRC, flags=("-D__ASCENDC_SUPER_KERNEL_ENABLE_GM_GET_SET_VALUE_DCCI__",))


def ok(program, case: str) -> str:
    rc, out, err = program(case)
    assert rc == 0 and "AF_TWIN_ERROR" not in err, f"{case}: exit {rc}\n{err}"
    return out


def abort(program, case: str) -> tuple[str, int, str]:
    rc, _out, err = program(case)
    matches = [m for m in map(ERROR_LINE.fullmatch, err.splitlines()) if m]
    assert rc == 86 and len(matches) == 1, f"{case}: exit {rc}\n{err}"
    return matches[0]["kind"], int(matches[0]["core"]), matches[0]["message"]


def got(out: str) -> list[int]:
    return [int(v) for v in out.split("\n")[0].split()[1:]]


def test_gather_offsets_of_2_byte_types_reach_65536_elements_from_the_base(program):
    # offsets are bytes: element = offset / 2; the base is added after the packing, so it reaches further
    assert got(ok(program, "half_in_range")) == [0, 1, 65535, 15]
    assert got(ok(program, "half_base")) == [i ^ 1 for i in (0, 1, 10)]


def test_gather_reports_an_offset_the_uint16_packing_corrupts(program):
    """A half tile of 160000 bytes (the old SK-like gather_rows tile): offset 131072 is element 65536, which
    the device's uint16 index turns into element 0."""
    assert abort(program, "half_packed") == (
        "gather-offset-packing",
        0,
        "Gather<half>: element 2 has byte offset 131072, element index 65536; 3510 packs 2-byte Gather offsets to "
        "uint16 element indices, so the device reads src[0] instead of src[65536] (keep the offsets below 131072 "
        "bytes)",
    )


def test_gather_of_1_byte_types_packs_the_byte_offset_itself(program):
    assert got(ok(program, "int8_in_range")) == [0, 1, 65535 & 0xFF]
    kind, core, message = abort(program, "int8_packed")
    assert (kind, core) == ("gather-offset-packing", 0)
    assert message.startswith("Gather<int8_t>: element 1 has byte offset 65543, element index 65543;")
    assert "the device reads src[7] instead of src[65543] (keep the offsets below 65536 bytes)" in message


def test_ub_budget_of_a_vf_call_kernel(program):
    """UB 262144 - 8192 reserved - 32768 data cache = 221184 TPipe bytes, before and after the VF_CALL; a
    kernel without VF_CALL keeps the whole usable UB."""
    assert ok(program, "vf_fit") == "ub 221184\n"
    assert ok(program, "no_vf_full_ub") == "ub 253952\n"
    assert abort(program, "vf_before") == (
        "simt-dcache",
        0,
        "VF_CALL in a kernel whose TPipe buffers reached 221216 bytes of UB; a kernel that launches VF_CALL may "
        "use 221184 (min(UB 262144 - 8192 reserved, usable 253952) - 32768 data cache)",
    )
    assert abort(program, "vf_after") == (
        "simt-dcache",
        0,
        "TPipe::InitBuffer(buf, len=21216) requests 21216 bytes of UB at offset 200000 in a kernel that launches VF_CALL, "
        "whose TPipe budget is 221184 bytes (min(UB 262144 - 8192 reserved, usable 253952) - 32768 data cache)",
    )


@pytest.mark.parametrize("case", ["stale_setvalue", "stale_datacopy"])
def test_scalar_read_of_a_line_another_core_wrote_since_it_was_cached(program, case):
    assert abort(program, case) == (
        "dcache-stale",
        1,
        "GlobalTensor::GetValue reads bytes [20, 24) of 'ws' through the data cache, but core 0 wrote that line "
        "after this core cached it: the device returns the stale copy; invalidate the line first "
        "(DataCacheCleanAndInvalid<T, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>)",
    )


@pytest.mark.parametrize("case", ["fresh_line", "fresh_all", "first_read_after_sync"])
def test_invalidated_or_uncached_lines_read_the_new_value(program, case):
    before = 0 if case == "first_read_after_sync" else 7
    assert ok(program, case) == f"read {before} 42\n"


def test_own_writes_are_not_stale(program):
    assert ok(program, "own_write") == "read 7 9\n"


def test_super_kernel_get_value_invalidates_before_reading(program_super_kernel):
    """Built with __ASCENDC_SUPER_KERNEL_ENABLE_GM_GET_SET_VALUE_DCCI__, GetValue invalidates its line first."""
    assert ok(program_super_kernel, "stale_setvalue") == "read 7 42\n"
    assert ok(program_super_kernel, "stale_datacopy") == "read 7 42\n"


@pytest.mark.parametrize("case", ["compares_whole_repeat", "compare_whole_repeats"])
def test_compare_of_whole_256_byte_repeats(program, case):
    assert ok(program, case).split() == ["mask", str(0b111)]  # 0, 1, 2 < 3


@pytest.mark.parametrize(
    "case, api, count",
    [("compares_partial_repeat", "Compares", 8), ("compare_partial_repeat", "Compare", 72)],
)
def test_compare_of_a_partial_repeat_is_refused_like_the_3510_interface_does(program, case, api, count):
    """kernel_operator_vec_cmpsel_intf_impl.h asserts count * sizeof(T) % 256 == 0 on 3510."""
    kind, _core, message = abort(program, case)
    assert kind == "compare-count"
    assert message.startswith(
        f"{api}: count {count} of 4-byte elements is {count * 4} bytes, not a multiple of 256"
    )
