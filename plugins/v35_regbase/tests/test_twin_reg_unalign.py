"""The twin's unaligned register load (``Reg::LoadUnAlignPre`` / ``Reg::LoadUnAlign`` in af_twin/reg.h).

A register reduce whose groups may not start on 32-byte blocks loads them this way. The vector functions
below load a run of elements from any element offset -- one ``LoadUnAlignPre`` and consecutive
``LoadUnAlign`` calls (the register keeps the next block), or a ``LoadUnAlignPre`` before every load -- and
store them aligned; numpy checks every element, for 1-, 2- and 4-byte types. The counters follow the
documented rules (one register load each, 32 / 256 bytes read, table 1's 连续非对齐搬入 rates: one cycle
each). The same functions pass the official type check; the pointer / register type mismatch the 3510
implementation rejects at compile time is rejected by the twin and the official headers alike; and
run-time misuse (no LoadUnAlignPre, a register holding another block, the 256 bytes after the address's
block leaving the buffer -- also when the data itself ends inside it --, a misaligned element address, a
call outside a vector function) aborts the twin with a named error.
"""

from __future__ import annotations

import json
import re

import af_v35_twin_build as twin_build  # loaded by conftest.py
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.twin

SRC_BYTES = 4096  # the source buffer; a run never reaches its last 320 bytes

VF_SRC = r"""
// count elements from src + offset, one LoadUnAlignPre and then consecutive LoadUnAlign (the register keeps
// the block of the next address), stored aligned to dst
template <typename T>
__simd_vf__ inline void UnalignRun(__ubuf__ T* dst, __ubuf__ T* src, uint32_t offset, uint32_t count)
{
    constexpr uint32_t lanes = 256u / sizeof(T);
    Reg::RegTensor<T> r;
    Reg::UnalignRegForLoad u;
    Reg::MaskReg mask;
    const uint32_t repeats = (count + lanes - 1u) / lanes;
    Reg::LoadUnAlignPre(u, src + offset);
    for (uint32_t i = 0; i < repeats; ++i) {
        mask = Reg::UpdateMask<T>(count);
        Reg::LoadUnAlign(r, u, src + offset + i * lanes);
        Reg::StoreAlign(dst + i * lanes, r, mask);
    }
}

// the same with a LoadUnAlignPre before every load (the form a kept-width reduce writes)
template <typename T>
__simd_vf__ inline void UnalignEach(__ubuf__ T* dst, __ubuf__ T* src, uint32_t offset, uint32_t count)
{
    constexpr uint32_t lanes = 256u / sizeof(T);
    Reg::RegTensor<T> r;
    Reg::UnalignRegForLoad u;
    Reg::MaskReg mask;
    const uint32_t repeats = (count + lanes - 1u) / lanes;
    for (uint32_t i = 0; i < repeats; ++i) {
        mask = Reg::UpdateMask<T>(count);
        Reg::LoadUnAlignPre(u, src + offset + i * lanes);
        Reg::LoadUnAlign(r, u, src + offset + i * lanes);
        Reg::StoreAlign(dst + i * lanes, r, mask);
    }
}
"""

BAD_VF_SRC = r"""
__simd_vf__ inline void NoPre(__ubuf__ float* dst, __ubuf__ float* src)
{
    (void)dst;
    Reg::RegTensor<float> r;
    Reg::UnalignRegForLoad u;
    Reg::LoadUnAlign(r, u, src + 3);
}

__simd_vf__ inline void OtherBlock(__ubuf__ float* dst, __ubuf__ float* src)
{
    (void)dst;
    Reg::RegTensor<float> r;
    Reg::UnalignRegForLoad u;
    Reg::LoadUnAlignPre(u, src + 3);
    Reg::LoadUnAlign(r, u, src + 20);  // buffer block [64, 96), the register holds [0, 32)
}

__simd_vf__ inline void PastBuffer(__ubuf__ float* dst, __ubuf__ float* src)
{
    (void)dst;
    Reg::RegTensor<float> r;
    Reg::UnalignRegForLoad u;
    Reg::LoadUnAlignPre(u, src + 1001);  // buffer bytes [4004, 4008): LoadUnAlign reads buffer bytes [4032, 4288)
    Reg::LoadUnAlign(r, u, src + 1001);
}

__simd_vf__ inline void AlignedAtEnd(__ubuf__ float* dst, __ubuf__ float* src)
{
    (void)dst;
    Reg::RegTensor<float> r;
    Reg::UnalignRegForLoad u;
    Reg::LoadUnAlignPre(u, src + 960);  // the 64 floats [3840, 4096) lie in the buffer, the read [3872, 4128) not
    Reg::LoadUnAlign(r, u, src + 960);
}

__simd_vf__ inline void MisalignedElement(__ubuf__ float* dst, __ubuf__ float* src)
{
    (void)dst;
    Reg::UnalignRegForLoad u;
    Reg::LoadUnAlignPre(u, (__ubuf__ float*)((__ubuf__ uint8_t*)src + 2));
}
"""

HARNESS = r"""
#include <cstdio>
#include <cstring>
#include <string>

namespace {

using Buf = TBuf<TPosition::VECCALC>;
constexpr uint32_t kSrcBytes = 4096;

template <class T>
void ReadBits(const LocalTensor<T>& t, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) {
        unsigned long long bits = 0;
        if (std::scanf("%llx", &bits) != 1) std::exit(3);
        T v;
        std::memcpy(&v, &bits, sizeof(T));
        t.SetValue(i, v);
    }
}

// stdin: offset, count, then the source's kSrcBytes / sizeof(T) values (hex bits); prints the count values
template <class T, auto vf>
void Run() {
    unsigned offset = 0, count = 0;
    if (std::scanf("%u %u", &offset, &count) != 2) std::exit(3);
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf bs, bo;
        pipe.InitBuffer(bs, kSrcBytes);
        pipe.InitBuffer(bo, kSrcBytes);
        LocalTensor<T> s = bs.Get<T>();
        LocalTensor<T> out = bo.Get<T>();
        ReadBits(s, kSrcBytes / sizeof(T));
        asc_vf_call<vf>((__ubuf__ T*)out.GetPhyAddr(), (__ubuf__ T*)s.GetPhyAddr(), static_cast<uint32_t>(offset),
                        static_cast<uint32_t>(count));
        std::printf("out");
        for (uint32_t i = 0; i < count; ++i) {
            T v = out.GetValue(i);
            unsigned long long bits = 0;
            std::memcpy(&bits, &v, sizeof(T));
            std::printf(" %llx", bits);
        }
        std::printf("\n");
    });
    AfTwin::WriteReportJson(stdout);
}

template <auto vf>
void RunBad() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf bs, bo;
        pipe.InitBuffer(bo, 256);  // first: no buffer follows the source
        pipe.InitBuffer(bs, kSrcBytes);
        Duplicate(bs.Get<float>(), 1.0f, kSrcBytes / 4);
        asc_vf_call<vf>((__ubuf__ float*)bo.Get<float>().GetPhyAddr(), (__ubuf__ float*)bs.Get<float>().GetPhyAddr());
    });
}

void OutsideVf() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf bs;
        pipe.InitBuffer(bs, 256);
        Reg::UnalignRegForLoad u;
        Reg::LoadUnAlignPre(u, (__ubuf__ float*)bs.Get<float>().GetPhyAddr());
    });
}

}  // namespace

int main(int argc, char** argv) {
    const std::string c = argc > 1 ? argv[1] : "";
    if (c == "run_float32") Run<float, UnalignRun<float>>();
    else if (c == "run_int32") Run<int32_t, UnalignRun<int32_t>>();
    else if (c == "run_float16") Run<half, UnalignRun<half>>();
    else if (c == "run_int8") Run<int8_t, UnalignRun<int8_t>>();
    else if (c == "each_float32") Run<float, UnalignEach<float>>();
    else if (c == "each_float16") Run<half, UnalignEach<half>>();
    else if (c == "each_uint8") Run<uint8_t, UnalignEach<uint8_t>>();
    else if (c == "no_pre") RunBad<NoPre>();
    else if (c == "other_block") RunBad<OtherBlock>();
    else if (c == "past_buffer") RunBad<PastBuffer>();
    else if (c == "aligned_at_end") RunBad<AlignedAtEnd>();
    else if (c == "misaligned_element") RunBad<MisalignedElement>();
    else if (c == "outside_vf") OutsideVf();
    else return 2;
    return 0;
}
"""

PROGRAM = twin_build.KERNEL_HEAD + VF_SRC + BAD_VF_SRC + HARNESS

OFFICIAL_KERNEL = twin_build.kernel_source(
    VF_SRC,
    r"""
    LocalTensor<float> f = buf.Get<float>();
    LocalTensor<int32_t> s = buf.Get<int32_t>();
    LocalTensor<half> h = buf.Get<half>();
    LocalTensor<int8_t> c = buf.Get<int8_t>();
    LocalTensor<uint8_t> b = buf.Get<uint8_t>();
    asc_vf_call<UnalignRun<float>>((__ubuf__ float*)f.GetPhyAddr(), (__ubuf__ float*)f[2048].GetPhyAddr(), 5u, 200u);
    asc_vf_call<UnalignRun<int32_t>>((__ubuf__ int32_t*)s.GetPhyAddr(), (__ubuf__ int32_t*)s[2048].GetPhyAddr(), 5u,
                                     200u);
    asc_vf_call<UnalignRun<half>>((__ubuf__ half*)h.GetPhyAddr(), (__ubuf__ half*)h[4096].GetPhyAddr(), 5u, 200u);
    asc_vf_call<UnalignRun<int8_t>>((__ubuf__ int8_t*)c.GetPhyAddr(), (__ubuf__ int8_t*)c[8192].GetPhyAddr(), 5u,
                                    200u);
    asc_vf_call<UnalignEach<float>>((__ubuf__ float*)f.GetPhyAddr(), (__ubuf__ float*)f[2048].GetPhyAddr(), 5u,
                                    200u);
    asc_vf_call<UnalignEach<half>>((__ubuf__ half*)h.GetPhyAddr(), (__ubuf__ half*)h[4096].GetPhyAddr(), 5u, 200u);
    asc_vf_call<UnalignEach<uint8_t>>((__ubuf__ uint8_t*)b.GetPhyAddr(), (__ubuf__ uint8_t*)b[8192].GetPhyAddr(), 5u,
                                      200u);
""",
    ub_bytes=16 * 1024,
    name="reg_unalign_kernel",
)

NP = {
    "float32": np.float32,
    "int32": np.int32,
    "float16": np.float16,
    "int8": np.int8,
    "uint8": np.uint8,
}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(PROGRAM)


def _load(program, case: str, offset: int, count: int, seed: int = 0):
    """(source, the loaded values, the twin's report) of one run of ``case`` = ``<form>_<dtype>``."""
    dtype = np.dtype(NP[case.split("_", 1)[1]])
    rng = np.random.default_rng(seed)
    n = SRC_BYTES // dtype.itemsize
    if dtype.kind == "f":
        src = rng.uniform(-100, 100, n).astype(dtype)
    else:
        info = np.iinfo(dtype)
        src = rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)
    bits = " ".join(f"{int(b):x}" for b in src.view(UINT[dtype.itemsize]))
    rc, out, err = program(case, stdin=f"{offset} {count}\n{bits}\n")
    assert rc == 0, err
    assert "AF_TWIN_ERROR" not in err, err
    line = next(line for line in out.splitlines() if line.startswith("out"))
    got = np.array([int(v, 16) for v in line.split()[1:]], dtype=UINT[dtype.itemsize]).view(dtype)
    report = json.loads(out[out.index("{") :])
    return src, got, report


@pytest.mark.parametrize(
    "case",
    ["run_float32", "run_int32", "run_float16", "run_int8", "each_float32", "each_float16", "each_uint8"],
)
@pytest.mark.parametrize("offset", [0, 1, 7, 8, 13])
def test_an_unaligned_run_loads_the_elements_from_its_offset(program, case, offset):
    """200 elements from every kind of offset (block-aligned ones too), across whole vectors and a tail."""
    src, got, _report = _load(program, case, offset, 200, seed=offset)
    expected = src[offset : offset + 200]
    assert got.view(UINT[src.itemsize]).tolist() == expected.view(UINT[src.itemsize]).tolist()


@pytest.mark.parametrize(("case", "pres"), [("run_float32", 1), ("each_float32", 4)])
def test_the_counters_follow_the_documented_rates(program, case, pres):
    """200 floats from offset 5: 4 LoadUnAlign (256 bytes, 1 cycle each: 64 b32 elements per cycle) and 1 or 4
    LoadUnAlignPre (32 bytes, 1 cycle each: 8 per cycle); 4 stores (1 cycle each), 4 UpdateMasks."""
    _src, _got, report = _load(program, case, 5, 200)
    assert report["reg_loads"] == 4 + pres
    assert report["reg_load_bytes"] == 4 * 256 + pres * 32
    assert report["reg_stores"] == 4 and report["reg_masks"] == 4
    assert report["reg_cycles"] == 4 + pres + 4


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    case=st.sampled_from(sorted(["run_float32", "run_float16", "run_int8", "each_float32", "each_uint8"])),
    offset=st.integers(0, 300),
    count=st.integers(1, 400),
)
def test_any_offset_and_count(program, case, offset, count):
    src, got, _report = _load(program, case, offset, count, seed=offset + count)
    expected = src[offset : offset + count]
    assert got.view(UINT[src.itemsize]).tolist() == expected.view(UINT[src.itemsize]).tolist()


BAD = {
    "no_pre": ("reg-unalign", "the UnalignRegForLoad was never set"),
    "other_block": (
        "reg-unalign",
        "lies in block [320, 352) but the UnalignRegForLoad holds block [256, 288)",
    ),
    "past_buffer": ("ub-out-of-bounds", "the 256 bytes after srcAddr's block touches UB bytes"),
    "aligned_at_end": ("ub-out-of-bounds", "the 256 bytes after srcAddr's block touches UB bytes"),
    "misaligned_element": ("ub-misaligned", "is not aligned to its 4-byte elements"),
    "outside_vf": ("reg-outside-vf", "Reg::LoadUnAlignPre called outside a vector function"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_misuse_aborts_with_a_named_error(program, case):
    twin_build.assert_misuse_aborts(program, case, *BAD[case])


@pytest.mark.parametrize(("case", "first"), [("past_buffer", 4032), ("aligned_at_end", 3872)])
def test_a_read_past_the_buffer_names_the_bytes_the_hardware_reads(program, case, first):
    """The report names the 256 bytes LoadUnAlign reads after the address's block, which pass the source
    buffer's end even where the 64 values wanted end inside it (aligned_at_end: floats [3840, 4096))."""
    _rc, _out, err = program(case)
    match = re.search(r"touches UB bytes \[(\d+), (\d+)\) but its buffer is \[(\d+), (\d+)\)", err)
    assert match is not None, err
    start, end, lo, hi = (int(v) for v in match.groups())
    assert (start - lo, end - start, hi - lo) == (first, 256, SRC_BYTES), err


# Forms made after a LoadUnAlignPre of ``u`` at ``src + 3`` (``src``: float*).
ILLEGAL = {"pointer_type_mismatch": "Reg::RegTensor<half> q; Reg::LoadUnAlign(q, u, src + 3);"}
LEGAL = {"float": "Reg::RegTensor<float> q; Reg::LoadUnAlign(q, u, src + 3);"}


def _skeleton(call: str) -> str:
    """A kernel whose one vector function makes `call` after setting ``u`` from ``src + 3``."""
    return twin_build.vf_kernel("Reg::UnalignRegForLoad u;\nReg::LoadUnAlignPre(u, src + 3);\n" + call)


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_twin_rejects_what_the_official_implementation_rejects(twin_compile, name):
    text = twin_build.twin_rejection(twin_compile, _skeleton(ILLEGAL[name]))
    assert "Reg::LoadUnAlign: the pointer's element type differs" in text, text


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_twin_accepts_the_legal_form(twin_compile, name):
    twin_build.twin_acceptance(twin_compile, _skeleton(LEGAL[name]))


def test_unaligned_load_functions_pass_the_official_check(checker):
    twin_build.official_acceptance(checker, OFFICIAL_KERNEL)


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_official_headers_accept_the_legal_form(checker, name):
    twin_build.official_acceptance(checker, _skeleton(LEGAL[name]))


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_official_headers_reject_the_illegal_form(checker, name):
    twin_build.official_rejection(checker, _skeleton(ILLEGAL[name]))


def test_unaligned_loads_are_clean_under_the_sanitizers(twin_compile, program):
    """ASan / UBSan build of the same program: same values, no report (the twin's own copies stay in bounds)."""
    sanitized = twin_compile(PROGRAM, sanitize=True)
    src = np.arange(SRC_BYTES // 4, dtype=np.float32)
    stdin = "13 300\n" + " ".join(f"{int(b):x}" for b in src.view(np.uint32)) + "\n"
    rc, out, err = sanitized("run_float32", stdin=stdin)
    assert rc == 0, err
    assert out == program("run_float32", stdin=stdin)[1]
