"""tools/chain_audit.py: the memory calls a test run's chains keep are listed, those a test asked for are not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: A test module the audited run collects: one schedule with an op kept for the test's own reason, one with an
#: op the chain refuses for another reason (a stand-in for a real gap), one with none kept.
PROBE = textwrap.dedent(
    """
    from af_v35_regbase.api_calls.vf_chain import VfChainRegApiCall
    from af_v35_regbase.testing import memory_calls

    from af_core.autofuser import Autofuser, AutofuserOptions
    from af_core.builders import GraphBuilder, gather


    def _graph(name):
        g = GraphBuilder(name)
        y = gather(g.data("x", ["a0", "a1"], "float32"), 0, g.data("index", ["b0", "b1"], "int32"))
        g.output(g.op("Exp", g.op("Abs", y)), "y")
        return g.build()


    def test_kept_by_the_test():
        with memory_calls({"Exp"}):
            Autofuser(AutofuserOptions(force_template="simd")).schedule(_graph("asked"))


    def test_a_gap(monkeypatch):
        ask = VfChainRegApiCall.rejection.__func__

        def refuse(cls, op_type, ins, out):
            return "a gap of the probe" if op_type == "Abs" else ask(cls, op_type, ins, out)

        monkeypatch.setattr(VfChainRegApiCall, "rejection", classmethod(refuse))
        Autofuser(AutofuserOptions(force_template="simd")).schedule(_graph("gap"))


    def test_all_registers():
        Autofuser(AutofuserOptions(force_template="simd")).schedule(_graph("clean"))
    """
)


def test_the_audit_lists_the_memory_calls_no_test_asked_for(tmp_path):
    (tmp_path / "test_probe.py").write_text(PROBE)
    report = tmp_path / "audit.json"
    env = {
        **os.environ,
        "AF_CHAIN_AUDIT": str(report),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "tools"), os.environ.get("PYTHONPATH", "")]),
    }
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "chain_audit",
            "-p",
            "no:cacheprovider",
            "test_probe.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "chain audit: 1 memory call note(s) over 3 schedules" in run.stdout, run.stdout
    body = json.loads(report.read_text())
    assert body["schedules"] == 3
    assert body["kept"] == [
        {
            "graph": "gap",
            "template": "simd",
            "note": "Abs ('abs') stays a single vector call: a gap of the probe",
        }
    ]
