"""AF_ASCENDC_CHECK: the twin refuses to build a kernel that the official headers reject.

The gate sits in the twin runner, so every kernel a test suite or ``afc run``
builds is checked against the official API before the twin may run it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import attrs
import pytest

from af_core import samples
from af_core.ascendc import gate
from af_core.ascendc.source import AscendcSourceError
from af_core.autofuser import Autofuser
from af_core.builders import GraphBuilder, gather
from af_core.ir.serialize import to_json
from af_core.naming import markdown
from af_core.twin.runner import TwinRunner

#: a kernel statement the dav_3510 implementation rejects (Exp has no bfloat16 form)
ILLEGAL = """
__aicore__ inline void AfIllegalOnPurpose()
{
    AscendC::LocalTensor<bfloat16_t> a;
    AscendC::Exp(a, a, 64);
}
"""


@pytest.fixture
def generated(ascendc_source):
    fuser = Autofuser()
    return fuser.generate(fuser.schedule(samples.lookup("embedding_post").build()))


def test_a_generated_kernel_builds_with_the_gate_on(generated, monkeypatch, tmp_path):
    monkeypatch.setenv(gate.CHECK_ENV, "1")
    build = TwinRunner(cache_dir=tmp_path).build(generated)
    assert build.executable.is_file()


def test_the_gate_stops_a_kernel_the_official_headers_reject(generated, monkeypatch, tmp_path):
    monkeypatch.setenv(gate.CHECK_ENV, "1")
    wrong = attrs.evolve(generated, kernel=generated.kernel + ILLEGAL)
    with pytest.raises(gate.OfficialCheckError, match=r"kernel_operator_vec_unary_impl\.h.*static assertion"):
        TwinRunner(cache_dir=tmp_path).build(wrong)
    assert list(tmp_path.rglob("harness")) == []  # stopped before the twin build started


def test_auto_skips_without_headers_and_required_mode_fails(monkeypatch, tmp_path):
    monkeypatch.setenv(gate.CHECK_ENV, "auto")
    monkeypatch.setenv("AF_ASCENDC_SRC", str(tmp_path / "nothing-here"))
    gate.require_official("this is not even C++", "k")  # auto, no headers: nothing to check against
    monkeypatch.setenv(gate.CHECK_ENV, "1")
    with pytest.raises(AscendcSourceError):
        gate.require_official("this is not even C++", "k")


SKIPPED = "official AscendC header check skipped"


def _no_headers(monkeypatch, tmp_path) -> str:
    """AF_ASCENDC_CHECK=auto with AF_ASCENDC_SRC naming nothing, and a process that has not warned yet."""
    nowhere = str(tmp_path / "no-asc-devkit")
    monkeypatch.setenv(gate.CHECK_ENV, "auto")
    monkeypatch.setenv("AF_ASCENDC_SRC", nowhere)
    monkeypatch.setattr(gate, "_warned", False)
    return nowhere


def test_a_skipped_check_warns_once_per_process_and_says_why(monkeypatch, tmp_path, capsys):
    nowhere = _no_headers(monkeypatch, tmp_path)
    gate.require_official("first kernel", "k1")
    gate.require_official("second kernel", "k2")
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"afc: warning: {SKIPPED}"), lines
    assert repr(nowhere) in lines[0] and "does not exist" in lines[0]
    assert gate.skip_reason() is not None
    monkeypatch.delenv("AF_ASCENDC_SRC")
    assert "AF_ASCENDC_SRC is not set" in gate.skip_reason()


@pytest.mark.parametrize(("mode", "src"), [("0", None), ("1", None), ("auto", ".")])
def test_no_skip_reason_when_the_check_is_off_required_or_has_headers(monkeypatch, mode, src):
    monkeypatch.setenv(gate.CHECK_ENV, mode)
    if src is None:
        monkeypatch.delenv("AF_ASCENDC_SRC", raising=False)
    else:
        monkeypatch.setenv("AF_ASCENDC_SRC", src)
    assert gate.skip_reason() is None


def _graph_file(tmp_path):
    g = GraphBuilder("gate_note")
    y = gather(g.data("x", ["a0", "a1"], "float32"), 1, g.data("index", ["b0", "b1"], "int64"))
    g.output(g.op("Relu", y), "y")
    path = tmp_path / "gate_note.json"
    path.write_text(to_json(g.build()))
    return path


@pytest.mark.twin
def test_afc_run_without_headers_prints_one_warning_line(tmp_path):
    nowhere = tmp_path / "no-asc-devkit"
    env = {**os.environ, gate.CHECK_ENV: "auto", "AF_ASCENDC_SRC": str(nowhere)}
    command = ["run", str(_graph_file(tmp_path)), "--shape", "a0=4,a1=9,b0=3,b1=5"]
    proc = subprocess.run(
        [sys.executable, "-m", "af_core", *command],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    assert "match" in proc.stdout
    warnings = [line for line in proc.stderr.splitlines() if SKIPPED in line]
    assert len(warnings) == 1 and str(nowhere) in warnings[0], proc.stderr


def test_report_md_names_the_skipped_check(monkeypatch, tmp_path):
    from af_core import cli

    nowhere = _no_headers(monkeypatch, tmp_path)
    out = tmp_path / "out"
    assert cli.main(["compile", str(_graph_file(tmp_path)), "-o", str(out)]) == 0
    report = (out / "report.md").read_text()
    assert "## Official AscendC check" in report
    section = report.split("## Official AscendC check", 1)[1]
    assert "Skipped: AF\\_ASCENDC\\_CHECK=auto" in section and markdown(nowhere) in section
    monkeypatch.setenv(gate.CHECK_ENV, "0")
    assert cli.main(["compile", str(_graph_file(tmp_path)), "-o", str(tmp_path / "off")]) == 0
    assert "Official AscendC check" not in (tmp_path / "off" / "report.md").read_text()


def test_the_kernel_reads_its_tiling_data_from_the_shared_header(generated, checker):
    """The kernel includes ``autofuse_tiling_data.h`` and copies it with GET_TILING_DATA_WITH_STRUCT."""
    assert '#include "autofuse_tiling_data.h"' in generated.kernel
    assert "struct AutofuseTilingData" not in generated.kernel  # one definition, in the header
    assert checker.check(generated.kernel, generated.kernel_headers()).ok
    missing = checker.check(generated.kernel)
    assert not missing.ok and "autofuse_tiling_data.h" in missing.log
    misnamed = generated.kernel.replace(
        "GET_TILING_DATA_WITH_STRUCT(AutofuseTilingData,", "GET_TILING_DATA_WITH_STRUCT(AutofuseTiling,"
    )
    assert misnamed != generated.kernel
    assert not checker.check(misnamed, generated.kernel_headers()).ok
    unregistered = generated.kernel.replace(
        "REGISTER_TILING_DEFAULT(AutofuseTilingData)", "REGISTER_TILING_DEFAULT(AfNoSuchTilingData)"
    )
    assert unregistered != generated.kernel
    assert not checker.check(unregistered, generated.kernel_headers()).ok
