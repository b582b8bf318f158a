"""The twin's 64-bit register instructions (register pair sequences of the 3510 implementation) against numpy.

A vector function over 40 int64 / uint64 elements (one full step of 32 lanes and a tail of 8) computes Add,
Sub, Mul, Adds, Muls, And / Or / Xor / Not, every Compare / Compares mode with Select and, on int64, Neg /
Abs / Relu of edge values: INT64_MIN / MAX,
values past 2^32, a carry and a borrow across the 32-bit halves. The twin computes each lane half by half as
the 3510 sequence does (AfTwin::PairAdd ...); numpy's wrap-around arithmetic checks every lane, and the
counters show each sequence counted per call (af_v35_regbase.reg_cost.B64_SEQUENCES). The same function
passes the official type check; forms the 3510 static_asserts refuse (Abs / Neg / Relu of uint64) are
rejected by the twin and by the official headers alike.
"""

from __future__ import annotations

import json

import af_v35_twin_build as twin_build  # loaded by conftest.py
import numpy as np
import pytest
from af_v35_regbase import reg_cost
from af_v35_regbase.reg_cost import RegInstr

pytestmark = pytest.mark.twin

N = 40
#: (output slot, op) in the order the function stores them; the int64-only ops last
OPS = ["add", "sub", "mul", "adds", "muls", "and", "or", "xor", "not", "neg", "abs", "relu"]

VF_SRC = r"""
template <typename T>
__simd_vf__ inline void Wide(__ubuf__ T* out, __ubuf__ T* x, __ubuf__ T* y, uint32_t count)
{
    Reg::RegTensor<T> a;
    Reg::RegTensor<T> b;
    Reg::RegTensor<T> r;
    Reg::MaskReg mask;
    for (uint16_t i = 0; i < 2; ++i) {
        mask = Reg::UpdateMask<T>(count);
        Reg::LoadAlign(a, x + i * 32);
        Reg::LoadAlign(b, y + i * 32);
        Reg::Add(r, a, b, mask);
        Reg::StoreAlign(out + 0 * 64 + i * 32, r, mask);
        Reg::Sub(r, a, b, mask);
        Reg::StoreAlign(out + 1 * 64 + i * 32, r, mask);
        Reg::Mul(r, a, b, mask);
        Reg::StoreAlign(out + 2 * 64 + i * 32, r, mask);
        Reg::Adds(r, a, static_cast<T>(0x80000001ull), mask);
        Reg::StoreAlign(out + 3 * 64 + i * 32, r, mask);
        Reg::Muls(r, a, static_cast<T>(0xFFFFFFFFFFFFFFFDull), mask);
        Reg::StoreAlign(out + 4 * 64 + i * 32, r, mask);
        Reg::And(r, a, b, mask);
        Reg::StoreAlign(out + 5 * 64 + i * 32, r, mask);
        Reg::Or(r, a, b, mask);
        Reg::StoreAlign(out + 6 * 64 + i * 32, r, mask);
        Reg::Xor(r, a, b, mask);
        Reg::StoreAlign(out + 7 * 64 + i * 32, r, mask);
        Reg::Not(r, a, mask);
        Reg::StoreAlign(out + 8 * 64 + i * 32, r, mask);
        if constexpr (std::is_same<T, int64_t>::value) {
            Reg::Neg(r, a, mask);
            Reg::StoreAlign(out + 9 * 64 + i * 32, r, mask);
            Reg::Abs(r, a, mask);
            Reg::StoreAlign(out + 10 * 64 + i * 32, r, mask);
            Reg::Relu(r, a, mask);
            Reg::StoreAlign(out + 11 * 64 + i * 32, r, mask);
        }
    }
}
"""

CMP_SRC = r"""
// out slot k (k = 0..5: GT GE LT LE EQ NE of x against y; 6..11: the same modes against the scalar 2^32):
// Select(1, 0, mask) -- each comparison's predicate per lane
template <typename T, CMPMODE mode>
__simd_callee__ inline void Pick(__ubuf__ T* out, Reg::RegTensor<T>& a, Reg::RegTensor<T>& b,
                                 Reg::RegTensor<T>& one, Reg::RegTensor<T>& zero, Reg::MaskReg& mask, uint16_t i)
{
    Reg::MaskReg m;
    Reg::RegTensor<T> r;
    Reg::Compare<T, mode>(m, a, b, mask);
    Reg::Select(r, one, zero, m);
    Reg::StoreAlign(out + static_cast<uint32_t>(mode) * 64 + i * 32, r, mask);
    Reg::Compares<T, mode>(m, a, static_cast<T>(0x100000000ull), mask);
    Reg::Select(r, one, zero, m);
    Reg::StoreAlign(out + (6 + static_cast<uint32_t>(mode)) * 64 + i * 32, r, mask);
}

template <typename T>
__simd_vf__ inline void WideCmp(__ubuf__ T* out, __ubuf__ T* x, __ubuf__ T* y, uint32_t count)
{
    Reg::RegTensor<T> a;
    Reg::RegTensor<T> b;
    Reg::RegTensor<T> one;
    Reg::RegTensor<T> zero;
    Reg::MaskReg mask;
    for (uint16_t i = 0; i < 2; ++i) {
        mask = Reg::UpdateMask<T>(count);
        Reg::LoadAlign(a, x + i * 32);
        Reg::LoadAlign(b, y + i * 32);
        Reg::Duplicate(one, static_cast<T>(1), mask);
        Reg::Duplicate(zero, static_cast<T>(0), mask);
        Pick<T, CMPMODE::LT>(out, a, b, one, zero, mask, i);
        Pick<T, CMPMODE::GT>(out, a, b, one, zero, mask, i);
        Pick<T, CMPMODE::EQ>(out, a, b, one, zero, mask, i);
        Pick<T, CMPMODE::LE>(out, a, b, one, zero, mask, i);
        Pick<T, CMPMODE::GE>(out, a, b, one, zero, mask, i);
        Pick<T, CMPMODE::NE>(out, a, b, one, zero, mask, i);
    }
}
"""

HARNESS = r"""
#include <cstdio>
#include <string>

template <typename T, bool kCmp>
void Run() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> bx, by, bo;
        pipe.InitBuffer(bx, 64 * 8);
        pipe.InitBuffer(by, 64 * 8);
        pipe.InitBuffer(bo, 12 * 64 * 8);
        LocalTensor<T> x = bx.Get<T>();
        LocalTensor<T> y = by.Get<T>();
        LocalTensor<T> o = bo.Get<T>();
        for (LocalTensor<T>* t : {&x, &y}) {
            for (uint32_t i = 0; i < 40; ++i) {
                unsigned long long v;
                if (std::scanf("%llx", &v) != 1) std::exit(3);
                t->SetValue(i, static_cast<T>(v));
            }
        }
        if constexpr (kCmp) {
            asc_vf_call<WideCmp<T>>((__ubuf__ T*)o.GetPhyAddr(), (__ubuf__ T*)x.GetPhyAddr(),
                                    (__ubuf__ T*)y.GetPhyAddr(), 40u);
        } else {
            asc_vf_call<Wide<T>>((__ubuf__ T*)o.GetPhyAddr(), (__ubuf__ T*)x.GetPhyAddr(),
                                 (__ubuf__ T*)y.GetPhyAddr(), 40u);
        }
        const uint32_t slots = kCmp ? 12 : (std::is_same<T, int64_t>::value ? 12 : 9);
        for (uint32_t s = 0; s < slots; ++s) {
            std::printf("out%u", s);
            for (uint32_t i = 0; i < 40; ++i) std::printf(" %llx", static_cast<unsigned long long>(o.GetValue(s * 64 + i)));
            std::printf("\n");
        }
    });
    AfTwin::WriteReportJson(stdout);
}

int main(int argc, char** argv) {
    const std::string c = argc > 1 ? argv[1] : "";
    if (c == "int64") Run<int64_t, false>();
    else if (c == "uint64") Run<uint64_t, false>();
    else if (c == "cmp_int64") Run<int64_t, true>();
    else if (c == "cmp_uint64") Run<uint64_t, true>();
    else return 2;
    return 0;
}
"""

OFFICIAL_KERNEL = twin_build.kernel_source(
    VF_SRC + CMP_SRC,
    r"""
    LocalTensor<int64_t> s = buf.Get<int64_t>();
    LocalTensor<uint64_t> u = buf.Get<uint64_t>();
    asc_vf_call<Wide<int64_t>>((__ubuf__ int64_t*)s[128].GetPhyAddr(), (__ubuf__ int64_t*)s.GetPhyAddr(),
                               (__ubuf__ int64_t*)s[64].GetPhyAddr(), 40u);
    asc_vf_call<Wide<uint64_t>>((__ubuf__ uint64_t*)u[128].GetPhyAddr(), (__ubuf__ uint64_t*)u.GetPhyAddr(),
                                (__ubuf__ uint64_t*)u[64].GetPhyAddr(), 40u);
    asc_vf_call<WideCmp<int64_t>>((__ubuf__ int64_t*)s[128].GetPhyAddr(), (__ubuf__ int64_t*)s.GetPhyAddr(),
                                  (__ubuf__ int64_t*)s[64].GetPhyAddr(), 40u);
    asc_vf_call<WideCmp<uint64_t>>((__ubuf__ uint64_t*)u[128].GetPhyAddr(), (__ubuf__ uint64_t*)u.GetPhyAddr(),
                                   (__ubuf__ uint64_t*)u[64].GetPhyAddr(), 40u);
""",
    ub_bytes=16 * 1024,
    name="wide_kernel",
)

# Abs / Neg / Relu take int64_t but not uint64_t (AbsImpl / NegImpl / ReluImpl static_asserts)
ILLEGAL_BODY = """
uint32_t n = 32;
Reg::MaskReg mask = Reg::UpdateMask<uint64_t>(n);
Reg::RegTensor<uint64_t> q;
Reg::LoadAlign(q, src);
Reg::API(q, q, mask);
Reg::StoreAlign(src, q, mask);
"""
ILLEGAL = {
    api: twin_build.vf_kernel(ILLEGAL_BODY.replace("Reg::API(", f"Reg::{api}("), "uint64_t")
    for api in ("Abs", "Neg", "Relu")
}


def edges(dtype) -> tuple[np.ndarray, np.ndarray]:
    """40 pairs: the ends of the type, the 2^31 / 2^32 boundaries, halves that carry and borrow."""
    base = [0, 1, 2, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1]
    base += [2**64 - 2, 0xFFFFFFFF00000000, 0x00000000FFFFFFFF, 0x123456789ABCDEF0, 0xFEDCBA9876543210, 7, 5]
    base += [2**64 - 2**32, 2**64 - 2**31]
    rng = np.random.default_rng(61)
    x = np.array(base + [int(v) for v in rng.integers(0, 2**63, 40 - len(base), dtype=np.uint64)], np.uint64)
    y = np.roll(x, 7)
    y[:6] = [2**64 - 1, 1, 2**32 + 1, 2**32 - 1, 2**63, 3]
    return x.view(dtype), y.view(dtype)


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(twin_build.KERNEL_HEAD + VF_SRC + CMP_SRC + HARNESS)


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_64bit_pair_ops_match_numpys_wrap_around_and_count_their_sequences(program, dtype):
    x, y = edges(dtype)
    stdin = "\n".join(" ".join(f"{int(v):x}" for v in a.view(np.uint64)) for a in (x, y)) + "\n"
    rc, out, err = program(dtype, stdin=stdin)
    assert rc == 0, err
    assert "AF_TWIN_ERROR" not in err, err
    got = {
        line.split()[0]: np.array([int(v, 16) for v in line.split()[1:]], np.uint64).view(dtype)
        for line in out.splitlines()
        if line.startswith("out")
    }
    report = json.loads([line for line in out.splitlines() if line.startswith("{")][0])
    t = np.dtype(dtype).type
    with np.errstate(over="ignore"):
        want = {
            "add": x + y,
            "sub": x - y,
            "mul": x * y,
            "adds": x + np.array(0x80000001, np.uint64).view(dtype),
            "muls": x * np.array(2**64 - 3, np.uint64).view(dtype),
            "and": x & y,
            "or": x | y,
            "xor": x ^ y,
            "not": ~x,
        }
        if dtype == "int64":
            want["neg"] = (np.zeros_like(x) - x).astype(t)
            want["abs"] = np.where(x < 0, np.zeros_like(x) - x, x).astype(t)
            want["relu"] = np.maximum(x, t(0))
    assert len(got) == len(want)
    for slot, op in enumerate(OPS[: len(want)]):
        assert np.array_equal(got[f"out{slot}"], want[op]), op
    # two steps (32 lanes, then 8): two loads, one store per op, one UpdateMask; each op its sequence
    ops = [RegInstr(api, dtype) for api in ("Add", "Sub", "Mul", "Adds", "Muls", "And", "Or", "Xor", "Not")]
    if dtype == "int64":
        ops += [RegInstr(api, dtype) for api in ("Neg", "Abs", "Relu")]
    per_step = reg_cost.mix(ops)
    assert report["reg_loads"] == 2 * 2 and report["reg_stores"] == 2 * len(ops)
    assert report["reg_compute"] == 2 * per_step.compute
    assert report["reg_masks"] == 2 * (1 + per_step.masks)
    assert report["reg_cycles"] == 2 * (2 + len(ops) + per_step.cycles)  # a 64-bit load / store: 1 cycle


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_64bit_compares_and_select_match_numpy_and_count_their_sequences(program, dtype):
    """Every CMPMODE of two registers and of a register and the scalar 2^32: the predicate per lane where the
    values differ only in the low halves (2^32 vs 2^32 + 1), only in the high ones, in sign (int64) and at the
    ends of the type, picked by Select."""
    x, y = edges(dtype)
    y[6:12] = x[6:12]  # some equal pairs
    y[12:16] = x[12:16] ^ np.array(1, np.uint64).view(dtype)  # the low halves differ only
    stdin = "\n".join(" ".join(f"{int(v):x}" for v in a.view(np.uint64)) for a in (x, y)) + "\n"
    rc, out, err = program(f"cmp_{dtype}", stdin=stdin)
    assert rc == 0, err
    assert "AF_TWIN_ERROR" not in err, err
    got = {
        int(line.split()[0][3:]): np.array([int(v, 16) for v in line.split()[1:]], np.uint64)
        for line in out.splitlines()
        if line.startswith("out")
    }
    s = np.array(2**32, np.uint64).view(dtype)
    tests = {0: np.less, 1: np.greater, 2: np.equal, 3: np.less_equal, 4: np.greater_equal, 5: np.not_equal}
    for mode, fn in tests.items():  # the twin's CMPMODE order: LT GT EQ LE GE NE
        assert np.array_equal(got[mode], fn(x, y).astype(np.uint64)), mode
        assert np.array_equal(got[6 + mode], fn(x, s).astype(np.uint64)), mode
    report = json.loads([line for line in out.splitlines() if line.startswith("{")][0])
    per_step = reg_cost.mix(
        [RegInstr("Duplicate", dtype)] * 2
        + [
            RegInstr(api, dtype, mode=mode)
            for mode in ("LT", "GT", "EQ", "LE", "GE", "NE")
            for api in ("Compare", "Select", "Compares", "Select")
        ]
    )
    assert report["reg_compute"] == 2 * per_step.compute
    assert report["reg_masks"] == 2 * (1 + per_step.masks)
    assert report["reg_cycles"] == 2 * (2 + 12 + per_step.cycles)


@pytest.mark.parametrize("api", sorted(ILLEGAL))
def test_twin_rejects_unsigned_64bit_abs_neg_relu(twin_compile, api):
    text = twin_build.twin_rejection(twin_compile, ILLEGAL[api])
    assert twin_build.is_static_assertion(text), text


def test_64bit_pair_ops_pass_the_official_check(checker):
    twin_build.official_acceptance(checker, OFFICIAL_KERNEL)


@pytest.mark.parametrize("api", sorted(ILLEGAL))
def test_official_headers_reject_unsigned_64bit_abs_neg_relu(checker, api):
    twin_build.official_rejection(checker, ILLEGAL[api])
