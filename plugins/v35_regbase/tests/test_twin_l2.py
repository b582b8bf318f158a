"""The shared L2 model of the twin (``af_twin/l2.h``) against hand-worked cases.

One program runs the case named by argv[1] and prints the counters JSON of its
launch. Buffers are registered in order, so their device addresses are known:
``in`` at 2^32 and ``out`` 2 MiB later; with 128-byte L2 lines, line k of
either buffer falls in set k mod 2 of a 2-set L2. Expected values are worked
out by hand from the model's rules (LRU, write-back, write-allocate without a
read, round-robin replay by line, SyncAll stages), never taken from the twin.
"""

from __future__ import annotations

import json
import re

import pytest
from af_v35_twin_build import INCLUDE_DIR  # loaded by conftest.py

from af_core.platform import Platform
from af_core.twin import budget

pytestmark = pytest.mark.twin

ERROR_LINE = re.compile(r"AF_TWIN_ERROR kind=(?P<kind>[a-z-]+) core=(?P<core>-?\d+): (?P<message>.*)")

SOURCE = r"""
#include "kernel_operator.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace AscendC;

namespace {

std::vector<float> in(8192), out(8192);

// Reads the 128 bytes (one line) at float offset `at` of `g` into UB.
void ReadLine(const GlobalTensor<float>& g, uint64_t at, const LocalTensor<float>& ub) { DataCopy(ub, g[at], 32); }

void WriteLine(const GlobalTensor<float>& g, uint64_t at, const LocalTensor<float>& ub) { DataCopy(g[at], ub, 32); }

// Thread t stores floats t, t + 4, t + 8, t + 12 of `out` (line 0), then loads float 32 t of `in` (line t).
__simt_vf__ void Strided(__gm__ float* out, __gm__ const float* in) {
    const uint32_t t = Simt::GetThreadIdx();
    for (uint32_t k = 0; k < 4; ++k) AfTwin::SimtGmStore(out + k * 4 + t, 1.0f);
    (void)AfTwin::SimtGmLoad(in + 32 * t);
}

template <class Body>
void Run(uint32_t cores, Body body) {
    AfTwin::Launch(cores, [&] {
        GlobalTensor<float> gi, go;
        gi.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in.data()), in.size());
        go.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out.data()), out.size());
        TPipe pipe;
        TBuf<TPosition::VECCALC> b;
        pipe.InitBuffer(b, 128);
        body(gi, go, b.Get<float>(), static_cast<uint32_t>(GetBlockIdx()));
    });
}

}  // namespace

int main(int argc, char** argv) {
    const std::string c = argc > 1 ? argv[1] : "";
    AfTwin::RegisterGm(in.data(), in.size() * 4, "in");
    AfTwin::RegisterGm(out.data(), out.size() * 4, "out");
    using G = GlobalTensor<float>&;
    using L = const LocalTensor<float>&;
    if (c == "twice") {  // default L2
        Run(1, [](G gi, G, L ub, uint32_t) {
            ReadLine(gi, 0, ub);
            ReadLine(gi, 0, ub);
        });
    } else if (c == "two_cores") {
        Run(2, [](G gi, G, L ub, uint32_t) { ReadLine(gi, 0, ub); });
    } else if (c == "lru") {
        AfTwin::ConfigureL2(512, 128, 2);  // 2 sets x 2 ways
        Run(1, [](G gi, G, L ub, uint32_t) {
            ReadLine(gi, 0, ub);    // line 0, set 0: miss
            ReadLine(gi, 64, ub);   // line 2, set 0: miss
            ReadLine(gi, 0, ub);    // hit: line 2 is now the least recently used
            ReadLine(gi, 128, ub);  // line 4: miss, evicts line 2 (first in would have been line 0)
            ReadLine(gi, 0, ub);    // hit
            ReadLine(gi, 64, ub);   // miss
        });
    } else if (c == "dirty") {
        AfTwin::ConfigureL2(512, 128, 2);
        Run(1, [](G gi, G go, L ub, uint32_t) {
            WriteLine(go, 0, ub);   // out line 0, set 0: write miss, allocated dirty without an HBM read
            ReadLine(go, 0, ub);    // hit: the write's line
            ReadLine(gi, 0, ub);    // in line 0, set 0: miss
            ReadLine(gi, 64, ub);   // in line 2, set 0: miss, evicts out line 0 (dirty: written back)
            WriteLine(go, 32, ub);  // out line 1, set 1: write miss, still dirty at the end
        });
    } else if (c == "order") {
        AfTwin::ConfigureL2(128, 128, 1);  // one line
        Run(2, [](G gi, G, L ub, uint32_t core) {
            ReadLine(gi, 0, ub);
            if (core == 0) ReadLine(gi, 64, ub);
        });
    } else if (c == "stages") {
        AfTwin::ConfigureL2(256, 128, 2);  // one set of 2 ways
        Run(2, [](G gi, G go, L ub, uint32_t core) {
            if (core == 0) {
                ReadLine(gi, 0, ub);
            } else {
                ReadLine(go, 0, ub);
                ReadLine(go, 64, ub);
            }
            SyncAll();
            if (core == 0) ReadLine(gi, 0, ub);
        });
    } else if (c == "bursts") {
        Run(1, [](G gi, G go, L ub, uint32_t) {
            DataCopy(ub, gi, 16);      // bytes [0, 64) of line 0
            DataCopy(ub, gi[16], 16);  // [64, 128): continues the burst in line 0
            DataCopy(ub, gi[32], 16);  // [128, 192): line 1
            for (uint64_t i = 0; i < 4; ++i) go.SetValue(i, 1.0f);  // 16 contiguous bytes of out line 0
            (void)gi.GetValue(1024);   // a data-cache fill of in line 32
        });
    } else if (c == "simt") {
        Run(1, [](G gi, G go, L, uint32_t) {
            Simt::VF_CALL<Strided>(Simt::Dim3(4), go.GetPhyAddr(0), gi.GetPhyAddr());
        });
    } else if (c == "log_limit") {
        Run(1, [](G, G go, L, uint32_t) {
            for (uint64_t i = 0; i <= AfTwin::kL2MaxRecords; ++i) go.SetValue((i % 2) * 64, 1.0f);
        });
    } else if (c == "bad_line") {
        AfTwin::ConfigureL2(1 << 20, 96, 4);
    } else if (c == "bad_ways") {
        AfTwin::ConfigureL2(1 << 20, 128, 0);
    } else if (c == "bad_size") {
        AfTwin::ConfigureL2(1000, 128, 4);
    } else {
        std::fprintf(stderr, "unknown case %s\n", c.c_str());
        return 2;
    }
    AfTwin::WriteReportJson(stdout);
    return 0;
}
"""

L2_KEYS = ("hbm_read_bytes", "hbm_write_bytes", "l2_read_bytes", "l2_write_bytes", "l2_hits", "l2_misses")


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(SOURCE)


def l2(program, case: str) -> dict[str, int]:
    rc, out, err = program(case)
    assert rc == 0, f"case {case}: exit {rc}\n{err}"
    report = json.loads(out)
    return {key: report[key] for key in L2_KEYS}


def abort(program, case: str) -> tuple[str, int, str]:
    rc, _out, err = program(case)
    assert rc == 86, f"case {case}: exit {rc}\n{err}"
    (match,) = [m for m in map(ERROR_LINE.fullmatch, err.splitlines()) if m]
    return match["kind"], int(match["core"]), match["message"]


def counts(hbm_read=0, hbm_write=0, l2_read=0, l2_write=0, hits=0, misses=0) -> dict[str, int]:
    return dict(zip(L2_KEYS, (hbm_read, hbm_write, l2_read, l2_write, hits, misses), strict=True))


def test_a_line_read_twice_is_one_miss_then_a_hit(program):
    assert l2(program, "twice") == counts(hbm_read=128, l2_read=256, hits=1, misses=1)


def test_two_cores_reading_one_line_read_hbm_once_and_l2_twice(program):
    assert l2(program, "two_cores") == counts(hbm_read=128, l2_read=256, hits=1, misses=1)


def test_a_full_set_evicts_its_least_recently_used_line(program):
    # misses: lines 0, 2, 4 and 2 again; hits: line 0 twice (FIFO would evict line 0 instead)
    assert l2(program, "lru") == counts(hbm_read=4 * 128, l2_read=6 * 128, hits=2, misses=4)


def test_dirty_lines_reach_hbm_when_evicted_or_left_and_a_written_line_is_read_without_hbm(program):
    # HBM reads: in lines 0 and 2 only (out line 0 was written before it was read);
    # HBM writes: out line 0 (evicted dirty) and out line 1 (dirty at the end)
    assert l2(program, "dirty") == counts(
        hbm_read=2 * 128, hbm_write=2 * 128, l2_read=3 * 128, l2_write=2 * 128, hits=1, misses=4
    )


def test_cores_replay_round_robin_by_line(program):
    # core 0 line 0 (miss), core 1 line 0 (hit), core 0 line 2 (miss); core by core would miss 3 times
    assert l2(program, "order") == counts(hbm_read=2 * 128, l2_read=3 * 128, hits=1, misses=2)


def test_accesses_after_syncall_replay_after_every_cores_accesses_before_it(program):
    # stage 0: in 0, out 0, out 2 (evicts in 0); stage 1: in 0 misses again. Without the stage, core 0's
    # second read would replay before out 2 and hit.
    assert l2(program, "stages") == counts(hbm_read=4 * 128, l2_read=4 * 128, hits=0, misses=4)


def test_contiguous_accesses_form_one_run_of_lines(program):
    # reads: line 0 once for the two bursts in it, line 1, in line 32 by the data-cache fill;
    # the four SetValue calls are one access to out line 0
    assert l2(program, "bursts") == counts(
        hbm_read=3 * 128, hbm_write=128, l2_read=3 * 64 + 128, l2_write=16, hits=0, misses=4
    )


@pytest.mark.parametrize("order", ["forward", "reverse", "shuffle:7"])
def test_simt_threads_reach_l2_in_lockstep_whatever_order_the_twin_runs_them(program, monkeypatch, order):
    # in lockstep the 16 stores are bytes [0, 64) in address order: one access to out line 0; then the 4 loads
    # fill in lines 0-3, one run of lines. Logged thread after thread, line 0 would be hit 15 times.
    monkeypatch.setenv("AF_TWIN_SIMT_ORDER", order)
    assert l2(program, "simt") == counts(
        hbm_read=4 * 128, hbm_write=128, l2_read=4 * 128, l2_write=16 * 4, hits=0, misses=5
    )


def test_past_the_log_bound_the_launch_runs_on_and_reports_no_replay(program):
    """A launch whose log passes kL2MaxRecords is not refused: it completes with every other counter, says
    ``l2_modelled`` 0 and leaves out the counters only the replay gives (rather than stating wrong ones)."""
    rc, out, err = program("log_limit")
    assert rc == 0, err
    report = json.loads(out)
    assert report["l2_modelled"] == 0
    assert not {"hbm_read_bytes", "hbm_write_bytes", "l2_hits", "l2_misses"} & set(report)
    assert report["l2_write_bytes"] == 4 * (budget.L2_MAX_RECORDS + 1)
    assert report["scalar_gm_writes"] == budget.L2_MAX_RECORDS + 1


def test_a_launch_within_the_bound_says_it_was_modelled(program):
    rc, out, err = program("twice")
    assert rc == 0, err
    assert json.loads(out)["l2_modelled"] == 1


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("bad_line", "ConfigureL2: L2 line size 96 must be a power of two in [1, 2097152]"),
        ("bad_ways", "ConfigureL2: L2 associativity must be at least 1 way, got 0"),
        (
            "bad_size",
            "ConfigureL2: L2 size 1000 must be a positive multiple of line size x ways = 128 x 4 = 512 bytes "
            "(one set)",
        ),
    ],
)
def test_bad_parameters_are_refused(program, case, message):
    assert abort(program, case) == ("launch", -1, message)


def test_the_documented_defaults_and_bounds_agree_with_the_platform_and_the_memory_estimate():
    header = (INCLUDE_DIR / "af_twin" / "l2.h").read_text(encoding="utf-8")

    def constant(name: str) -> int:
        """``N``, ``uint64_t{N}`` or either shifted left (``<< S``)."""
        (match,) = re.finditer(
            rf"constexpr uint\d+_t {name} = (?:uint64_t\{{)?(\d+)\}}?(?: << (\d+))?;", header
        )
        return int(match[1]) << int(match[2] or 0)

    plat = Platform()
    defaults = (constant("kL2DefaultSize"), constant("kL2DefaultLine"), constant("kL2DefaultWays"))
    assert defaults == (plat.l2_size, plat.l2_line, plat.l2_ways) == (128 << 20, 128, 16)
    bounds = (constant("kL2MaxRecords"), constant("kL2FlushRecords"))
    assert bounds == (budget.L2_MAX_RECORDS, budget.L2_FLUSH)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("l2_line", 96, "platform l2_line must be a power of two in [1, 2097152], got 96"),
        ("l2_ways", 0, "platform l2_ways must be at least 1, got 0"),
        ("l2_size", 1000, "platform l2_size must be a positive multiple of l2_line x l2_ways = 2048 bytes"),
    ],
)
def test_the_platform_refuses_an_l2_the_twin_would_refuse(field, value, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Platform(**{field: value})
