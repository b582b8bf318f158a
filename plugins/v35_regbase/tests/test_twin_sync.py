"""The twin's pipe model: hand-written kernels with a missing or wrong synchronisation, each reported by its
kind, and each corrected kernel running clean with the right numbers (af_twin/hb.h).

Every control is a pair: the broken form must stop the run with exactly one twin error of the expected kind,
and the fixed form must run to the end and print the values the kernel computes, so the check is neither
blind nor stricter than the hardware rules it cites.
"""

from __future__ import annotations

import os

import af_v35_twin_build as twin_build  # loaded by conftest.py
import pytest

PROGRAM = r"""
#include <cstdio>
#include <string>
#include <vector>
#include "kernel_operator.h"

using namespace AscendC;

namespace {

constexpr uint32_t N = 64;
std::vector<float> gIn(N), gOut(N), gWs(2 * N);

void Register() {
    for (uint32_t i = 0; i < N; ++i) gIn[i] = static_cast<float>(i);
    AfTwin::RegisterGm(gIn.data(), N * sizeof(float), "in");
    AfTwin::RegisterGm(gOut.data(), N * sizeof(float), "out");
    AfTwin::RegisterGm(gWs.data(), 2 * N * sizeof(float), "workspace");
}

void Print() {
    std::printf("out");
    for (uint32_t i = 0; i < 4; ++i) std::printf(" %d", static_cast<int>(gOut[i]));
    std::printf("\n");
}

struct Io {
    GlobalTensor<float> in, out, ws;
    Io() {
        in.SetGlobalBuffer(gIn.data(), N);
        out.SetGlobalBuffer(gOut.data(), N);
        ws.SetGlobalBuffer(gWs.data(), 2 * N);
    }
};

// in -> UB x -> y = x + 1 -> out, with the flags `flags` says to place (bit 0: MTE2_V, bit 1: V_MTE3)
void LoadAddStore(int flags) {
    AfTwin::Launch(1, [&] {
        Io io;
        TPipe pipe;
        TBuf<TPosition::VECCALC> bx, by;
        pipe.InitBuffer(bx, N * 4);
        pipe.InitBuffer(by, N * 4);
        LocalTensor<float> x = bx.Get<float>(), y = by.Get<float>();
        DataCopy(x, io.in, N);
        if (flags & 1) {
            SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        }
        Adds(y, x, 1.0f, N);
        if (flags & 2) {
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        }
        DataCopy(io.out, y, N);
    });
}

void MissingMte2V() { LoadAddStore(2); }
void MissingVMte3() { LoadAddStore(1); }
void LoadAddStoreFixed() { LoadAddStore(3); }

// y = x + 1, then z = y * 2 with or without PipeBarrier<PIPE_V>
void DependentVector(bool barrier) {
    AfTwin::Launch(1, [&] {
        Io io;
        TPipe pipe;
        TBuf<TPosition::VECCALC> bx, by, bz;
        pipe.InitBuffer(bx, N * 4);
        pipe.InitBuffer(by, N * 4);
        pipe.InitBuffer(bz, N * 4);
        LocalTensor<float> x = bx.Get<float>(), y = by.Get<float>(), z = bz.Get<float>();
        DataCopy(x, io.in, N);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        Adds(y, x, 1.0f, N);
        if (barrier) PipeBarrier<PIPE_V>();
        Muls(z, y, 2.0f, N);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(io.out, z, N);
    });
}

void VectorNoBarrier() { DependentVector(false); }
void VectorBarrier() { DependentVector(true); }

// the scalar unit writes x, the vector pipe reads it
void ScalarThenVector(bool flag) {
    AfTwin::Launch(1, [&] {
        Io io;
        TPipe pipe;
        TBuf<TPosition::VECCALC> bx, by;
        pipe.InitBuffer(bx, N * 4);
        pipe.InitBuffer(by, N * 4);
        LocalTensor<float> x = bx.Get<float>(), y = by.Get<float>();
        for (uint32_t i = 0; i < N; ++i) x.SetValue(i, static_cast<float>(3 * i));
        if (flag) {
            SetFlag<HardEvent::S_V>(EVENT_ID0);
            WaitFlag<HardEvent::S_V>(EVENT_ID0);
        }
        Adds(y, x, 1.0f, N);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(io.out, y, N);
    });
}

void MissingSV() { ScalarThenVector(false); }
void ScalarThenVectorFixed() { ScalarThenVector(true); }

// core 0 writes the workspace, core 1 reads it back (with or without SyncAll between), then writes out
void Workspace(bool sync) {
    AfTwin::Launch(2, [&] {
        Io io;
        TPipe pipe;
        TBuf<TPosition::VECCALC> bx;
        pipe.InitBuffer(bx, N * 4);
        LocalTensor<float> x = bx.Get<float>();
        if (GetBlockIdx() == 0) {
            DataCopy(x, io.in, N);
            SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
            Muls(x, x, 10.0f, N);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(io.ws, x, N);
        }
        if (sync) SyncAll();
        if (GetBlockIdx() == 1) {
            DataCopy(x, io.ws, N);
            SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
            DataCopy(io.out, x, N);
        }
    });
}

void WorkspaceNoSync() { Workspace(false); }
void WorkspaceSync() { Workspace(true); }

// `threads` SIMT threads each store their index at out[slot(thread)]
__simt_vf__ void StoreIndex(__gm__ float* out, uint32_t spread) {
    const uint32_t t = Simt::GetThreadIdx();
    AfTwin::SimtGmStore(out + t * spread, static_cast<float>(t));
}

void SimtSameAddress() {
    AfTwin::Launch(1, [&] { Simt::VF_CALL<StoreIndex>(Simt::Dim3(2), gOut.data(), 0u); });
}

void SimtOwnAddress() {
    AfTwin::Launch(1, [&] { Simt::VF_CALL<StoreIndex>(Simt::Dim3(4), gOut.data(), 1u); });
}

void WaitWithoutSet() {
    AfTwin::Launch(1, [&] { WaitFlag<HardEvent::MTE2_V>(EVENT_ID1); });
}

void SetTwice() {
    AfTwin::Launch(1, [&] {
        SetFlag<HardEvent::V_MTE3>(EVENT_ID2);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID2);
    });
}

void FlagLeftSet() {
    AfTwin::Launch(1, [&] { SetFlag<HardEvent::MTE3_V>(EVENT_ID3); });
}

void CubeEvent() {
    AfTwin::Launch(1, [&] { SetFlag<HardEvent::M_V>(EVENT_ID0); });
}

// two DataCopy into overlapping UB bytes: MTE2 needs PipeBarrier<PIPE_MTE2> between them
void OverlappingCopies(bool barrier) {
    AfTwin::Launch(1, [&] {
        Io io;
        TPipe pipe;
        TBuf<TPosition::VECCALC> bx;
        pipe.InitBuffer(bx, N * 4);
        LocalTensor<float> x = bx.Get<float>();
        DataCopy(x, io.in, N);
        if (barrier) PipeBarrier<PIPE_MTE2>();
        DataCopy(x, io.in[8], 8);
        SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        DataCopy(io.out, x, N);
    });
}

void CopiesNoBarrier() { OverlappingCopies(false); }
void CopiesBarrier() { OverlappingCopies(true); }

// a queue carries the flags itself: VECIN (MTE2 -> V) and VECOUT (V -> MTE3), two rounds so that the second
// AllocTensor of each buffer waits the first FreeTensor; the id a kernel would take is not the queue's
int gFetched = -1;

void Queues(bool dequeue) {
    AfTwin::Launch(1, [&] {
        Io io;
        TPipe pipe;
        TQue<TPosition::VECIN, 1> qin;
        TQue<TPosition::VECOUT, 1> qout;
        pipe.InitBuffer(qin, 1, N * 4);
        pipe.InitBuffer(qout, 1, N * 4);
        for (int round = 0; round < 2; ++round) {
            LocalTensor<float> x = qin.AllocTensor<float>();
            DataCopy(x, io.in, N);
            qin.EnQue(x);
            gFetched = pipe.FetchEventID(HardEvent::MTE2_V);  // id 0 is the queue's until DeQue
            if (dequeue) x = qin.DeQue<float>();
            LocalTensor<float> y = qout.AllocTensor<float>();
            Adds(y, x, static_cast<float>(round + 1), N);
            if (!dequeue) x = qin.DeQue<float>();
            qin.FreeTensor(x);
            qout.EnQue(y);
            y = qout.DeQue<float>();
            DataCopy(io.out, y, N);
            qout.FreeTensor(y);
        }
    });
}

void QueuesFixed() {
    Queues(true);
    std::printf("fetched %d\n", gFetched);
}
void QueuesLateDeQue() { Queues(false); }

// the scalar unit waits for MTE2, and a vector call it issues after that wait starts after the copy
void IssueAfterScalarWait() {
    AfTwin::Launch(1, [&] {
        Io io;
        TPipe pipe;
        TBuf<TPosition::VECCALC> bx, by;
        pipe.InitBuffer(bx, N * 4);
        pipe.InitBuffer(by, N * 4);
        LocalTensor<float> x = bx.Get<float>(), y = by.Get<float>();
        DataCopy(x, io.in, N);
        SetFlag<HardEvent::MTE2_S>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);
        Adds(y, x, 5.0f, N);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(io.out, y, N);
    });
}

// the vector pipe writes y, the scalar unit reads it
void VectorThenScalar(bool flag) {
    AfTwin::Launch(1, [&] {
        Io io;
        TPipe pipe;
        TBuf<TPosition::VECCALC> by;
        pipe.InitBuffer(by, N * 4);
        LocalTensor<float> y = by.Get<float>();
        Duplicate(y, 7.0f, N);
        if (flag) {
            SetFlag<HardEvent::V_S>(EVENT_ID0);
            WaitFlag<HardEvent::V_S>(EVENT_ID0);
        }
        io.out.SetValue(0, y.GetValue(0));
    });
}

void MissingVS() { VectorThenScalar(false); }
void VectorThenScalarFixed() { VectorThenScalar(true); }

// the scalar unit writes one element of x while the vector pipe reads x[0 .. 7): the race check keeps one record
// per 32-byte block until an access covers part of a block, then per byte, so element 7 (the block's last
// four bytes) is no race and element 0 is
void ScalarElementBesideVector(uint32_t element) {
    AfTwin::Launch(1, [&] {
        Io io;
        TPipe pipe;
        TBuf<TPosition::VECCALC> bx, by;
        pipe.InitBuffer(bx, N * 4);
        pipe.InitBuffer(by, N * 4);
        LocalTensor<float> x = bx.Get<float>(), y = by.Get<float>();
        DataCopy(x, io.in, N);
        SetFlag<HardEvent::MTE2_S>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        x.SetValue(element, 100.0f);
        Duplicate(y, 0.0f, N);
        Adds(y, x, 1.0f, 7);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(io.out, y, N);
    });
}

void ScalarElementRead() { ScalarElementBesideVector(0); }
void ScalarElementBeside() { ScalarElementBesideVector(7); }

// two cores' SIMT threads store one element each into one 32-byte block of out, without a SyncAll
__simt_vf__ void StoreAt(__gm__ float* out, uint32_t element, float value) {
    AfTwin::SimtGmStore(out + element, value);
}

void CoresStore(uint32_t second) {
    AfTwin::Launch(2, [&] {
        const uint32_t core = GetBlockIdx();
        Simt::VF_CALL<StoreAt>(Simt::Dim3(1), gOut.data(), core == 0 ? 0u : second, static_cast<float>(core + 1));
    });
}

void CoresSameElement() { CoresStore(0); }
void CoresOwnElement() { CoresStore(1); }

// mutation testing: after V_MTE2, MTE2 knows every vector call complete, so a flag moved from V to MTE2 here
// carries what the original did (mutant 1, never weaker); MTE3 knows nothing of V (mutant 2, weaker)
void MoveCoversCase() {
    AfTwin::Launch(1, [&] {
        Io io;
        TPipe pipe;
        TBuf<TPosition::VECCALC> bx;
        pipe.InitBuffer(bx, N * 4);
        LocalTensor<float> x = bx.Get<float>();
        Duplicate(x, 1.0f, N);
        SetFlag<HardEvent::V_MTE2>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE2>(EVENT_ID0);
        AfTwin::MoveCovers(1, AfTwin::kPipeV, AfTwin::kPipeMte2);
        AfTwin::MoveCovers(2, AfTwin::kPipeV, AfTwin::kPipeMte3);
    });
    std::printf("uncovered %llu\n", static_cast<unsigned long long>(AfTwin::gState.moveUncovered[0].load()));
}

// a tile MTE2 fills and MTE3 stores: a queue bound from VECIN to VECOUT carries MTE2_MTE3 / MTE3_MTE2, a VECIN
// queue only MTE2_V / V_MTE2, which leave the store unordered
template <class Q>
void CopyThroughQueue() {
    AfTwin::Launch(1, [&] {
        Io io;
        TPipe pipe;
        Q q;
        pipe.InitBuffer(q, 2, N * 4);
        for (int round = 0; round < 3; ++round) {
            LocalTensor<float> x = q.template AllocTensor<float>();
            DataCopy(x, io.in[round * 16], 16);
            q.EnQue(x);
            x = q.template DeQue<float>();
            DataCopy(io.out[round * 16], x, 16);
            q.FreeTensor(x);
        }
    });
}

void CopyBound() { CopyThroughQueue<TQueBind<TPosition::VECIN, TPosition::VECOUT, 2>>(); }
void CopyVecin() { CopyThroughQueue<TQue<TPosition::VECIN, 2>>(); }

struct Case {
    const char* name;
    void (*fn)();
};

const Case kCases[] = {
    {"missing_mte2_v", MissingMte2V},
    {"missing_v_mte3", MissingVMte3},
    {"load_add_store", LoadAddStoreFixed},
    {"vector_no_barrier", VectorNoBarrier},
    {"vector_barrier", VectorBarrier},
    {"missing_s_v", MissingSV},
    {"scalar_then_vector", ScalarThenVectorFixed},
    {"workspace_no_sync", WorkspaceNoSync},
    {"workspace_sync", WorkspaceSync},
    {"simt_same_address", SimtSameAddress},
    {"simt_own_address", SimtOwnAddress},
    {"wait_without_set", WaitWithoutSet},
    {"set_twice", SetTwice},
    {"flag_left_set", FlagLeftSet},
    {"cube_event", CubeEvent},
    {"copies_no_barrier", CopiesNoBarrier},
    {"copies_barrier", CopiesBarrier},
    {"queues", QueuesFixed},
    {"queues_late_deque", QueuesLateDeQue},
    {"issue_after_scalar_wait", IssueAfterScalarWait},
    {"missing_v_s", MissingVS},
    {"vector_then_scalar", VectorThenScalarFixed},
    {"scalar_element_read", ScalarElementRead},
    {"scalar_element_beside", ScalarElementBeside},
    {"cores_same_element", CoresSameElement},
    {"cores_own_element", CoresOwnElement},
    {"move_covers", MoveCoversCase},
    {"copy_bound", CopyBound},
    {"copy_vecin", CopyVecin},
};

}  // namespace

""" + twin_build.CASE_MAIN.replace("c.fn();", "Register();\n            c.fn();\n            Print();")


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(PROGRAM)


#: (broken case, its error kind, a text the message holds, the corrected case, its first four outputs)
CONTROLS = [
    ("missing_mte2_v", "race", "SetFlag<HardEvent::MTE2_V>", "load_add_store", [1, 2, 3, 4]),
    ("missing_v_mte3", "race", "SetFlag<HardEvent::V_MTE3>", "load_add_store", [1, 2, 3, 4]),
    ("missing_s_v", "race", "SetFlag<HardEvent::S_V>", "scalar_then_vector", [1, 4, 7, 10]),
    ("missing_v_s", "race", "SetFlag<HardEvent::V_S>", "vector_then_scalar", [7, 0, 0, 0]),
    ("workspace_no_sync", "race", "a SyncAll between them is missing", "workspace_sync", [0, 10, 20, 30]),
    ("simt_same_address", "race", "SIMT thread 1 writes", "simt_own_address", [0, 1, 2, 3]),
    ("copies_no_barrier", "race", "PipeBarrier<PIPE_MTE2>", "copies_barrier", [8, 9, 10, 11]),
    ("queues_late_deque", "race", "SetFlag<HardEvent::MTE2_V>", "queues", [2, 3, 4, 5]),
    # one element of a 32-byte block: the shadow keeps that block's records per byte
    ("scalar_element_read", "race", "SetFlag<HardEvent::S_V>", "scalar_element_beside", [1, 2, 3, 4]),
    ("cores_same_element", "race", "a SyncAll between them is missing", "cores_own_element", [1, 2, 0, 0]),
    # a tile copied GM -> UB -> GM through a queue: bound from VECIN to VECOUT, not a VECIN queue
    ("copy_vecin", "race", "SetFlag<HardEvent::MTE2_MTE3>", "copy_bound", [0, 1, 2, 3]),
]


@pytest.mark.parametrize(
    ("broken", "kind", "text", "fixed", "values"), CONTROLS, ids=[c[0] for c in CONTROLS]
)
def test_a_missing_sync_is_reported_and_the_fixed_kernel_runs_clean(
    program, broken, kind, text, fixed, values
):
    rc, _out, err = program(broken, race="on")
    error = twin_build.twin_abort(rc, err)
    assert error["kind"] == kind, err
    assert text in error["message"], err
    rc, out, err = program(fixed, race="on")
    assert rc == 0, err
    assert twin_build.twin_errors(err) == []
    assert out.split()[-5:] == ["out", *map(str, values)]


def test_a_queue_takes_its_event_ids_from_the_tpipe(program):
    # while the VECIN queue's EnQue holds MTE2_V id 0, FetchEventID hands out id 1 (kernel_tpipe_impl.h)
    rc, out, err = program("queues", race="on")
    assert rc == 0, err
    assert out.split()[:2] == ["fetched", "1"]


@pytest.mark.parametrize(
    ("case", "kind", "text"),
    [
        ("wait_without_set", "sync-deadlock", "WaitFlag<HardEvent::MTE2_V>(1) with no SetFlag"),
        ("set_twice", "sync-event-reuse", "SetFlag<HardEvent::V_MTE3>(2) while that flag is still set"),
        ("flag_left_set", "sync-flag-left", "HardEvent::MTE3_V event id 3 still set"),
        ("cube_event", "sync-illegal", "SetFlag<HardEvent::M_V>"),
    ],
)
def test_flag_misuse_is_reported_whatever_the_race_mode(program, case, kind, text):
    for mode in ("on", "off"):
        rc, _out, err = program(case, race=mode)
        error = twin_build.twin_abort(rc, err)
        assert error["kind"] == kind, err
        assert text in error["message"], err


def test_dependent_vector_calls_need_no_barrier_on_3510_but_do_in_strict_mode(program):
    # 核内同步/关键特性说明.md: on Ascend 950 the hardware orders PIPE_V after PIPE_V
    rc, out, err = program("vector_no_barrier", race="on")
    assert rc == 0, err
    assert out.split() == ["out", "2", "4", "6", "8"]
    rc, _out, err = program("vector_no_barrier", race="strict")
    error = twin_build.twin_abort(rc, err)
    assert error["kind"] == "race", err
    assert "Muls (pipe V" in error["message"] and "PipeBarrier<PIPE_V>" in error["message"], err
    rc, out, err = program("vector_barrier", race="strict")
    assert rc == 0, err
    assert out.split() == ["out", "2", "4", "6", "8"]


def test_an_instruction_issued_after_a_scalar_wait_starts_after_what_it_waited_for(program):
    rc, out, err = program("issue_after_scalar_wait", race="on")
    assert rc == 0, err
    assert out.split() == ["out", "5", "6", "7", "8"]


def test_the_race_report_names_both_sides(program):
    rc, _out, err = program("missing_mte2_v", race="on")
    message = twin_build.twin_abort(rc, err)["message"]
    assert "Adds (pipe V, instruction #1) reads UB bytes [0, 256)" in message, message
    assert "DataCopy GM->UB (pipe MTE2, instruction #1) wrote" in message, message


def test_the_check_can_be_turned_off(program):
    rc, out, err = program("missing_mte2_v", race="off")
    assert rc == 0, err
    assert out.split() == ["out", "1", "2", "3", "4"]


@pytest.mark.parametrize(("order", "last"), [("forward", "1"), ("reverse", "0"), ("shuffle:3", None)])
def test_simt_threads_run_in_the_order_asked_and_a_thread_race_is_reported_in_any(program, order, last):
    os.environ["AF_TWIN_SIMT_ORDER"] = order
    try:
        rc, out, err = program("simt_same_address", race="off")
        assert rc == 0, err
        if last is not None:  # two threads store their index at out[0]: the one that runs last wins
            assert out.split()[1] == last
        rc, _out, err = program("simt_same_address", race="on")
        assert twin_build.twin_abort(rc, err)["kind"] == "race", err
        rc, out, err = program("simt_own_address", race="on")
        assert rc == 0 and out.split() == ["out", "0", "1", "2", "3"], err
    finally:
        os.environ.pop("AF_TWIN_SIMT_ORDER", None)


@pytest.mark.parametrize(
    ("broken", "fixed"), [("missing_mte2_v", "load_add_store"), ("missing_v_mte3", "load_add_store")]
)
def test_the_adversarial_schedule_turns_a_missing_flag_into_wrong_numbers(program, broken, fixed):
    # AF_TWIN_RACE=lag: a write lands for a pipe only once the pipe is ordered after it, so the vector call
    # (or the copy out) reads the tile as it was before the copy in (or the vector call): the poison bytes
    rc, out, err = program(fixed, race="lag")
    assert rc == 0 and out.split() == ["out", "1", "2", "3", "4"], err
    rc, out, err = program(broken, race="lag")
    assert rc == 0, err
    assert out.split()[0] == "out" and out.split()[1:] != ["1", "2", "3", "4"], out


def test_a_moved_flag_is_equivalent_only_where_its_new_pipe_knows_what_the_old_one_carried(program):
    """MoveCovers (tools/sync_mutants.py's equivalence check) records the mutants whose moved flag carries
    less than the original: here mutant 2 (V -> MTE3, which never waited for V), not mutant 1 (V -> MTE2 after
    a V_MTE2 wait)."""
    rc, out, err = program("move_covers", race="on")
    assert rc == 0, err
    assert "uncovered 4" in out  # bit 2 only
