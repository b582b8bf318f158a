"""The twin's register Gather (``Reg::Gather`` in af_twin/reg.h) against numpy and the official headers.

The vector functions below gather from a UB source by element indices, in the forms the tile gather
generates (4-byte data with uint32 indices; 2-byte data with the uint16 halves of uint32 indices, stored
packed) and the plain 2-byte and 1-byte forms. Each runs on the twin and numpy checks every output
element; the counters follow the documented rules (one register load per Gather, the gathered bytes, the
table-1 rate). The same functions pass the official type check; the index / data combinations the 3510
implementation rejects at compile time are rejected by the twin and by the official headers alike; and
run-time misuse (an element read outside the source buffer, a mask of another width, an unwritten index
lane, a misaligned base, a call outside a vector function) aborts the twin with a named error.
"""

from __future__ import annotations

import json
from pathlib import Path

import af_v35_twin_build as twin_build  # loaded by conftest.py
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.twin

SRC = 1000  # source elements (the buffer holds exactly these, rounded to whole vectors below)

VF_SRC = r"""
// 4-byte data: uint32 element indices, 64 per step
template <typename T>
__simd_vf__ inline void Gather32(__ubuf__ T* dst, __ubuf__ T* src, __ubuf__ uint32_t* index, uint32_t count)
{
    Reg::RegTensor<uint32_t> idx;
    Reg::RegTensor<T> val;
    Reg::MaskReg mask;
    const uint32_t repeats = (count + 63u) / 64u;
    for (uint32_t i = 0; i < repeats; ++i) {
        mask = Reg::UpdateMask<T>(count);
        Reg::LoadAlign(idx, index + i * 64);
        Reg::Gather(val, src, idx, mask);
        Reg::StoreAlign(dst + i * 64, val, mask);
    }
}

// 2-byte data from uint32 indices read as uint16 halves: 64 per step, the even lanes stored packed
template <typename T>
__simd_vf__ inline void GatherPacked16(__ubuf__ T* dst, __ubuf__ T* src, __ubuf__ uint16_t* index, uint32_t count)
{
    Reg::RegTensor<uint16_t> idx;
    Reg::RegTensor<T> val;
    Reg::MaskReg lanes;
    uint32_t halves = count * 2u;
    Reg::MaskReg mask;
    const uint32_t repeats = (count + 63u) / 64u;
    for (uint32_t i = 0; i < repeats; ++i) {
        mask = Reg::UpdateMask<uint32_t>(count);
        lanes = Reg::UpdateMask<T>(halves);
        Reg::LoadAlign(idx, index + i * 128);
        Reg::Gather(val, src, idx, lanes);
        Reg::StoreAlign<T, Reg::StoreDist::DIST_PACK_B32>(dst + i * 64, val, mask);
    }
}

// 2-byte data from uint16 indices, 128 per step
__simd_vf__ inline void Gather16(__ubuf__ int16_t* dst, __ubuf__ int16_t* src, __ubuf__ uint16_t* index,
                                 uint32_t count)
{
    Reg::RegTensor<uint16_t> idx;
    Reg::RegTensor<int16_t> val;
    Reg::MaskReg mask;
    const uint32_t repeats = (count + 127u) / 128u;
    for (uint32_t i = 0; i < repeats; ++i) {
        mask = Reg::UpdateMask<int16_t>(count);
        Reg::LoadAlign(idx, index + i * 128);
        Reg::Gather(val, src, idx, mask);
        Reg::StoreAlign(dst + i * 128, val, mask);
    }
}

// 1-byte data into 2-byte lanes (zero-extended), uint16 indices, 128 per step
__simd_vf__ inline void Gather8(__ubuf__ int16_t* dst, __ubuf__ int8_t* src, __ubuf__ uint16_t* index,
                                uint32_t count)
{
    Reg::RegTensor<uint16_t> idx;
    Reg::RegTensor<int16_t> val;
    Reg::MaskReg mask;
    const uint32_t repeats = (count + 127u) / 128u;
    for (uint32_t i = 0; i < repeats; ++i) {
        mask = Reg::UpdateMask<int16_t>(count);
        Reg::LoadAlign(idx, index + i * 128);
        Reg::Gather(val, src, idx, mask);
        Reg::StoreAlign(dst + i * 128, val, mask);
    }
}
"""

BAD_VF_SRC = r"""
__simd_vf__ inline void PastSource(__ubuf__ float* dst, __ubuf__ float* src, __ubuf__ uint32_t* index)
{
    Reg::RegTensor<uint32_t> idx;
    Reg::RegTensor<float> val;
    Reg::MaskReg mask = Reg::CreateMask<float>();
    Reg::LoadAlign(idx, index);
    Reg::Adds(idx, idx, 5000u, mask);  // the source buffer holds 1024 floats
    Reg::Gather(val, src, idx, mask);
    Reg::StoreAlign(dst, val, mask);
}

__simd_vf__ inline void GatherMaskWidth(__ubuf__ float* dst, __ubuf__ float* src, __ubuf__ uint32_t* index)
{
    (void)dst;
    (void)index;
    Reg::RegTensor<uint32_t> idx;
    Reg::RegTensor<float> val;
    uint32_t n = 64;
    Reg::MaskReg mask = Reg::UpdateMask<half>(n);
    Reg::LoadAlign(idx, index);
    Reg::Gather(val, src, idx, mask);
}

__simd_vf__ inline void UnwrittenIndex(__ubuf__ float* dst, __ubuf__ float* src, __ubuf__ uint32_t* index)
{
    (void)dst;
    (void)index;
    Reg::RegTensor<uint32_t> idx;
    Reg::RegTensor<float> val;
    uint32_t n = 8;
    Reg::MaskReg eight = Reg::UpdateMask<uint32_t>(n);
    Reg::MaskReg all = Reg::CreateMask<float>();
    Reg::Duplicate(idx, 3u, eight);  // lanes 8.. never written
    Reg::Gather(val, src, idx, all);
}

__simd_vf__ inline void MisalignedBase(__ubuf__ float* dst, __ubuf__ float* src, __ubuf__ uint32_t* index)
{
    (void)dst;
    (void)index;
    Reg::RegTensor<uint32_t> idx;
    Reg::RegTensor<float> val;
    Reg::MaskReg mask = Reg::CreateMask<float>();
    Reg::LoadAlign(idx, index);
    Reg::Gather(val, src + 3, idx, mask);
}
"""

HARNESS = r"""
#include <cstdio>
#include <cstring>
#include <string>

namespace {

using Buf = TBuf<TPosition::VECCALC>;
constexpr uint32_t kSrc = 1024;  // source buffer elements (whole vectors of every width)

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

template <class T>
void PrintBits(const LocalTensor<T>& t, uint32_t n) {
    std::printf("out");
    for (uint32_t i = 0; i < n; ++i) {
        T v = t.GetValue(i);
        unsigned long long bits = 0;
        std::memcpy(&bits, &v, sizeof(T));
        std::printf(" %llx", bits);
    }
    std::printf("\n");
}

// stdin: count, then kSrc source values (hex bits), then count indices of type Tile; the function gets the
// index tile as Index* (uint32 indices read as their uint16 halves for the packed form) and writes Out.
template <class Src, class Out, class Tile, class Index, auto vf>
void Run() {
    unsigned count = 0;
    if (std::scanf("%u", &count) != 1) std::exit(3);
    const uint32_t padded = (count + 127u) / 128u * 128u;
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf bs, bi, bo;
        pipe.InitBuffer(bs, kSrc * sizeof(Src));
        pipe.InitBuffer(bi, padded * sizeof(Tile));
        pipe.InitBuffer(bo, padded * sizeof(Out));
        LocalTensor<Src> s = bs.Get<Src>();
        LocalTensor<Tile> idx = bi.Get<Tile>();
        LocalTensor<Out> out = bo.Get<Out>();
        ReadBits(s, kSrc);
        ReadBits(idx, count);
        asc_vf_call<vf>((__ubuf__ Out*)out.GetPhyAddr(), (__ubuf__ Src*)s.GetPhyAddr(),
                        (__ubuf__ Index*)idx.GetPhyAddr(), static_cast<uint32_t>(count));
        PrintBits(out, count);
    });
    AfTwin::WriteReportJson(stdout);
}

template <auto vf>
void RunBad() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf bs, bi, bo;
        pipe.InitBuffer(bs, kSrc * sizeof(float));
        pipe.InitBuffer(bi, 256);
        pipe.InitBuffer(bo, 256);
        Duplicate(bs.Get<float>(), 1.0f, kSrc);
        Duplicate(bi.Get<uint32_t>(), 7u, 64);
        asc_vf_call<vf>((__ubuf__ float*)bo.Get<float>().GetPhyAddr(), (__ubuf__ float*)bs.Get<float>().GetPhyAddr(),
                        (__ubuf__ uint32_t*)bi.Get<uint32_t>().GetPhyAddr());
    });
}

void OutsideVf() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf bs;
        pipe.InitBuffer(bs, 256);
        Reg::RegTensor<uint32_t> idx;
        Reg::RegTensor<float> val;
        Reg::MaskReg mask;
        Reg::Gather(val, (__ubuf__ float*)bs.Get<float>().GetPhyAddr(), idx, mask);
    });
}

}  // namespace

int main(int argc, char** argv) {
    const std::string c = argc > 1 ? argv[1] : "";
    if (c == "float32") Run<float, float, uint32_t, uint32_t, Gather32<float>>();
    else if (c == "int32") Run<int32_t, int32_t, uint32_t, uint32_t, Gather32<int32_t>>();
    else if (c == "uint32") Run<uint32_t, uint32_t, uint32_t, uint32_t, Gather32<uint32_t>>();
    else if (c == "float16") Run<half, half, uint32_t, uint16_t, GatherPacked16<half>>();
    else if (c == "bfloat16") Run<bfloat16_t, bfloat16_t, uint32_t, uint16_t, GatherPacked16<bfloat16_t>>();
    else if (c == "uint16") Run<uint16_t, uint16_t, uint32_t, uint16_t, GatherPacked16<uint16_t>>();
    else if (c == "int16") Run<int16_t, int16_t, uint16_t, uint16_t, Gather16>();
    else if (c == "int8") Run<int8_t, int16_t, uint16_t, uint16_t, Gather8>();
    else if (c == "past_source") RunBad<PastSource>();
    else if (c == "mask_width") RunBad<GatherMaskWidth>();
    else if (c == "unwritten_index") RunBad<UnwrittenIndex>();
    else if (c == "misaligned_base") RunBad<MisalignedBase>();
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
    LocalTensor<bfloat16_t> b = buf.Get<bfloat16_t>();
    LocalTensor<int16_t> w = buf.Get<int16_t>();
    LocalTensor<int8_t> c = buf.Get<int8_t>();
    LocalTensor<uint32_t> i32 = buf.Get<uint32_t>();
    LocalTensor<uint16_t> i16 = buf.Get<uint16_t>();
    asc_vf_call<Gather32<float>>((__ubuf__ float*)f.GetPhyAddr(), (__ubuf__ float*)f[1024].GetPhyAddr(),
                                 (__ubuf__ uint32_t*)i32[2048].GetPhyAddr(), 200u);
    asc_vf_call<Gather32<int32_t>>((__ubuf__ int32_t*)s.GetPhyAddr(), (__ubuf__ int32_t*)s[1024].GetPhyAddr(),
                                   (__ubuf__ uint32_t*)i32[2048].GetPhyAddr(), 200u);
    asc_vf_call<GatherPacked16<half>>((__ubuf__ half*)h.GetPhyAddr(), (__ubuf__ half*)h[1024].GetPhyAddr(),
                                      (__ubuf__ uint16_t*)i16[4096].GetPhyAddr(), 200u);
    asc_vf_call<GatherPacked16<bfloat16_t>>((__ubuf__ bfloat16_t*)b.GetPhyAddr(),
                                            (__ubuf__ bfloat16_t*)b[1024].GetPhyAddr(),
                                            (__ubuf__ uint16_t*)i16[4096].GetPhyAddr(), 200u);
    asc_vf_call<Gather16>((__ubuf__ int16_t*)w.GetPhyAddr(), (__ubuf__ int16_t*)w[1024].GetPhyAddr(),
                          (__ubuf__ uint16_t*)i16[4096].GetPhyAddr(), 200u);
    asc_vf_call<Gather8>((__ubuf__ int16_t*)w.GetPhyAddr(), (__ubuf__ int8_t*)c[2048].GetPhyAddr(),
                         (__ubuf__ uint16_t*)i16[4096].GetPhyAddr(), 200u);
""",
    ub_bytes=16 * 1024,
    name="reg_gather_kernel",
)

NP = {
    "float32": np.float32,
    "int32": np.int32,
    "uint32": np.uint32,
    "float16": np.float16,
    "bfloat16": np.uint16,  # bits only: the gather moves them unchanged
    "uint16": np.uint16,
    "int16": np.int16,
    "int8": np.int8,
}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def _hex(a: np.ndarray) -> str:
    return " ".join(f"{int(b):x}" for b in a.view(UINT[a.dtype.itemsize]))


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(PROGRAM)


def _source(case: str, rng) -> np.ndarray:
    dtype = np.dtype(NP[case])
    if dtype.kind == "f":
        return rng.uniform(-100, 100, 1024).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, 1024, endpoint=True).astype(dtype)


def _gather(program, case: str, src: np.ndarray, idx: np.ndarray):
    stdin = f"{len(idx)}\n{_hex(src)}\n{' '.join(f'{int(i):x}' for i in idx)}\n"
    rc, out, err = program(case, stdin=stdin)
    assert rc == 0, err
    assert "AF_TWIN_ERROR" not in err, err
    line = next(line for line in out.splitlines() if line.startswith("out"))
    bits = [int(v, 16) for v in line.split()[1:]]
    report = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    return bits, report


def _expect(case: str, src: np.ndarray, idx: np.ndarray) -> list[int]:
    picked = src[idx.astype(np.int64)]
    if case == "int8":  # the byte zero-extended into a 2-byte lane
        return [int(v) for v in picked.view(np.uint8)]
    return [int(v) for v in picked.view(UINT[src.dtype.itemsize])]


@pytest.mark.parametrize("case", sorted(NP))
def test_gather_reads_the_indexed_elements(program, case):
    rng = np.random.default_rng(sum(map(ord, case)))
    src = _source(case, rng)
    idx = rng.integers(0, SRC, 200)  # 200: a tail in every step width
    idx[:3] = [0, SRC - 1, 1023]  # both ends of the buffer, repeats below
    idx[3:6] = idx[0]
    bits, report = _gather(program, case, src, idx)
    assert bits == _expect(case, src, idx)
    assert report["vf_calls"] == 1
    size = src.dtype.itemsize
    lanes = 64 if case in ("float32", "int32", "uint32", "float16", "bfloat16", "uint16") else 128
    steps = -(-200 // lanes)
    # per step: the index load (256 bytes) and the Gather (a register load of the gathered bytes)
    assert report["reg_loads"] == 2 * steps
    packed = case in ("float16", "bfloat16", "uint16")
    gathered = 2 * 200 if packed else 200  # the packed form gathers the odd (high-half) lanes too
    assert report["reg_load_bytes"] == steps * 256 + gathered * size
    assert report["gather_elements"] == gathered
    assert report["reg_stores"] == steps and report["reg_store_bytes"] == 200 * (
        2 if case == "int8" else size
    )
    # cycles per step: index LoadAlign 1, Gather vector lanes / table-1 rate (b32 32, b16 and b8 64), store 1
    gather_cycles = 2
    assert report["reg_cycles"] == steps * (1 + gather_cycles + 1)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    case=st.sampled_from(sorted(NP)),
    count=st.integers(1, 300),
    seed=st.integers(0, 2**16),
)
def test_gather_any_count_and_indices(program, case, count, seed):
    rng = np.random.default_rng(seed)
    src = _source(case, rng)
    idx = rng.integers(0, 1024, count)
    bits, _report = _gather(program, case, src, idx)
    assert bits == _expect(case, src, idx)


BAD = {
    "past_source": ("gather-out-of-range", "lane 0 reads element 5007 of baseAddr"),
    "mask_width": ("reg-mask", "made for 2-byte elements"),
    "unwritten_index": ("reg-mask", "lane 8 of operand index was not written"),
    "misaligned_base": ("ub-misaligned", "Reg::Gather: baseAddr starts at UB byte offset"),
    "outside_vf": ("reg-outside-vf", "Reg::Gather called outside a vector function"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_gather_misuse_aborts_with_a_named_error(program, case):
    twin_build.assert_misuse_aborts(program, case, *BAD[case])


# Combinations the 3510 DataCopyGatherImpl rejects at compile time; the twin must reject them too.
ILLEGAL = {
    "float_uint16_index": "Reg::RegTensor<uint16_t> i; Reg::RegTensor<float> v; Reg::Gather(v, src, i, mask);",
    "half_uint32_index": (
        "Reg::RegTensor<uint32_t> i; Reg::RegTensor<half> v; Reg::Gather(v, (__ubuf__ half*)src, i, mask);"
    ),
    "int8_into_int8": (
        "Reg::RegTensor<uint16_t> i; Reg::RegTensor<int8_t> v; Reg::Gather(v, (__ubuf__ int8_t*)src, i, mask);"
    ),
    "float_into_half": ("Reg::RegTensor<uint32_t> i; Reg::RegTensor<half> v; Reg::Gather(v, src, i, mask);"),
    "int32_signed_index": (
        "Reg::RegTensor<int32_t> i; Reg::RegTensor<int32_t> v; Reg::Gather(v, (__ubuf__ int32_t*)src, i, mask);"
    ),
}


def _skeleton(call: str) -> str:
    """A kernel whose vector function sets a 64-lane float ``mask`` and makes `call` (``src``: float*)."""
    return twin_build.vf_kernel("uint32_t n = 64;\nReg::MaskReg mask = Reg::UpdateMask<float>(n);\n" + call)


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_twin_rejects_the_gathers_the_official_implementation_rejects(twin_compile, name):
    text = twin_build.twin_rejection(twin_compile, _skeleton(ILLEGAL[name]))
    assert "Reg::Gather" in text, text


def test_twin_does_not_emulate_the_eight_byte_gather(twin_compile):
    call = "Reg::RegTensor<uint32_t> i; Reg::RegTensor<int64_t> v; Reg::Gather(v, (__ubuf__ int64_t*)src, i, mask);"
    text = twin_build.twin_rejection(twin_compile, _skeleton(call))
    assert "does not emulate the 8-byte source form" in text, text


def test_gather_functions_pass_the_official_check(checker):
    twin_build.official_acceptance(checker, OFFICIAL_KERNEL)


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_official_headers_reject_the_illegal_gathers(checker, name):
    twin_build.official_rejection(checker, _skeleton(ILLEGAL[name]))


def test_a_2byte_index_beyond_uint16_is_reported_before_the_gather(twin_compile):
    """The tile gather of 2-byte data checks its indices on the twin (AfGatherIndexFits16 in af_gather.h)."""
    from af_v35_regbase.api import __file__ as api_init

    header = (Path(api_init).parent / "af_gather.h").read_text()
    program = (
        twin_build.KERNEL_HEAD
        + "#define AF_MAX_DIMS 8\n"
        + header
        + r"""
int main(int argc, char**) {
    const uint32_t top = argc > 1 ? 65536u : 65535u;
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> bi;
        pipe.InitBuffer(bi, 256);
        LocalTensor<int32_t> idx = bi.Get<int32_t>();
        Duplicate(idx, 7, 64);
        PipeBarrier<PIPE_V>();
        SetFlag<HardEvent::V_S>(EVENT_ID0);
        WaitFlag<HardEvent::V_S>(EVENT_ID0);
        idx.SetValue(9, static_cast<int32_t>(top));
        SetFlag<HardEvent::S_V>(EVENT_ID0);
        WaitFlag<HardEvent::S_V>(EVENT_ID0);
        AfGatherIndexFits16(idx, 64, "emb");
    });
    return 0;
}
"""
    )
    run = twin_compile(program)
    rc, _out, err = run()
    assert rc == 0, err
    rc, _out, err = run("over")
    error = twin_build.twin_abort(rc, err)
    assert error["kind"] == "gather-offset-packing", err
    assert "emb: element 9 of the tile gathers source element 65536" in error["message"], err
