"""torch.compile(backend="af") when torch itself fails on the graph: reported as torch's, then run unfused.

A failure inside AOTAutograd or a decomposition happens before af sees an
aten graph. The backend logs it as torch's (the call, and the model line
torch names) and returns dynamo's graph unfused, so the model still runs;
``options={"strict": True}`` raises it instead. af's own failures are never
passed off as torch's. The failing decomposition is planted with monkeypatch
(the models that fail this way in the wild, DIN and GPT-2, depend on the
torch version).
"""

from __future__ import annotations

import logging

import pytest

torch = pytest.importorskip("torch")
decomp = pytest.importorskip("torch._decomp")

import af_torch.compile  # noqa: E402
from af_torch.compile import TorchFailure  # noqa: E402

from af_core.errors import AfError  # noqa: E402

pytestmark = [pytest.mark.torch]


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.table = torch.nn.Embedding(20, 4)

    def forward(self, ids):
        rows = self.table(ids)
        return torch.nn.functional.hardswish(rows) + 1  # the op whose decomposition the tests break


IDS = torch.tensor([[1, 2], [3, 19]])


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture
def broken_decomposition(monkeypatch):
    table = dict(decomp.core_aten_decompositions())

    def fails(*_args, **_kwargs):
        raise RuntimeError("planted failure in the hardswish decomposition")

    table[torch.ops.aten.hardswish.default] = fails
    monkeypatch.setattr(decomp, "core_aten_decompositions", lambda: table)


def test_a_torch_failure_is_logged_as_torchs_and_the_model_runs_unfused(broken_decomposition, caplog):
    model = Model().eval()
    with torch.no_grad(), caplog.at_level(logging.WARNING, logger="af_torch"):
        got = torch.compile(model, backend="af")(IDS)
        torch.testing.assert_close(got, model(IDS))
    [record] = [r for r in caplog.records if "inside torch" in r.getMessage()]
    text = record.getMessage()
    assert "AOTAutograd with the core aten decompositions failed" in text
    assert "planted failure in the hardswish decomposition" in text
    assert "backend='aot_eager'" in text and "runs unfused" in text
    assert "test_backend_fallback.py:" in text  # the model line torch names (the forward's hardswish)


def test_strict_mode_raises_the_torch_failure(broken_decomposition):
    compiled = torch.compile(Model().eval(), backend="af", options={"strict": True})
    with torch.no_grad(), pytest.raises(Exception) as err:
        compiled(IDS)
    chain, cause = [], err.value
    while cause is not None:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    [failure] = [c for c in chain if isinstance(c, TorchFailure)]
    assert failure.call == "AOTAutograd with the core aten decompositions"


def test_a_failure_inside_af_is_not_passed_off_as_torchs(monkeypatch, caplog):
    def ours(*_args, **_kwargs):
        raise AfError("planted failure inside af")

    monkeypatch.setattr(af_torch.compile, "fuse_graph_module", ours)
    compiled = torch.compile(Model().eval(), backend="af")
    with (
        torch.no_grad(),
        caplog.at_level(logging.WARNING, logger="af_torch"),
        pytest.raises(Exception) as err,
    ):
        compiled(IDS)
    assert "planted failure inside af" in str(err.value)
    assert not [r for r in caplog.records if "inside torch" in r.getMessage()]


def test_an_unknown_option_is_refused_naming_the_ones_taken():
    compiled = torch.compile(Model().eval(), backend="af", options={"strikt": True})
    with torch.no_grad(), pytest.raises(Exception) as err:
        compiled(IDS)
    assert "takes the options ['strict'], not ['strikt']" in str(err.value)
