"""The register-form table (``vf_chain.REGISTER_FORMS``) is the one place that decides both whether an op of a
memory-path form kind joins a vector function (``VfChainRegApiCall.rejection``) and what code computes it
there (``build._value``): removing a kind's row must make both refuse the ops that kind served, so the
legality and the code generation cannot drift apart."""

from __future__ import annotations

import pytest
from af_v35_regbase.api_calls import vf_chain
from af_v35_regbase.api_calls.legalize import op_form
from af_v35_regbase.api_calls.vf_chain import REGISTER_FORMS, FormKind, VfChainRegApiCall, _build, _Source

from af_core.schedule.chain_attrs import ChainStep
from af_core.schedule.impl_graph import ImplGraph, ImplNode, ImplTensor
from af_core.template_api import CodegenError
from af_core.template_api import dtypes as dt

#: one op each row serves: (kind, op, input dtypes, output dtype, scalar operand or None, an instruction its
#: register code writes); 64-bit ops too where the row has a 64-bit form (``wide``)
SERVED = [
    (FormKind.DIRECT, "Add", ("float32", "float32"), "float32", None, "AscendC::Reg::Add("),
    (FormKind.DIRECT, "Add", ("int64", "int64"), "int64", None, "AscendC::Reg::Add("),
    (FormKind.PROMOTE, "Adds", ("float16",), "float16", 2.0, "AscendC::Reg::Adds("),
    (FormKind.BITS, "BitwiseAnd", ("int16", "int16"), "int16", None, "AscendC::Reg::And("),
    (FormKind.BITS, "BitwiseXor", ("int64", "int64"), "int64", None, "AscendC::Reg::Xor("),
    (FormKind.REINTERPRET, "Adds", ("uint16",), "uint16", 3.0, "AscendC::Reg::Adds("),
    (FormKind.SPLAT, "Maxs", ("uint32",), "uint32", 3.0, "AscendC::Reg::Maxs("),
    (FormKind.WIDEN, "Neg", ("int8",), "int8", None, "AscendC::Reg::Neg("),
    (FormKind.WIDEN, "Mul", ("int8", "int8"), "int8", None, "AscendC::Reg::Mul("),
    (FormKind.RELU_MAXS, "Relu", ("int8",), "int8", None, "AscendC::Reg::Maxs("),
    (FormKind.CAST, "Cast", ("float16",), "float32", None, "AscendC::Reg::Cast<float, half"),
    (FormKind.CAST, "Cast", ("int32",), "int64", None, "DIST_INTLV_B32"),
    (FormKind.COMPOSITE, "Sigmoid", ("float32",), "float32", None, "AscendC::Reg::Exp("),
]


@pytest.fixture(autouse=True)
def _fresh_run_facts():
    """Drop the cached per-op run facts around each test: they read the table, which tests here patch."""
    vf_chain._run_facts.cache_clear()
    vf_chain._route_modes.cache_clear()
    yield
    vf_chain._run_facts.cache_clear()
    vf_chain._route_modes.cache_clear()


def _function_text(op: str, ins: tuple[str, ...], out: str, value: float | None) -> str:
    """The vector function of a run of ``op`` alone, as code generation builds it (definitions dropped)."""
    impl = ImplGraph("g", "t")
    names = [f"x{i}" for i in range(len(ins))]
    for name, d in [*zip(names, ins), ("y", out)]:
        impl.add_tensor(ImplTensor(name, dt.get(d), "UB", buffer=name))
    step = ChainStep(name="s0", op=op, inputs=names, output="y", value=value)
    node = ImplNode(
        "chain",
        "VectorChain",
        VfChainRegApiCall.name,
        tuple(names),
        ("y",),
        loop_axis="OT",
        attrs={"count": 300, "steps": [step]},
    )
    return _build(_Source(node, impl, lambda *_: None), [step]).text()


def test_every_kind_with_a_row_has_a_served_op_here_and_reject_has_none():
    assert {kind for kind, *_ in SERVED} == set(REGISTER_FORMS)
    assert set(FormKind) - set(REGISTER_FORMS) == {FormKind.REJECT}


@pytest.mark.parametrize(("kind", "op", "ins", "out", "value", "written"), SERVED)
def test_a_row_serves_its_op_in_both_trees(kind, op, ins, out, value, written):
    assert op_form(op, tuple(dt.get(d) for d in ins), dt.get(out)).kind == kind.value
    assert VfChainRegApiCall.rejection(op, ins, out) is None
    assert written in _function_text(op, ins, out, value)


@pytest.mark.parametrize(("kind", "op", "ins", "out", "value", "written"), SERVED)
def test_removing_a_row_refuses_its_op_in_both_trees(monkeypatch, kind, op, ins, out, value, written):
    monkeypatch.delitem(vf_chain.REGISTER_FORMS, kind)
    reason = VfChainRegApiCall.rejection(op, ins, out)
    assert isinstance(reason, str) and reason
    with pytest.raises(CodegenError, match=rf"step {op} \({kind.value}\) has no register form"):
        _function_text(op, ins, out, value)


def test_removing_a_row_leaves_the_other_kinds_alone(monkeypatch):
    monkeypatch.delitem(vf_chain.REGISTER_FORMS, FormKind.COMPOSITE)
    for kind, op, ins, out, value, written in SERVED:
        if kind is not FormKind.COMPOSITE:
            assert VfChainRegApiCall.rejection(op, ins, out) is None
            assert written in _function_text(op, ins, out, value)
