"""The gather forms README names, each fused and equal to eager on two batch sizes.

One kernel serves both sizes, except for ``take_along_dim``: torch's own
decomposition makes the batch a constant (``expand`` to the traced sizes),
so its region is specialised and re-traced per batch.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import af_torch  # noqa: E402
from af_torch import runtime  # noqa: E402
from af_torch.compile import export  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.twin]


class TakeAlongDim(torch.nn.Module):
    def forward(self, x, idx):
        return torch.take_along_dim(x, idx, 1).exp()


class RowIndex(torch.nn.Module):
    def forward(self, x, idx):
        return x[idx].abs()


class TableIndex(torch.nn.Module):
    """x[ids] with 2-D ids on a 2-D table: an embedding; the table scaled first (an input-side op)."""

    def __init__(self):
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(40, 8))

    def forward(self, ids):
        return (self.table * 0.5)[ids]


class Bag(torch.nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(60, 8, mode=mode)

    def forward(self, ids):
        return self.bag(ids)


class RowMax(torch.nn.Module):
    def forward(self, x, idx):
        return torch.index_select(x, 0, idx).amax(-1)


class SeqMin(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(30, 8)

    def forward(self, ids):
        return self.emb(ids).amin(1, keepdim=True)


class SeqMean(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(30, 8)

    def forward(self, ids):
        return self.emb(ids).mean(1)


def gen(batch):
    return torch.Generator().manual_seed(batch)


CASES = {
    "take_along_dim": (
        TakeAlongDim,
        lambda b: (torch.randn(b, 12, generator=gen(b)), torch.randint(0, 12, (b, 5), generator=gen(b))),
        ["aten.gather", "aten.exp"],
    ),
    "x[idx]": (
        RowIndex,
        lambda b: (torch.randn(30, 6, generator=gen(b)), torch.randint(0, 30, (b,), generator=gen(b))),
        ["aten.index", "aten.abs"],
    ),
    "table_op_x[ids]": (
        TableIndex,
        lambda b: (torch.randint(0, 40, (b, 3), generator=gen(b)),),
        ["aten.mul", "aten.index"],
    ),
    "amax": (
        RowMax,
        lambda b: (torch.randn(25, 7, generator=gen(b)), torch.randint(0, 25, (b,), generator=gen(b))),
        ["aten.index_select", "aten.amax"],
    ),
    "amin_keepdim": (
        SeqMin,
        lambda b: (torch.randint(0, 30, (b, 5), generator=gen(b)),),
        ["aten.embedding", "aten.amin"],
    ),
    "mean": (
        SeqMean,
        lambda b: (torch.randint(0, 30, (b, 5), generator=gen(b)),),
        ["aten.embedding", "aten.mean"],
    ),
    "bag_mean": (
        lambda: Bag("mean"),
        lambda b: (torch.randint(0, 60, (b, 4), generator=gen(b)),),
        ["aten._embedding_bag"],
    ),
    "bag_max": (
        lambda: Bag("max"),
        lambda b: (torch.randint(0, 60, (b, 4), generator=gen(b)),),
        ["aten._embedding_bag"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_pattern_fuses_and_equals_eager(case):
    make, inputs, fused_ops = CASES[case]
    torch.manual_seed(0)
    model = make().eval()
    program = af_torch.compile_exported(export(model, inputs(4)))
    assert [r.fused_ops for r in program.fused.partition.regions] == [fused_ops]
    builds = None
    for batch in (4, 7):
        args = inputs(batch)
        if case == "take_along_dim" and batch != 4:
            program = af_torch.compile_exported(export(model, args))
        with torch.no_grad():
            torch.testing.assert_close(program(*args), model(*args))
        builds = builds if builds is not None else runtime.builds
    assert runtime.builds == builds + (case == "take_along_dim")
