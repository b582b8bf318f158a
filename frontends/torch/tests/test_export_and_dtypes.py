"""``compile_exported`` on torch.export programs: dtypes, int32 ids, symbolic sizes, and what stays in torch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import af_torch  # noqa: E402
from af_torch import runtime  # noqa: E402
from af_torch.compile import export  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.twin]


class Gate(torch.nn.Module):
    """embedding(w, ids - 1) -> relu -> sum over the row: index pre-op, post op, reduce."""

    def __init__(self, dtype):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(50, 8).to(dtype))

    def forward(self, ids):
        return torch.nn.functional.embedding(ids - 1, self.weight).relu().sum(-1)


@pytest.mark.parametrize("dtype, id_dtype", [(torch.float16, torch.int32), (torch.bfloat16, torch.int64)])
def test_half_types_and_id_types_equal_eager_within_tolerance(dtype, id_dtype):
    model = Gate(dtype).eval()
    program = af_torch.compile_exported(export(model, (torch.randint(1, 51, (4, 3), dtype=id_dtype),)))
    [region] = program.fused.partition.regions
    assert region.fused_ops == ["aten.sub", "aten.embedding", "aten.relu", "aten.sum"]
    builds = None
    for batch in (4, 7, 2):
        ids = torch.randint(1, 51, (batch, 3), dtype=id_dtype, generator=torch.Generator().manual_seed(batch))
        with torch.no_grad():
            got, expected = program(ids), model(ids)
        assert got.dtype == dtype and got.shape == expected.shape
        tol = {torch.float16: (4e-3, 2e-3), torch.bfloat16: (3.2e-2, 1.6e-2)}[dtype]
        torch.testing.assert_close(got, expected, rtol=tol[0], atol=tol[1] * 8)
        builds = builds if builds is not None else runtime.builds
    assert runtime.builds == builds


def test_index_select_pure_data_movement_is_bitwise_and_scalar_division_stays_in_torch():
    class Pick(torch.nn.Module):
        def forward(self, x, idx):
            return torch.index_select(x, 0, idx) / 3

    model = Pick()
    x, idx = torch.randn(20, 5), torch.tensor([3, 0, 19, 3])
    program = af_torch.compile_exported(export(model, (x, idx), dynamic_batch=False))
    [region] = program.fused.partition.regions
    assert region.fused_ops == ["aten.index_select"]
    assert "div" in program.fused.partition.left
    assert torch.equal(program(x, idx), model(x, idx))


def test_an_id_outside_the_table_is_a_twin_error_not_a_wrong_result():
    from af_core.twin import TwinSanitizerError

    class Pick(torch.nn.Module):
        def forward(self, x, idx):
            return torch.index_select(x, 0, idx) * 2

    x = torch.randn(20, 5)
    program = af_torch.compile_exported(export(Pick(), (x, torch.tensor([3, 0])), dynamic_batch=False))
    assert torch.equal(program(x, torch.tensor([19, 1])), Pick()(x, torch.tensor([19, 1])))
    with pytest.raises(TwinSanitizerError, match="index 25 is outside"):
        program(x, torch.tensor([3, 25]))


def test_model_names_reach_the_kernel_through_the_naming_layer():
    odd_class = type(
        'Modèle "x"; int main',
        (torch.nn.Module,),
        {"forward": lambda self, w, ids: torch.nn.functional.embedding(ids, w).neg()},
    )
    w, ids = torch.randn(10, 4), torch.tensor([[1, 9], [0, 0]])
    program = af_torch.compile_exported(
        export(odd_class(), (w, ids), dynamic_batch=False), name=odd_class.__name__
    )
    [kernel] = program.kernels
    assert kernel.region.graph.name.startswith(odd_class.__name__)
    assert torch.equal(program(w, ids), odd_class()(w, ids))
    result = runtime.session_for(kernel.region).result  # it compiled and ran: the name was escaped
    assert result.kernel_name.isascii() and result.kernel_name.isidentifier()


def test_an_empty_batch_returns_an_empty_result_without_a_launch():
    """A batch of 0 empties the output: the twin launches nothing, and the call returns torch's empty result
    (it used to end in a StopIteration looking up the case of tiling key -1)."""
    from af_core.twin.runner import NO_LAUNCH

    model = Gate(torch.float32).eval()
    program = af_torch.compile_exported(export(model, (torch.randint(1, 51, (4, 3)),)))
    empty = torch.zeros((0, 3), dtype=torch.int64)
    with torch.no_grad():
        got, expected = program(empty), model(empty)
        assert got.shape == expected.shape == (0, 3) and got.dtype == expected.dtype
        last = program.kernels[0].last
        assert last.tiling_key == NO_LAUNCH and last.template == runtime.NO_LAUNCH_LABEL
        assert (last.block_dim, last.measured_bytes) == (0, 0)
        ids = torch.randint(1, 51, (5, 3), generator=torch.Generator().manual_seed(5))
        torch.testing.assert_close(program(ids), model(ids))  # the next batch launches again
    assert program.kernels[0].last.tiling_key != NO_LAUNCH
