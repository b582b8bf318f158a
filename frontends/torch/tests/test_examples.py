"""The example models through ``torch.compile(backend="af")``: equal to eager on three batch sizes.

``dynamic=True`` keeps the batch a size symbol: each region's kernel is
built once (``runtime.builds`` counts g++ builds of distinct region graphs)
and every later shape reuses it. Pure data movement is compared bitwise.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from af_torch import backend, models, runtime  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.twin]

#: model -> (fused ops of each region, bitwise equal to eager)
EXPECTED = {
    models.DLRMBag: ([["aten._embedding_bag"]], False),
    models.TokenPositional: ([["aten.embedding", "aten.mul", "aten.add"], ["aten.embedding"]], False),
    models.VocabParallelShard: ([["aten.sub", "aten.where", "aten.embedding", "aten.where"]], True),
    models.HistoryAttention: ([["aten.embedding"], ["aten.embedding", "aten.mul", "aten.sum"]], False),
    models.MoEPermute: ([["aten.index_select"], ["aten.index_select", "aten.mul"]], False),
    models.TopKGather: ([["aten.gather", "aten.sigmoid"]], False),
}


@pytest.mark.parametrize("cls", list(EXPECTED), ids=lambda c: c.__name__)
def test_example_equals_eager_on_three_batches_with_one_build_per_region(cls):
    torch.manual_seed(0)
    model = cls().eval()
    fused = torch.compile(model, backend="af", dynamic=True)
    regions, bitwise = EXPECTED[cls]
    builds_after_first = None
    with torch.no_grad():
        for batch in (3, 5, 9):
            inputs = model.example_inputs(batch, seed=batch)
            got, expected = fused(*inputs), model(*inputs)
            if bitwise:
                assert torch.equal(got, expected)
            else:
                torch.testing.assert_close(got, expected)
            if builds_after_first is None:
                builds_after_first = runtime.builds
                graph = backend.compiled[-1]
                assert [r.fused_ops for r in graph.partition.regions] == regions
                assert all(k.calls == 1 for k in graph.kernels)
    assert runtime.builds == builds_after_first  # no kernel rebuilt for the other batch sizes
    assert all(k.calls == 3 for k in backend.compiled[-1].kernels)


def test_a_model_without_gathers_runs_unchanged_and_says_so():
    import af_torch

    model = models.NoGather().eval()
    report = af_torch.explain(model, *model.example_inputs(4))
    assert report.regions == [] and report.matches_eager
    assert "no fusible region: the model runs unchanged in torch" in report.table()


def test_torch_compile_of_a_model_without_gathers_logs_that_nothing_fused(caplog):
    model = models.NoGather().eval()
    (x,) = model.example_inputs(4)
    with caplog.at_level("INFO", logger="af_torch"), torch.no_grad():
        got = torch.compile(model, backend="af")(x)
    assert torch.equal(got, model(x))
    assert backend.compiled[-1].kernels == []
    assert "no fusible region; the graph runs unchanged in torch" in caplog.text
