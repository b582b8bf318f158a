"""AF_ASCENDC_CHECK: the twin refuses to build a kernel that the official headers reject.

The gate sits in the twin runner, so every kernel a test suite or ``afc run``
builds is checked against the official API before the twin may run it.
"""

from __future__ import annotations

import attrs
import pytest

from af_core import samples
from af_core.ascendc import gate
from af_core.ascendc.source import AscendcSourceError
from af_core.autofuser import Autofuser
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
