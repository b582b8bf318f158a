"""The legal 3510 vector forms: every call a form implies is in the dtype table."""

from __future__ import annotations

import pytest
from af_v35_regbase import api_dtypes as tab
from af_v35_regbase.api_calls import legalize as lg
from af_v35_regbase.api_calls.vector import VecElementwiseRegApiCall, scalar_literal

from af_core import dtypes as dt
from af_core.errors import CodegenError

DATA = [d for d in dt.ALL if not d.is_bool]
OPS = sorted(set(lg.UNARY) | set(lg.BINARY) | set(lg.TENSOR_SCALAR) | lg.COMPOSITE)


def _calls(op: str, form: lg.Form, dtype: dt.DType) -> list[tuple[str, dt.DType]]:
    """The (API, element type) pairs a form emits (Cast steps checked separately)."""
    if form.kind == "direct":
        return [(form.api, dtype)]
    if form.kind == "promote":
        return [(form.api, dt.float32)]
    if form.kind == "widen":
        return [(form.api, dt.int16), ("Ands", dt.int16)]
    if form.kind == "reinterpret":
        return [(form.api, form.compute)]
    if form.kind == "splat":
        return [("Duplicate", dtype), (form.api, dtype)]
    if form.kind == "relu_maxs":
        return [("Maxs", dtype)]
    if form.kind == "composite":
        apis = ["Muls", "Exp", "Adds", "Reciprocal"] if op == "Sigmoid" else ["Sub", "Muls", "Exp", "Mul"]
        calls = [(a, dt.float32) for a in apis]
        if op == "Exp2":
            calls += [("Maxs", dt.int32), ("Mins", dt.int32), ("Adds", dt.int32), ("Muls", dt.int32)]
        return calls
    raise AssertionError(form.kind)


@pytest.mark.parametrize("op", OPS)
def test_every_legal_form_only_uses_accepted_types(op):
    for dtype in DATA:
        form = lg.op_form(op, (dtype,) * 2, dtype)
        if not form.legal:
            assert form.reason, (op, dtype)
            continue
        for api, t in _calls(op, form, dtype):
            assert tab.accepts(api, t), (op, dtype, form, api, t)
        if form.kind in ("promote", "widen"):
            casts = {
                ("promote"): [(dt.float32, dtype, "CAST_NONE"), (dtype, dt.float32, "CAST_RINT")],
                ("widen"): [
                    (dt.int16, dt.int8, "CAST_NONE"),
                    (dt.uint16, dt.uint8, "CAST_NONE"),
                    (dt.uint8, dt.int16, "CAST_NONE"),
                ],
            }[form.kind]
            for dst, src, mode in casts:
                assert mode in tab.cast_modes(dst, src), (op, dtype, dst, src, mode)


def test_reinterpret_and_bits_forms_name_the_lane_dtype():
    """Codegen reads ``Form.lane`` for these kinds: every legal one names its compute dtype, and a
    form without one is a CodegenError, not a None passed on into the generated text."""
    seen = set()
    for op in [*OPS, *sorted(lg.BITWISE), *sorted(lg.LOGICAL)]:
        for dtype in [*DATA, dt.bool_]:
            form = lg.op_form(op, (dtype,) * 2, dtype)
            if form.legal and form.kind in ("reinterpret", "bits"):
                assert form.lane is form.compute and form.lane is not None, (op, dtype)
                seen.add(form.kind)
    assert seen == {"reinterpret", "bits"}
    with pytest.raises(CodegenError, match="the bits form of And names no compute dtype"):
        _ = lg.Form("bits", "And").lane


def test_the_issue_pairs_take_legal_wider_forms():
    pairs = {
        ("Div", "bfloat16"): "promote",
        ("Mul", "int8"): "widen",
        ("Mul", "uint8"): "widen",
        ("Relu", "int8"): "relu_maxs",
        ("Relu", "int16"): "relu_maxs",
        ("Relu", "bfloat16"): "promote",
        ("Adds", "uint16"): "reinterpret",
        ("Muls", "uint32"): "reinterpret",
        ("Maxs", "uint16"): "splat",
        ("Mins", "uint32"): "splat",
        ("Muls", "int8"): "widen",
        ("Muls", "uint8"): "widen",
    }
    pairs.update({(op, "bfloat16"): "promote" for op in ("Exp", "Log", "Sqrt", "Rsqrt", "Abs")})
    for (op, name), kind in pairs.items():
        d = dt.get(name)
        assert lg.op_form(op, (d, d), d).kind == kind, (op, name)


def test_half_adds_and_muls_compute_in_float32():
    for op in ("Adds", "Subs", "Muls"):
        for name in ("float16", "bfloat16"):
            d = dt.get(name)
            form = lg.op_form(op, (d,), d)
            assert (form.kind, form.compute, form.scratch) == ("promote", dt.float32, (dt.float32,))
    assert VecElementwiseRegApiCall.scratch_dtypes("Exp2", (dt.float16,), dt.float16) == (
        dt.float32,
        dt.float32,
        dt.int32,
    )


@pytest.mark.parametrize("src", DATA, ids=lambda d: d.name)
def test_cast_routes_use_legal_steps_and_round_once(src):
    for dst in DATA:
        if dst == src:
            continue
        route = lg.cast_route(src, dst)
        if route is None:
            assert "no chain" in VecElementwiseRegApiCall.rejection("Cast", (src,), dst)
            continue
        assert route[0][1] == src and route[-1][0] == dst
        for i, (to, frm, mode) in enumerate(route):
            if mode == "VIEW":
                assert frm.is_int and to.is_int and frm.itemsize == to.itemsize
            else:
                assert mode in tab.cast_modes(to, frm), (src, dst, route)
            if i:
                assert route[i - 1][0] == frm
        steps = [s for s in route if s[2] != "VIEW"]
        if src.is_float and dst.is_int:
            assert steps[-1][2] == "CAST_TRUNC"
        if src.is_float and dst.is_float and dst.itemsize < src.itemsize:
            assert steps[-1][2] == "CAST_RINT"


def test_cast_routes_wrap_integers_and_avoid_the_dequantising_int32_to_half():
    assert [(s[1].name, s[0].name, s[2]) for s in lg.cast_route(dt.int8, dt.uint32)] == [
        ("int8", "int32", "CAST_NONE"),
        ("int32", "uint32", "VIEW"),
    ]
    assert [(s[1].name, s[0].name, s[2]) for s in lg.cast_route(dt.int32, dt.float16)] == [
        ("int32", "float32", "CAST_RINT"),
        ("float32", "float16", "CAST_RINT"),
    ]
    assert "bit masks" in VecElementwiseRegApiCall.rejection("Cast", (dt.bool_,), dt.int32)


def test_scalar_literals_wrap_like_the_reference():
    assert scalar_literal(300, dt.int8) == "static_cast<int8_t>(44)"
    assert scalar_literal(-5, dt.uint16) == "static_cast<uint16_t>(65531)"
    assert scalar_literal(-128, dt.int8) == "static_cast<int8_t>(-127 - 1)"
    assert scalar_literal(65536.0, dt.float16) == "static_cast<half>(65536.0)"


# -- Rounding, reciprocal, bitwise, logical and scalar-comparison ops -------------------------------------


def test_floor_ceil_round_are_truncate_where_the_table_accepts_it():
    for op, mode in lg.TRUNCATE.items():
        assert mode in tab.TRUNCATE_MODES
        for d in DATA:
            form = lg.op_form(op, (d,), d)
            if tab.accepts("Truncate", d):
                assert (form.kind, form.api, form.scratch) == ("direct", "Truncate", ()), (op, d)
            else:
                assert not form.legal and "Truncate" in form.reason and op in form.reason, (op, d)
    assert {d.name for d in DATA if tab.accepts("Truncate", d)} == {"float16", "float32", "bfloat16"}


def test_float_to_int32_ops_are_one_cast_with_their_rounding():
    for op, mode in lg.TO_INT32.items():
        for d in DATA:
            form = lg.op_form(op, (d,), dt.int32)
            if d.is_float:
                assert mode in tab.cast_modes(dt.int32, d)
                assert (form.kind, form.steps, form.scratch) == ("cast", ((dt.int32, d, mode),), ()), (op, d)
            else:
                assert not form.legal and op in form.reason


def test_reciprocal_rounds_once_through_float32():
    for name in ("float16", "bfloat16"):
        d = dt.get(name)
        assert tab.accepts("Reciprocal", dt.float32)
        form = lg.op_form("Reciprocal", (d,), d)
        assert (form.kind, form.api, form.compute, form.scratch) == (
            "promote",
            "Reciprocal",
            dt.float32,
            (dt.float32,),
        )
    assert lg.op_form("Reciprocal", (dt.float32,), dt.float32).kind == "direct"
    assert lg.op_form("Reciprocal", (dt.int64,), dt.int64).reason == "Reciprocal is a float op"


def test_bit_ops_use_views_the_table_accepts():
    for ops, view, data in (
        (lg.BITWISE, dt.int16, [d for d in DATA if d.is_int]),
        (lg.LOGICAL, dt.uint16, [dt.bool_]),
    ):
        for op, api in ops.items():
            for d in data:
                form = lg.op_form(op, (d, d), d)
                assert (form.kind, form.api, form.compute) == ("bits", api, view), (op, d)
                for call in lg.BIT_APIS[api]:
                    assert tab.accepts(call, view), (op, call, view)
            wrong = dt.float32 if ops is lg.BITWISE else dt.int16
            assert not lg.op_form(op, (wrong, wrong), wrong).legal


def test_scalar_comparisons_are_compares_on_the_data_type():
    for op in lg.COMPARE_SCALAR:
        for d in DATA:
            form = lg.op_form(op, (d,), dt.bool_)
            assert form.legal == tab.accepts("Compares", d), (op, d)
            if form.legal:
                assert (form.kind, form.api) == ("direct", "Compares")
        assert "uint8" in tab.BY_API["Compares"].masks  # the bool tiles are uint8 bit masks
        assert not lg.op_form(op, (dt.bool_,), dt.bool_).legal


def test_ops_without_vector_form_are_rejected_with_the_op_named():
    for op in ("Log2", "Tanh", "Erf", "Sign", "Pow", "LShift", "RShift"):
        assert not VecElementwiseRegApiCall.supports(op)
        reason = VecElementwiseRegApiCall.rejection(op, (dt.float32, dt.float32), dt.float32)
        assert reason.startswith(f"op {op} has no vector form: ") and op in reason.split(": ", 1)[1]
