"""tools/sync_mutants.py: every sync a sample kernel executes is needed, or is a queue pair another EnQue
covers; the instrumentation finds each kind of sync, keeps the device code valid, and a kernel that lacks a
sync is caught by the twin."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.samples import lookup

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "sync_mutants.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("sync_mutants", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules["sync_mutants"] = module
    spec.loader.exec_module(module)
    return module


KERNEL = """\
#include "kernel_operator.h"
__aicore__ inline void f() {
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::PipeBarrier<PIPE_MTE3>();
    q.EnQue(a_1);
    AscendC::LocalTensor<half> a_2 = q.DeQue<half>();
    AscendC::SyncAll();
    AscendC::SetFlag<AscendC::HardEvent::V_S>(EVENT_ID0);
#if defined(AF_CPU_TWIN)
    AscendC::PipeBarrier<PIPE_V>();
#endif
}
"""


def test_every_kind_of_sync_is_found_and_twin_only_code_is_left_out(tool):
    syncs = tool.find_syncs(KERNEL)
    kinds = [(s.kind, s.lines) for s in syncs]
    assert kinds == [
        (tool.SyncKind.FLAG_PAIR, (2, 3)),
        (tool.SyncKind.BARRIER, (4,)),
        (tool.SyncKind.QUEUE, (5, 6)),
        (tool.SyncKind.SYNC_ALL, (7,)),
        (tool.SyncKind.FLAG, (8,)),
    ]
    mutants = tool.mutants_of(syncs)
    # a removal each, and a move to another pipe for the pair and the barrier
    assert [(m.sync.kind, m.kind) for m in mutants[5:]] == [
        (tool.SyncKind.FLAG_PAIR, tool.MutantKind.MOVE),
        (tool.SyncKind.BARRIER, tool.MutantKind.MOVE),
    ]
    text = tool.instrument(KERNEL, mutants)
    # MTE2_V moved to MTE3_V, the twin told to check that the move carries what the original did (MoveCovers)
    assert "if (AF_MUTANT(5)) { AF_MOVE_COVERS(5, 2, 3); AscendC::SetFlag<AscendC::HardEvent::MTE3_V>" in text
    assert "if (AF_MUTANT(6)) { AscendC::PipeBarrier<PIPE_V>(); }" in text
    assert "AscendC::LocalTensor<half> a_2 = AF_MUTANT(2) ? a_1 : q.DeQue<half>();" in text
    assert text.index("#define AF_PROBE") > text.index('#include "kernel_operator.h"')


def test_the_sample_kernels_need_every_sync_they_execute(tool):
    kinds = set()
    for name in ("seed_minimal", "gather_rows"):
        sample = lookup(name)
        graph = sample.build()
        cases = Autofuser(AutofuserOptions()).schedule(graph).cases
        report = tool.mutate_graph(graph, sample.shapes)
        assert len(report.tried) == len(cases) * len(sample.shapes)  # every case at every shape
        assert report.score() == 1.0, tool.describe(report)
        kinds |= {m.sync.kind for m in report.mutants if m.id in report.executed}
        # the only survivors are load queues whose flag the next load's EnQue covers
        for m in report.survivors():
            assert report.covered(m), tool.describe(report)
            assert "load_tile_buf.EnQue" in m.sync.text
    assert {tool.SyncKind.FLAG_PAIR, tool.SyncKind.QUEUE, tool.SyncKind.SYNC_ALL} <= kinds, kinds


def _without_pattern_flag(kernel: str, function: str) -> str:
    """``kernel`` with the S_V pair after the gather pattern of case function ``function`` taken out."""
    lines = kernel.splitlines()
    start = next(i for i, line in enumerate(lines) if f"void {function}(" in line)
    call = next(i for i in range(start, len(lines)) if "AfGatherPattern<" in lines[i])
    assert "SetFlag<AscendC::HardEvent::S_V>" in lines[call + 1], lines[call + 1]
    assert "WaitFlag<AscendC::HardEvent::S_V>" in lines[call + 2], lines[call + 2]
    return "\n".join(lines[: call + 1] + lines[call + 3 :]) + "\n"


def test_afc_run_takes_a_hand_edited_kernel_and_reports_its_missing_flag(tmp_path, capsys):
    from af_core.cli import main

    graph_file = tmp_path / "seed.py"
    graph_file.write_text("from af_core.samples import seed_minimal\ngraph = seed_minimal()\n")
    fuser = Autofuser(AutofuserOptions())
    scheduled = fuser.schedule(lookup("seed_minimal").build())
    kernel = fuser.generate(scheduled).kernel
    simd = next(c for c in scheduled.cases if c.label == "simd/db")
    shape = "s0=2,s1=3,s2=10,s3=8,s4=2,s5=3,s6=6,s7=8"
    good = tmp_path / "good.cpp"
    good.write_text(kernel)
    args = ["run", str(graph_file), "--shape", shape, "--tiling-key", str(simd.tiling_key)]
    assert main([*args, "--kernel", str(good)]) == 0
    assert "simd/db" in capsys.readouterr().out
    bad = tmp_path / "bad.cpp"
    bad.write_text(_without_pattern_flag(kernel, simd.function_name))
    code = main([*args, "--kernel", str(bad)])
    err = capsys.readouterr().err
    assert code != 0
    assert "race" in err and "SetFlag<HardEvent::S_V>" in err, err


def test_afc_run_refuses_a_tiling_key_the_graph_lacks_and_a_kernel_that_is_no_file(tmp_path, capsys):
    from af_core.cli import main

    graph_file = tmp_path / "seed.py"
    graph_file.write_text("from af_core.samples import seed_minimal\ngraph = seed_minimal()\n")
    shape = "s0=2,s1=3,s2=10,s3=8,s4=2,s5=3,s6=6,s7=8"
    assert main(["run", str(graph_file), "--shape", shape, "--tiling-key", "99"]) == 2
    assert "--tiling-key 99 is not a case of this graph (cases: 0=scalar_loop" in capsys.readouterr().err
    assert main(["run", str(graph_file), "--shape", shape, "--kernel", str(tmp_path)]) == 2
    assert "is not a regular file" in capsys.readouterr().err


def test_the_adversarial_schedule_turns_a_dropped_queue_flag_into_a_reference_mismatch(tool, monkeypatch):
    from af_core.twin import TwinSession

    sample = lookup("seed_minimal")
    graph = sample.build()
    fuser = Autofuser(AutofuserOptions())
    scheduled = fuser.schedule(graph)
    kernel = fuser.generate(scheduled).kernel
    mutants = tool.mutants_of(tool.find_syncs(kernel))
    simd = next(c for c in scheduled.cases if c.label == "simd/db")
    lines = kernel.splitlines()
    start = next(i for i, line in enumerate(lines) if f"void {simd.function_name}(" in line)
    # the gathered tile's VECOUT queue: its EnQue / DeQue are all that orders the store after the gather
    drop = next(
        m
        for m in mutants
        if m.kind is tool.MutantKind.REMOVE
        and m.sync.lines[0] > start
        and "indirect_load_tile_buf.EnQue" in m.sync.text
    )
    session = TwinSession(graph, kernel=tool.instrument(kernel, mutants))
    inputs = session.inputs(sample.shapes[1], seed=1)
    monkeypatch.setenv("AF_TWIN_RACE", "lag")
    assert session.check(inputs=inputs, tiling_key=simd.tiling_key).ok  # every sync in place
    monkeypatch.setenv(tool.MUTANT_ENV, str(drop.id))
    run = session.check(inputs=inputs, tiling_key=simd.tiling_key)
    assert not run.ok, run.describe()  # the store copied the tile out before the gather's writes landed
