"""EmbeddingBag forms beyond the plain 2-D bag: per-sample weights and padding_idx.

Each runs fused on the twin and equals eager, or stays in torch with the
reason (and then equals eager, as torch computes it). Before, padding_idx was
ignored: a mean bag with padding returned the mean over every entry, a
silently wrong result.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import af_torch  # noqa: E402
from af_torch.compile import export  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.twin]


class Bag(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(30, 6, **kw)

    def forward(self, ids, weights=None):
        return self.bag(ids, per_sample_weights=weights)


IDS = torch.tensor([[0, 1, 2, 0], [0, 0, 0, 0], [4, 5, 29, 7], [3, 3, 0, 9]])


@pytest.mark.parametrize("padding_idx", [None, 0, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_sum_bags_with_weights_and_padding_fuse_and_equal_eager(padding_idx, weighted):
    torch.manual_seed(0)
    model = Bag(mode="sum", padding_idx=padding_idx).eval()
    with torch.no_grad():
        model.bag.weight.normal_()  # padding rows non-zero too: excluding them must be the kernel's work
    args = (IDS, torch.rand(IDS.shape)) if weighted else (IDS,)
    program = af_torch.compile_exported(export(model, args))
    [region] = program.fused.partition.regions
    assert "aten._embedding_bag" in region.fused_ops
    for batch in (4, 2):
        call = tuple(a[:batch] for a in args)
        with torch.no_grad():
            torch.testing.assert_close(program(*call), model(*call), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["mean", "max"])
def test_mean_and_max_bags_with_padding_stay_in_torch_saying_why_and_equal_eager(mode):
    model = Bag(mode=mode, padding_idx=0).eval()
    with torch.no_grad():
        model.bag.weight.normal_()
    program = af_torch.compile_exported(export(model, (IDS,), dynamic_batch=False))
    assert program.fused.partition.regions == []
    [reason] = [why for why in program.fused.partition.left.values() if "padding_idx" in why]
    assert "second reduction" in reason
    with torch.no_grad():
        torch.testing.assert_close(program(IDS), model(IDS))
