"""Sizes torch traces inside products, and gathers af cannot fuse: solved, or said out loud."""

from __future__ import annotations

import logging

import pytest

torch = pytest.importorskip("torch")

import af_torch  # noqa: E402
from af_torch.compile import export  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.twin]


class TopKExperts(torch.nn.Module):
    """Mixtral-style: every token's K=8 expert ids flattened, so the gather's index has 8*s rows."""

    def __init__(self):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.randn(64, 16))

    def forward(self, ids):
        return (self.bias[ids.reshape(-1)] * 2).relu()


def test_a_size_inside_a_product_is_solved_from_the_input_dimension_and_one_kernel_serves_every_batch():
    model = TopKExperts().eval()
    program = af_torch.compile_exported(export(model, (torch.randint(0, 64, (5, 8)),)))
    [region] = program.fused.partition.regions
    [derived] = region.derived
    assert str(derived.scale) == "8" and str(derived.offset) == "0"
    for batch in (3, 5, 11):
        ids = torch.randint(0, 64, (batch, 8), generator=torch.Generator().manual_seed(batch))
        with torch.no_grad():
            assert torch.equal(program(ids), model(ids))
        assert program.kernels[0].last.sizes[derived.symbol] == batch


def test_torch_compile_dynamic_fuses_the_product_sized_gather_from_the_first_graph():
    from af_torch import backend

    model = TopKExperts().eval()
    before = len(backend.compiled)
    fused = torch.compile(model, backend="af", dynamic=True)
    for batch in (3, 6):
        ids = torch.randint(0, 64, (batch, 8))
        with torch.no_grad():
            assert torch.equal(fused(ids), model(ids))
    graphs = backend.compiled[before:]
    assert graphs and all(len(g.partition.regions) == 1 for g in graphs)


def test_a_derived_size_that_does_not_divide_is_refused_naming_the_formula():
    import sympy
    from af_torch.regions import DerivedSize

    derived = DerivedSize(0, 0, "s0", sympy.Integer(8), sympy.Integer(0))
    assert derived.solve(24, {}) == 3
    assert derived.solve(20, {}) is None and derived.solve(0, {}) is None
    b = sympy.Symbol("s1", integer=True, positive=True)
    shifted = DerivedSize(0, 0, "s0", 2 * b, sympy.Integer(1))
    assert shifted.solve(13, {"s1": 3}) == 2
    assert shifted.solve(12, {"s1": 3}) is None


def test_a_gather_af_leaves_to_torch_is_a_warning_naming_the_op_and_why(caplog):
    class TwoIndex(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(6, 7))

        def forward(self, i, j):
            return self.w[i, j] * 3

    model = TwoIndex().eval()
    args = (torch.tensor([0, 5, 2]), torch.tensor([1, 6, 3]))
    with caplog.at_level(logging.WARNING, logger="af_torch"):
        program = af_torch.compile_exported(export(model, args, dynamic_batch=False))
    assert not program.fused.partition.regions
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any(
        "is not fused and runs in torch" in r.getMessage() and "more than one index" in r.getMessage()
        for r in warned
    ), [r.getMessage() for r in warned]
    with torch.no_grad():
        assert torch.equal(program(*args), model(*args))


def test_the_left_to_torch_list_gives_one_line_per_op_and_reason():
    from af_torch.region_table import Explanation

    left = {f"view_{i}": ("aten.view", "not an op a region takes") for i in range(12)}
    left["div"] = ("aten.div", "fusible, but no region reaches it")
    left["view_x"] = ("aten.view", "another reason")
    table = Explanation("M", [], left, True).table()
    lines = [line.strip() for line in table.splitlines()]
    assert "aten.view x12 (view_0, view_1, view_10, ...): not an op a region takes" in lines
    assert "div (aten.div): fusible, but no region reaches it" in lines
    assert "view_x (aten.view): another reason" in lines
    assert len([line for line in lines if "aten.view" in line]) == 2


def test_a_gather_feeding_sin_and_cos_ends_its_region_and_the_note_names_both_consumers():
    class Rotary(torch.nn.Module):
        """GPT-J: embed_positions[position_ids] feeds both sin and cos."""

        def __init__(self):
            super().__init__()
            self.embed_positions = torch.nn.Parameter(torch.randn(32, 8))

        def forward(self, position_ids):
            sincos = self.embed_positions[position_ids]
            return torch.sin(sincos) + torch.cos(sincos)

    model = Rotary().eval()
    ids = torch.randint(0, 32, (3, 5))
    program = af_torch.compile_exported(export(model, (ids,), dynamic_batch=False))
    [region] = program.fused.partition.regions
    [note] = [n for n in region.notes if "feeds 2 ops" in n]
    assert "cos" in note and "sin" in note and "one output" in note
    with torch.no_grad():
        torch.testing.assert_close(program(ids), model(ids))


def test_explain_takes_torch_exports_dynamic_shapes():
    model = TopKExperts().eval()
    ids = torch.randint(0, 64, (5, 8))
    batch = torch.export.Dim("batch")
    report = af_torch.explain(model, ids, dynamic_shapes=({0: batch},))
    [region] = report.regions
    assert region.sizes and all(value == 5 for value in region.sizes.values())
    static = af_torch.explain(model, ids, dynamic_shapes=({},))
    [region] = static.regions
    assert region.sizes == {}  # every size static: the kernel is specialised
