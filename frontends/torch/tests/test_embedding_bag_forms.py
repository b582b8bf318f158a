"""EmbeddingBag in every form torch offers: 2-D ids or 1-D ids with offsets (``include_last_offset``
both ways), per-sample weights, padding_idx, sum / mean / max.

Each runs fused on the twin and equals eager: 2-D bags in place, every other
form through the ragged layout (af_torch.bags), one kernel for every bag
length. Calls torch refuses (bad offsets, ids past the table) are refused
with torch's kind of error, never turned into zero rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
def test_mean_and_max_bags_of_2d_ids_with_padding_fuse_through_the_layout_and_equal_eager(mode):
    model = Bag(mode=mode, padding_idx=0).eval()
    with torch.no_grad():
        model.bag.weight.normal_()
    program = af_torch.compile_exported(export(model, (IDS,), dynamic_batch=False))
    [region] = program.fused.partition.regions
    assert region.layout is not None and region.layout.padding_idx == 0
    with torch.no_grad():  # IDS' second bag is all padding: torch gives zeros
        torch.testing.assert_close(program(IDS), model(IDS), rtol=1e-5, atol=1e-5)


class OffsetBag(torch.nn.Module):
    """torch's canonical bag: 1-D ids and the offsets where each bag starts."""

    def __init__(self, dtype=torch.float32, **kw):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(40, 8, dtype=dtype, **kw)

    def forward(self, ids, offsets, weights=None):
        return self.bag(ids, offsets, per_sample_weights=weights)


# bags of lengths 2, 0 (empty), 3, 1, 4: the 2nd is empty, the 4th is all padding when padding_idx is 6
FLAT = torch.tensor([3, 9, 0, 39, 3, 6, 1, 2, 6, 3])
STARTS = torch.tensor([0, 2, 2, 5, 6])


def offsets_for(starts: torch.Tensor, n: int, include_last: bool) -> torch.Tensor:
    return torch.cat([starts, torch.tensor([n])]) if include_last else starts


def compiled_bag(mode, padding_idx, include_last, weighted, dtype=torch.float32):
    torch.manual_seed(1)
    model = OffsetBag(dtype, mode=mode, padding_idx=padding_idx, include_last_offset=include_last).eval()
    with torch.no_grad():
        model.bag.weight.normal_()
    args = (FLAT, offsets_for(STARTS, len(FLAT), include_last))
    if weighted:
        args += (torch.rand(FLAT.shape, dtype=dtype),)
    program = af_torch.compile_exported(export(model, args))
    return model, program, args


@pytest.mark.parametrize(
    "mode, padding_idx, include_last, weighted",
    [
        ("sum", None, False, False),
        ("sum", 6, True, True),
        ("mean", None, True, False),
        ("mean", 6, False, False),
        ("max", None, False, False),
        ("max", 6, True, False),
    ],
)
def test_bags_of_1d_ids_with_offsets_fuse_and_equal_eager(mode, padding_idx, include_last, weighted):
    model, program, args = compiled_bag(mode, padding_idx, include_last, weighted)
    [region] = program.fused.partition.regions
    assert "aten._embedding_bag" in region.fused_ops and region.layout is not None
    with torch.no_grad():
        torch.testing.assert_close(program(*args), model(*args), rtol=1e-5, atol=1e-5)
        # fewer bags and a longer longest bag: the same kernel, another layout
        ids = torch.tensor([5, 6, 7, 8, 9, 10, 11, 12, 6])
        call = (ids, offsets_for(torch.tensor([0, 8]), len(ids), include_last))
        if weighted:
            call += (torch.rand(ids.shape),)
        torch.testing.assert_close(program(*call), model(*call), rtol=1e-5, atol=1e-5)
    assert program.fused.kernels[0].calls == 2


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_mean_bags_of_1d_ids_equal_eager(dtype):
    model, program, args = compiled_bag("mean", None, False, False, dtype)
    assert program.fused.partition.regions
    with torch.no_grad():
        torch.testing.assert_close(program(*args), model(*args))  # torch's tolerance for the dtype


@pytest.fixture(scope="module")
def sum_and_max():
    return {mode: compiled_bag(mode, 6, False, mode == "sum") for mode in ("sum", "max")}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lengths=st.lists(st.integers(0, 6), min_size=1, max_size=7),
    seed=st.integers(0, 2**16),
    mode=st.sampled_from(["sum", "max"]),
)
def test_random_ragged_bags_equal_eager(sum_and_max, lengths, seed, mode):
    model, program, _args = sum_and_max[mode]
    rng = np.random.default_rng(seed)
    n = sum(lengths)
    ids = torch.from_numpy(rng.integers(0, 40, n))
    starts = torch.tensor(np.concatenate([[0], np.cumsum(lengths)[:-1]]), dtype=torch.int64)
    call = (ids, starts) + ((torch.from_numpy(rng.random(n, dtype=np.float32)),) if mode == "sum" else ())
    with torch.no_grad():
        torch.testing.assert_close(program(*call), model(*call), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "ids, starts, message",
    [
        ([1, 2, 3], [1, 2], "offsets[0] has to be 0"),
        ([1, 2, 3], [0, 3, 2], "non-decreasing"),
        ([1, 40, 3], [0, 1], "id 40 is not in the valid range [0, 40)"),
        ([1, -1, 3], [0, 1], "id -1 is not in the valid range"),
    ],
)
def test_bad_offsets_and_ids_are_refused_not_zeroed(sum_and_max, ids, starts, message):
    _model, program, _args = sum_and_max["max"]
    with pytest.raises(RuntimeError) as err:
        program(torch.tensor(ids), torch.tensor(starts))
    assert message in str(err.value)


def test_int32_ids_and_offsets_fuse_and_equal_eager():
    """The filler of int32 ids is int32's largest value: past the table, read as a zero row."""
    torch.manual_seed(2)
    model = OffsetBag(mode="max", include_last_offset=True).eval()
    ids = FLAT.to(torch.int32)
    offsets = offsets_for(STARTS, len(FLAT), True).to(torch.int32)
    program = af_torch.compile_exported(export(model, (ids, offsets)))
    [region] = program.fused.partition.regions
    assert region.layout is not None
    with torch.no_grad():
        torch.testing.assert_close(program(ids, offsets), model(ids, offsets))
