"""A compiled exported program keeps the exported program's input guards, and takes inputs in any pytree form.

Each region kernel was built for the sizes and dtypes of the export; a call
outside them must raise before a kernel runs, never return a tensor of the
traced shape.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import af_torch  # noqa: E402
from af_torch.compile import export  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.twin]


class Bias(torch.nn.Module):
    """T5-style relative position bias: a table of (bucket, head) gathered by an L x L bucket grid."""

    def __init__(self):
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(32, 4))

    def forward(self, buckets):
        return self.table[buckets].permute(2, 0, 1).unsqueeze(0)


@pytest.fixture(scope="module")
def static_bias():
    model = Bias().eval()
    buckets = torch.randint(0, 32, (16, 16))
    program = af_torch.compile_exported(export(model, (buckets,), dynamic_batch=False))
    assert program.fused.partition.regions, "the gather must be fused for the guards to matter"
    return model, buckets, program


def test_the_traced_size_runs_and_equals_eager(static_bias):
    model, buckets, program = static_bias
    with torch.no_grad():
        assert torch.equal(program(buckets), model(buckets))


def test_a_static_size_other_than_the_exported_one_raises_torchs_guard_error(static_bias):
    _model, _buckets, program = static_bias
    with pytest.raises(RuntimeError, match=r"args\[0\]\.shape\[0\] to be equal to 16, but got 64"):
        program(torch.randint(0, 32, (64, 64)))


def test_a_rank_other_than_the_exported_one_raises(static_bias):
    _model, _buckets, program = static_bias
    with pytest.raises(RuntimeError, match="Unexpected number of dimensions"):
        program(torch.randint(0, 32, (16, 16, 1)))


def test_a_dtype_other_than_the_exported_one_raises_naming_both(static_bias):
    _model, _buckets, program = static_bias
    with pytest.raises(RuntimeError, match=r"dtype torch\.int64, but got torch\.int32"):
        program(torch.randint(0, 32, (16, 16), dtype=torch.int32))


def test_a_missing_or_extra_input_raises(static_bias):
    _model, buckets, program = static_bias
    with pytest.raises((RuntimeError, ValueError, TypeError)):
        program()
    with pytest.raises((RuntimeError, ValueError, TypeError)):
        program(buckets, buckets)


def test_a_dynamic_dimension_accepts_other_sizes_and_its_static_neighbour_still_guards():
    class Gather(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(40, 6))

        def forward(self, ids):
            return (self.weight[ids] * 2).sum(1)

    model = Gather().eval()
    program = af_torch.compile_exported(export(model, (torch.randint(0, 40, (5, 3)),)))
    assert program.fused.partition.regions
    for batch in (2, 9):
        ids = torch.randint(0, 40, (batch, 3))
        with torch.no_grad():
            torch.testing.assert_close(program(ids), model(ids))
    with pytest.raises(RuntimeError, match=r"shape\[1\] to be equal to 3"):
        program(torch.randint(0, 40, (5, 4)))


class Tower(torch.nn.Module):
    """DLRM-style inputs: a dense tensor and a list of sparse id tensors, answered as a dict."""

    def __init__(self):
        super().__init__()
        self.tables = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(30, 4)) for _ in range(2)])

    def forward(self, dense, sparse):
        pooled = [table[ids].sum(1) for table, ids in zip(self.tables, sparse, strict=True)]
        return {"dense": dense * 2, "sparse": pooled}


def test_list_inputs_and_dict_outputs_keep_their_structure_and_values():
    model = Tower().eval()
    dense = torch.randn(4, 3)
    sparse = [torch.randint(0, 30, (4, 5)), torch.randint(0, 30, (4, 2))]
    program = af_torch.compile_exported(export(model, (dense, sparse)))
    assert len(program.fused.partition.regions) == 2
    for batch in (4, 6):
        dense = torch.randn(batch, 3)
        sparse = [torch.randint(0, 30, (batch, 5)), torch.randint(0, 30, (batch, 2))]
        with torch.no_grad():
            got, expected = program(dense, sparse), model(dense, sparse)
        assert set(got) == {"dense", "sparse"} and isinstance(got["sparse"], list)
        torch.testing.assert_close(got["dense"], expected["dense"])
        for a, b in zip(got["sparse"], expected["sparse"], strict=True):
            torch.testing.assert_close(a, b)
    with pytest.raises((RuntimeError, ValueError)):
        program(dense, sparse[:1])
