"""A template's ImplGraph that codegen cannot render gets a CodegenError naming the stage, not an
AttributeError from inside the kernel generator."""

from __future__ import annotations

import pytest
import sympy

from af_core import dtypes as dt
from af_core.codegen.kernel import KernelContext, case_function
from af_core.errors import CodegenError
from af_core.schedule.case import Case
from af_core.schedule.impl_graph import ImplAxis, ImplGraph, ImplNode, ImplTensor, Stage
from af_core.schedule.tiles import assign_releases
from af_core.testing import seed_style_gather
from af_core.tiling.spec import TilingSpec


def _case(axes: list[ImplAxis]) -> Case:
    spec = TilingSpec()
    spec.add("used_cores", 1, "cores with work")
    impl = ImplGraph("g", "probe", [Stage("rows", axes)])
    impl.add_tensor(ImplTensor("tile", dt.float32, "UB", buffer="buf"))
    return Case("probe", "default", seed_style_gather(), impl, spec, tiling_key=0)


def _axes(*types: str) -> list[ImplAxis]:
    n = sympy.Symbol("n", integer=True, positive=True)
    axes = [ImplAxis("A", "MERGED", n)]
    for name, type_ in (("AT", "TILE_OUT"), ("At", "TILE_IN"), ("ATb", "BLOCK_IN")):
        if type_ in types:
            axes.append(ImplAxis(name, type_, n, ("A",)))
    return axes


def test_tile_out_without_tile_in_is_a_codegen_error():
    with pytest.raises(CodegenError, match=r"stage 'rows' of probe splits TILE_OUT without a TILE_IN axis"):
        case_function(_case(_axes("TILE_OUT", "BLOCK_IN")), [], [], {}, {}, set())


def test_tile_out_with_tile_in_renders_the_tile_loop():
    code = case_function(_case(_axes("TILE_OUT", "TILE_IN", "BLOCK_IN")), ["n"], [], {}, {}, set())
    assert "for (int64_t af_AT = af_AT_begin; af_AT < af_AT_end; ++af_AT)" in code


def test_ub_tensor_outside_a_stage_is_a_codegen_error():
    ctx = KernelContext(_case(_axes("BLOCK_IN")), [], {}, set())
    with pytest.raises(CodegenError, match=r"UB tensor 'tile' is used outside a stage"):
        ctx.produce("tile")


def test_releases_skip_a_ub_tensor_without_a_buffer():
    """assign_releases marks the last use of each UB buffer; a UB tensor that names no buffer is left for
    codegen to report (it used to be sorted together with the buffer names and fail with a TypeError)."""
    impl = ImplGraph("g", "probe", [Stage("rows")])
    impl.add_tensor(ImplTensor("a", dt.float32, "UB", buffer="buf_a"))
    impl.add_tensor(ImplTensor("loose", dt.float32, "UB"))
    stage = impl.stages[0]
    stage.nodes = [
        ImplNode("n0", "Probe", "ProbeCall", ("a", "loose"), ()),
        ImplNode("n1", "Probe", "ProbeCall", ("a",), ("loose",)),
    ]
    assign_releases(stage, impl)
    assert stage.nodes[0].attrs.get("release") is None
    assert stage.nodes[1].attrs["release"] == ["a"]
