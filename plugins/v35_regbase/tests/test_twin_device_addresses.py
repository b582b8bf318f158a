"""The data-cache model sees device addresses, not host addresses.

One program registers five 4 KiB GM buffers at host addresses that differ from
run to run by a skew given on the command line (0 B to 1 MiB + 208 B, so the
buffers start on 16-byte, 64-byte, line and page boundaries alike) and reads
them through ``GetValue``, ``SimtGmLoad`` and a ``DataCacheCleanAndInvalid``.
The device addresses (2 MiB apart, registration order) are the same in every
run, so the counters must be too, and ``dcache_misses`` must be the count worked
out by hand from the device layout: had the model indexed sets by the host
address, the skews that break 128-byte alignment would split reads across lines
and the buffers' first lines would no longer share one set.
"""

from __future__ import annotations

import json

import pytest

SOURCE = r"""
#include "kernel_operator.h"
#include <cstdio>
#include <cstdlib>
#include <new>

using namespace AscendC;

int main(int argc, char** argv) {
    const size_t skew = argc > 1 ? static_cast<size_t>(std::strtoull(argv[1], nullptr, 10)) : 0;
    constexpr size_t kFloats = 1024;                       // 4 KiB per buffer
    const size_t pitch = kFloats * sizeof(float) + skew;    // host distance between buffers
    void* block = ::operator new(5 * pitch + skew, std::align_val_t(4096));
    float* buf[5];
    for (int i = 0; i < 5; ++i) {
        buf[i] = reinterpret_cast<float*>(static_cast<char*>(block) + skew + i * pitch);
        for (size_t k = 0; k < kFloats; ++k) buf[i][k] = static_cast<float>(i * 10000 + k);
        AfTwin::RegisterGm(buf[i], kFloats * sizeof(float), "buf");
    }
    AfTwin::Configure(253952, 32768);  // 32 KiB: 64 sets x 4 ways of 128 B
    float sum = 0;
    AfTwin::Launch(1, [&] {
        GlobalTensor<float> g[5];
        for (int i = 0; i < 5; ++i) g[i].SetGlobalBuffer(buf[i], kFloats);
        sum += g[0].GetValue(0);   // miss 1
        sum += g[0].GetValue(31);  // same device line: hit
        sum += g[0].GetValue(32);  // line 1 (set 1): miss 2
        for (int i = 1; i < 5; ++i) sum += g[i].GetValue(0);  // line 0 of buffers 1-4, set 0: misses 3-6
        sum += g[0].GetValue(0);   // evicted from set 0 by buffer 4: miss 7
        sum += g[0].GetValue(32);  // set 1 untouched: hit
        DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(g[0][32]);
        sum += g[0].GetValue(40);  // the invalidated line: miss 8
        sum += AfTwin::SimtGmLoad(buf[1]);  // evicted from set 0 by buffer 0: miss 9
    });
    AfTwin::WriteReportJson(stdout);
    std::printf("sum %.1f\n", static_cast<double>(sum));
    ::operator delete(block, std::align_val_t(4096));
    return 0;
}
"""

SKEWS = (0, 16, 64, 144, 4096 + 48, (1 << 20) + 208)


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(SOURCE)


def report(program, skew: int) -> tuple[dict, str]:
    rc, out, err = program(str(skew))
    assert rc == 0, err
    first, second = out.splitlines()
    return json.loads(first), second


def test_cache_misses_follow_the_device_layout_whatever_the_host_addresses(program):
    reports = {skew: report(program, skew) for skew in SKEWS}
    counters, values = reports[0]
    assert counters["dcache_misses"] == 9
    assert counters["scalar_gm_reads"] == 11
    assert values == "sum 110135.0"  # 0 + 31 + 32 + 10000 + 20000 + 30000 + 40000 + 0 + 32 + 40 + 10000
    for skew, got in reports.items():
        assert got == (counters, values), f"host skew {skew}"
