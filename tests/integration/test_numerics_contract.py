"""One numerics contract on every template, and the formerly illegal op/dtype pairs on the twin.

Each graph is forced onto SIMD, SK-like and SIMT in turn and compared with the
reference interpreter (integer outputs bitwise). The twin static_asserts the
3510 dtype table, so a kernel that compiles here emits only calls the official
implementation accepts.
"""

from __future__ import annotations

import numpy as np
import pytest

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.builders import GraphBuilder, gather
from af_core.errors import ScheduleError
from af_core.testing import chain_graph
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin
TEMPLATES = ("simd", "sklike", "simt")
SIZES = {"a0": 6, "a1": 64, "b0": 4, "b1": 64}


def _arrays(x: np.ndarray, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x": x, "index": rng.integers(0, SIZES["a0"], size=(SIZES["b0"], SIZES["b1"])).astype(np.int32)}


def _run(graph, template: str, arrays: dict[str, np.ndarray], sizes=SIZES, core_num: int = 3):
    s = TwinSession(graph, AutofuserOptions(force_template=template))
    run = s.check(sizes, inputs=s.inputs(sizes, arrays=arrays), core_num=core_num)
    assert run.template.startswith(template), run.template
    assert run.ok, run.describe()
    return run


@pytest.mark.parametrize("template", TEMPLATES)
def test_exp2_then_cast_to_int32_is_exact_on_every_template(template):
    graph = chain_graph(rank=2, dim=0, dtype="float32", post=("Exp2", "Cast(int32)"))
    rng = np.random.default_rng(5)
    # integer exponents (2^15 = 32768 was 32767 on the vector path) and fractions, incl. negative ones
    x = rng.integers(-4, 31, size=(SIZES["a0"], SIZES["a1"])).astype(np.float32)
    x[::2, ::3] += np.float32(0.5)
    run = _run(graph, template, _arrays(x))
    y = run.reference["y"]
    assert (y == np.trunc(np.exp2(x[run.inputs.logical["index"], np.arange(SIZES["b1"])]))).all()
    assert 32768 in y


@pytest.mark.parametrize("template", TEMPLATES)
def test_half_muls_by_65536_uses_a_float32_scalar_on_every_template(template):
    graph = chain_graph(rank=2, dim=0, dtype="float16", post=("Muls(65536)", "Adds(0.1)"))
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((SIZES["a0"], SIZES["a1"])) * 0.1).astype(np.float16)
    run = _run(graph, template, _arrays(x))
    assert np.isfinite(run.twin.outputs["y"].astype(np.float32)).all()


@pytest.mark.parametrize("template", TEMPLATES)
def test_half_exp2_of_integers_is_exact(template):
    graph = chain_graph(rank=2, dim=0, dtype="float16", post=("Exp2",))
    x = np.tile(np.arange(-14, 16, dtype=np.float16), (SIZES["a0"], 3))[:, : SIZES["a1"]]
    run = _run(graph, template, _arrays(x))
    got = run.twin.outputs["y"].astype(np.float32)
    index = run.inputs.logical["index"]
    expected = np.exp2(x[index, np.arange(SIZES["b1"])].astype(np.float32))
    assert (got == expected).all()


# ---------------------------------------------------------------------------
# The op/dtype pairs the 3510 implementation rejects now take legal forms on the vector paths.

LEGALIZED = {
    "bf16_math": ("bfloat16", ("Abs", "Sqrt", "Rsqrt", "Exp", "Log", "Relu", "Div(side)"), None),
    "int8_mul": ("int8", ("Mul(side)", "Muls(3)", "Relu", "Neg", "Adds(300)"), ("Sum", (2,))),
    "uint8_mul": ("uint8", ("Mul(side)", "Muls(201)"), ("Sum", (2,))),
    "int16_relu": ("int16", ("Relu", "Muls(300)"), ("Sum", (2,))),
    "uint16_scalar": (
        "uint16",
        ("Adds(40000)", "Muls(3)", "Maxs(7)", "Mins(60000)", "Subs(5)"),
        ("Sum", (2,)),
    ),
    "uint32_scalar": ("uint32", ("Adds(4000000000)", "Muls(3)", "Maxs(7)", "Mins(3000000000)"), None),
    "int8_max": ("int8", (), ("Max", (2,))),
    "int8_min": ("int8", (), ("Min", (2,))),
    "uint8_max": ("uint8", (), ("Max", (2,))),
    "uint8_min": ("uint8", (), ("Min", (2,))),
}
SIZES3 = {"a0": 5, "a1": 3, "a2": 64, "b0": 5, "b1": 4, "b2": 64}


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("case", sorted(LEGALIZED))
def test_formerly_illegal_pairs_run_legally_and_match_the_reference(case, template):
    dtype, post, reduce = LEGALIZED[case]
    graph = chain_graph(rank=3, dim=1, dtype=dtype, post=post, reduce=reduce)
    s = TwinSession(graph, AutofuserOptions(force_template=template))
    run = s.check(SIZES3, seed=sum(map(ord, case)), core_num=4)
    assert run.template.startswith(template), run.template
    assert run.ok, run.describe()


def test_no_legal_vector_form_is_rejected_with_a_reason_and_simt_keeps_it():
    g = GraphBuilder("f32_to_u8")
    x = g.data("x", ["a0", "a1"], "float32")
    idx = g.data("index", ["b0", "b1"], "int32")
    g.output(g.cast(gather(x, 0, idx), "uint8"), "y")
    graph = g.build()
    for template in ("simd", "sklike"):
        with pytest.raises(ScheduleError, match="no legal vector form: Cast float32 -> uint8"):
            Autofuser(AutofuserOptions(force_template=template)).schedule(graph)
    x_values = np.random.default_rng(9).uniform(0, 250, size=(SIZES["a0"], SIZES["a1"])).astype(np.float32)
    s = TwinSession(graph)
    run = s.check(SIZES, inputs=s.inputs(SIZES, arrays=_arrays(x_values)), core_num=2)
    assert run.template.startswith("simt") and run.ok, run.describe()


@pytest.mark.filterwarnings("ignore:invalid value encountered in subtract")  # inf - inf in the error summary
@pytest.mark.parametrize("target", ["float16", "bfloat16"])
def test_int32_to_half_types_round_once_through_float32(target):
    graph = chain_graph(rank=2, dim=0, dtype="int32", post=(f"Cast({target})",))
    rng = np.random.default_rng(11)
    x = rng.integers(-(2**31), 2**31 - 1, size=(SIZES["a0"], SIZES["a1"]), dtype=np.int64)
    x[:3] //= 1 << rng.integers(0, 31, size=(3, SIZES["a1"]))  # small magnitudes too (exact, 2049-style ties)
    run = _run(graph, "simd", _arrays(x.astype(np.int32)))
    got, expected = (np.asarray(v, dtype=np.float64) for v in (run.twin.outputs["y"], run.reference["y"]))
    assert np.array_equal(got, expected, equal_nan=True)  # bitwise, not only within tolerance


def test_integer_mean_has_no_vector_form():
    graph = chain_graph(rank=3, dim=1, dtype="int32", reduce=("Mean", (2,)))
    for template in ("simd", "sklike"):
        with pytest.raises(ScheduleError, match="integer Mean floor-divides"):
            Autofuser(AutofuserOptions(force_template=template)).schedule(graph)
