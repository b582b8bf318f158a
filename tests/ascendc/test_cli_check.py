"""``afc check``: one line per graph, g++ errors for a failing kernel, exit 0 / 1 / 2."""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from af_core import cli
from af_core.autofuser import Autofuser

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "minimal_graph.py")

# appended to a generated kernel: Div has no bfloat16 form on 3510
WRONG_TAIL = """
__aicore__ inline void AfWrongTail(AscendC::LocalTensor<bfloat16_t>& a)
{
    AscendC::Div(a, a, a, 64);
}
"""


def test_no_headers_is_a_user_error(monkeypatch, capsys):
    monkeypatch.delenv("AF_ASCENDC_SRC", raising=False)
    assert cli.main(["check", SEED]) == cli.EXIT_ERROR
    assert "AF_ASCENDC_SRC" in capsys.readouterr().err


def test_missing_header_dir_is_a_user_error(tmp_path, capsys):
    assert cli.main(["check", SEED, "--ascendc", str(tmp_path / "nowhere")]) == cli.EXIT_ERROR
    assert "does not exist" in capsys.readouterr().err


def test_passing_kernel_exits_0(ascendc_source, capsys):
    assert (
        cli.main(["check", SEED, "--ascendc", os.environ["AF_ASCENDC_SRC"], "--force-template", "simd"]) == 0
    )
    assert capsys.readouterr().out.startswith("ok ")


def test_failing_kernel_exits_1_with_the_error(ascendc_source, monkeypatch, capsys):
    generate = Autofuser.generate

    def wrong(self, scheduled):
        result = generate(self, scheduled)
        return attrs.evolve(result, kernel=result.kernel + WRONG_TAIL)

    monkeypatch.setattr(Autofuser, "generate", wrong)
    code = cli.main(["check", SEED, "--ascendc", os.environ["AF_ASCENDC_SRC"], "--force-template", "simd"])
    out = capsys.readouterr().out
    assert code == cli.EXIT_MISMATCH
    assert out.startswith("FAIL ") and "static assertion failed" in out and "[official]" in out
