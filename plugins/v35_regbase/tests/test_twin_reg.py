"""The twin's register API (af_twin/reg.h) against numpy, the memory-based API and the official headers.

The vector functions below are written by hand as a generated kernel would write them. Each runs on the
twin twice over the same inputs: once in registers (asc_vf_call) and once through the memory-based
LocalTensor API of vector.h; both must give the same bits, and numpy checks the values. The same vector
functions must pass the type check against the official AscendC headers (positive control), and the
illegal forms the twin rejects at compile time are rejected by the official headers too (negative
controls). Run-time misuse -- a misaligned or out-of-buffer access, a mask never set or made for another
width, a store reaching lanes computed under a narrower mask, a Reg call outside a vector function --
aborts the twin with a named error.
"""

from __future__ import annotations

import json

import af_v35_twin_build as twin_build  # loaded by conftest.py
import numpy as np
import pytest

pytestmark = pytest.mark.twin


# The vector functions: valid AscendC, shared by the twin program and the official check.
VF_SRC = r"""
// float: z = x > y ? Relu(Exp(x * 0.5) + y) : Max(x, y) - 1
__simd_vf__ inline void ChainF32(__ubuf__ float* z, __ubuf__ float* x, __ubuf__ float* y, uint32_t count,
                                 uint16_t repeats)
{
    Reg::RegTensor<float> a;
    Reg::RegTensor<float> b;
    Reg::RegTensor<float> t;
    Reg::RegTensor<float> u;
    Reg::MaskReg mask;
    Reg::MaskReg gt;
    for (uint16_t i = 0; i < repeats; ++i) {
        mask = Reg::UpdateMask<float>(count);
        Reg::LoadAlign(a, x + i * 64);
        Reg::LoadAlign(b, y + i * 64);
        Reg::Muls(t, a, 0.5f, mask);
        Reg::Exp(t, t, mask);
        Reg::Add(t, t, b, mask);
        Reg::Relu(t, t, mask);
        Reg::Max(u, a, b, mask);
        Reg::Adds(u, u, -1.0f, mask);
        Reg::Compare<float, CMPMODE::GT>(gt, a, b, mask);
        Reg::Select(t, t, u, gt);
        Reg::StoreAlign(z + i * 64, t, mask);
    }
}

// half: z = Sqrt(Abs(Mins(x * 2 + 1, 3) - y)) / y + Ln(y)
__simd_vf__ inline void ChainF16(__ubuf__ half* z, __ubuf__ half* x, __ubuf__ half* y, uint32_t count,
                                 uint16_t repeats)
{
    Reg::RegTensor<half> a;
    Reg::RegTensor<half> b;
    Reg::RegTensor<half> t;
    Reg::MaskReg mask;
    for (uint16_t i = 0; i < repeats; ++i) {
        mask = Reg::UpdateMask<half>(count);
        Reg::LoadAlign(a, x + i * 128);
        Reg::LoadAlign(b, y + i * 128);
        Reg::Muls(t, a, static_cast<half>(2.0f), mask);
        Reg::Adds(t, t, static_cast<half>(1.0f), mask);
        Reg::Mins(t, t, static_cast<half>(3.0f), mask);
        Reg::Sub(t, t, b, mask);
        Reg::Abs(t, t, mask);
        Reg::Sqrt(t, t, mask);
        Reg::Div(t, t, b, mask);
        Reg::Ln(b, b, mask);
        Reg::Add(t, t, b, mask);
        Reg::StoreAlign(z + i * 128, t, mask);
    }
}

// int32: z = Min(Neg(Abs(Maxs(x * 3, -50) - y)), 40) / y, the 40 from a Duplicate before the loop
__simd_vf__ inline void ChainI32(__ubuf__ int32_t* z, __ubuf__ int32_t* x, __ubuf__ int32_t* y, uint32_t count,
                                 uint16_t repeats)
{
    Reg::RegTensor<int32_t> a;
    Reg::RegTensor<int32_t> b;
    Reg::RegTensor<int32_t> c;
    Reg::MaskReg mask;
    Reg::MaskReg full = Reg::CreateMask<int32_t, Reg::MaskPattern::ALL>();
    Reg::Duplicate(c, 40, full);
    for (uint16_t i = 0; i < repeats; ++i) {
        mask = Reg::UpdateMask<int32_t>(count);
        Reg::LoadAlign(a, x + i * 64);
        Reg::LoadAlign(b, y + i * 64);
        Reg::Muls(a, a, 3, mask);
        Reg::Maxs(a, a, -50, mask);
        Reg::Sub(a, a, b, mask);
        Reg::Abs(a, a, mask);
        Reg::Neg(a, a, mask);
        Reg::Min(a, a, c, mask);
        Reg::Div(a, a, b, mask);
        Reg::StoreAlign(z + i * 64, a, mask);
    }
}

// half -> float -> half, 64 elements per step (the halves unpacked to the even lanes, packed back):
// z = half(float(x) * 2 + float(y)); int32 -> float -> int32: z = int32(trunc(float(x) * 0.5))
constexpr Reg::CastTrait kUp = {Reg::RegLayout::ZERO, Reg::SatMode::UNKNOWN, Reg::MaskMergeMode::ZEROING,
                                RoundMode::UNKNOWN};
constexpr Reg::CastTrait kDown = {Reg::RegLayout::ZERO, Reg::SatMode::NO_SAT, Reg::MaskMergeMode::ZEROING,
                                  RoundMode::CAST_RINT};
constexpr Reg::CastTrait kToFloat = {Reg::RegLayout::UNKNOWN, Reg::SatMode::UNKNOWN, Reg::MaskMergeMode::ZEROING,
                                     RoundMode::CAST_RINT};
constexpr Reg::CastTrait kToInt = {Reg::RegLayout::UNKNOWN, Reg::SatMode::SAT, Reg::MaskMergeMode::ZEROING,
                                   RoundMode::CAST_TRUNC};

__simd_vf__ inline void ChainCastF16(__ubuf__ half* z, __ubuf__ half* x, __ubuf__ half* y, uint32_t count,
                                     uint16_t repeats)
{
    Reg::RegTensor<half> hx;
    Reg::RegTensor<half> hy;
    Reg::RegTensor<float> fx;
    Reg::RegTensor<float> fy;
    Reg::MaskReg mask;
    for (uint16_t i = 0; i < repeats; ++i) {
        mask = Reg::UpdateMask<float>(count);
        Reg::LoadAlign<half, Reg::LoadDist::DIST_UNPACK_B16>(hx, x + i * 64);
        Reg::LoadAlign<half, Reg::LoadDist::DIST_UNPACK_B16>(hy, y + i * 64);
        Reg::Cast<float, half, kUp>(fx, hx, mask);
        Reg::Cast<float, half, kUp>(fy, hy, mask);
        Reg::Muls(fx, fx, 2.0f, mask);
        Reg::Add(fx, fx, fy, mask);
        Reg::Cast<half, float, kDown>(hx, fx, mask);
        Reg::StoreAlign<half, Reg::StoreDist::DIST_PACK_B32>(z + i * 64, hx, mask);
    }
}

__simd_vf__ inline void ChainCastI32(__ubuf__ int32_t* z, __ubuf__ int32_t* x, __ubuf__ int32_t* y,
                                     uint32_t count, uint16_t repeats)
{
    Reg::RegTensor<int32_t> a;
    Reg::RegTensor<float> f;
    Reg::MaskReg mask;
    (void)y;
    for (uint16_t i = 0; i < repeats; ++i) {
        mask = Reg::UpdateMask<int32_t>(count);
        Reg::LoadAlign(a, x + i * 64);
        Reg::Cast<float, int32_t, kToFloat>(f, a, mask);
        Reg::Muls(f, f, 0.5f, mask);
        Reg::Cast<int32_t, float, kToInt>(a, f, mask);
        Reg::StoreAlign(z + i * 64, a, mask);
    }
}

// Reg::Reduce of the first 50 lanes of x (SUM, MAX, MIN) and of y (MAX), each value stored with a
// first-element store at a 4-byte aligned address, and the MAX / MIN results with their index lane.
__simd_vf__ inline void ReduceF32(__ubuf__ float* z, __ubuf__ float* x, __ubuf__ float* y, uint32_t count,
                                  uint16_t repeats)
{
    Reg::RegTensor<float> a;
    Reg::RegTensor<float> b;
    Reg::RegTensor<float> s;
    Reg::RegTensor<float> mx;
    Reg::RegTensor<float> mn;
    Reg::RegTensor<float> my;
    Reg::RegTensor<float> zero;
    uint32_t n = 50;
    Reg::MaskReg m50 = Reg::UpdateMask<float>(n);
    Reg::MaskReg all = Reg::CreateMask<float>();
    Reg::MaskReg one = Reg::CreateMask<float, Reg::MaskPattern::VL1>();
    Reg::MaskReg two = Reg::CreateMask<float, Reg::MaskPattern::VL2>();
    Reg::LoadAlign(a, x);
    Reg::LoadAlign(b, y);
    Reg::Reduce<Reg::ReduceType::SUM>(s, a, m50);
    Reg::Reduce<Reg::ReduceType::MAX>(mx, a, m50);
    Reg::Reduce<Reg::ReduceType::MIN>(mn, a, m50);
    Reg::Reduce<Reg::ReduceType::MAX>(my, b, m50);
    Reg::Duplicate(zero, 0.0f, all);
    for (uint16_t i = 0; i < repeats; ++i) Reg::StoreAlign(z + i * 64, zero, all);
    Reg::StoreAlign<float, Reg::StoreDist::DIST_FIRST_ELEMENT_B32>(z + 1, s, one);
    Reg::StoreAlign<float, Reg::StoreDist::DIST_FIRST_ELEMENT_B32>(z + 2, mx, one);
    Reg::StoreAlign<float, Reg::StoreDist::DIST_FIRST_ELEMENT_B32>(z + 3, mn, one);
    Reg::StoreAlign(z + 64, mx, two);
    Reg::StoreAlign(z + 72, mn, two);
    Reg::StoreAlign(z + 80, my, two);
    (void)count;
}
"""

# Run-time misuse: each aborts the twin.
BAD_VF_SRC = r"""
__simd_vf__ inline void Misaligned(__ubuf__ float* z, __ubuf__ float* x)
{
    Reg::RegTensor<float> a;
    Reg::MaskReg mask = Reg::CreateMask<float>();
    Reg::LoadAlign(a, x + 4);
    Reg::StoreAlign(z, a, mask);
}

__simd_vf__ inline void PastBuffer(__ubuf__ float* z, __ubuf__ float* x)
{
    Reg::RegTensor<float> a;
    uint32_t n = 8;
    Reg::MaskReg mask = Reg::UpdateMask<float>(n);
    Reg::LoadAlign(a, x + 192);  // the buffer holds 200 floats: a whole vector from 192 runs past it
    Reg::StoreAlign(z, a, mask);
}

__simd_vf__ inline void BlockTail(__ubuf__ float* z, __ubuf__ float* x)
{
    Reg::RegTensor<float> a;
    uint32_t n = 8;
    Reg::MaskReg mask = Reg::UpdateMask<float>(n);
    // block-masked: only the one 32-byte block the 8 lanes reach is read, the last of the 200-float buffer
    Reg::LoadAlign<float, Reg::DataCopyMode::DATA_BLOCK_COPY>(a, x + 192, 1u, mask);
    Reg::Adds(a, a, 1.0f, mask);
    Reg::StoreAlign(z + 192, a, mask);
}

__simd_vf__ inline void BlockPastBuffer(__ubuf__ float* z, __ubuf__ float* x)
{
    Reg::RegTensor<float> a;
    uint32_t n = 9;
    Reg::MaskReg mask = Reg::UpdateMask<float>(n);
    // z is the last buffer (200 floats): lane 8 is in block 1, past its end
    Reg::LoadAlign<float, Reg::DataCopyMode::DATA_BLOCK_COPY>(a, z + 192, 1u, mask);
    Reg::StoreAlign(x, a, mask);
}

__simd_vf__ inline void BlockUnread(__ubuf__ float* z, __ubuf__ float* x)
{
    Reg::RegTensor<float> a;
    uint32_t n = 8;
    Reg::MaskReg mask = Reg::UpdateMask<float>(n);
    Reg::LoadAlign<float, Reg::DataCopyMode::DATA_BLOCK_COPY>(a, x, 1u, mask);
    uint32_t m = 16;
    Reg::MaskReg wide = Reg::UpdateMask<float>(m);
    Reg::StoreAlign(z, a, wide);  // lanes 8..15: a block the load did not read
}

__simd_vf__ inline void StorePastBuffer(__ubuf__ float* z, __ubuf__ float* x)
{
    Reg::RegTensor<float> a;
    Reg::MaskReg mask = Reg::CreateMask<float>();
    Reg::LoadAlign(a, x);
    Reg::StoreAlign(z + 192, a, mask);  // 64 lanes from 192 end past the 200-float buffer
}

__simd_vf__ inline void MaskNeverSet(__ubuf__ float* z, __ubuf__ float* x)
{
    Reg::RegTensor<float> a;
    Reg::MaskReg mask;
    Reg::LoadAlign(a, x);
    Reg::Adds(a, a, 1.0f, mask);
    Reg::StoreAlign(z, a, mask);
}

__simd_vf__ inline void MaskWidth(__ubuf__ float* z, __ubuf__ float* x)
{
    Reg::RegTensor<float> a;
    uint32_t n = 100;
    Reg::MaskReg mask = Reg::UpdateMask<half>(n);
    Reg::LoadAlign(a, x);
    Reg::Adds(a, a, 1.0f, mask);
    Reg::StoreAlign(z, a, mask);
}

__simd_vf__ inline void WiderStore(__ubuf__ float* z, __ubuf__ float* x)
{
    Reg::RegTensor<float> a;
    uint32_t n = 10;
    Reg::MaskReg tail = Reg::UpdateMask<float>(n);
    Reg::MaskReg full = Reg::CreateMask<float>();
    Reg::LoadAlign(a, x);
    Reg::Muls(a, a, 2.0f, tail);
    Reg::StoreAlign(z, a, full);
}

__simd_vf__ inline void Uninitialised(__ubuf__ float* z, __ubuf__ float* x)
{
    Reg::RegTensor<float> a;
    Reg::RegTensor<float> b;
    Reg::MaskReg mask = Reg::CreateMask<float>();
    Reg::LoadAlign(a, x);
    Reg::Add(a, a, b, mask);
    Reg::StoreAlign(z, a, mask);
}
"""

HARNESS = r"""
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Buf = TBuf<TPosition::VECCALC>;

template <class T>
void PrintBits(const char* tag, const LocalTensor<T>& t, uint32_t n) {
    std::printf("%s", tag);
    for (uint32_t i = 0; i < n; ++i) {
        T v = t.GetValue(i);
        unsigned long long bits = 0;
        std::memcpy(&bits, &v, sizeof(T));
        std::printf(" %llx", bits);
    }
    std::printf("\n");
}

template <class T>
void ReadInput(const LocalTensor<T>& t, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) {
        unsigned long long bits = 0;
        if (std::scanf("%llx", &bits) != 1) std::exit(3);
        T v;
        std::memcpy(&v, &bits, sizeof(T));
        t.SetValue(i, v);
    }
}

constexpr uint32_t kCount = 200;  // not a whole number of vectors: the last one is a tail

// Inputs x, y (kCount elements each, hex bits on stdin); prints "reg" (the register chain) and "mem" (the
// same chain through the memory-based API).
template <class T, auto vf, class Mem, uint32_t lanes = 256 / sizeof(T)>
void RunChain(Mem mem) {
    const uint16_t repeats = static_cast<uint16_t>((kCount + lanes - 1) / lanes);
    const uint32_t padded = repeats * lanes;  // loads read whole vectors: buffers hold them
    std::vector<unsigned long long> xs(kCount);
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf bx, by, bz, bm;
        pipe.InitBuffer(bx, padded * sizeof(T));
        pipe.InitBuffer(by, padded * sizeof(T));
        pipe.InitBuffer(bz, 2048 + padded * sizeof(T));
        pipe.InitBuffer(bm, padded * sizeof(T));
        LocalTensor<T> x = bx.Get<T>();
        LocalTensor<T> y = by.Get<T>();
        LocalTensor<T> z = bz.Get<T>();
        LocalTensor<T> m = bm.Get<T>();
        ReadInput(x, kCount);
        ReadInput(y, kCount);
        asc_vf_call<vf>((__ubuf__ T*)z.GetPhyAddr(), (__ubuf__ T*)x.GetPhyAddr(), (__ubuf__ T*)y.GetPhyAddr(),
                        kCount, repeats);
        PrintBits("reg", z, kCount);
        mem(m, x, y, bz);
        PrintBits("mem", m, kCount);
    });
    AfTwin::WriteReportJson(stdout);
}

void MemNone(LocalTensor<float>& m, LocalTensor<float>&, LocalTensor<float>&, Buf&) {
    Duplicate(m, 0.0f, static_cast<int32_t>(kCount));
}

void MemF32(LocalTensor<float>& m, LocalTensor<float>& x, LocalTensor<float>& y, Buf& scratch) {
    LocalTensor<float> u = scratch.Get<float>();
    const int32_t n = kCount;
    Muls(m, x, 0.5f, n);
    Exp(m, m, n);
    Add(m, m, y, n);
    Relu(m, m, n);
    Max(u, x, y, n);
    Adds(u, u, -1.0f, n);
    for (int32_t i = 0; i < n; ++i)
        if (!(x.GetValue(i) > y.GetValue(i))) m.SetValue(i, u.GetValue(i));
}

void MemF16(LocalTensor<half>& m, LocalTensor<half>& x, LocalTensor<half>& y, Buf& scratch) {
    LocalTensor<half> l = scratch.Get<half>();
    const int32_t n = kCount;
    Muls(m, x, half(2.0f), n);
    Adds(m, m, half(1.0f), n);
    Mins(m, m, half(3.0f), n);
    Sub(m, m, y, n);
    Abs(m, m, n);
    Sqrt(m, m, n);
    Div(m, m, y, n);
    Ln(l, y, n);
    Add(m, m, l, n);
}

void MemI32(LocalTensor<int32_t>& m, LocalTensor<int32_t>& x, LocalTensor<int32_t>& y, Buf& scratch) {
    LocalTensor<int32_t> c = scratch.Get<int32_t>();
    const int32_t n = kCount;
    Duplicate(c, 40, n);
    Muls(m, x, 3, n);
    Maxs(m, m, -50, n);
    Sub(m, m, y, n);
    Abs(m, m, n);
    Muls(m, m, -1, n);
    Min(m, m, c, n);
    Div(m, m, y, n);
}

void MemCastF16(LocalTensor<half>& m, LocalTensor<half>& x, LocalTensor<half>& y, Buf& scratch) {
    LocalTensor<float> fx = scratch.Get<float>();
    LocalTensor<float> fy = scratch.GetWithOffset<float>(kCount, 1024);
    const int32_t n = kCount;
    Cast<float, half>(fx, x, RoundMode::CAST_NONE, n);
    Cast<float, half>(fy, y, RoundMode::CAST_NONE, n);
    Muls(fx, fx, 2.0f, n);
    Add(fx, fx, fy, n);
    Cast<half, float>(m, fx, RoundMode::CAST_RINT, n);
}

void MemCastI32(LocalTensor<int32_t>& m, LocalTensor<int32_t>& x, LocalTensor<int32_t>&, Buf& scratch) {
    LocalTensor<float> f = scratch.Get<float>();
    const int32_t n = kCount;
    Cast<float, int32_t>(f, x, RoundMode::CAST_RINT, n);
    Muls(f, f, 0.5f, n);
    Cast<int32_t, float>(m, f, RoundMode::CAST_TRUNC, n);
}

template <auto vf>
void RunBad() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf bx, bz;
        pipe.InitBuffer(bx, 200 * sizeof(float));
        pipe.InitBuffer(bz, 200 * sizeof(float));
        LocalTensor<float> x = bx.Get<float>();
        Duplicate(x, 1.0f, 200);
        asc_vf_call<vf>((__ubuf__ float*)bz.Get<float>().GetPhyAddr(), (__ubuf__ float*)x.GetPhyAddr());
    });
}

void OutsideVf() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf bx;
        pipe.InitBuffer(bx, 256);
        Reg::RegTensor<float> a;
        Reg::LoadAlign(a, (__ubuf__ float*)bx.Get<float>().GetPhyAddr());
    });
}

}  // namespace

int main(int argc, char** argv) {
    const std::string c = argc > 1 ? argv[1] : "";
    if (c == "f32") RunChain<float, ChainF32>(MemF32);
    else if (c == "f16") RunChain<half, ChainF16>(MemF16);
    else if (c == "i32") RunChain<int32_t, ChainI32>(MemI32);
    else if (c == "cast_f16") RunChain<half, ChainCastF16, decltype(&MemCastF16), 64>(MemCastF16);
    else if (c == "cast_i32") RunChain<int32_t, ChainCastI32, decltype(&MemCastI32)>(MemCastI32);
    else if (c == "misaligned") RunBad<Misaligned>();
    else if (c == "past_buffer") RunBad<PastBuffer>();
    else if (c == "store_past_buffer") RunBad<StorePastBuffer>();
    else if (c == "block_tail") RunBad<BlockTail>();
    else if (c == "reduce_f32") RunChain<float, ReduceF32>(MemNone);
    else if (c == "block_past_buffer") RunBad<BlockPastBuffer>();
    else if (c == "block_unread") RunBad<BlockUnread>();
    else if (c == "mask_never_set") RunBad<MaskNeverSet>();
    else if (c == "mask_width") RunBad<MaskWidth>();
    else if (c == "wider_store") RunBad<WiderStore>();
    else if (c == "uninitialised") RunBad<Uninitialised>();
    else if (c == "outside_vf") OutsideVf();
    else return 2;
    return 0;
}
"""

PROGRAM = twin_build.KERNEL_HEAD + VF_SRC + BAD_VF_SRC + HARNESS

# An AscendC kernel launching the vector functions, for the official check.
OFFICIAL_KERNEL = twin_build.kernel_source(
    VF_SRC,
    r"""
    LocalTensor<float> f = buf.Get<float>();
    LocalTensor<half> h = buf.Get<half>();
    LocalTensor<int32_t> s = buf.Get<int32_t>();
    asc_vf_call<ChainF32>((__ubuf__ float*)f.GetPhyAddr(), (__ubuf__ float*)f[256].GetPhyAddr(),
                          (__ubuf__ float*)f[512].GetPhyAddr(), 200u, static_cast<uint16_t>(4));
    asc_vf_call<ChainF16>((__ubuf__ half*)h.GetPhyAddr(), (__ubuf__ half*)h[256].GetPhyAddr(),
                          (__ubuf__ half*)h[512].GetPhyAddr(), 200u, static_cast<uint16_t>(2));
    asc_vf_call<ChainI32>((__ubuf__ int32_t*)s.GetPhyAddr(), (__ubuf__ int32_t*)s[256].GetPhyAddr(),
                          (__ubuf__ int32_t*)s[512].GetPhyAddr(), 200u, static_cast<uint16_t>(4));
    asc_vf_call<ChainCastF16>((__ubuf__ half*)h.GetPhyAddr(), (__ubuf__ half*)h[256].GetPhyAddr(),
                              (__ubuf__ half*)h[512].GetPhyAddr(), 200u, static_cast<uint16_t>(4));
    asc_vf_call<ChainCastI32>((__ubuf__ int32_t*)s.GetPhyAddr(), (__ubuf__ int32_t*)s[256].GetPhyAddr(),
                              (__ubuf__ int32_t*)s[512].GetPhyAddr(), 200u, static_cast<uint16_t>(4));
""",
    ub_bytes=3 * 1024,
    name="reg_chain_kernel",
)

N = 200


def _hex(a: np.ndarray) -> str:
    bits = a.view({2: np.uint16, 4: np.uint32}[a.dtype.itemsize])
    return " ".join(f"{int(b):x}" for b in bits)


def _parse(out: str, key: str, dtype) -> np.ndarray:
    for line in out.splitlines():
        if line.startswith(key + " "):
            bits = [int(v, 16) for v in line.split()[1:]]
            return np.asarray(bits, dtype={2: np.uint16, 4: np.uint32}[np.dtype(dtype).itemsize]).view(dtype)
    raise AssertionError(f"no {key} line in\n{out}")


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(PROGRAM)


def _run_chain(program, case: str, x: np.ndarray, y: np.ndarray):
    rc, out, err = program(case, stdin=_hex(x) + "\n" + _hex(y) + "\n")
    assert rc == 0, err
    assert "AF_TWIN_ERROR" not in err, err
    report = json.loads([line for line in out.splitlines() if line.startswith("{")][0])
    return _parse(out, "reg", x.dtype), _parse(out, "mem", x.dtype), report


def test_float_chain_matches_numpy_and_the_memory_api(program):
    rng = np.random.default_rng(7)
    x = rng.uniform(-4, 4, N).astype(np.float32)
    y = rng.uniform(-4, 4, N).astype(np.float32)
    reg, mem, report = _run_chain(program, "f32", x, y)
    np.testing.assert_array_equal(reg.view(np.uint32), mem.view(np.uint32))
    t = np.maximum(np.exp(x * np.float32(0.5)) + y, 0)
    want = np.where(x > y, t, np.maximum(x, y) - np.float32(1)).astype(np.float32)
    np.testing.assert_allclose(reg, want, rtol=2e-6, atol=1e-6)
    # 4 vectors of 64 lanes (the last one has 8): 2 loads, 8 computing instructions and 1 store each
    assert report["vf_calls"] == 1
    assert report["reg_loads"] == 8 and report["reg_load_bytes"] == 8 * 256
    assert report["reg_stores"] == 4 and report["reg_store_bytes"] == N * 4
    assert report["reg_compute"] == 4 * 8 and report["reg_masks"] == 4
    # modelled cycles per step (Ascend 950 Reg throughput table): loads 1 + 1, Muls 1, Exp 64/16 = 4, Add 1,
    # Relu 1, Max 1, Adds 1, Compare 1, Select 1, store 1; UpdateMask is not in the table
    assert report["reg_cycles"] == 4 * 14


def test_half_chain_matches_numpy_and_the_memory_api(program):
    rng = np.random.default_rng(8)
    x = rng.uniform(-2, 2, N).astype(np.float16)
    y = rng.uniform(0.5, 3, N).astype(np.float16)
    reg, mem, report = _run_chain(program, "f16", x, y)
    np.testing.assert_array_equal(reg.view(np.uint16), mem.view(np.uint16))
    t = np.minimum((x * np.float16(2)) + np.float16(1), np.float16(3))
    t = np.sqrt(np.abs((t - y).astype(np.float16))).astype(np.float16)
    want = (t / y).astype(np.float16) + np.log(y.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(reg.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)
    assert report["reg_loads"] == 4 and report["reg_stores"] == 2 and report["reg_store_bytes"] == N * 2


def test_int32_chain_wraps_and_matches_the_memory_api(program):
    rng = np.random.default_rng(9)
    x = rng.integers(-1000, 1000, N).astype(np.int32)
    y = rng.integers(1, 9, N).astype(np.int32) * rng.choice([-1, 1], N).astype(np.int32)
    reg, mem, report = _run_chain(program, "i32", x, y)
    np.testing.assert_array_equal(reg, mem)
    a = np.minimum(-np.abs(np.maximum(x * 3, -50) - y), 40)
    want = np.trunc(a / y).astype(np.int32)  # C division truncates toward zero
    np.testing.assert_array_equal(reg, want)
    # CreateMask and the Duplicate before the loop: one mask and one computing instruction more
    assert report["reg_masks"] == 5 and report["reg_compute"] == 1 + 4 * 7


def test_half_chain_through_float_registers_matches_numpy_and_the_memory_api(program):
    rng = np.random.default_rng(10)
    x = rng.uniform(-100, 100, N).astype(np.float16)
    y = rng.uniform(-100, 100, N).astype(np.float16)
    reg, mem, report = _run_chain(program, "cast_f16", x, y)
    np.testing.assert_array_equal(reg.view(np.uint16), mem.view(np.uint16))
    want = (x.astype(np.float32) * np.float32(2) + y.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(reg.view(np.uint16), want.view(np.uint16))
    # 64 halves per step: 4 steps, each 2 half-vector loads (128 bytes) and one packed store
    assert report["reg_loads"] == 8 and report["reg_load_bytes"] == 8 * 128
    assert report["reg_stores"] == 4 and report["reg_store_bytes"] == N * 2
    assert report["reg_compute"] == 4 * 5  # 3 casts, Muls, Add
    # per step: 2 half-vector loads (1 cycle each), 3 casts (64 elements per cycle), Muls, Add, store
    assert report["reg_cycles"] == 4 * 8


def test_int32_float_casts_match_numpy_and_the_memory_api(program):
    rng = np.random.default_rng(11)
    x = rng.integers(-(2**30), 2**30, N).astype(np.int32)
    y = np.zeros(N, dtype=np.int32)
    reg, mem, _report = _run_chain(program, "cast_i32", x, y)
    np.testing.assert_array_equal(reg, mem)
    want = np.trunc(x.astype(np.float32) * np.float32(0.5)).astype(np.int32)
    np.testing.assert_array_equal(reg, want)


BAD = {
    "misaligned": ("ub-misaligned", "LoadAlign: srcAddr starts at UB byte offset"),
    "past_buffer": ("ub-out-of-bounds", "LoadAlign: srcAddr touches UB bytes"),
    "store_past_buffer": ("ub-out-of-bounds", "StoreAlign: dstAddr touches UB bytes"),
    "block_past_buffer": ("ub-out-of-bounds", "LoadAlign: srcAddr block at UB byte offset 1600 lies in no"),
    "block_unread": ("reg-mask", "lane 8 of operand srcReg"),
    "mask_never_set": ("reg-mask", "mask mask was never set"),
    "mask_width": ("reg-mask", "made for 2-byte elements"),
    "wider_store": ("reg-mask", "lane 10 of operand srcReg was not written"),
    "uninitialised": ("reg-mask", "lane 0 of operand src1 was not written"),
    "outside_vf": ("reg-outside-vf", "Reg::LoadAlign called outside a vector function"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_misuse_aborts_with_a_named_error(program, case):
    twin_build.assert_misuse_aborts(program, case, *BAD[case])


def _tree_sum(lanes: np.ndarray) -> np.float32:
    level = lanes.astype(np.float32)
    while level.size > 1:
        level = (level[0::2] + level[1::2]).astype(np.float32)
    return level[0]


def test_reduce_sums_in_the_documented_tree_and_keeps_the_extreme_with_its_index(program):
    """Reg::Reduce over 50 of 64 lanes: SUM in the official page's binary tree with the 14 masked-off lanes
    as 0 (bit for bit), MAX with max(-0, +0) = +0 and a masked-off 5.0 ignored, MIN with the index of the
    minimum in lane 1, MAX of a vector holding NaN gives NaN and the NaN's index; first-element stores at
    4-byte aligned addresses."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-4, -1, N).astype(np.float32)
    x[3], x[7], x[60] = np.float32(-0.0), np.float32(0.0), np.float32(5.0)
    y = rng.uniform(-4, 4, N).astype(np.float32)
    y[20] = np.nan
    reg, _mem, report = _run_chain(program, "reduce_f32", x, y)
    lanes = np.where(np.arange(64) < 50, x[:64], np.float32(0))
    assert reg[1].view(np.uint32) == _tree_sum(lanes).view(np.uint32)
    assert reg[2] == 0 and not np.signbit(reg[2]) and reg[64] == reg[2]
    assert reg[3] == x[:50].min() and reg[72] == reg[3]
    assert reg[73:74].view(np.uint32)[0] == int(np.argmin(x[:50]))
    assert np.isnan(reg[80]) and reg[81:82].view(np.uint32)[0] == 20
    assert reg[0] == 0 and reg[4] == 0  # first-element stores write one element
    assert report["reg_compute"] == 4 + 1  # the Reduces and the Duplicate


def test_a_block_masked_load_reads_only_the_blocks_its_mask_reaches(program):
    """The tail of a buffer loaded block-masked: one 32-byte block read, no bytes past the buffer, and one
    register load of 32 bytes counted (2 cycles at the documented 32 b32 elements per cycle)."""
    rc, out, err = program("block_tail")
    assert rc == 0, err
    assert not twin_build.twin_errors(err), err


def _control(call: str) -> str:
    """A kernel whose one vector function makes `call` after ``FLOAT_OPERANDS`` (``mask``, ``a`` and ``src``)."""
    return twin_build.vf_kernel(twin_build.FLOAT_OPERANDS + call)


# Statements (after FLOAT_OPERANDS) the real API rejects at compile time; the twin must reject them too.
ILLEGAL = {
    "exp_int32": "Reg::RegTensor<int32_t> q; Reg::Exp(q, q, mask);",
    "div_int8": "Reg::RegTensor<int8_t> q; Reg::Div(q, q, q, mask);",
    "muls_uint8": "Reg::RegTensor<uint8_t> q; Reg::Muls(q, q, static_cast<uint8_t>(2), mask);",
    "muls_bf16": "Reg::RegTensor<bfloat16_t> q; Reg::Muls(q, q, static_cast<bfloat16_t>(2.0f), mask);",
    "load_type_mismatch": "Reg::RegTensor<half> q; Reg::LoadAlign(q, src);",
    "relu_int16": "Reg::RegTensor<int16_t> q; Reg::Relu(q, q, mask);",
    "truncate_int32": "Reg::RegTensor<int32_t> q; Reg::Truncate<int32_t, RoundMode::CAST_FLOOR>(q, q, mask);",
    "and_float": "Reg::And(a, a, a, mask);",
    "xor_bf16": "Reg::RegTensor<bfloat16_t> q; Reg::Xor(q, q, q, mask);",
    "reduce_sum_int16": "Reg::RegTensor<int16_t> q; Reg::Reduce<Reg::ReduceType::SUM>(q, q, mask);",
    "reduce_max_int8": "Reg::RegTensor<int8_t> q; Reg::Reduce<Reg::ReduceType::MAX>(q, q, mask);",
    "block_load_int64": (
        "Reg::RegTensor<int64_t> q; Reg::LoadAlign<int64_t, Reg::DataCopyMode::DATA_BLOCK_COPY>"
        "(q, (__ubuf__ int64_t*)src, 1u, mask);"
    ),
}


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_twin_rejects_illegal_register_calls_at_compile_time(twin_compile, name):
    text = twin_build.twin_rejection(twin_compile, _control(ILLEGAL[name]))
    assert twin_build.is_static_assertion(text), text


# Calls (after FLOAT_OPERANDS) both the twin and the official headers accept (the forms vector functions
# generate).
LEGAL = {
    "exp": "Reg::Exp(a, a, mask);",
    "block_load": "Reg::LoadAlign<float, Reg::DataCopyMode::DATA_BLOCK_COPY>(a, src, 1u, mask);",
    "reduce_sum": "Reg::Reduce<Reg::ReduceType::SUM>(a, a, mask);",
    "not_float": "Reg::Not(a, a, mask);",
    "and_int32": "Reg::RegTensor<int32_t> q; Reg::Duplicate(q, 7, mask); Reg::And(q, q, q, mask);",
    "reduce_min_first_element": (
        "Reg::Reduce<Reg::ReduceType::MIN>(a, a, mask); "
        "Reg::StoreAlign<float, Reg::StoreDist::DIST_FIRST_ELEMENT_B32>(src + 1, a, mask);"
    ),
    "truncate_floor": "Reg::Truncate<float, RoundMode::CAST_FLOOR>(a, a, mask);",
    "maxs_int64": (
        "uint32_t m = 32; Reg::MaskReg m64 = Reg::UpdateMask<int64_t>(m); Reg::RegTensor<int64_t> q;"
        " Reg::LoadAlign(q, (__ubuf__ int64_t*)src); Reg::Maxs(q, q, static_cast<int64_t>(0), m64);"
        " Reg::Min(q, q, q, m64); Reg::StoreAlign((__ubuf__ int64_t*)src, q, m64); (void)mask;"
    ),
}


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_twin_accepts_the_skeleton_with_legal_calls(twin_compile, name):
    twin_build.twin_acceptance(twin_compile, _control(LEGAL[name]))


def test_vector_functions_pass_the_official_check(checker):
    twin_build.official_acceptance(checker, OFFICIAL_KERNEL)


@pytest.mark.parametrize("name", sorted(LEGAL))
def test_official_skeleton_passes_with_a_legal_call(checker, name):
    twin_build.official_acceptance(checker, _control(LEGAL[name]))


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_official_headers_reject_the_illegal_calls(checker, name):
    twin_build.official_rejection(checker, _control(ILLEGAL[name]))


def test_register_chains_are_clean_under_the_sanitizers(twin_compile, program):
    """ASan / UBSan build of the same program: same bits, no report (the twin's own buffers stay in bounds)."""
    sanitized = twin_compile(PROGRAM, sanitize=True)
    rng = np.random.default_rng(12)
    for case, dtype in (("f32", np.float32), ("cast_f16", np.float16)):
        x = rng.uniform(-3, 3, N).astype(dtype)
        y = rng.uniform(-3, 3, N).astype(dtype)
        stdin = _hex(x) + "\n" + _hex(y) + "\n"
        rc, out, err = sanitized(case, stdin=stdin)
        assert rc == 0, err
        assert out == program(case, stdin=stdin)[1]
