"""The twin's register Casts with a 2-byte integer or between half and bfloat16_t (af_twin/reg.h).

For each pair a vector function, written as a generated kernel writes it, loads the source values (2-byte
values next to 4-byte ones unpacked into the even lanes with ``DIST_UNPACK_B16``, packed back with
``DIST_PACK_B32``), casts them under a tail mask and stores them; the memory-based ``Cast`` of vector.h
converts the same values. Both give the same bits, numpy checks the values (saturation, the low 16 bits,
rounding ties, NaN -> 0), the cycles follow table 10, the official headers accept the vector functions and
reject the illegal forms the twin rejects at compile time.
"""

from __future__ import annotations

import json

import af_v35_twin_build as twin_build  # loaded by conftest.py
import numpy as np
import pytest

from af_core import dtypes as dt

pytestmark = pytest.mark.twin

N = 100  # elements: a tail in every pair's last step

#: (source, destination) -> (RegLayout, SatMode, RoundMode of the register Cast, RoundMode of the memory Cast)
PAIRS = {
    ("int16", "float32"): ("ZERO", "UNKNOWN", "UNKNOWN", "CAST_NONE"),
    ("int16", "int32"): ("ZERO", "UNKNOWN", "UNKNOWN", "CAST_NONE"),
    ("uint16", "uint32"): ("ZERO", "UNKNOWN", "UNKNOWN", "CAST_NONE"),
    ("float32", "int16"): ("ZERO", "SAT", "CAST_TRUNC", "CAST_TRUNC"),
    ("int32", "int16"): ("ZERO", "NO_SAT", "UNKNOWN", "CAST_NONE"),
    ("int32", "uint16"): ("ZERO", "NO_SAT", "UNKNOWN", "CAST_NONE"),
    ("uint32", "int16"): ("ZERO", "NO_SAT", "UNKNOWN", "CAST_NONE"),
    ("uint32", "uint16"): ("ZERO", "NO_SAT", "UNKNOWN", "CAST_NONE"),
    ("int16", "float16"): ("UNKNOWN", "UNKNOWN", "CAST_RINT", "CAST_RINT"),
    ("float16", "int16"): ("UNKNOWN", "SAT", "CAST_TRUNC", "CAST_TRUNC"),
    ("float16", "bfloat16"): ("UNKNOWN", "UNKNOWN", "CAST_RINT", "CAST_RINT"),
    ("bfloat16", "float16"): ("UNKNOWN", "NO_SAT", "CAST_RINT", "CAST_RINT"),
    ("int8", "int16"): ("ZERO", "UNKNOWN", "UNKNOWN", "CAST_NONE"),
    ("uint8", "uint16"): ("ZERO", "UNKNOWN", "UNKNOWN", "CAST_NONE"),
    ("int8", "float16"): ("ZERO", "UNKNOWN", "UNKNOWN", "CAST_NONE"),
    ("uint8", "float16"): ("ZERO", "UNKNOWN", "UNKNOWN", "CAST_NONE"),
    ("float16", "int8"): ("ZERO", "SAT", "CAST_TRUNC", "CAST_TRUNC"),
    ("float16", "uint8"): ("ZERO", "SAT", "CAST_TRUNC", "CAST_TRUNC"),
    ("int16", "uint8"): ("ZERO", "NO_SAT", "UNKNOWN", "CAST_NONE"),
    ("uint16", "uint8"): ("ZERO", "NO_SAT", "UNKNOWN", "CAST_NONE"),
}


def _name(src: str, dst: str) -> str:
    return f"{src}_{dst}"


def _vf(src: str, dst: str) -> str:
    s, d = dt.get(src), dt.get(dst)
    layout, sat, rnd, _mem = PAIRS[src, dst]
    wide = max(s.itemsize, d.itemsize)
    lanes = 256 // wide
    mask_t = {4: "uint32_t", 2: "uint16_t"}[wide]
    unpack = f"Reg::LoadAlign<{s.cpp}, Reg::LoadDist::DIST_UNPACK_B{8 * s.itemsize}>"
    pack = f"Reg::StoreAlign<{d.cpp}, Reg::StoreDist::DIST_PACK_B{8 * wide}>"
    load = unpack if s.itemsize < wide else "Reg::LoadAlign"
    store = pack if d.itemsize < wide else "Reg::StoreAlign"
    name = _name(src, dst)
    return f"""
constexpr Reg::CastTrait kTrait_{name} = {{Reg::RegLayout::{layout}, Reg::SatMode::{sat},
    Reg::MaskMergeMode::ZEROING, RoundMode::{rnd}}};
__simd_vf__ inline void Cast_{name}(__ubuf__ {d.cpp}* y, __ubuf__ {s.cpp}* x, uint32_t count, uint16_t repeats)
{{
    Reg::RegTensor<{s.cpp}> a;
    Reg::RegTensor<{d.cpp}> b;
    Reg::MaskReg mask;
    for (uint16_t i = 0; i < repeats; ++i) {{
        mask = Reg::UpdateMask<{mask_t}>(count);
        {load}(a, x + i * {lanes});
        Reg::Cast<{d.cpp}, {s.cpp}, kTrait_{name}>(b, a, mask);
        {store}(y + i * {lanes}, b, mask);
    }}
}}
"""


def _run(src: str, dst: str) -> str:
    s, d = dt.get(src), dt.get(dst)
    lanes = 256 // max(s.itemsize, d.itemsize)
    repeats = -(-N // lanes)
    mem = PAIRS[src, dst][3]
    name = _name(src, dst)
    return f"""
void Run_{name}() {{
    AfTwin::Launch(1, [&] {{
        TPipe pipe;
        TBuf<TPosition::VECCALC> bx, by, bm;
        pipe.InitBuffer(bx, 1024);
        pipe.InitBuffer(by, 1024);
        pipe.InitBuffer(bm, 1024);
        LocalTensor<{s.cpp}> x = bx.Get<{s.cpp}>();
        LocalTensor<{d.cpp}> y = by.Get<{d.cpp}>();
        LocalTensor<{d.cpp}> m = bm.Get<{d.cpp}>();
        ReadBits(x, {N});
        asc_vf_call<Cast_{name}>((__ubuf__ {d.cpp}*)y.GetPhyAddr(), (__ubuf__ {s.cpp}*)x.GetPhyAddr(), {N}u,
                                 static_cast<uint16_t>({repeats}));
        PrintBits("reg", y, {N});
        Cast<{d.cpp}, {s.cpp}>(m, x, RoundMode::{mem}, {N});
        PrintBits("mem", m, {N});
    }});
    AfTwin::WriteReportJson(stdout);
}}
"""


VF_SRC = "".join(_vf(*pair) for pair in sorted(PAIRS))

HARNESS = (
    r"""
#include <cstdio>
#include <cstring>
#include <string>
namespace {
template <typename T>
void ReadBits(LocalTensor<T>& t, int n) {
    for (int i = 0; i < n; ++i) {
        unsigned long long v = 0;
        if (std::scanf("%llx", &v) != 1) std::abort();
        T e;
        std::memcpy(&e, &v, sizeof(T));
        t.SetValue(i, e);
    }
}
template <typename T>
void PrintBits(const char* key, LocalTensor<T>& t, int n) {
    std::printf("%s", key);
    for (int i = 0; i < n; ++i) {
        T e = t.GetValue(i);
        unsigned long long v = 0;
        std::memcpy(&v, &e, sizeof(T));
        std::printf(" %llx", v);
    }
    std::printf("\n");
}
"""
    + "".join(_run(*pair) for pair in sorted(PAIRS))
    + '}  // namespace\nint main(int argc, char** argv) {\n    const std::string c = argc > 1 ? argv[1] : "";\n'
    + "".join(f'    if (c == "{_name(*p)}") Run_{_name(*p)}();\n' for p in sorted(PAIRS))
    + "    return 0;\n}\n"
)

PROGRAM = twin_build.KERNEL_HEAD + VF_SRC + HARNESS

OFFICIAL_KERNEL = twin_build.kernel_source(
    VF_SRC,
    "".join(
        f"asc_vf_call<Cast_{_name(s, d)}>((__ubuf__ {dt.get(d).cpp}*)buf.Get<{dt.get(d).cpp}>()[512]"
        f".GetPhyAddr(), (__ubuf__ {dt.get(s).cpp}*)buf.Get<{dt.get(s).cpp}>().GetPhyAddr(), {N}u, "
        "static_cast<uint16_t>(2));\n"
        for s, d in sorted(PAIRS)
    ),
    ub_bytes=2048,
    name="reg_cast_kernel",
)

FLOATS = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.7, -3.7, 2049.0, 32767.0, 32767.5, 32768.0, -32768.0]
FLOATS += [-32769.0, 65504.0, 65520.0, 1e9, -1e9, 3e38, 1e-8, float("inf"), float("-inf"), float("nan")]


def _values(src: str) -> np.ndarray:
    """N values of ``src``: the edges, then random ones."""
    rng = np.random.default_rng(5)
    if src in ("float32", "float16", "bfloat16"):
        with np.errstate(over="ignore"):
            more = rng.uniform(-40000, 40000, N - len(FLOATS))
            values = np.concatenate([np.array(FLOATS), more]).astype(np.float32)
        if src == "float16":
            with np.errstate(over="ignore"):
                return values.astype(np.float16)
        if src == "bfloat16":  # truncate to bfloat16 bits (kept in a uint16 array)
            return (values.view(np.uint32) >> 16).astype(np.uint16)
        return values
    info = np.iinfo(src)
    edges = [
        info.min,
        info.min + 1,
        -1,
        0,
        1,
        2049,
        32767,
        32768,
        65535,
        65536,
        70000,
        info.max - 1,
        info.max,
    ]
    edges = [v for v in edges if info.min <= v <= info.max]
    more = rng.integers(info.min, int(info.max) + 1, N - len(edges), dtype=np.int64)
    return np.concatenate([np.array(edges, dtype=np.int64), more]).astype(src)


def _bits(a: np.ndarray) -> str:
    view = {1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize]
    return " ".join(f"{int(v):x}" for v in a.view(view))


def _parse(out: str, key: str, dtype: str) -> np.ndarray:
    size = dt.get(dtype).itemsize
    for line in out.splitlines():
        if line.startswith(key + " "):
            words = {1: np.uint8, 2: np.uint16, 4: np.uint32}[size]
            return np.array([int(v, 16) for v in line.split()[1:]], dtype=words)
    raise AssertionError(f"no {key} line in\n{out}")


def _bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def _f32_to_bf16_rne(x: np.ndarray) -> np.ndarray:
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def _expected(src: str, dst: str, x: np.ndarray) -> np.ndarray | None:
    """The destination bits numpy computes for the pair (NaN lanes excluded by the caller), or None."""
    if dst in ("int16", "uint16") and src in ("int32", "uint32"):
        return x.astype(dst).view(np.uint16)  # the low 16 bits
    if dst == "uint8" and src in ("int16", "uint16"):
        return x.astype(np.uint8)  # the low byte
    if src in ("int8", "uint8"):
        return x.astype(dst).view(np.uint16)
    if src == "float16" and dst in ("int8", "uint8"):  # truncate, saturate, NaN -> 0
        info = np.iinfo(dst)
        with np.errstate(invalid="ignore"):
            f = np.nan_to_num(np.clip(np.trunc(x.astype(np.float64)), info.min, info.max), nan=0.0)
        return f.astype(dst).view(np.uint8)
    if src in ("int16", "uint16") and dst in ("int32", "uint32", "float32"):
        return x.astype(dst).view(np.uint32)
    if dst == "int16":  # float / half -> int16: truncate, saturate, NaN -> 0
        f = x.astype(np.float64)
        with np.errstate(invalid="ignore"):
            return (
                np.nan_to_num(np.clip(np.trunc(f), -32768, 32767), nan=0.0).astype(np.int16).view(np.uint16)
            )
    if (src, dst) == ("int16", "float16"):
        return x.astype(np.float16).view(np.uint16)
    if (src, dst) == ("float16", "bfloat16"):
        return _f32_to_bf16_rne(x.astype(np.float32))
    if (src, dst) == ("bfloat16", "float16"):
        with np.errstate(over="ignore"):
            return _bf16_to_f32(x).astype(np.float16).view(np.uint16)
    return None


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(PROGRAM)


@pytest.mark.parametrize(("src", "dst"), sorted(PAIRS))
def test_register_cast_matches_the_memory_cast_and_numpy(program, src, dst):
    x = _values(src)
    rc, out, err = program(_name(src, dst), stdin=_bits(x) + "\n")
    assert rc == 0, err
    assert "AF_TWIN_ERROR" not in err, err
    reg, mem = _parse(out, "reg", dst), _parse(out, "mem", dst)
    np.testing.assert_array_equal(reg, mem)
    want = _expected(src, dst, x)
    assert want is not None
    if src in ("float32", "float16"):
        keep = ~np.isnan(x.astype(np.float32))
    elif src == "bfloat16":
        keep = ~np.isnan(_bf16_to_f32(x))
    else:
        keep = np.ones(N, dtype=bool)
    np.testing.assert_array_equal(reg[keep], want[keep])
    if src in ("float32", "float16", "bfloat16") and dst in ("int16", "int8", "uint8"):
        assert (reg[~keep] == 0).all()  # NaN -> 0
    report = json.loads([line for line in out.splitlines() if line.startswith("{")][0])
    counters = report["counters"] if "counters" in report else report
    s, d = dt.get(src), dt.get(dst)
    wide = max(s.itemsize, d.itemsize)
    steps = -(-N // (256 // wide))
    rate = {
        ("float32", "int16"): 32,
        ("int16", "float32"): 32,
        ("float16", "int16"): 64,
        ("int16", "float16"): 64,
        ("int8", "int16"): 64,
        ("uint8", "uint16"): 64,
        ("int8", "float16"): 64,
        ("uint8", "float16"): 64,
        ("float16", "int8"): 64,
        ("uint16", "uint8"): 64,
    }.get((src, dst))
    cast_cycles = 1 if rate is None else (256 // wide) // rate
    load_cycles = 1  # one vector (or an unpacked half of one) a cycle
    store_cycles = 1
    assert _find(counters, "reg_cycles") == steps * (cast_cycles + load_cycles + store_cycles), counters
    assert _find(counters, "reg_compute") == steps


def _find(report, key: str):
    if isinstance(report, dict):
        if key in report:
            return report[key]
        for value in report.values():
            found = _find(value, key)
            if found is not None:
                return found
    if isinstance(report, list):
        for value in report:
            found = _find(value, key)
            if found is not None:
                return found
    return None


def _control(call: str) -> str:
    """A kernel whose one vector function makes `call` after ``FLOAT_OPERANDS`` (``mask``, ``a`` and ``src``)."""
    return twin_build.vf_kernel(twin_build.FLOAT_OPERANDS + call)


# Register Cast forms (after FLOAT_OPERANDS) both the twin and the official headers reject at compile time.
ILLEGAL = {
    # a widening Cast from int16_t takes RegLayout::ZERO / ONE (CastOperator's SupportEnum static_assert)
    "int16_float_no_layout": (
        "constexpr static Reg::CastTrait t = {Reg::RegLayout::UNKNOWN, Reg::SatMode::UNKNOWN, "
        "Reg::MaskMergeMode::ZEROING, RoundMode::UNKNOWN}; Reg::RegTensor<int16_t> s; Reg::RegTensor<float> d; "
        "Reg::Cast<float, int16_t, t>(d, s, mask);"
    ),
    # int8_t -> int16_t likewise
    "int8_int16_no_layout": (
        "constexpr static Reg::CastTrait t = {Reg::RegLayout::UNKNOWN, Reg::SatMode::UNKNOWN, "
        "Reg::MaskMergeMode::ZEROING, RoundMode::UNKNOWN}; Reg::RegTensor<int8_t> s; Reg::RegTensor<int16_t> d; "
        "Reg::Cast<int16_t, int8_t, t>(d, s, mask);"
    ),
    # float -> int16_t likewise needs a RegLayout
    "float_int16_no_layout": (
        "constexpr static Reg::CastTrait t = {Reg::RegLayout::UNKNOWN, Reg::SatMode::SAT, "
        "Reg::MaskMergeMode::ZEROING, RoundMode::CAST_TRUNC}; Reg::RegTensor<int16_t> d; "
        "Reg::Cast<int16_t, float, t>(d, a, mask);"
    ),
}


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_twin_rejects_illegal_casts_at_compile_time(twin_compile, name):
    text = twin_build.twin_rejection(twin_compile, _control(ILLEGAL[name]))
    assert twin_build.is_static_assertion(text), text


@pytest.mark.parametrize(
    "trait",
    [
        "{Reg::RegLayout::ZERO, Reg::SatMode::NO_SAT, Reg::MaskMergeMode::ZEROING, RoundMode::CAST_TRUNC}",
        "{Reg::RegLayout::ZERO, Reg::SatMode::SAT, Reg::MaskMergeMode::ZEROING, RoundMode::UNKNOWN}",
    ],
)
def test_twin_rejects_traits_it_does_not_emulate(twin_compile, trait):
    """float -> int16_t without saturation (the official form exists; the twin emulates SAT only) or without
    a RoundMode: a compile-time error, not a silently different value."""
    call = (
        f"constexpr static Reg::CastTrait t = {trait}; Reg::RegTensor<int16_t> d; "
        "Reg::Cast<int16_t, float, t>(d, a, mask);"
    )
    twin_build.twin_rejection(twin_compile, _control(call))


def test_the_cast_vector_functions_pass_the_official_check(checker):
    twin_build.official_acceptance(checker, OFFICIAL_KERNEL)


@pytest.mark.parametrize("name", sorted(ILLEGAL))
def test_official_headers_reject_the_illegal_casts(checker, name):
    twin_build.official_rejection(checker, _control(ILLEGAL[name]))
