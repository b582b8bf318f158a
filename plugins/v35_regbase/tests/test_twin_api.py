"""The CPU twin headers against their specification.

Each C++ program below is compiled once per module (the fixtures build with
-Wall -Wextra -Werror) and run once per case: the case name is argv[1]. A case prints ``key value...`` lines and/or the counters JSON of the
last launch; an abort case must end with exit status 86 and exactly one
``AF_TWIN_ERROR kind=<kind> core=<core>: <message>`` line on stderr.

Expected values are written out by hand or computed with numpy (IEEE
binary16 conversions), never taken from the twin itself.
"""

from __future__ import annotations

import json
import re
import struct

import numpy as np
import pytest
from af_v35_twin_build import CASE_MAIN  # loaded by conftest.py

pytestmark = pytest.mark.twin

ERROR_LINE = re.compile(r"AF_TWIN_ERROR kind=(?P<kind>[a-z-]+) core=(?P<core>-?\d+): (?P<message>.*)")

COUNTER_KEYS = {
    "gm_read_bytes",
    "gm_write_bytes",
    "scalar_gm_reads",
    "scalar_gm_writes",
    "cachelines_read",
    "cachelines_written",
    "ub_high_water",
    "gather_elements",
    "vector_calls",
    "datacopy_calls",
    "simt_threads",
    "sync_all",
    "block_dim",
    "dcache_misses",
    "vf_calls",
    "reg_loads",
    "reg_stores",
    "reg_load_bytes",
    "reg_store_bytes",
    "reg_compute",
    "reg_masks",
    "vector_ub_bytes",
    "reg_cycles",
    "stage_cores",
}
# The shared L2 model's counters: test_counters_json_of_a_known_program and test_twin_l2.py check them; the
# other cases compare the rest (Output.report leaves these out).
L2_KEYS = (
    "l2_read_bytes",
    "l2_write_bytes",
    "l2_modelled",
    "hbm_read_bytes",
    "hbm_write_bytes",
    "l2_hits",
    "l2_misses",
)

# ---------------------------------------------------------------------------
# Shared C++ helpers.

PRELUDE = r"""
#include "kernel_operator.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

using namespace AscendC;
using Buf = TBuf<TPosition::VECCALC>;

namespace {

[[maybe_unused]] void PrintBytes(const char* tag, const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    std::printf("%s", tag);
    for (size_t i = 0; i < n; ++i) std::printf(" %02x", b[i]);
    std::printf("\n");
}

template <class T>
unsigned long long BitsOf(T v) {
    unsigned long long x = 0;
    std::memcpy(&x, &v, sizeof(T));
    return x;
}

// Float-like elements print as hex bit patterns, integers as decimal numbers.
template <class T>
void PrintOne(T v) {
    if constexpr (std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value) {
        std::printf(" %04llx", BitsOf(v));
    } else if constexpr (std::is_same<T, float>::value) {
        std::printf(" %08llx", BitsOf(v));
    } else if constexpr (std::is_signed<T>::value) {
        std::printf(" %lld", static_cast<long long>(v));
    } else {
        std::printf(" %llu", static_cast<unsigned long long>(v));
    }
}

template <class T>
void Print(const char* tag, const LocalTensor<T>& t, uint32_t n) {
    std::printf("%s", tag);
    for (uint32_t i = 0; i < n; ++i) PrintOne<T>(t.GetValue(i));
    std::printf("\n");
}

template <class T>
void PrintVec(const char* tag, const std::vector<T>& v) {
    std::printf("%s", tag);
    for (const T& x : v) PrintOne<T>(x);
    std::printf("\n");
}

template <class T>
LocalTensor<T> Fill(Buf& b, std::initializer_list<T> values) {
    LocalTensor<T> t = b.Get<T>();
    uint32_t i = 0;
    for (T v : values) t.SetValue(i++, v);
    return t;
}

[[maybe_unused]] float F(uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

template <class T>
__gm__ T* G(std::vector<T>& v) {
    return reinterpret_cast<__gm__ T*>(v.data());
}

[[maybe_unused]] void Report() { AfTwin::WriteReportJson(stdout); }

}  // namespace
"""


# ---------------------------------------------------------------------------
# Data movement, pipe and queues.

MOVE_SRC = (
    PRELUDE
    + r"""
namespace {

// half GM -> UB: unaligned blockLen, GM gap in bytes, UB gap in blocks, left /
// right padding with a value, dummy bytes up to the 32-byte block.
void PadGmUb() {
    std::vector<uint16_t> x(64);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint16_t>(0x100 + i);
    AfTwin::RegisterGm(x.data(), x.size() * 2, "x");
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf buf;
        pipe.InitBuffer(buf, 128);
        Duplicate(buf.Get<uint16_t>(), static_cast<uint16_t>(0x1111), 64);
        GlobalTensor<half> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(x.data()), 64);
        LocalTensor<half> ub = buf.Get<half>();
        DataCopyPad(ub, g[1], DataCopyExtParams(2, 10, 6, 1, 0), DataCopyPadExtParams<half>(true, 2, 1, half(-1.0f)));
        PrintBytes("ub", ub.GetPhyAddr(), 128);
    });
    Report();
}

// isPad = false: the padding elements are poison too; the dummy bytes may run
// past the view up to the end of its buffer.
void PadNoPad() {
    std::vector<float> x(16);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1);
    AfTwin::RegisterGm(x.data(), x.size() * 4, "x");
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf buf;
        pipe.InitBuffer(buf, 64);
        Duplicate(buf.Get<uint32_t>(), 0x11111111u, 16);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(G(x), 16);
        LocalTensor<float> view = buf.Get<float>(5);
        DataCopyPad(view, g[3], DataCopyExtParams(1, 8, 0, 0, 0), DataCopyPadExtParams<float>(false, 1, 2, 7.0f));
        PrintBytes("ub", view.GetPhyAddr(), 64);
    });
    Report();
}

// GM srcStride in bytes: four 16-byte blocks 128 bytes apart touch four lines.
void PadLines() {
    std::vector<float> x(256);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    AfTwin::RegisterGm(x.data(), x.size() * 4, "x");
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf buf;
        pipe.InitBuffer(buf, 128);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(G(x));
        LocalTensor<float> ub = buf.Get<float>();
        DataCopyPad(ub, g, DataCopyExtParams(4, 16, 112, 0, 0), DataCopyPadExtParams<float>());
        Print("ub", ub, 32);
        std::printf("size %llu\n", static_cast<unsigned long long>(g.GetSize()));
    });
    Report();
}

// UB -> GM: UB gap srcStride in 32-byte blocks, GM gap dstStride in bytes.
void PadUbGm() {
    std::vector<float> y(32, -1.0f);
    AfTwin::RegisterGm(y.data(), y.size() * 4, "y");
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf buf;
        pipe.InitBuffer(buf, 256);
        LocalTensor<float> ub = buf.Get<float>();
        ArithProgression(ub, 0.0f, 1.0f, 64);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(G(y), 32);
        DataCopyPad(g[1], ub, DataCopyExtParams(3, 12, 1, 4, 0));
    });
    PrintVec("y", y);
    Report();
}

// DataCopy moves count * sizeof(T) rounded down to 32 bytes.
void DataCopyWhole() {
    std::vector<float> x(32);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(100 + i);
    std::vector<float> y(16, 0.0f);
    AfTwin::RegisterGm(x.data(), x.size() * 4, "x");
    AfTwin::RegisterGm(y.data(), y.size() * 4, "y");
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf a, h1, h2;
        pipe.InitBuffer(a, 64);
        pipe.InitBuffer(h1, 64);
        pipe.InitBuffer(h2, 64);
        GlobalTensor<float> gx, gy;
        gx.SetGlobalBuffer(G(x), 32);
        gy.SetGlobalBuffer(G(y), 16);
        LocalTensor<float> ua = a.Get<float>();
        Duplicate(ua, -1.0f, 16);
        DataCopy(ua, gx, 8);       // 32 bytes
        DataCopy(gy[8], ua, 8);    // 32 bytes
        LocalTensor<half> s = h1.Get<half>();
        LocalTensor<half> d = h2.Get<half>();
        ArithProgression(s, half(0.0f), half(1.0f), 32);
        Duplicate(d, half(-1.0f), 32);
        DataCopy(d, s, 16);        // 32 bytes
        Print("ua", ua, 16);
        Print("d", d, 20);
    });
    PrintVec("y", y);
    Report();
}

// A count whose bytes are not whole 32-byte blocks: 0 GM->UB (13 floats), 1 UB->GM (7 floats), 2 UB->UB (17 halves).
template <int kDir>
void DataCopyCount() {
    std::vector<float> x(32, 1.0f);
    AfTwin::RegisterGm(x.data(), x.size() * 4, "x");
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf a, h;
        pipe.InitBuffer(a, 64);
        pipe.InitBuffer(h, 64);
        GlobalTensor<float> gx;
        gx.SetGlobalBuffer(G(x), 32);
        LocalTensor<float> ua = a.Get<float>();
        LocalTensor<half> uh = h.Get<half>();
        if (kDir == 0) DataCopy(ua, gx, 13);
        if (kDir == 1) DataCopy(gx, ua, 7);
        if (kDir == 2) DataCopy(uh, uh[16], 17);
    });
}

// Byte offsets, base offset, float and half.
void GatherCase() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf s, o, d;
        pipe.InitBuffer(s, 256);
        pipe.InitBuffer(o, 64);
        pipe.InitBuffer(d, 64);
        LocalTensor<float> src = s.Get<float>();
        ArithProgression(src, 100.0f, 1.0f, 64);
        LocalTensor<uint32_t> off = Fill<uint32_t>(o, {0, 4, 248, 124, 60, 0, 12, 8});
        LocalTensor<float> dst = d.Get<float>();
        Gather(dst, src, off.ReinterpretCast<uint32_t>(), 4, 8);
        Print("f", dst, 8);
        LocalTensor<half> hs = s.Get<half>(32);
        ArithProgression(hs, half(0.0f), half(1.0f), 32);
        off = Fill<uint32_t>(o, {2, 62, 0});
        LocalTensor<half> hd = d.Get<half>();
        Gather(hd, hs, off, 0, 3);
        Print("h", hd, 3);
    });
    Report();
}

void GatherMisaligned() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf s, o, d;
        pipe.InitBuffer(s, 256);
        pipe.InitBuffer(o, 64);
        pipe.InitBuffer(d, 64);
        LocalTensor<uint32_t> off = Fill<uint32_t>(o, {0, 6});
        Gather(d.Get<float>(), s.Get<float>(), off, 0, 2);
    });
}

void GatherOutOfRange() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf s, o, d;
        pipe.InitBuffer(s, 256);
        pipe.InitBuffer(o, 64);
        pipe.InitBuffer(d, 64);
        LocalTensor<uint32_t> off = Fill<uint32_t>(o, {0, 252, 4});
        Gather(d.Get<float>(), s.Get<float>(), off, 4, 3);
    });
}

// Per-core allocations differ; the counter is the maximum over cores.
void HighWater() {
    AfTwin::Launch(4, [&] {
        const uint32_t i = static_cast<uint32_t>(GetBlockIdx());
        TPipe pipe;
        TQue<TPosition::VECIN, 2> q;
        Buf b;
        pipe.InitBuffer(q, 2, 100 + 64 * i);
        pipe.InitBuffer(b, 33);
        pipe.Reset();
        pipe.InitBuffer(b, 32);
        if (i == 0) {
            std::printf("blocks %lld\n", static_cast<long long>(GetBlockNum()));
            std::printf("reset %u\n", b.Get<uint8_t>().GetSize());
        }
    });
    Report();
}

void UbExactFit() {
    AfTwin::Configure(65536, 0);
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf a, b;
        pipe.InitBuffer(a, 40000);
        pipe.InitBuffer(b, 25536);
    });
    Report();
}

void UbOverflow() {
    AfTwin::Configure(65536, 0);
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 2> q;
        Buf b;
        pipe.InitBuffer(q, 2, 20000);
        pipe.InitBuffer(b, 30000);
    });
}

void QueueFifo() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 2> q;
        pipe.InitBuffer(q, 2, 64);
        LocalTensor<int32_t> a = q.AllocTensor<int32_t>();
        LocalTensor<int32_t> b = q.AllocTensor<int32_t>();
        a.SetValue(0, 11);
        b.SetValue(0, 22);
        q.EnQue(b);
        q.EnQue(a);
        std::printf("state %d %d %d\n", q.GetTensorCountInQue(), q.VacantInQue() ? 1 : 0, q.HasTensorInQue() ? 1 : 0);
        LocalTensor<int32_t> first = q.DeQue<int32_t>();
        LocalTensor<int32_t> second = q.DeQue<int32_t>();
        std::printf("fifo %d %d %u\n", first.GetValue(0), second.GetValue(0), first.GetSize());
        q.FreeTensor(first);
        q.FreeTensor(second);
        LocalTensor<int32_t> c = q.AllocTensor<int32_t>();
        LocalTensor<int32_t> e = q.AllocTensor<int32_t>();
        std::printf("again %u %u\n", c.GetSize(), e.GetSize());
        q.FreeTensor(c);
        q.FreeTensor(e);
    });
}

void QueAllocFull() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 32);
        (void)q.AllocTensor<float>();
        (void)q.AllocTensor<float>();
    });
}

void QueDequeEmpty() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECOUT, 2> q;
        pipe.InitBuffer(q, 2, 32);
        LocalTensor<float> a = q.AllocTensor<float>();
        q.EnQue(a);
        (void)q.DeQue<float>();
        (void)q.DeQue<float>();
    });
}

void QueFreeForeign() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 2> q;
        Buf b;
        pipe.InitBuffer(q, 2, 32);
        pipe.InitBuffer(b, 32);
        LocalTensor<float> t = b.Get<float>();
        q.FreeTensor(t);
    });
}

void QueDoubleFree() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 2> q;
        pipe.InitBuffer(q, 2, 32);
        LocalTensor<float> t = q.AllocTensor<float>();
        q.FreeTensor(t);
        q.FreeTensor(t);
    });
}

void QueEnqueTwice() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 2> q;
        pipe.InitBuffer(q, 2, 32);
        LocalTensor<float> t = q.AllocTensor<float>();
        q.EnQue(t);
        q.EnQue(t);
    });
}

void QueAfterReset() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 2> q;
        pipe.InitBuffer(q, 2, 32);
        pipe.Reset();
        (void)q.AllocTensor<float>();
    });
}

// tensor[3] of half starts 6 bytes into the buffer.
void AddMisaligned() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf a, b, c;
        pipe.InitBuffer(a, 64);
        pipe.InitBuffer(b, 64);
        pipe.InitBuffer(c, 64);
        LocalTensor<half> x = a.Get<half>();
        Add(x[3], b.Get<half>(), c.Get<half>(), 16);
    });
}

void AddOutOfBounds() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf a, b, c;
        pipe.InitBuffer(a, 64);
        pipe.InitBuffer(b, 64);
        pipe.InitBuffer(c, 64);
        Add(a.Get<half>(), b.Get<half>(), c.Get<half>(), 33);
    });
}

// Core 2 of 3 reads one element past a 16-element tensor.
void GetValueOob() {
    std::vector<float> x(16, 1.0f);
    AfTwin::RegisterGm(x.data(), x.size() * 4, "x");
    AfTwin::Launch(3, [&] {
        GlobalTensor<float> g;
        g.SetGlobalBuffer(G(x), 16);
        const uint64_t i = static_cast<uint64_t>(GetBlockIdx()) * 8;
        (void)g.GetValue(i);
    });
}

void GetValueViewOob() {
    std::vector<float> x(16, 1.0f);
    AfTwin::RegisterGm(x.data(), x.size() * 4, "x");
    AfTwin::Launch(1, [&] {
        GlobalTensor<float> g;
        g.SetGlobalBuffer(G(x) + 4, 8);
        (void)g.GetValue(7);
        (void)g.GetValue(8);
    });
}

void SetGlobalBufferOob() {
    std::vector<float> x(16, 1.0f);
    AfTwin::RegisterGm(x.data(), x.size() * 4, "x");
    AfTwin::Launch(1, [&] {
        GlobalTensor<float> g;
        g.SetGlobalBuffer(G(x), 17);
    });
}

void PadGmOob() {
    std::vector<float> x(16, 1.0f);
    AfTwin::RegisterGm(x.data(), x.size() * 4, "x");
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf b;
        pipe.InitBuffer(b, 128);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(G(x), 16);
        DataCopyPad(b.Get<float>(), g, DataCopyExtParams(2, 32, 4, 0, 0), DataCopyPadExtParams<float>());
    });
}

void PadUbGmOob() {
    std::vector<float> y(8, 0.0f);
    AfTwin::RegisterGm(y.data(), y.size() * 4, "y");
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf b;
        pipe.InitBuffer(b, 64);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(G(y), 8);
        DataCopyPad(g[4], b.Get<float>(), DataCopyExtParams(1, 20, 0, 0, 0));
    });
}

void PadUbOob() {
    std::vector<float> x(64, 1.0f);
    AfTwin::RegisterGm(x.data(), x.size() * 4, "x");
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf b;
        pipe.InitBuffer(b, 64);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(G(x), 64);
        DataCopyPad(b.Get<float>(), g, DataCopyExtParams(3, 16, 0, 0, 0), DataCopyPadExtParams<float>());
    });
}

void PadUbMisaligned() {
    std::vector<float> x(64, 1.0f);
    AfTwin::RegisterGm(x.data(), x.size() * 4, "x");
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf b;
        pipe.InitBuffer(b, 256);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(G(x), 64);
        DataCopyPad(b.Get<float>()[3], g, DataCopyExtParams(1, 16, 0, 0, 0), DataCopyPadExtParams<float>());
    });
}

// DataCopyPad parameter checks, selected by a second argument.
template <int kWhich>
void PadParams() {
    std::vector<uint16_t> x(64, 0);
    AfTwin::RegisterGm(x.data(), x.size() * 2, "x");
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf b;
        pipe.InitBuffer(b, 256);
        GlobalTensor<half> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(x.data()), 64);
        LocalTensor<half> ub = b.Get<half>();
        if (kWhich == 0) DataCopyPad(ub, g, DataCopyExtParams(1, 0, 0, 0, 0), DataCopyPadExtParams<half>());
        if (kWhich == 1) DataCopyPad(g, ub, DataCopyExtParams(1, 7, 0, 0, 0));
        if (kWhich == 2) DataCopyPad(ub, g, DataCopyExtParams(4096, 2, 0, 0, 0), DataCopyPadExtParams<half>());
        if (kWhich == 3)
            DataCopyPad(ub, g, DataCopyExtParams(1, 2, 0, 0, 0), DataCopyPadExtParams<half>(true, 17, 0, half(0.0f)));
        if (kWhich == 4) DataCopyPad(ub, g, DataCopyExtParams(1, 1u << 21, 0, 0, 0), DataCopyPadExtParams<half>());
    });
}

// Core 1 reads a LocalTensor that core 0 allocated.
void ForeignTensor() {
    static LocalTensor<float> shared;
    AfTwin::Launch(2, [&] {
        TPipe pipe;
        Buf b;
        pipe.InitBuffer(b, 64);
        if (GetBlockIdx() == 0) shared = b.Get<float>();
        SyncAll();
        if (GetBlockIdx() == 1) (void)shared.GetValue(0);
        SyncAll();
    });
}

void OutsideLaunch() { std::printf("%lld\n", static_cast<long long>(GetBlockIdx())); }

struct Case {
    const char* name;
    void (*fn)();
};

const Case kCases[] = {
    {"pad_gm_ub", PadGmUb},
    {"pad_nopad", PadNoPad},
    {"pad_lines", PadLines},
    {"pad_ub_gm", PadUbGm},
    {"datacopy_whole", DataCopyWhole},
    {"datacopy_count_gm_ub", DataCopyCount<0>},
    {"datacopy_count_ub_gm", DataCopyCount<1>},
    {"datacopy_count_ub_ub", DataCopyCount<2>},
    {"gather", GatherCase},
    {"gather_misaligned", GatherMisaligned},
    {"gather_out_of_range", GatherOutOfRange},
    {"high_water", HighWater},
    {"ub_exact_fit", UbExactFit},
    {"ub_overflow", UbOverflow},
    {"queue_fifo", QueueFifo},
    {"que_alloc_full", QueAllocFull},
    {"que_deque_empty", QueDequeEmpty},
    {"que_free_foreign", QueFreeForeign},
    {"que_double_free", QueDoubleFree},
    {"que_enque_twice", QueEnqueTwice},
    {"que_after_reset", QueAfterReset},
    {"add_misaligned", AddMisaligned},
    {"add_out_of_bounds", AddOutOfBounds},
    {"getvalue_oob", GetValueOob},
    {"getvalue_view_oob", GetValueViewOob},
    {"setglobalbuffer_oob", SetGlobalBufferOob},
    {"pad_gm_oob", PadGmOob},
    {"pad_ub_gm_oob", PadUbGmOob},
    {"pad_ub_oob", PadUbOob},
    {"pad_ub_misaligned", PadUbMisaligned},
    {"pad_len_zero", PadParams<0>},
    {"pad_len_multiple", PadParams<1>},
    {"pad_count", PadParams<2>},
    {"pad_padding", PadParams<3>},
    {"pad_len_max", PadParams<4>},
    {"foreign_tensor", ForeignTensor},
    {"outside_launch", OutsideLaunch},
};

}  // namespace
"""
    + CASE_MAIN
)

# ---------------------------------------------------------------------------
# 16-bit float types, vector arithmetic, Cast, Compare / Select, reductions.

VEC_SRC = (
    PRELUDE
    + r"""
namespace {

const RoundMode kModes[] = {RoundMode::CAST_NONE,  RoundMode::CAST_RINT,  RoundMode::CAST_FLOOR, RoundMode::CAST_CEIL,
                            RoundMode::CAST_ROUND, RoundMode::CAST_TRUNC, RoundMode::CAST_ODD};
const char* const kModeNames[] = {"none", "rint", "floor", "ceil", "round", "trunc", "odd"};

struct Bufs {
    TPipe pipe;
    Buf a, b, c, m;
    Bufs() {
        pipe.InitBuffer(a, 1024);
        pipe.InitBuffer(b, 1024);
        pipe.InitBuffer(c, 1024);
        pipe.InitBuffer(m, 1024);
    }
};

template <class D, class S>
void CastLine(const char* tag, Bufs& B, std::initializer_list<S> in, RoundMode mode) {
    LocalTensor<S> s = Fill<S>(B.a, in);
    LocalTensor<D> d = B.b.Get<D>();
    Cast(d, s, mode, static_cast<uint32_t>(in.size()));
    Print(tag, d, static_cast<uint32_t>(in.size()));
}

template <class D, class S>
void CastModes(const char* prefix, Bufs& B, std::initializer_list<S> in, int firstMode, int endMode) {
    for (int k = firstMode; k < endMode; ++k) {
        const std::string tag = std::string(prefix) + "_" + kModeNames[k];
        CastLine<D, S>(tag.c_str(), B, in, kModes[k]);
    }
}

void Scalars() {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    std::printf("half_from_float");
    for (float f : {1.0f, -2.0f, 65504.0f, F(0x477FEFFF), 65520.0f, 1e5f, -1e5f, F(0x33800000), F(0x33000000),
                    F(0x33400000), F(0x3F801000), F(0x3F803000), 0.1f, nan, -nan, inf, -0.0f, F(0x38800000),
                    F(0x387FC000)})
        PrintOne(half(f));
    std::printf("\nhalf_from_double");
    for (double d : {0.1, 1.0000000001, 65519.99999, 1.0 + 1.0 / 2048 + 1.0 / 1099511627776.0, -3.0e-8})
        PrintOne(half(d));
    std::printf("\nhalf_from_int");
    PrintOne(half(2049));
    PrintOne(half(2051));
    PrintOne(half(-2049));
    PrintOne(half(65504));
    PrintOne(half(65520));
    PrintOne(half(int64_t{1} << 40));
    PrintOne(half(uint8_t{0}));
    std::printf("\nhalf_to_float");
    for (uint16_t b : {0x3555, 0x0001, 0x03ff, 0x7bff, 0xfc00, 0x8000, 0x7e00, 0xc000})
        PrintOne(static_cast<float>(half::FromBits(b)));
    std::printf("\nbf16_from_float");
    for (float f : {1.0f, F(0x3F808000), F(0x3F818000), F(0x3F80C000), F(0x7F7FFFFF), nan, -0.0f, F(0x3F80FFFF),
                    F(0xBF808001)})
        PrintOne(bfloat16_t(f));
    std::printf("\nbf16_from_other");
    PrintOne(bfloat16_t(257));
    PrintOne(bfloat16_t(259));
    PrintOne(bfloat16_t(1.00390625));
    PrintOne(bfloat16_t(1.0039062500001));
    std::printf("\nbf16_to_float");
    for (uint16_t b : {0x3f81, 0xc2f7, 0x0001, 0xff80})
        PrintOne(static_cast<float>(bfloat16_t::FromBits(b)));
    std::printf("\nf16_arith");
    PrintOne(half(2048.0f) + half(1.0f));
    PrintOne(half(2048.0f) + half(3.0f));
    PrintOne(half(1.0f) / half(3.0f));
    PrintOne(half(65504.0f) + half(65504.0f));
    PrintOne(half(-1.0f) * half(0.0f));
    PrintOne(-half(2.0f));
    half h(1.0f);
    h += half(0.5f);
    PrintOne(h);
    PrintOne(bfloat16_t(1.0f) + bfloat16_t(F(0x3B000000)));
    PrintOne(bfloat16_t(3.0f) * bfloat16_t(1.0f / 3.0f));
    std::printf("\nf16_compare %d %d %d %d %d %g\n", half(1.0f) < half(2.0f) ? 1 : 0, half(nan) == half(nan) ? 1 : 0,
                half(0.5f) == 0.5f ? 1 : 0, bfloat16_t(2.0f) >= bfloat16_t(2.0f) ? 1 : 0,
                half(1.0f) != half(1.0f) ? 1 : 0, static_cast<double>(half(1.5f) * 2));
    std::printf("trivial %d %d %d %d\n", static_cast<int>(sizeof(half)), static_cast<int>(sizeof(bfloat16_t)),
                std::is_trivially_copyable<half>::value ? 1 : 0,
                std::is_trivially_copyable<bfloat16_t>::value ? 1 : 0);
}

void Casts(Bufs& B) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    // float -> half / bfloat16 in every mode
    CastModes<half, float>("f2h", B, {F(0x3F801000), F(0xBF801000), F(0x3F800800), F(0x3F803000), 70000.0f,
                                       F(0x32800000)},
                           0, 7);
    CastModes<bfloat16_t, float>("f2b", B, {F(0x3F808000), F(0xBF808000), F(0x3F80C000)}, 1, 6);
    // float -> int32 in every mode that takes one (CAST_RINT .. CAST_TRUNC)
    CastModes<int32_t, float>("f2i", B, {2.5f, -2.5f, 1.5f, -1.7f, 0.5f, 3e9f, -3e9f, nan, inf, -inf}, 1, 6);
    // saturation
    CastLine<int8_t, half>("h2i8", B, {half(300.0f), half(-300.0f), half(127.9f), half(-128.9f), half(nan)},
                           RoundMode::CAST_TRUNC);
    CastLine<uint8_t, half>("h2u8", B, {half(-5.0f), half(255.9f), half(256.0f), half(nan)}, RoundMode::CAST_TRUNC);
    CastLine<int8_t, half>("h2i8_none", B, {half(2.5f), half(3.5f), half(-2.5f)}, RoundMode::CAST_NONE);
    CastLine<int16_t, half>("h2i16", B, {half(40000.0f), half(-40000.0f), half(2.5f), half(-0.5f)},
                            RoundMode::CAST_ROUND);
    CastLine<int64_t, float>("f2i64", B, {1e19f, -1e19f, 1099511627776.0f}, RoundMode::CAST_TRUNC);
    CastLine<int32_t, float>("f2i32_edge", B, {2147483520.0f, 2147483648.0f, -2147483648.0f},
                             RoundMode::CAST_RINT);
    CastLine<int32_t, bfloat16_t>("b2i32", B, {bfloat16_t(-2.5f), bfloat16_t(F(0x7F800000))},
                                  RoundMode::CAST_FLOOR);
    // integers -> float types
    CastLine<float, int32_t>("i2f_none", B, {16777217, 16777219, -16777217}, RoundMode::CAST_NONE);
    CastLine<float, int32_t>("i2f_trunc", B, {16777219, -16777219}, RoundMode::CAST_TRUNC);
    CastLine<half, int32_t>("i2h_rint", B, {2049, 2051, 65520, -65536}, RoundMode::CAST_RINT);
    CastLine<half, int32_t>("i2h_trunc", B, {65520, 2051}, RoundMode::CAST_TRUNC);
    CastLine<float, int64_t>("i64_2f", B, {(int64_t{1} << 53) + 1, -(int64_t{1} << 62) - 1}, RoundMode::CAST_RINT);
    CastLine<half, uint8_t>("u8_2h", B, {255, 1}, RoundMode::CAST_NONE);
    CastLine<half, int8_t>("i8_2h", B, {-128, 5}, RoundMode::CAST_NONE);
    CastLine<half, int16_t>("i16_2h", B, {2049, -32768}, RoundMode::CAST_RINT);
    // integers -> integers keep the low bits
    CastLine<uint8_t, int32_t>("i32_2u8", B, {300, -129, 255}, RoundMode::CAST_NONE);
    CastLine<uint8_t, int16_t>("i16_2u8", B, {-1, -32768}, RoundMode::CAST_NONE);
    CastLine<int16_t, uint32_t>("u32_2i16", B, {4294967295u, 7u}, RoundMode::CAST_NONE);
    CastLine<int32_t, int8_t>("i8_2i32", B, {-5, 127}, RoundMode::CAST_NONE);
    CastLine<int32_t, int64_t>("i64_2i32", B, {0x100000005ll, -1}, RoundMode::CAST_NONE);
    // between float types
    CastLine<float, half>("h2f", B, {half::FromBits(0x3555), half::FromBits(0x8001)}, RoundMode::CAST_NONE);
    CastLine<half, bfloat16_t>("b2h", B, {bfloat16_t::FromBits(0x3f81), bfloat16_t::FromBits(0x4780)},
                               RoundMode::CAST_RINT);
    CastLine<bfloat16_t, half>("h2b_rint", B, {half::FromBits(0x3c01), half::FromBits(0x3c03)},
                               RoundMode::CAST_RINT);
    CastLine<bfloat16_t, half>("h2b_ceil", B, {half::FromBits(0x3c01)}, RoundMode::CAST_CEIL);
}

// Compare / Compares count whole 256-byte repeats on 3510: the operands are zeroed first, so the padding
// compares 0 with 0 (or with the scalar).
void Compares(Bufs& B) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Duplicate(B.a.Get<float>(), 0.0f, 256);
    Duplicate(B.b.Get<float>(), 0.0f, 256);
    LocalTensor<float> a = Fill<float>(B.a, {1, 2, 3, nan, 5, 6, 7, 8, 9, 10});
    LocalTensor<float> b = Fill<float>(B.b, {2, 2, 2, 4, 4, 7, 7, 9, 1, 10});
    LocalTensor<uint8_t> m = B.m.Get<uint8_t>();
    const CMPMODE modes[] = {CMPMODE::LT, CMPMODE::GT, CMPMODE::EQ, CMPMODE::LE, CMPMODE::GE, CMPMODE::NE};
    const char* const names[] = {"cmp_lt", "cmp_gt", "cmp_eq", "cmp_le", "cmp_ge", "cmp_ne"};
    for (int k = 0; k < 6; ++k) {
        Duplicate(m, static_cast<uint8_t>(0xAA), 32);
        Compare(m, a, b, modes[k], 64);
        Print(names[k], m, 10);
    }
    Duplicate(m, static_cast<uint8_t>(0xAA), 32);
    Compares(m, a, 5.0f, CMPMODE::GT, 64);
    Print("cmps_gt", m, 10);
    LocalTensor<float> d = B.c.Get<float>();
    Compare(m, a, b, CMPMODE::LT, 64);
    Select(d, m, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 10);
    Print("sel_tt", d, 10);
    Select(d, m, a, -1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 10);
    Print("sel_ts", d, 10);
    Duplicate(B.a.Get<int32_t>(), 5, 256);
    Duplicate(B.b.Get<int32_t>(), 6, 256);
    LocalTensor<int32_t> ia = Fill<int32_t>(B.a, {1, -1, 7, 0, 0, 0, 0, 0, 3});
    LocalTensor<int32_t> ib = Fill<int32_t>(B.b, {1, 1, 7, 1, 1, 1, 1, 1, 3});
    Duplicate(m, static_cast<uint8_t>(0xAA), 32);
    Compare(m, ia, ib, CMPMODE::EQ, 64);
    Print("cmp_i32_eq", m, 10);
    Duplicate(B.a.Get<half>(), half(7.0f), 512);
    LocalTensor<half> ha = Fill<half>(B.a, {half(1.0f), half(2.0f), half(3.0f)});
    Duplicate(m, static_cast<uint8_t>(0xAA), 32);
    Compares(m, ha, half(2.0f), CMPMODE::LE, 128);
    Print("cmps_h_le", m, 18);
    LocalTensor<half> hd = B.c.Get<half>();
    Select(hd, m, ha, half(-4.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, 3);
    Print("sel_h", hd, 3);
}

void Reductions(Bufs& B) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    LocalTensor<float> fd = B.c.Get<float>();
    LocalTensor<float> tmp = B.m.Get<float>();
    ReduceSum(fd, Fill<float>(B.a, {1e8f, 1.0f, -1e8f, 1.0f}), tmp, 4);
    Print("sum_f_order", fd, 1);
    ReduceSum(fd, Fill<float>(B.a, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), tmp, 10);
    Print("sum_f", fd, 1);
    LocalTensor<half> hd = B.c.Get<half>();
    ReduceSum(hd, Fill<half>(B.a, {half(2048.0f), half(1.0f), half(1.0f)}), B.m.Get<half>(), 3);
    Print("sum_h", hd, 1);
    LocalTensor<int32_t> id = B.c.Get<int32_t>();
    ReduceSum(id, Fill<int32_t>(B.a, {2147483647, 1}), B.m.Get<int32_t>(), 2);
    Print("sum_i32", id, 1);
    LocalTensor<uint32_t> ud = B.c.Get<uint32_t>();
    ReduceSum(ud, Fill<uint32_t>(B.a, {4000000000u, 300000000u, 10u}), B.m.Get<uint32_t>(), 3);
    Print("sum_u32", ud, 1);
    LocalTensor<float> src = Fill<float>(B.a, {3, 9, -1, 9, 2, -1});
    ReduceMax(fd, src, tmp, 6, true);
    std::printf("rmax_f %08llx %u\n", BitsOf(fd.GetValue(0)), fd.ReinterpretCast<uint32_t>().GetValue(1));
    ReduceMin(fd, src, tmp, 6, true);
    std::printf("rmin_f %08llx %u\n", BitsOf(fd.GetValue(0)), fd.ReinterpretCast<uint32_t>().GetValue(1));
    ReduceMax(fd, Fill<float>(B.a, {1, nan, 5}), tmp, 3);
    Print("rmax_nan", fd, 1);
    ReduceMax(hd, Fill<half>(B.a, {half(1.0f), half(7.0f), half(7.0f), half(3.0f)}), B.m.Get<half>(), 4, true);
    std::printf("rmax_h %04llx %u\n", BitsOf(hd.GetValue(0)), hd.ReinterpretCast<uint16_t>().GetValue(1));
    ReduceMin(id, Fill<int32_t>(B.a, {5, -3, -3}), B.m.Get<int32_t>(), 3, true);
    std::printf("rmin_i32 %d %d\n", id.GetValue(0), id.GetValue(1));
}

void Elementwise(Bufs& B) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    LocalTensor<half> hd = B.c.Get<half>();
    Add(hd, Fill<half>(B.a, {half(1.0f), half(2048.0f), half(65504.0f), half(0.1f)}),
        Fill<half>(B.b, {half(F(0x3A000000)), half(1.0f), half(65504.0f), half(0.2f)}), 4);
    Print("add_h", hd, 4);
    LocalTensor<int16_t> sd = B.c.Get<int16_t>();
    Add(sd, Fill<int16_t>(B.a, {32767, -32768}), Fill<int16_t>(B.b, {1, -1}), 2);
    Print("add_i16", sd, 2);
    Sub(sd, Fill<int16_t>(B.a, {-32768, 5}), Fill<int16_t>(B.b, {1, 7}), 2);
    Print("sub_i16", sd, 2);
    LocalTensor<int32_t> id = B.c.Get<int32_t>();
    Mul(id, Fill<int32_t>(B.a, {65536, -3}), Fill<int32_t>(B.b, {65536, 7}), 2);
    Print("mul_i32", id, 2);
    Div(id, Fill<int32_t>(B.a, {7, -7, std::numeric_limits<int32_t>::min()}), Fill<int32_t>(B.b, {2, 2, -1}), 3);
    Print("div_i32", id, 3);
    LocalTensor<float> fd = B.c.Get<float>();
    Div(fd, Fill<float>(B.a, {1, 1, -1}), Fill<float>(B.b, {0, 3, 0}), 3);
    Print("div_f", fd, 3);
    LocalTensor<float> x = Fill<float>(B.a, {1, nan, 3, 5});
    LocalTensor<float> y = Fill<float>(B.b, {2, 1, nan, 4});
    Max(fd, x, y, 4);
    Print("max_f", fd, 4);
    Min(fd, x, y, 4);
    Print("min_f", fd, 4);
    Maxs(fd, Fill<float>(B.a, {1, 5, nan}), 3.0f, 3);
    Print("maxs_f", fd, 3);
    Mins(fd, Fill<float>(B.a, {1, 5, nan}), 3.0f, 3);
    Print("mins_f", fd, 3);
    Adds(fd, Fill<float>(B.a, {1, 2}), 0.5f, 2);
    Print("adds_f", fd, 2);
    Muls(hd, Fill<half>(B.a, {half(3.0f), half(65504.0f)}), half(2.0f), 2);
    Print("muls_h", hd, 2);
    LocalTensor<int8_t> cd = B.c.Get<int8_t>();
    Adds(cd, Fill<int8_t>(B.a, {127, -128}), int8_t{1}, 2);
    Print("adds_i8", cd, 2);
    Relu(fd, Fill<float>(B.a, {-1, 2, nan, -0.0f, 0.5f}), 5);
    Print("relu_f", fd, 5);
    Abs(fd, Fill<float>(B.a, {-0.0f, -3, 2}), 3);
    Print("abs_f", fd, 3);
    Abs(hd, Fill<half>(B.a, {half::FromBits(0x8000), half::FromBits(0xc000)}), 2);
    Print("abs_h", hd, 2);
    Abs(id, Fill<int32_t>(B.a, {std::numeric_limits<int32_t>::min(), -5}), 2);
    Print("abs_i32", id, 2);
    Not(sd, Fill<int16_t>(B.a, {0, -1, 0x00FF}), 3);
    Print("not_i16", sd, 3);
    LocalTensor<uint16_t> ud = B.c.Get<uint16_t>();
    LocalTensor<uint16_t> u0 = Fill<uint16_t>(B.a, {0xF0F0, 0x1234});
    LocalTensor<uint16_t> u1 = Fill<uint16_t>(B.b, {0xFF00, 0x0F0F});
    And(ud, u0, u1, 2);
    Print("and_u16", ud, 2);
    Or(ud, u0, u1, 2);
    Print("or_u16", ud, 2);
    Sqrt(fd, Fill<float>(B.a, {4, 2.25f, 0}), 3);
    Print("sqrt_f", fd, 3);
    Rsqrt(fd, Fill<float>(B.a, {4, 0.25f}), 2);
    Print("rsqrt_f", fd, 2);
    Reciprocal(fd, Fill<float>(B.a, {4, -0.5f}), 2);
    Print("recip_f", fd, 2);
    Exp(fd, Fill<float>(B.a, {0, -std::numeric_limits<float>::infinity()}), 2);
    Print("exp_f", fd, 2);
    Ln(hd, Fill<half>(B.a, {half(1.0f), half(0.0f)}), 2);
    Print("ln_h", hd, 2);
    Duplicate(hd, half(1.5f), 3);
    Print("dup_h", hd, 3);
    CreateVecIndex(id, 5, 4);
    Print("vecindex_i32", id, 4);
    ArithProgression(fd, 1.0f, 0.5f, 4);
    Print("arith_f", fd, 4);
    ArithProgression(sd, int16_t{32766}, int16_t{1}, 3);
    Print("arith_i16", sd, 3);
}

void All() {
    Scalars();
    AfTwin::Launch(1, [&] {
        Bufs B;
        Casts(B);
        Compares(B);
        Reductions(B);
        Elementwise(B);
    });
}

// Exactly 10 vector calls of which one is a Gather of 5 elements.
void Count() {
    AfTwin::Launch(2, [&] {
        Bufs B;
        LocalTensor<float> a = B.a.Get<float>();
        LocalTensor<float> b = B.b.Get<float>();
        Duplicate(a, 1.0f, 64);                                     // 1
        Duplicate(b, 2.0f, 64);                                     // 2
        Add(a, a, b, 64);                                           // 3
        Muls(a, a, 0.5f, 64);                                       // 4
        Cast(B.c.Get<half>(), a, RoundMode::CAST_RINT, 64);         // 5
        Compares(B.m.Get<uint8_t>(), a, 1.0f, CMPMODE::GT, 64);     // 6
        ReduceSum(b, a, B.c.Get<float>(), 64);                      // 7
        LocalTensor<uint32_t> off = B.c.Get<uint32_t>();
        Duplicate(off, 4u, 8);                                      // 8
        Gather(b, a, off, 0, 5);                                    // 9
        Exp(a, a, 0);                                               // 10 (count 0 still counts)
        DataCopy(b, a, 64);
    });
    Report();
}

void CastNone() {
    AfTwin::Launch(1, [&] {
        Bufs B;
        Cast(B.a.Get<int32_t>(), B.b.Get<float>(), RoundMode::CAST_NONE, 8);
    });
}

void CastOddInt() {
    AfTwin::Launch(1, [&] {
        Bufs B;
        Cast(B.a.Get<int16_t>(), B.b.Get<int32_t>(), RoundMode::CAST_ODD, 8);
    });
}

void SelectMode() {
    AfTwin::Launch(1, [&] {
        Bufs B;
        Select(B.a.Get<float>(), B.m.Get<uint8_t>(), B.b.Get<float>(), B.c.Get<float>(),
               SELMODE::VSEL_TENSOR_SCALAR_MODE, 8);
    });
}

void SelectModeScalar() {
    AfTwin::Launch(1, [&] {
        Bufs B;
        Select(B.a.Get<float>(), B.m.Get<uint8_t>(), B.b.Get<float>(), 0.0f, SELMODE::VSEL_CMPMASK_SPR, 8);
    });
}

void CompareMaskOob() {
    AfTwin::Launch(1, [&] {
        Bufs B;
        Compare(B.m.Get<uint8_t>(2), B.a.Get<float>(), B.b.Get<float>(), CMPMODE::EQ, 64);
    });
}

struct Case {
    const char* name;
    void (*fn)();
};

const Case kCases[] = {
    {"all", All},
    {"count", Count},
    {"cast_none", CastNone},
    {"cast_odd_int", CastOddInt},
    {"select_mode", SelectMode},
    {"select_mode_scalar", SelectModeScalar},
    {"compare_mask_oob", CompareMaskOob},
};

}  // namespace
"""
    + CASE_MAIN
)

# ---------------------------------------------------------------------------
# Launch, SyncAll, SIMT and the counters.

RUNTIME_SRC = (
    PRELUDE
    + r"""
namespace {

void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Four cores, three barriers: every core sees every increment made before a barrier.
void SyncAllCase() {
    std::vector<int32_t> out(8, -1);
    AfTwin::RegisterGm(out.data(), out.size() * 4, "out");
    static std::atomic<int32_t> counter{0};
    AfTwin::Launch(4, [&] {
        GlobalTensor<int32_t> g;
        g.SetGlobalBuffer(G(out), 8);
        const uint64_t i = static_cast<uint64_t>(GetBlockIdx());
        SleepMs(static_cast<int>(10 * (3 - i)));
        counter.fetch_add(1);
        SyncAll();
        g.SetValue(i, counter.load());
        SyncAll();
        counter.fetch_add(1);
        SyncAll();
        g.SetValue(4 + i, counter.load());
    });
    PrintVec("out", out);
    Report();
}

// Waits until the barrier state satisfies `ready` (read under the barrier's
// mutex), so the deadlock cases below do not depend on timing.
template <class P>
void WaitForBarrier(P ready) {
    for (;;) {
        {
            std::lock_guard<std::mutex> lock(AfTwin::gState.barrierMutex);
            if (ready(AfTwin::gState)) return;
        }
        SleepMs(1);
    }
}

// Core 1 waits in SyncAll; core 0 returns from the kernel without calling it.
void DeadlockFinish() {
    AfTwin::Launch(2, [&] {
        if (GetBlockIdx() == 0) {
            WaitForBarrier([](const AfTwin::GlobalState& g) { return g.arrived == 1; });
            return;
        }
        SyncAll();
    });
}

// Core 0 has returned by the time core 1 calls SyncAll.
void DeadlockLate() {
    AfTwin::Launch(2, [&] {
        if (GetBlockIdx() == 0) return;
        WaitForBarrier([](const AfTwin::GlobalState& g) { return g.finished == 1; });
        SyncAll();
    });
}

void DeadlockTooManyCores() {
    AfTwin::Launch(300, [&] { SyncAll<true>(); });
}

__simt_vf__ void Lane(__gm__ int32_t* out, __gm__ const int32_t* in, int64_t core) {
    const uint32_t t = Simt::GetThreadIdx();
    __gm__ int32_t* row = out + (core * 8 + t) * 6;
    AfTwin::SimtGmStore(row + 0, static_cast<int32_t>(t));
    AfTwin::SimtGmStore(row + 1, static_cast<int32_t>(Simt::GetThreadNum()));
    AfTwin::SimtGmStore(row + 2, static_cast<int32_t>(threadIdx.x));
    AfTwin::SimtGmStore(row + 3, static_cast<int32_t>(threadIdx.y));
    AfTwin::SimtGmStore(row + 4, static_cast<int32_t>(blockDim.x * 10 + blockDim.y));
    AfTwin::SimtGmStore(row + 5, AfTwin::SimtGmLoad(in + t) * 100);
}

__simt_vf__ void UbLane(__ubuf__ float* ub) {
    const uint32_t t = Simt::GetThreadIdx();
    AfTwin::SimtUbStore(ub + t, AfTwin::SimtUbLoad(ub + t) * 2.0f + static_cast<float>(t));
}

__simt_vf__ void Nop() {}

void SimtCase() {
    std::vector<int32_t> in = {1, 2, 3, 4, 5, 6, 7, 8};
    std::vector<int32_t> out(2 * 8 * 6, -1);
    AfTwin::RegisterGm(in.data(), in.size() * 4, "in");
    AfTwin::RegisterGm(out.data(), out.size() * 4, "out");
    AfTwin::Launch(2, [&] {
        const int64_t core = GetBlockIdx();
        Simt::VF_CALL<Lane>(Simt::Dim3{4, 2, 1}, G(out), static_cast<const int32_t*>(G(in)), core);
        TPipe pipe;
        Buf b;
        pipe.InitBuffer(b, 32);
        LocalTensor<float> t = b.Get<float>();
        Duplicate(t, 1.5f, 8);
        Simt::VF_CALL<UbLane>(Simt::Dim3(4), t.GetPhyAddr());
        if (core == 0) {
            Print("ub", t, 8);
            Simt::VF_CALL<Nop>(Simt::Dim3{64, 32, 1});
            std::printf("after %u %u %u\n", threadIdx.x, blockDim.x, blockDim.y);
        }
    });
    PrintVec("out", out);
    Report();
}

template <uint32_t kX, uint32_t kY, uint32_t kZ>
void SimtThreads() {
    AfTwin::Launch(1, [&] { Simt::VF_CALL<Nop>(Simt::Dim3{kX, kY, kZ}); });
}

template <uint32_t kBytes>
void SimtDcache() {
    AfTwin::Configure(253952, 32768);
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf b;
        pipe.InitBuffer(b, kBytes);
        Simt::VF_CALL<Nop>(Simt::Dim3(8));
    });
    Report();
}

__simt_vf__ void ReadAt(__gm__ const int32_t* in, int64_t i) { (void)AfTwin::SimtGmLoad(in + i); }

void SimtGmOob() {
    std::vector<int32_t> in(16, 0);
    AfTwin::RegisterGm(in.data(), in.size() * 4, "in");
    AfTwin::Launch(1, [&] {
        Simt::VF_CALL<ReadAt>(Simt::Dim3(1), static_cast<const int32_t*>(G(in)), int64_t{15});
        Simt::VF_CALL<ReadAt>(Simt::Dim3(1), static_cast<const int32_t*>(G(in)), int64_t{16});
    });
}

__simt_vf__ void UbStoreAt(__ubuf__ float* ub, int64_t i) { AfTwin::SimtUbStore(ub + i, 1.0f); }

void SimtUbOob() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        Buf b;
        pipe.InitBuffer(b, 32);
        __ubuf__ float* p = b.Get<float>().GetPhyAddr();
        Simt::VF_CALL<UbStoreAt>(Simt::Dim3(1), p, int64_t{65535});
        Simt::VF_CALL<UbStoreAt>(Simt::Dim3(1), p, int64_t{65536});
    });
}

// A program whose counters are known exactly; then a second, smaller launch.
void Counters() {
    std::vector<float> in(256);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
    std::vector<float> out(256, 0.0f);
    AfTwin::RegisterGm(in.data(), in.size() * 4, "in");
    AfTwin::RegisterGm(out.data(), out.size() * 4, "out");
    AfTwin::Launch(2, [&] {
        const uint64_t c = static_cast<uint64_t>(GetBlockIdx());
        GlobalTensor<float> gi, go;
        gi.SetGlobalBuffer(G(in), 256);
        go.SetGlobalBuffer(G(out), 256);
        TPipe pipe;
        TQue<TPosition::VECIN, 2> q;
        Buf tmp;
        pipe.InitBuffer(q, 2, 512);
        pipe.InitBuffer(tmp, 100);
        LocalTensor<float> t = q.AllocTensor<float>();
        DataCopy(t, gi[c * 128], 128);                                        // 512 B, lines 4c..4c+3
        q.EnQue(t);
        LocalTensor<float> u = q.DeQue<float>();
        Muls(u, u, 2.0f, 128);
        Adds(u, u, 1.0f, 128);
        DataCopyPad(go[c * 128], u, DataCopyExtParams(1, 100, 0, 0, 0));    // 100 B, line 4c
        q.FreeTensor(u);
        (void)gi.GetValue(c * 128 + 127);                                    // already-read line
        SyncAll();
        if (c == 1) go.SetValue(255, 1.0f);                                  // line 7
    });
    Report();
    std::printf("out %g %g %g %g\n", static_cast<double>(out[0]), static_cast<double>(out[24]),
                static_cast<double>(out[25]), static_cast<double>(out[255]));
    AfTwin::Launch(1, [&] {
        GlobalTensor<float> gi;
        gi.SetGlobalBuffer(G(in));
        TPipe pipe;
        Buf b;
        pipe.InitBuffer(b, 32);
        DataCopy(b.Get<float>(), gi[200], 8);
    });
    Report();
}

void Tiling() {
    std::vector<int64_t> out(3, -1);
    AfTwin::RegisterGm(out.data(), out.size() * 8, "out");
    AfTwin::SetTilingKey(7);
    std::printf("key %lld\n", static_cast<long long>(AfTwin::CurrentTilingKey()));
    AfTwin::Launch(3, [&] {
        GlobalTensor<int64_t> g;
        g.SetGlobalBuffer(G(out), 3);
        const int64_t v = (TILING_KEY_IS(7) ? 100 : 0) + (TILING_KEY_IS(3) ? 1000 : 0) + GetBlockNum() * 10;
        g.SetValue(static_cast<uint64_t>(GetBlockIdx()), v + GetBlockIdx());
        std::printf("phy %d\n", g.GetPhyAddr(2) == G(out) + 2 ? 1 : 0);
    });
    PrintVec("out", out);
}

void LaunchZero() { AfTwin::Launch(0, [] {}); }

void RegisterOverlap() {
    std::vector<int32_t> a(16);
    AfTwin::RegisterGm(a.data(), 64, "a");
    AfTwin::RegisterGm(a.data() + 8, 64, "b");
}

void ConfigureBad() { AfTwin::Configure(262176, 0); }

struct Case {
    const char* name;
    void (*fn)();
};

const Case kCases[] = {
    {"syncall", SyncAllCase},
    {"deadlock_finish", DeadlockFinish},
    {"deadlock_late", DeadlockLate},
    {"deadlock_many", DeadlockTooManyCores},
    {"simt", SimtCase},
    {"simt_2049", SimtThreads<2049, 1, 1>},
    {"simt_3d", SimtThreads<64, 32, 2>},
    {"simt_zero", SimtThreads<0, 1, 1>},
    {"simt_dcache", SimtDcache<221216>},
    {"simt_dcache_fit", SimtDcache<221184>},
    {"simt_gm_oob", SimtGmOob},
    {"simt_ub_oob", SimtUbOob},
    {"counters", Counters},
    {"tiling", Tiling},
    {"launch_zero", LaunchZero},
    {"register_overlap", RegisterOverlap},
    {"configure_bad", ConfigureBad},
};

}  // namespace
"""
    + CASE_MAIN
)


# ---------------------------------------------------------------------------
# Running the programs.


class Output:
    """stdout of one case: ``key value...`` lines and the counters JSON objects, in order."""

    def __init__(self, text: str) -> None:
        self.lines: dict[str, list[str]] = {}
        self.reports: list[dict[str, int]] = []
        for line in text.splitlines():
            if line.startswith("{"):
                self.reports.append(json.loads(line))
            elif line.strip():
                key, *values = line.split()
                self.lines[key] = values

    def __getitem__(self, key: str) -> list[str]:
        return self.lines[key]

    def ints(self, key: str) -> list[int]:
        return [int(v) for v in self.lines[key]]

    def hexes(self, key: str) -> list[int]:
        return [int(v, 16) for v in self.lines[key]]

    @property
    def report(self) -> dict[str, int]:
        """The counters of the case's one launch but the shared L2's (:data:`L2_KEYS`)."""
        assert len(self.reports) == 1, self.reports
        assert set(L2_KEYS) <= set(self.reports[0]), self.reports[0]
        return {key: value for key, value in self.reports[0].items() if key not in L2_KEYS}


def run_ok(program, case: str) -> Output:
    rc, out, err = program(case)
    assert rc == 0, f"case {case}: exit {rc}\n{err}"
    assert "AF_TWIN_ERROR" not in err, err
    return Output(out)


def run_abort(program, case: str) -> tuple[str, int, str]:
    """(kind, core, message) of the single AF_TWIN_ERROR line of an aborting case."""
    rc, _out, err = program(case)
    matches = [m for m in map(ERROR_LINE.fullmatch, err.splitlines()) if m]
    assert rc == 86, f"case {case}: exit {rc}, expected 86\n{err}"
    assert len(matches) == 1, err
    m = matches[0]
    return m["kind"], int(m["core"]), m["message"]


def counters(**values) -> dict:
    """A full counters object: the given values, every other counter 0 (no stage marks)."""
    assert set(values) <= COUNTER_KEYS
    return {key: values.get(key, [] if key == "stage_cores" else 0) for key in COUNTER_KEYS}


def le16(values) -> list[int]:
    return [b for v in values for b in struct.pack("<H", v)]


def f32(values) -> list[int]:
    return [int(b) for b in np.asarray(values, dtype=np.float32).view(np.uint32)]


def f16(values) -> list[int]:
    return [int(b) for b in np.asarray(values, dtype=np.float16).view(np.uint16)]


def f16_bits_to_f32(bits) -> list[int]:
    halves = np.asarray(bits, dtype=np.uint16).view(np.float16)
    return [int(b) for b in halves.astype(np.float32).view(np.uint32)]


def bf16_rne(bits32: int) -> int:
    """float32 bits -> bfloat16 bits, round to nearest even (NaN made quiet)."""
    if bits32 & 0x7FFFFFFF > 0x7F800000:
        return (bits32 >> 16) | 0x40
    return (bits32 + 0x7FFF + ((bits32 >> 16) & 1)) >> 16


@pytest.fixture(scope="module")
def move(twin_compile):
    return twin_compile(MOVE_SRC)


@pytest.fixture(scope="module")
def vec(twin_compile):
    return twin_compile(VEC_SRC)


@pytest.fixture(scope="module")
def vec_all(vec) -> Output:
    return run_ok(vec, "all")


@pytest.fixture(scope="module")
def runtime(twin_compile):
    return twin_compile(RUNTIME_SRC)


# ---------------------------------------------------------------------------
# DataCopyPad / DataCopy.


def test_datacopypad_gm_to_ub_unaligned_len_padding_and_dummy_bytes(move):
    out = run_ok(move, "pad_gm_ub")
    pad = le16([0xBC00])  # half(-1)
    block0 = pad * 2 + le16(range(0x101, 0x106)) + pad + [0xCD] * 16
    block1 = pad * 2 + le16(range(0x109, 0x10E)) + pad + [0xCD] * 16
    gap = [0x11] * 32  # dstStride = 1 block, left untouched
    assert out.hexes("ub") == block0 + gap + block1 + gap
    assert out.report == counters(
        gm_read_bytes=20,
        cachelines_read=1,
        ub_high_water=128,
        vector_calls=1,
        vector_ub_bytes=128,  # Duplicate of 64 uint16
        datacopy_calls=1,
        block_dim=1,
    )


def test_datacopypad_without_pad_value_poisons_padding(move):
    out = run_ok(move, "pad_nopad")
    data = [b for v in f32([4.0, 5.0]) for b in struct.pack("<I", v)]
    # [left pad 4 B][data 8 B][right pad 8 B][dummy 12 B]: only the data is defined;
    # the dummy bytes run past the 20-byte view into its 64-byte buffer.
    assert out.hexes("ub") == [0xCD] * 4 + data + [0xCD] * 20 + [0x11] * 32
    assert out.report["gm_read_bytes"] == 8


def test_datacopypad_gm_src_stride_is_in_bytes(move):
    out = run_ok(move, "pad_lines")
    expected = []
    for i in range(4):  # block i: GM bytes [128 i, 128 i + 16), UB bytes [32 i, 32 i + 32)
        expected += f32([32 * i + k for k in range(4)]) + [0xCDCDCDCD] * 4
    assert out.hexes("ub") == expected
    assert out.ints("size") == [256]
    assert out.report == counters(
        gm_read_bytes=64, cachelines_read=4, ub_high_water=128, datacopy_calls=1, block_dim=1
    )


def test_datacopypad_ub_to_gm_strides(move):
    out = run_ok(move, "pad_ub_gm")
    # UB block i starts at i * (32 + 1 * 32) bytes = float 16 i; GM block i at 4 + i * (12 + 4) bytes.
    y = [-1.0] * 32
    for i in range(3):
        y[1 + 4 * i : 4 + 4 * i] = [16 * i, 16 * i + 1, 16 * i + 2]
    assert out.hexes("y") == f32(y)
    assert out.report == counters(
        gm_write_bytes=36,
        cachelines_written=1,
        ub_high_water=256,
        vector_calls=1,
        vector_ub_bytes=256,  # ArithProgression of 64 floats
        datacopy_calls=1,
        block_dim=1,
    )


def test_datacopy_whole_blocks(move):
    out = run_ok(move, "datacopy_whole")
    assert out.hexes("ua") == f32([100 + i for i in range(8)] + [-1.0] * 8)
    assert out.hexes("y") == f32([0.0] * 8 + [100 + i for i in range(8)])
    assert out.hexes("d") == f16(list(range(16)) + [-1.0] * 4)
    assert out.report == counters(
        gm_read_bytes=32,
        gm_write_bytes=32,
        cachelines_read=1,
        cachelines_written=1,
        ub_high_water=192,
        vector_calls=3,
        vector_ub_bytes=3 * 64,  # Duplicate of 16 floats, ArithProgression and Duplicate of 32 halves
        datacopy_calls=3,
        block_dim=1,
    )


def test_datacopy_count_must_fill_whole_blocks(move):
    """The CPU-debug build asserts and the NPU rounds down; the twin reports it instead of dropping the tail."""
    expected = {
        "datacopy_count_gm_ub": "DataCopy GM->UB: count 13 * sizeof(float) = 52 bytes is not a multiple of 32 (the "
        "CPU-debug build asserts, the NPU rounds down to 32 bytes and drops the tail); copy "
        "a tail with DataCopyPad",
        "datacopy_count_ub_gm": "DataCopy UB->GM: count 7 * sizeof(float) = 28 bytes is not a multiple of 32 (the "
        "CPU-debug build asserts, the NPU rounds down to 0 bytes and drops the tail); copy "
        "a tail with DataCopyPad",
        "datacopy_count_ub_ub": "DataCopy UB->UB: count 17 * sizeof(half) = 34 bytes is not a multiple of 32 (the "
        "CPU-debug build asserts, the NPU rounds down to 32 bytes and drops the tail); copy "
        "a tail with DataCopyPad",
    }
    for case, message in expected.items():
        assert run_abort(move, case) == ("datacopy-count", 0, message)


def test_datacopypad_parameter_checks(move):
    expected = {
        "pad_len_zero": "DataCopyPad GM->UB: blockLen 0 bytes must be in [1, 2097151]",
        "pad_len_max": "DataCopyPad GM->UB: blockLen 2097152 bytes must be in [1, 2097151]",
        "pad_len_multiple": "DataCopyPad UB->GM: blockLen 7 bytes is not a multiple of sizeof(half) = 2",
        "pad_count": "DataCopyPad GM->UB: blockCount 4096 must be in [1, 4095]",
        "pad_padding": "DataCopyPad GM->UB: leftPadding 17 / rightPadding 0 elements of 2 bytes exceed 32 bytes",
    }
    for case, message in expected.items():
        assert run_abort(move, case) == ("datacopy-params", 0, message), case


def test_datacopypad_bounds_and_alignment(move):
    assert run_abort(move, "pad_gm_oob") == (
        "gm-out-of-bounds",
        0,
        "DataCopyPad GM->UB reads bytes [36, 68) of 'x' (size 64)",
    )
    assert run_abort(move, "pad_ub_gm_oob") == (
        "gm-out-of-bounds",
        0,
        "DataCopyPad UB->GM writes bytes [16, 36) of 'y' (size 32) but the GlobalTensor covers bytes [16, 32)",
    )
    assert run_abort(move, "pad_ub_oob") == (
        "ub-out-of-bounds",
        0,
        "DataCopyPad GM->UB: operand dst accesses UB bytes [64, 80) but its LocalTensor<float> covers [0, 64) "
        "(16 elements)",
    )
    assert run_abort(move, "pad_ub_misaligned") == (
        "ub-misaligned",
        0,
        "DataCopyPad GM->UB: operand dst starts at UB byte offset 12, which is not 32-byte aligned",
    )


# ---------------------------------------------------------------------------
# Gather, TPipe, TQue, operand checks.


def test_gather_reads_byte_offsets_and_counts_elements(move):
    out = run_ok(move, "gather")
    # float: index = (4 + offset) / 4 into 100, 101, ...
    offsets = [0, 4, 248, 124, 60, 0, 12, 8]
    assert out.hexes("f") == f32([100 + (4 + o) // 4 for o in offsets])
    assert out.hexes("h") == f16([1, 31, 0])
    # ArithProgression 64 floats, Gather of 8 (dst, offsets and the 8 source elements it reads), 32 halves,
    # Gather of 3 halves (dst, offsets, sources)
    vector_ub = 256 + (32 + 32 + 32) + 64 + (6 + 12 + 6)
    assert out.report == counters(
        gather_elements=11, vector_calls=4, vector_ub_bytes=vector_ub, ub_high_water=384, block_dim=1
    )


def test_gather_aborts(move):
    assert run_abort(move, "gather_misaligned") == (
        "gather-misaligned",
        0,
        "Gather: element 1 has byte offset 6 (base 0 + offset 6), not a multiple of sizeof(float) = 4",
    )
    assert run_abort(move, "gather_out_of_range") == (
        "gather-out-of-range",
        0,
        "Gather: element 1 reads src[64] (byte offset 256 = base 4 + offset 252) but src holds 64 elements",
    )


def test_tpipe_high_water_is_max_over_cores(move):
    out = run_ok(move, "high_water")
    # core i: 2 x ceil32(100 + 64 i) + ceil32(33); core 3: 2 * 320 + 64
    assert out.report == counters(ub_high_water=704, block_dim=4)
    assert out.ints("blocks") == [4]
    assert out.ints("reset") == [32]


def test_tpipe_ub_overflow(move):
    assert run_ok(move, "ub_exact_fit").report == counters(ub_high_water=65536, block_dim=1)
    assert run_abort(move, "ub_overflow") == (
        "ub-overflow",
        0,
        "TPipe::InitBuffer(buf, len=30000) requests 30016 bytes of UB but only 25536 of the 65536 usable bytes "
        "are free (40000 already allocated)",
    )


def test_tque_is_a_fifo(move):
    out = run_ok(move, "queue_fifo")
    assert out.ints("state") == [2, 0, 1]
    assert out.ints("fifo") == [22, 11, 16]
    assert out.ints("again") == [16, 16]


def test_tque_misuse(move):
    expected = {
        "que_alloc_full": "TQue::AllocTensor: all 1 buffers of the queue are taken (0 enqueued, 1 allocated or "
        "dequeued); FreeTensor one first",
        "que_deque_empty": "TQue::DeQue: the queue is empty (nothing was enqueued)",
        "que_free_foreign": "TQue::FreeTensor: the tensor at UB offset 64 is not a buffer of this queue (its 2 "
        "buffers start at UB offset 0, 32 bytes apart)",
        "que_double_free": "TQue::FreeTensor: buffer 0 (UB offset 0) is not allocated (double free?)",
        "que_enque_twice": "TQue::EnQue: buffer 0 (UB offset 0) is already enqueued",
        "que_after_reset": "TQue::AllocTensor on a queue whose UB was released (TPipe::Reset / Destroy)",
    }
    for case, message in expected.items():
        assert run_abort(move, case) == ("que-misuse", 0, message), case


def test_misaligned_and_short_operands_of_add(move):
    assert run_abort(move, "add_misaligned") == (
        "ub-misaligned",
        0,
        "Add: operand dst starts at UB byte offset 6, which is not 32-byte aligned",
    )
    assert run_abort(move, "add_out_of_bounds") == (
        "ub-out-of-bounds",
        0,
        "Add: operand dst needs 33 elements (UB bytes [0, 66)) but its LocalTensor<half> holds 32 elements "
        "(UB bytes [0, 64))",
    )


def test_gm_out_of_bounds_scalar_access(move):
    assert run_abort(move, "getvalue_oob") == (
        "gm-out-of-bounds",
        2,
        "GlobalTensor::GetValue reads bytes [64, 68) of 'x' (size 64)",
    )
    assert run_abort(move, "getvalue_view_oob") == (
        "gm-out-of-bounds",
        0,
        "GlobalTensor::GetValue reads bytes [48, 52) of 'x' (size 64) but the GlobalTensor covers bytes [16, 48)",
    )
    assert run_abort(move, "setglobalbuffer_oob") == (
        "gm-out-of-bounds",
        0,
        "GlobalTensor<float>::SetGlobalBuffer covers bytes [0, 68) of 'x' (size 64)",
    )


def test_local_tensor_of_another_core(move):
    assert run_abort(move, "foreign_tensor") == (
        "ub-out-of-bounds",
        1,
        "LocalTensor::GetValue(0) on a LocalTensor of another core's UB",
    )


def test_api_outside_launch_reports_core_minus_one(move):
    assert run_abort(move, "outside_launch") == (
        "launch",
        -1,
        "GetBlockIdx called outside AfTwin::Launch (no core is running on this thread)",
    )


# ---------------------------------------------------------------------------
# half / bfloat16_t.


def test_half_conversions_of_known_bit_patterns(vec_all):
    def bits(b: int) -> float:
        return struct.unpack("<f", struct.pack("<I", b))[0]

    # 65519.996, 2^-24, 2^-25, 3 * 2^-26, 1 + 2^-11, 1 + 3 * 2^-11 by their bits
    finite = [
        1.0,
        -2.0,
        65504.0,
        bits(0x477FEFFF),
        65520.0,
        1e5,
        -1e5,
        bits(0x33800000),
        bits(0x33000000),
        bits(0x33400000),
        bits(0x3F801000),
        bits(0x3F803000),
        0.1,
    ]
    with np.errstate(over="ignore"):
        expected = f16(finite) + [0x7E00, 0xFE00, 0x7C00, 0x8000] + f16([bits(0x38800000), bits(0x387FC000)])
    got = vec_all.hexes("half_from_float")
    assert got == expected
    # Written out as well: overflow, ties to even, subnormals.
    assert got[3:5] == [0x7BFF, 0x7C00]
    assert got[7:12] == [0x0001, 0x0000, 0x0001, 0x3C00, 0x3C02]
    # double -> half rounds once: 1 + 2^-11 + 2^-40 is above the tie.
    assert vec_all.hexes("half_from_double") == [0x2E66, 0x3C00, 0x7BFF, 0x3C01, 0x8001]
    assert vec_all.hexes("half_from_int") == [0x6800, 0x6802, 0xE800, 0x7BFF, 0x7C00, 0x7C00, 0x0000]
    patterns = [0x3555, 0x0001, 0x03FF, 0x7BFF, 0xFC00, 0x8000, 0x7E00, 0xC000]
    assert vec_all.hexes("half_to_float") == f16_bits_to_f32(patterns)
    assert vec_all.hexes("half_to_float")[:2] == [0x3EAAA000, 0x33800000]


def test_bfloat16_conversions_of_known_bit_patterns(vec_all):
    inputs = [
        0x3F800000,
        0x3F808000,
        0x3F818000,
        0x3F80C000,
        0x7F7FFFFF,
        0x7FC00000,
        0x80000000,
        0x3F80FFFF,
        0xBF808001,
    ]
    got = vec_all.hexes("bf16_from_float")
    assert got == [bf16_rne(b) for b in inputs]
    assert got == [0x3F80, 0x3F80, 0x3F82, 0x3F81, 0x7F80, 0x7FC0, 0x8000, 0x3F81, 0xBF81]
    assert vec_all.hexes("bf16_from_other") == [0x4380, 0x4382, 0x3F80, 0x3F81]
    assert vec_all.hexes("bf16_to_float") == [0x3F810000, 0xC2F70000, 0x00010000, 0xFF800000]


def test_half_arithmetic_rounds_each_result(vec_all):
    expected = [0x6800, 0x6802, 0x3555, 0x7C00, 0x8000, 0xC000, 0x3E00, 0x3F80, 0x3F80]
    assert vec_all.hexes("f16_arith") == expected
    assert vec_all["f16_compare"] == ["1", "0", "1", "1", "0", "3"]
    assert vec_all.ints("trivial") == [2, 2, 1, 1]


# ---------------------------------------------------------------------------
# Cast.


def test_cast_float_to_half_and_bfloat16_in_every_mode(vec_all):
    # inputs: 1+2^-11 (tie), -(1+2^-11), 1+2^-12, 1+3*2^-11 (tie), 70000, 2^-26 (a quarter subnormal ulp)
    expected = {
        "none": [0x3C00, 0xBC00, 0x3C00, 0x3C02, 0x7C00, 0x0000],
        "rint": [0x3C00, 0xBC00, 0x3C00, 0x3C02, 0x7C00, 0x0000],
        "floor": [0x3C00, 0xBC01, 0x3C00, 0x3C01, 0x7BFF, 0x0000],
        "ceil": [0x3C01, 0xBC00, 0x3C01, 0x3C02, 0x7C00, 0x0001],
        "round": [0x3C01, 0xBC01, 0x3C00, 0x3C02, 0x7C00, 0x0000],
        "trunc": [0x3C00, 0xBC00, 0x3C00, 0x3C01, 0x7BFF, 0x0000],
        "odd": [0x3C01, 0xBC01, 0x3C01, 0x3C01, 0x7BFF, 0x0001],
    }
    for mode, bits in expected.items():
        assert vec_all.hexes(f"f2h_{mode}") == bits, mode
    # inputs: 1+2^-8 (tie), -(1+2^-8), 1+2^-8+2^-9
    expected_bf = {  # the 3510 Cast implements float -> bfloat16 with CAST_RINT .. CAST_TRUNC only
        "rint": [0x3F80, 0xBF80, 0x3F81],
        "floor": [0x3F80, 0xBF81, 0x3F80],
        "ceil": [0x3F81, 0xBF80, 0x3F81],
        "round": [0x3F81, 0xBF81, 0x3F81],
        "trunc": [0x3F80, 0xBF80, 0x3F80],
    }
    for mode, bits in expected_bf.items():
        assert vec_all.hexes(f"f2b_{mode}") == bits, mode
    assert vec_all.hexes("h2f") == [0x3EAAA000, 0xB3800000]
    assert vec_all.hexes("b2h") == [0x3C08, 0x7C00]
    assert vec_all.hexes("h2b_rint") == [0x3F80, 0x3F80]
    assert vec_all.hexes("h2b_ceil") == [0x3F81]


def test_cast_float_to_int_modes_and_saturation(vec_all):
    big, small = 2147483647, -2147483648
    # inputs: 2.5 -2.5 1.5 -1.7 0.5 3e9 -3e9 NaN inf -inf
    tail = [big, small, 0, big, small]
    assert vec_all.ints("f2i_rint") == [2, -2, 2, -2, 0] + tail
    assert vec_all.ints("f2i_trunc") == [2, -2, 1, -1, 0] + tail
    assert vec_all.ints("f2i_floor") == [2, -3, 1, -2, 0] + tail
    assert vec_all.ints("f2i_ceil") == [3, -2, 2, -1, 1] + tail
    assert vec_all.ints("f2i_round") == [3, -3, 2, -2, 1] + tail
    # half(127.9) = 127.875, half(-128.9) = -128.875, half(255.9) = 255.875
    assert vec_all.ints("h2i8") == [127, -128, 127, -128, 0]
    assert vec_all.ints("h2u8") == [0, 255, 255, 0]
    assert vec_all.ints("h2i8_none") == [2, 4, -2]  # CAST_NONE on half -> int8 rounds to nearest even
    assert vec_all.ints("h2i16") == [32767, -32768, 3, -1]
    assert vec_all.ints("f2i64") == [2**63 - 1, -(2**63), 2**40]
    assert vec_all.ints("f2i32_edge") == [2147483520, big, small]
    assert vec_all.ints("b2i32") == [-3, big]


def test_cast_integer_sources(vec_all):
    assert vec_all.hexes("i2f_none") == [0x4B800000, 0x4B800002, 0xCB800000]
    assert vec_all.hexes("i2f_trunc") == [0x4B800001, 0xCB800001]
    assert vec_all.hexes("i2h_rint") == [0x6800, 0x6802, 0x7C00, 0xFC00]
    assert vec_all.hexes("i2h_trunc") == [0x7BFF, 0x6801]
    assert vec_all.hexes("i64_2f") == [0x5A000000, 0xDE800000]
    assert vec_all.hexes("u8_2h") == [0x5BF8, 0x3C00]
    assert vec_all.hexes("i8_2h") == [0xD800, 0x4500]
    assert vec_all.hexes("i16_2h") == [0x6800, 0xF800]
    assert vec_all.ints("i32_2u8") == [44, 127, 255]
    assert vec_all.ints("i16_2u8") == [255, 0]
    assert vec_all.ints("u32_2i16") == [-1, 7]
    assert vec_all.ints("i8_2i32") == [-5, 127]
    assert vec_all.ints("i64_2i32") == [5, -1]


def test_cast_mode_aborts(vec):
    assert run_abort(vec, "cast_none") == (
        "cast-mode",
        0,
        "Cast<float -> int32_t> with CAST_NONE: the 3510 Cast does not implement this rounding for these types",
    )
    assert run_abort(vec, "cast_odd_int") == (
        "cast-mode",
        0,
        "Cast<int32_t -> int16_t> with CAST_ODD: the 3510 Cast does not implement this rounding for these types",
    )


# ---------------------------------------------------------------------------
# Compare / Select, reductions, element-wise.


def test_compare_compares_select(vec_all):
    a = np.array([1, 2, 3, np.nan, 5, 6, 7, 8, 9, 10], dtype=np.float32)
    b = np.array([2, 2, 2, 4, 4, 7, 7, 9, 1, 10], dtype=np.float32)
    with np.errstate(invalid="ignore"):
        results = {"lt": a < b, "gt": a > b, "eq": a == b, "le": a <= b, "ge": a >= b, "ne": a != b}
    # the counts cover one 256-byte repeat (64 floats, zeros after the ten values): 8 mask bytes written,
    # the bytes after them keep their 0xAA
    pad = np.zeros(54, dtype=np.float32)
    with np.errstate(invalid="ignore"):
        padded = {
            "lt": np.less,
            "gt": np.greater,
            "eq": np.equal,
            "le": np.less_equal,
            "ge": np.greater_equal,
            "ne": np.not_equal,
        }
        full = {m: f(np.concatenate([a, pad]), np.concatenate([b, pad])) for m, f in padded.items()}
    for mode, bits in full.items():
        mask = [int(v) for v in np.packbits(bits, bitorder="little")]
        assert vec_all.ints(f"cmp_{mode}") == mask + [0xAA, 0xAA], mode
    assert vec_all.ints("cmp_lt") == [0xA1, 0x00, 0, 0, 0, 0, 0, 0, 0xAA, 0xAA]
    assert vec_all.ints("cmps_gt") == [0xE0, 0x03, 0, 0, 0, 0, 0, 0, 0xAA, 0xAA]
    lt = results["lt"]
    assert vec_all.hexes("sel_tt") == f32(np.where(lt, a, b))
    assert vec_all.hexes("sel_ts") == f32(np.where(lt, a, -1.0))
    assert vec_all.ints("cmp_i32_eq") == [0x05, 0x01, 0, 0, 0, 0, 0, 0, 0xAA, 0xAA]  # padding: 5 vs 6
    assert vec_all.ints("cmps_h_le") == [0x03] + [0] * 15 + [0xAA, 0xAA]  # 128 halves, padding 7.0 > 2.0
    assert vec_all.hexes("sel_h") == f16([1.0, 2.0, -4.0])


def test_select_mode_and_mask_checks(vec):
    assert run_abort(vec, "select_mode") == (
        "api-params",
        0,
        "Select(tensor, tensor): selMode 1 given, the tensor/tensor form needs VSEL_TENSOR_TENSOR_MODE (2)",
    )
    assert run_abort(vec, "select_mode_scalar") == (
        "api-params",
        0,
        "Select(tensor, scalar): selMode 0 given, the tensor/scalar form needs VSEL_TENSOR_SCALAR_MODE (1)",
    )
    assert run_abort(vec, "compare_mask_oob") == (
        "ub-out-of-bounds",
        0,
        "Compare: operand dst accesses UB bytes [3072, 3080) but its LocalTensor<uint8_t> covers [3072, 3074) "
        "(2 elements)",
    )


def test_reductions(vec_all):
    # float accumulation in index order: ((1e8 + 1) - 1e8) + 1 = 1 (2 in double)
    assert vec_all.hexes("sum_f_order") == f32([1.0])
    assert vec_all.hexes("sum_f") == f32([55.0])
    assert vec_all.hexes("sum_h") == [0x6801]  # 2048 + 1 + 1 accumulated in float, rounded once
    assert vec_all.ints("sum_i32") == [-2147483648]
    assert vec_all.ints("sum_u32") == [4300000010 - 2**32]
    assert vec_all["rmax_f"] == ["41100000", "1"]  # 9.0 at its first index
    assert vec_all["rmin_f"] == ["bf800000", "2"]
    assert vec_all.hexes("rmax_nan") == [0x7FC00000]
    assert vec_all["rmax_h"] == ["4700", "1"]
    assert vec_all.ints("rmin_i32") == [-3, 1]


def test_elementwise_semantics(vec_all):
    h = np.float16
    assert vec_all.hexes("add_h") == [0x3C00, 0x6800, 0x7C00, f16([h(0.1) + h(0.2)])[0]]
    assert vec_all.hexes("add_h")[3] == 0x34CC
    assert vec_all.ints("add_i16") == [-32768, 32767]
    assert vec_all.ints("sub_i16") == [32767, -2]
    assert vec_all.ints("mul_i32") == [0, -21]
    assert vec_all.ints("div_i32") == [3, -3, -2147483648]
    assert vec_all.hexes("div_f") == [0x7F800000, 0x3EAAAAAB, 0xFF800000]
    assert vec_all.hexes("max_f") == [0x40000000, 0x7FC00000, 0x7FC00000, 0x40A00000]
    assert vec_all.hexes("min_f") == [0x3F800000, 0x7FC00000, 0x7FC00000, 0x40800000]
    assert vec_all.hexes("maxs_f") == f32([3, 5]) + [0x7FC00000]
    assert vec_all.hexes("mins_f") == f32([1, 3]) + [0x7FC00000]
    assert vec_all.hexes("adds_f") == f32([1.5, 2.5])
    assert vec_all.hexes("muls_h") == [0x4600, 0x7C00]
    assert vec_all.ints("adds_i8") == [-128, -127]
    assert vec_all.hexes("relu_f") == [0, 0x40000000, 0, 0, 0x3F000000]  # NaN -> 0, -0.0 -> +0.0
    assert vec_all.hexes("abs_f") == [0, 0x40400000, 0x40000000]
    assert vec_all.hexes("abs_h") == [0x0000, 0x4000]
    assert vec_all.ints("abs_i32") == [-2147483648, 5]
    assert vec_all.ints("not_i16") == [-1, 0, -256]
    assert vec_all.ints("and_u16") == [0xF000, 0x0204]
    assert vec_all.ints("or_u16") == [0xFFF0, 0x1F3F]
    assert vec_all.hexes("sqrt_f") == f32([2, 1.5, 0])
    assert vec_all.hexes("rsqrt_f") == f32([0.5, 2])
    assert vec_all.hexes("recip_f") == f32([0.25, -2])
    assert vec_all.hexes("exp_f") == f32([1, 0])
    assert vec_all.hexes("ln_h") == [0x0000, 0xFC00]
    assert vec_all.hexes("dup_h") == [0x3E00] * 3
    assert vec_all.ints("vecindex_i32") == [5, 6, 7, 8]
    assert vec_all.hexes("arith_f") == f32([1, 1.5, 2, 2.5])
    assert vec_all.ints("arith_i16") == [32766, 32767, -32768]


def test_vector_counters(vec):
    # per core: Duplicate x2, Add, Muls, Cast (half dst + float src), Compares (src; not the bit mask),
    # ReduceSum (dst 1, src 64; not the work buffer), Duplicate of 8 offsets, Gather of 5 (dst, offsets, the 5
    # source elements it reads), Exp 0
    per_core = 256 + 256 + 3 * 256 + 2 * 256 + (128 + 256) + 256 + (4 + 256) + 32 + (20 + 20 + 20) + 0
    assert run_ok(vec, "count").report == counters(
        vector_calls=20,
        vector_ub_bytes=2 * per_core,
        gather_elements=10,
        datacopy_calls=2,
        ub_high_water=4096,
        block_dim=2,
    )


# ---------------------------------------------------------------------------
# SyncAll, SIMT, counters, harness.


def test_syncall_across_four_cores(runtime):
    out = run_ok(runtime, "syncall")
    assert out.ints("out") == [4, 4, 4, 4, 8, 8, 8, 8]
    assert out.report == counters(scalar_gm_writes=8, cachelines_written=1, sync_all=3, block_dim=4)


def test_syncall_deadlocks_abort(runtime):
    assert run_abort(runtime, "deadlock_finish") == (
        "syncall-deadlock",
        0,
        "core 0 returned from the kernel after 0 SyncAll call(s) while 1 core(s) wait in SyncAll "
        "(on hardware this hangs)",
    )
    assert run_abort(runtime, "deadlock_late") == (
        "syncall-deadlock",
        1,
        "SyncAll #1: core 0 already returned from the kernel and will never arrive (on hardware this hangs)",
    )
    kind, core, message = run_abort(runtime, "deadlock_many")
    assert (kind, message) == (
        "syncall-deadlock",
        "SyncAll with blockDim 300: only 256 cores can be resident at once, the others would never arrive",
    )
    assert 0 <= core < 256  # whichever resident core calls SyncAll first


def test_simt_thread_indices_hooks_and_counters(runtime):
    out = run_ok(runtime, "simt")
    rows = []
    for _core in range(2):
        for t in range(8):
            # linear idx, thread num, threadIdx.x, threadIdx.y, blockDim.x * 10 + blockDim.y, in[t] * 100
            rows += [t, 8, t % 4, t // 4, 42, (t + 1) * 100]
    assert out.ints("out") == rows
    assert out.hexes("ub") == f32([3, 4, 5, 6] + [1.5] * 4)  # 1.5 * 2 + t for the 4 threads
    assert out.ints("after") == [0, 1, 1]  # the CUDA-style indices are reset after VF_CALL
    assert out.report == counters(
        scalar_gm_reads=16,
        scalar_gm_writes=96,
        cachelines_read=1,
        cachelines_written=3,
        ub_high_water=32,
        vector_ub_bytes=2 * 32,  # each core Duplicates 8 floats
        vector_calls=2,
        simt_threads=2 * 8 + 2 * 4 + 2048,
        block_dim=2,
        dcache_misses=2,  # one cold line fill per core
    )


def test_simt_thread_count_limits(runtime):
    assert run_abort(runtime, "simt_2049") == (
        "simt-threads",
        0,
        "VF_CALL launches 2049 x 1 x 1 = 2049 threads; the count must be in [1, 2048]",
    )
    assert run_abort(runtime, "simt_3d") == (
        "simt-threads",
        0,
        "VF_CALL launches 64 x 32 x 2 = 4096 threads; the count must be in [1, 2048]",
    )
    assert run_abort(runtime, "simt_zero")[:2] == ("simt-threads", 0)


def test_simt_dcache_reserve(runtime):
    # a VF_CALL kernel: UB 262144 - 8192 reserved - 32768 data cache = 221184 bytes for TPipe
    fit = run_ok(runtime, "simt_dcache_fit")
    assert fit.report == counters(ub_high_water=221184, simt_threads=8, block_dim=1)
    assert run_abort(runtime, "simt_dcache") == (
        "simt-dcache",
        0,
        "VF_CALL in a kernel whose TPipe buffers reached 221216 bytes of UB; a kernel that launches VF_CALL may "
        "use 221184 (min(UB 262144 - 8192 reserved, usable 253952) - 32768 data cache)",
    )


def test_simt_out_of_bounds_accesses(runtime):
    assert run_abort(runtime, "simt_gm_oob") == (
        "gm-out-of-bounds",
        0,
        "SIMT GM load reads bytes [64, 68) of 'in' (size 64)",
    )
    kind, core, message = run_abort(runtime, "simt_ub_oob")
    assert (kind, core) == ("ub-out-of-bounds", 0)
    assert message.startswith("SIMT UB store of 4 bytes at address ")
    assert message.endswith(", +262144)")


def test_counters_json_of_a_known_program(runtime):
    rc, out, err = runtime("counters")
    assert rc == 0, err
    lines = out.splitlines()
    first, second = json.loads(lines[0]), json.loads(lines[2])
    assert list(first) == [
        "gm_read_bytes",
        "gm_write_bytes",
        "scalar_gm_reads",
        "scalar_gm_writes",
        "cachelines_read",
        "cachelines_written",
        "ub_high_water",
        "gather_elements",
        "vector_calls",
        "datacopy_calls",
        "simt_threads",
        "sync_all",
        "block_dim",
        "dcache_misses",
        "vf_calls",
        "reg_loads",
        "reg_stores",
        "reg_load_bytes",
        "reg_store_bytes",
        "reg_compute",
        "reg_masks",
        "vector_ub_bytes",
        "reg_cycles",
        *L2_KEYS,
        "stage_cores",
    ]
    # Default L2 (128-byte lines). Replay, round-robin by line: 'in' lines 0, 4, 1, 5, 2, 6, 3, 7 miss; 'out'
    # lines 0 and 4 are write misses (no HBM read); the GetValue fills of lines 3 and 7 hit; after SyncAll,
    # 'out' line 7 is a write miss. The three written lines are dirty at the end.
    assert {key: first.pop(key) for key in L2_KEYS} == {
        "hbm_read_bytes": 8 * 128,
        "hbm_write_bytes": 3 * 128,
        "l2_read_bytes": 2 * 512 + 2 * 128,  # the DataCopy bytes and the two data-cache fills
        "l2_write_bytes": 2 * 100 + 4,  # the DataCopyPad bytes and the SetValue float
        "l2_hits": 2,
        "l2_misses": 11,
        "l2_modelled": 1,
    }
    assert {key: second.pop(key) for key in L2_KEYS} == {
        "hbm_read_bytes": 128,  # each launch starts with an empty L2
        "hbm_write_bytes": 0,
        "l2_read_bytes": 32,
        "l2_write_bytes": 0,
        "l2_hits": 0,
        "l2_misses": 1,
        "l2_modelled": 1,
    }
    assert first == counters(
        gm_read_bytes=2 * 512,  # DataCopy of 128 floats per core
        gm_write_bytes=2 * 100,  # DataCopyPad of 100 bytes per core
        scalar_gm_reads=2,
        scalar_gm_writes=1,
        cachelines_read=8,  # all of 'in'; GetValue re-reads an already counted line
        cachelines_written=3,  # lines 0 and 4 of 'out' (DataCopyPad) and line 7 (SetValue)
        ub_high_water=2 * 512 + 128,
        vector_calls=4,
        vector_ub_bytes=2 * 2 * (2 * 512),  # per core Muls and Adds over 128 floats (src and dst)
        datacopy_calls=4,
        sync_all=1,
        block_dim=2,
        dcache_misses=2,  # each core's GetValue fills its own (cold) data cache once
    )
    assert lines[1].split() == ["out", "1", "49", "0", "1"]
    # The counters describe the last launch only.
    assert second == counters(
        gm_read_bytes=32, cachelines_read=1, ub_high_water=32, datacopy_calls=1, block_dim=1
    )


def test_tiling_key_and_block_queries(runtime):
    out = run_ok(runtime, "tiling")
    assert out.ints("key") == [7]
    assert out.ints("out") == [130, 131, 132]
    assert out.ints("phy") == [1]


def test_harness_misuse_aborts(runtime):
    assert run_abort(runtime, "launch_zero") == ("launch", -1, "Launch: blockDim 0 must be in [1, 65535]")
    assert run_abort(runtime, "register_overlap") == (
        "launch",
        -1,
        "RegisterGm('b', 64 bytes) overlaps the registered allocation 'a' (64 bytes)",
    )
    assert run_abort(runtime, "configure_bad") == (
        "launch",
        -1,
        "Configure: usable UB size 262176 must be a multiple of 32 in [32, 262144]",
    )


# ---------------------------------------------------------------------------
# Builds.


def test_programs_under_address_and_undefined_sanitizers(twin_compile, move):
    sanitized = twin_compile(MOVE_SRC, sanitize=True)
    for case in (
        "pad_gm_ub",
        "pad_nopad",
        "pad_ub_gm",
        "datacopy_whole",
        "gather",
        "queue_fifo",
        "high_water",
    ):
        rc, out, err = sanitized(case)
        assert rc == 0, f"{case}\n{err}"
        assert out == move(case)[1], case
    assert run_abort(sanitized, "pad_gm_oob")[:2] == ("gm-out-of-bounds", 0)
    runtime_san = twin_compile(RUNTIME_SRC, sanitize=True)
    for case in ("syncall", "simt", "counters"):
        rc, out, err = runtime_san(case)
        assert rc == 0, f"{case}\n{err}"
    assert run_abort(runtime_san, "deadlock_late")[:2] == ("syncall-deadlock", 1)


def test_every_header_compiles_warning_free_alone(twin_compile, twin_include_dir, tmp_path):
    headers = ["kernel_operator.h"] + sorted(
        f"{d}/{p.name}" for d in ("af_twin", "simt_api") for p in (twin_include_dir / d).glob("*.h")
    )
    assert headers == [
        "kernel_operator.h",
        "af_twin/api_dtypes.h",
        "af_twin/core.h",
        "af_twin/datacopy.h",
        "af_twin/hb.h",
        "af_twin/hb_state.h",
        "af_twin/instances.h",
        "af_twin/l2.h",
        "af_twin/pipe.h",
        "af_twin/reg.h",
        "af_twin/reg_bitwise.h",
        "af_twin/reg_compute.h",
        "af_twin/reg_core.h",
        "af_twin/reg_gather.h",
        "af_twin/reg_load_store.h",
        "af_twin/reg_mask.h",
        "af_twin/reg_mask_logic.h",
        "af_twin/reg_mask_moves.h",
        "af_twin/reg_reduce.h",
        "af_twin/reg_unaligned_load.h",
        "af_twin/runtime.h",
        "af_twin/simt.h",
        "af_twin/simt_math_guard.h",
        "af_twin/tensor.h",
        "af_twin/types.h",
        "af_twin/vector.h",
        "simt_api/math_functions.h",
    ]
    units = []
    for i, header in enumerate(headers):
        unit = tmp_path / f"unit{i}.cpp"
        unit.write_text(f'#include "{header}"\nint AfUnit{i}() {{ return {i}; }}\n')
        units.append(str(unit))
    declarations = "".join(f"int AfUnit{i}();\n" for i in range(len(headers)))
    calls = " + ".join(f"AfUnit{i}()" for i in range(len(headers)))
    main = (
        f'#include "kernel_operator.h"\n#include <cstdio>\n{declarations}'
        f'int main() {{ std::printf("%d\\n", {calls}); }}\n'
    )
    program = twin_compile(main, flags=("-Wshadow", "-Wpedantic", *units))
    rc, out, _ = program()
    assert (rc, out) == (0, f"{sum(range(len(headers)))}\n")


def test_stage_marks_count_cores_per_stage(twin_run):
    source = r"""
#include "kernel_operator.h"
#include <cstdio>
int main() {
    AfTwin::Configure(253952, 32768);
    AfTwin::Launch(6, [] {
        AfTwin::MarkStage(0);
        if (AscendC::GetBlockIdx() < 2) AfTwin::MarkStage(1);
        if (AscendC::GetBlockIdx() < 5) AfTwin::MarkStage(2);
    });
    AfTwin::WriteReportJson(stdout);
    return 0;
}
"""
    rc, out, err = twin_run(source)
    assert rc == 0, err
    import json

    assert json.loads(out)["stage_cores"] == [6, 2, 5]


def test_dcache_counts_line_fills_with_lru_eviction(twin_run):
    source = r"""
#include "kernel_operator.h"
#include <cstdio>
#include <vector>
int main() {
    std::vector<float> data(64 * 1024, 1.0f);  // 256 KiB
    AfTwin::Configure(253952, 32768);           // 32 KiB cache: 64 sets x 4 ways of 128 B
    AfTwin::RegisterGm(data.data(), data.size() * sizeof(float), "data");
    AfTwin::Launch(1, [&] {
        const float* p = data.data();
        float s = 0;
        s += AfTwin::SimtGmLoad(p);       // miss
        s += AfTwin::SimtGmLoad(p + 31);  // same line: hit
        s += AfTwin::SimtGmLoad(p + 32);  // next line: miss
        for (int k = 1; k <= 4; ++k) s += AfTwin::SimtGmLoad(p + k * 2048);  // 4 lines of set 0: 4 misses
        s += AfTwin::SimtGmLoad(p);       // evicted (LRU of set 0): miss
        s += AfTwin::SimtGmLoad(p + 32);  // set 1 untouched: hit
        if (s < 0) std::printf("never\n");
    });
    AfTwin::WriteReportJson(stdout);
    return 0;
}
"""
    rc, out, err = twin_run(source)
    assert rc == 0, err
    import json

    report = json.loads(out)
    assert report["dcache_misses"] == 7
    assert report["scalar_gm_reads"] == 9
