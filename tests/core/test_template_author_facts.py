"""Facts docs/writing-templates.md states about the template contract, checked on the core alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sympy

from af_core.codegen.kernel import case_function, loop_variable
from af_core.errors import CodegenError
from af_core.samples import index_select_sum
from af_core.schedule.case import Case
from af_core.schedule.impl_graph import ImplAxis, ImplGraph, Stage
from af_core.tiling.solve import CaseRef, evaluate_case
from af_core.tiling.spec import CORE_NUM, UB_SIZE, CeilDiv, TilingSpec, field

DOC = Path(__file__).resolve().parents[2] / "docs" / "writing-templates.md"
ENV = {"N": 100, "H": 8, "K": 10, "core_num": 8, "ub_size": 1024}


def doc_snippet(marker: str) -> str:
    """The fenced python block that follows ``<!-- doc-test: marker -->`` in the guide."""
    text = DOC.read_text(encoding="utf-8")
    match = re.search(rf"<!-- doc-test: {marker} -->\s*```python\n(.*?)```", text, flags=re.S)
    assert match, f"no snippet '{marker}' in {DOC.name}"
    return match.group(1)


@pytest.mark.parametrize("marker", ["strides", "tiling-spec"])
def test_guide_snippets_run(marker):
    exec(compile(doc_snippet(marker), f"{DOC.name}:{marker}", "exec"), {})


def test_resources_are_shown_not_checked():
    spec = TilingSpec()
    spec.add("used_cores", sympy.Integer(1))
    spec.resources = {"ub_bytes": UB_SIZE * 4}
    shown = evaluate_case(CaseRef(0, "t", spec), ENV)
    assert shown.fits and shown.resources["ub_bytes"] == 4096
    spec.require(sympy.Le(UB_SIZE * 4, UB_SIZE), "the tiles do not fit in UB")
    required = evaluate_case(CaseRef(0, "t", spec), ENV)
    assert not required.fits and required.reason == "the tiles do not fit in UB"


def test_block_dim_must_lie_in_one_to_core_num():
    spec = TilingSpec()
    spec.block_dim = CORE_NUM + 1
    dropped = evaluate_case(CaseRef(0, "t", spec), ENV)
    assert not dropped.fits and "block_dim 9 outside [1, core_num]" in dropped.reason


@pytest.mark.parametrize("name", ["a-b", "1st", "_x", "", "x y"])
def test_field_names_are_identifier_text(name):
    with pytest.raises(ValueError, match="tiling field name"):
        TilingSpec().add(name, 1)


def one_stage_case(spec: TilingSpec, tile_axis: str | None) -> Case:
    graph = index_select_sum()
    rows = sympy.Symbol("K")
    axes = [ImplAxis("R", "MERGED", rows, ())]
    if tile_axis is None:
        axes += [
            ImplAxis("RB", "BLOCK_OUT", field("used_cores"), ("R",)),
            ImplAxis("Rb", "BLOCK_IN", CeilDiv(rows, CORE_NUM), ("R",)),
        ]
    else:
        axes += [
            ImplAxis(tile_axis, "TILE_OUT", CeilDiv(rows, 4), ("R",)),
            ImplAxis("Rt", "TILE_IN", 4, ("R",)),
            ImplAxis("RTB", "BLOCK_OUT", field("used_cores"), (tile_axis,)),
            ImplAxis("RTb", "BLOCK_IN", 1, (tile_axis,)),
        ]
    impl = ImplGraph(graph.name, "t", stages=[Stage("only", axes)])
    case = Case("t", "default", graph, impl, spec)
    case.tiling_key = 0
    return case


def kernel_of(case: Case) -> str:
    return case_function(case, ["N", "H", "K"], [], {}, {}, set())


def test_a_stage_needs_its_used_cores_field():
    with pytest.raises(CodegenError, match="has no tiling field 'used_cores'"):
        kernel_of(one_stage_case(TilingSpec(), None))


@pytest.mark.parametrize("axis", ["t", "int", "a-b", "blockIdx", "OT", "O_T", "afxOT"])
def test_loop_variables_are_prefixed_whatever_the_axis_name(axis):
    spec = TilingSpec()
    spec.add("used_cores", CeilDiv(sympy.Symbol("K"), 4))
    code = kernel_of(one_stage_case(spec, axis))
    c = loop_variable(axis)
    assert c.startswith("af_") and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", c)
    assert f"for (int64_t {c} = {c}_begin; {c} < {c}_end; ++{c}) {{" in code
    assert f"const int64_t {c}_actual = AfMin(4, t.K - {c}_start);" in code
    assert "if (blockIdx < t.c0_used_cores) {" in code


def test_without_a_tile_loop_the_share_is_the_loop():
    spec = TilingSpec()
    spec.add("per_core", CeilDiv(sympy.Symbol("K"), CORE_NUM))
    spec.add("used_cores", CeilDiv(sympy.Symbol("K"), field("per_core")))
    case = one_stage_case(spec, None)
    case.impl.stages[0].axes[2] = ImplAxis("Rb", "BLOCK_IN", field("per_core"), ("R",))
    code = kernel_of(case)
    assert "const int64_t af_Rb_start = blockIdx * t.c0_per_core;" in code
    assert "const int64_t af_Rb_actual = AfMin(t.c0_per_core, t.K - af_Rb_start);" in code
    assert "for (" not in code


def test_kernel_formulas_see_sizes_fields_and_loop_symbols_only():
    spec = TilingSpec()
    spec.add("used_cores", 1)
    with pytest.raises(CodegenError, match="symbol 'core_num' is neither a size, a tiling field nor a loop"):
        kernel_of(one_stage_case(spec, None))  # its BLOCK_IN size uses core_num directly


def test_loop_variable_names_are_distinct_for_distinct_axes():
    names = ["t", "T", "OT", "O_T", "O-T", "afxOT", "int", "a_b", "a-b", "x1", "x_1", "Rb", "R_b"]
    assert len({loop_variable(n) for n in names}) == len(names)
    assert loop_variable("OT") == "af_OT" and loop_variable("t") == "af_t"


def test_a_node_in_a_loop_the_stage_lacks_is_refused():
    from af_core.schedule.impl_graph import ImplNode

    spec = TilingSpec()
    spec.add("used_cores", CeilDiv(sympy.Symbol("K"), 4))
    case = one_stage_case(spec, "RT")
    case.impl.stages[0].nodes.append(ImplNode("lost", "Relu", None, loop_axis="Rt"))  # TILE_IN is no loop
    with pytest.raises(
        CodegenError, match=r"nodes \['lost'\] of stage 'only' sit in loops the stage does not have"
    ):
        kernel_of(case)
