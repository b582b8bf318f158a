"""Register instructions and cycles: the cost model's prediction against the twin's count.

Differential: each SIMD / SK-like case predicts ``reg_instructions`` and ``reg_cycles`` (resource
formulas of its tiling spec, from ``VfChainRegApiCall.predicted_counters`` summed over its tiles) and
the twin counts the same quantities while it runs the case (``reg_loads + reg_stores + reg_compute +
reg_masks`` and ``reg_cycles``). Both come from the instructions the vector functions really issue, at
the documented throughput (af_v35_regbase.reg_cost), so they must be equal -- exactly, for every
dtype, for runs mixing 2- and 4-byte values, for 64-bit runs, for mask registers, for bitwise runs, for
a run ending in a register reduce (over a kept inner width: block-masked tail rows; over the innermost
axis: Reg::Reduce and first-element stores; groups not known to start on 32-byte blocks: LoadUnAlignPre /
LoadUnAlign), for the tile gather in registers, and with tail tiles and
tail vector steps. A SIMT case issues no register instruction and predicts none.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from af_core.autofuser import Autofuser
from af_core.schedule.cost import counted_cost, twin_counters
from af_core.schedule.time_model import PS_PER_NS, core_cycles, estimate
from af_core.testing import chain_graph
from af_core.tiling.solve import CaseRef, solve, solve_scheduled
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin
CORES = 4
# rows are not a multiple of the cores, the rows not a multiple of 64 or 128 elements: tail tiles and steps
SIZES = {"a0": 37, "a1": 70, "b0": 29, "b1": 70}
REG = ("reg_instructions", "reg_cycles")


def _compare(graph, sizes=SIZES, seed: int = 3) -> dict[str, tuple[dict, dict]]:
    """{case label: (predicted, measured)} of every case that fits, each run and checked on the twin."""
    session = TwinSession(graph)
    inputs = session.inputs(sizes, seed=seed)
    sch = session.scheduled
    refs = [CaseRef.of(c) for c in sch.cases]
    evs = solve(refs, sch.size_names, inputs.sizes, CORES, sch.platform.ub_size, sch.guards).evaluations
    out = {}
    for case, ev in zip(sch.cases, evs):
        if not ev.fits or case.template not in ("simd", "sklike", "simt"):
            continue
        run = session.check(inputs=inputs, core_num=CORES, tiling_key=case.tiling_key)
        assert run.ok, run.describe()
        measured = twin_counters(run.twin.counters)
        out[case.label] = ({n: ev.resources[n] for n in REG}, {n: measured[n] for n in REG})
    return out


GRAPHS = {
    "float32 post chain": dict(rank=2, dim=0, post=("Exp", "Add(side)", "Relu")),
    "float32 pre / index / post chains": dict(
        rank=2, dim=0, pre=("Mul(0.5)", "Exp"), index_pre=("Abs",), post=("Abs", "Sub(side)", "Relu")
    ),
    "float16 Sigmoid next to Abs": dict(rank=2, dim=0, dtype="float16", post=("Sigmoid", "Abs", "Relu")),
    "bfloat16 Neg in float32, mixed 2/4-byte run": dict(
        rank=2, dim=0, dtype="bfloat16", pre=("Neg", "Abs"), post=("Mul(side)", "Cast(float32)", "Exp")
    ),
    "float16 Truncates": dict(
        rank=2, dim=0, dtype="float16", pre=("Floor",), post=("Mul(3.7)", "Round", "Ceil")
    ),
    "float32 Reciprocal / Rsqrt": dict(rank=2, dim=0, pre=("Abs", "Add(0.5)", "Rsqrt"), post=("Reciprocal",)),
    "int32 data": dict(rank=2, dim=0, dtype="int32", post=("Abs", "Mul(3)", "Maximum(side)")),
    "int64 index clamp": dict(rank=2, dim=0, index_dtype="int64", index_pre=("Minimum(5)", "Maximum(0)")),
    "float32 chain before a reduce": dict(rank=3, dim=1, post=("Sigmoid",), reduce=("Sum", (2,))),
}


def _sizes(spec: dict) -> dict[str, int]:
    if spec["rank"] == 3:
        return {"a0": 7, "a1": 40, "a2": 33, "b0": 7, "b1": 10, "b2": 33}
    return SIZES


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_simd_and_sklike_predict_the_twins_register_counts_exactly(name):
    spec = GRAPHS[name]
    cases = _compare(chain_graph(name="reg_cycles", **spec), _sizes(spec))
    assert {"simd/db", "sklike"} <= set(cases), sorted(cases)
    for label, (predicted, measured) in sorted(cases.items()):
        assert predicted == measured, (name, label, predicted, measured)
        if label.startswith(("simd", "sklike")) or (label == "simt" and "reduce" in spec):
            # SIMT's UB reduce finishes its tiles with the register chain
            assert measured["reg_cycles"] > 0, (name, label)
        else:  # SIMT computes its chains in lanes: no register instruction
            assert measured == {"reg_instructions": 0, "reg_cycles": 0}, (name, label)


def test_masked_selects_predict_the_twins_register_counts_exactly():
    """Compare / Compares into mask registers and Where as Select (one element size, 2-byte data)."""
    from af_core.builders import GraphBuilder, gather

    g = GraphBuilder("masked")
    x = g.data("x", ["a0", "a1"], "float16")
    y = gather(x, 0, g.data("index", ["b0", "b1"], "int32"))
    ids = g.data("ids", ["b0", "b1"], "int16")
    zero = g.data("zero", ["b0", "b1"], "float16")
    y = g.op("Where", g.op("Nes", ids, value=-1), y, zero)
    y = g.op("Where", g.op("Gts", y, value=0.5), y, zero)
    g.output(y, "y")
    cases = _compare(g.build())
    assert {"simd/db", "sklike"} <= set(cases), sorted(cases)
    for label, (predicted, measured) in cases.items():
        assert predicted == measured, (label, predicted, measured)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.integers(1, 60),
    width=st.integers(1, 150),
    dtype=st.sampled_from(["float32", "float16", "bfloat16"]),
)
def test_any_shape_predicts_the_twins_register_counts_exactly(rows, width, dtype):
    graph = chain_graph(rank=2, dim=0, dtype=dtype, post=("Abs", "Add(side)", "Exp"), name=f"reg_any_{dtype}")
    cases = _compare(graph, {"a0": rows + 3, "a1": width, "b0": rows, "b1": width}, seed=rows)
    for label, (predicted, measured) in cases.items():
        assert predicted == measured, (label, rows, width, predicted, measured)


def _reduce_graph(dtype: str, kind: str, axis: int, n: int = 37, d: int = 72, b: int = 29):
    """y = reduce(kind, Abs(gather(x, 0, index)) - side, axis), x [n, d], index [b, d]: over axis 0 a kept
    inner width of d (72: a full vector and an 8-lane tail), over axis 1 groups of d."""
    from af_core.builders import GraphBuilder, gather

    g = GraphBuilder(f"reg_cycles_red_{dtype}_{kind}_{axis}_{d}")
    x = g.data("x", [n, d], dtype)
    y = gather(x, 0, g.data("index", [b, d], "int32"))
    y = g.op("Sub", g.op("Abs", y), g.data("side", [b, d], dtype))
    g.output(g.reduce(kind, y, [axis]), "y")
    return g.build()


def _assert_exact(cases: dict[str, tuple[dict, dict]], what: str) -> None:
    assert {"simd/db", "sklike"} <= set(cases), (what, sorted(cases))
    for label, (predicted, measured) in sorted(cases.items()):
        assert predicted == measured, (what, label, predicted, measured)
        if label.startswith(("simd", "sklike")):
            assert measured["reg_cycles"] > 0, (what, label)


@pytest.mark.parametrize(
    ("dtype", "kind", "axis"),
    [
        ("float32", "Sum", 0),
        ("float32", "Mean", 0),
        ("int32", "Max", 0),
        ("float32", "Sum", 1),
        ("float32", "Mean", 1),
        ("int32", "Min", 1),
    ],
)
def test_a_run_ending_in_a_register_reduce_predicts_the_twins_register_counts_exactly(dtype, kind, axis):
    """Over axis 0 the group rows (29) are folded over a kept inner width of 72 (a contiguous and a
    block-masked load per row); over axis 1 each group of 72 is accumulated lane-wise (a tail vector), folded
    by Reg::Reduce and stored as a first element. The kernels do reduce in registers."""
    session = TwinSession(_reduce_graph(dtype, kind, axis))
    kernel = session.result.kernel
    assert "DataCopyMode::DATA_BLOCK_COPY" in kernel
    if axis == 1:
        assert "AscendC::Reg::Reduce<" in kernel and "DIST_FIRST_ELEMENT_B32" in kernel
    _assert_exact(_compare(_reduce_graph(dtype, kind, axis), {}), (dtype, kind, axis))


@pytest.mark.parametrize(
    ("dtype", "kind", "axis", "d"),
    [
        ("float32", "Sum", 0, 20),
        ("int32", "Max", 0, 20),
        ("float32", "Mean", 1, 20),
        ("float32", "Sum", 1, 70),
        ("int32", "Min", 1, 131),
    ],
)
def test_a_register_reduce_over_unaligned_groups_predicts_the_twins_register_counts_exactly(
    dtype, kind, axis, d
):
    """Widths that do not fill 32-byte blocks: the SIMD case loads the group rows (axis 0) or the groups of a
    tile row (axis 1) with LoadUnAlignPre / LoadUnAlign; SK-like (one group per tile row over axis 1) keeps
    aligned loads. Predicted register instructions and cycles equal the twin's."""
    graph = _reduce_graph(dtype, kind, axis, d=d)
    assert "AscendC::Reg::LoadUnAlign(" in TwinSession(graph).result.kernel
    _assert_exact(_compare(graph, {}), (dtype, kind, axis, d))


@pytest.mark.parametrize("kind", ["Sum", "Max"])
def test_a_reduce_over_a_dynamic_width_predicts_the_twins_register_counts_exactly(kind):
    """A kept inner width b1 known only at run time (unaligned loads whatever its value): exact at widths that
    fill 32-byte blocks and at widths that do not."""
    graph = chain_graph(rank=2, dim=0, post=("Abs",), reduce=(kind, (0,)), name=f"reg_cycles_dyn_{kind}")
    assert "AscendC::Reg::LoadUnAlign(" in TwinSession(graph).result.kernel
    for width in (20, 64, 70):
        _assert_exact(_compare(graph, {"a0": 9, "a1": width, "b0": 11, "b1": width}), (kind, width))


def test_a_bitwise_run_predicts_the_twins_register_counts_exactly():
    graph = chain_graph(
        rank=2,
        dim=0,
        dtype="int16",
        post=("BitwiseAnd(side)", "BitwiseNot", "BitwiseXor(side)", "BitwiseOr(side)"),
        name="reg_cycles_bits",
    )
    assert "AscendC::Reg::Xor(" in TwinSession(graph).result.kernel
    _assert_exact(_compare(graph), "bitwise")


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("register", [True, False])
def test_the_tile_gather_predicts_the_twins_register_counts_exactly(dtype, register, monkeypatch):
    """A gather alone (no elementwise op): its register instructions are the gather function's (one step
    per 64 gathered elements) and the offsets function's, none with the memory-based Gather and offsets."""
    from af_v35_regbase.api_calls.indirect_load import IndirectLoadRegApiCall

    monkeypatch.setattr(IndirectLoadRegApiCall, "register_gather", register)
    monkeypatch.setattr(IndirectLoadRegApiCall, "register_offsets", register)
    graph = chain_graph(rank=2, dim=0, dtype=dtype, name=f"reg_cycles_gather_{dtype}_{register}")
    assert ("AscendC::Reg::Gather(" in TwinSession(graph).result.kernel) == register
    cases = _compare(graph)
    assert {"simd/db", "sklike"} <= set(cases), sorted(cases)
    for label, (predicted, measured) in sorted(cases.items()):
        assert predicted == measured, (dtype, register, label, predicted, measured)
        if not register or label == "simt":
            assert measured == {"reg_instructions": 0, "reg_cycles": 0}, (label, measured)
        else:
            assert measured["reg_cycles"] > 0, label


def test_the_register_cycles_are_in_the_core_term_of_the_estimated_time():
    """The time model counts register cycles in the busiest core's time: the modelled cost is the
    estimate of the predicted counters, the twin counts the same cycles, and more cycles give a larger
    core term."""
    graph = chain_graph(rank=2, dim=0, post=("Exp", "Add(side)", "Relu"), name="reg_cost")
    session = TwinSession(graph)
    inputs = session.inputs(SIZES, seed=3)
    sch = session.scheduled
    refs = [CaseRef.of(c) for c in sch.cases]
    evs = solve(refs, sch.size_names, inputs.sizes, CORES, sch.platform.ub_size, sch.guards).evaluations
    case, ev = next((c, e) for c, e in zip(sch.cases, evs) if c.label == "sklike")
    cycles = ev.resources["reg_cycles"]
    assert cycles > 0
    assert ev.cost == counted_cost(ev.resources, ev.block_dim)
    terms = estimate(ev.resources, ev.block_dim)
    assert terms.core == -(-core_cycles(ev.resources) * PS_PER_NS // ev.block_dim)
    assert estimate({**ev.resources, "reg_cycles": cycles + 10**6}, ev.block_dim).core > terms.core
    run = session.check(inputs=inputs, core_num=CORES, tiling_key=case.tiling_key)
    measured = twin_counters(run.twin.counters)
    assert measured["reg_cycles"] == cycles


def test_the_prediction_is_a_formula_of_the_sizes():
    """proto.json holds the formulas: the same case predicts at every shape without rescheduling."""
    scheduled = Autofuser().schedule(chain_graph(rank=2, dim=0, post=("Exp",), name="reg_formula"))
    sk = next(c for c in scheduled.cases if c.template == "sklike")
    formula = sk.tiling.resources["reg_cycles"]
    assert {"b1", "post_tile", "post_tiles", "post_rows"} <= {str(s) for s in formula.free_symbols}


def test_explain_shows_each_cases_counters_and_time_terms(tmp_path):
    import os
    import subprocess
    import sys

    from af_core.explain import COUNTER_HEADERS, explain
    from af_core.ir.serialize import to_json
    from af_core.schedule.cost import COUNTER_NAMES

    graph = chain_graph(rank=2, dim=0, post=("Relu", "Exp"), name="reg_explain")
    scheduled = Autofuser().schedule(graph)
    report = explain(scheduled, SIZES, CORES)
    rows = {r.case: r for r in report.counters}
    at = COUNTER_NAMES.index("reg_cycles")
    cycles = rows["sklike"].values[at]
    assert cycles > 0 and rows["simt"].values[at] == 0
    costs = {e.label: e.cost for e in solve_scheduled(scheduled, SIZES, core_num=CORES).evaluations}
    for label in ("sklike", "simt"):
        assert rows[label].terms is not None and rows[label].terms.total == costs[label], label
    assert "estimated ns" in report.markdown()
    # the command prints the same table
    path = tmp_path / "g.json"
    path.write_text(to_json(graph))
    shape = ",".join(f"{k}={v}" for k, v in SIZES.items())
    env = {"COLUMNS": "400", **os.environ}
    proc = subprocess.run(
        [sys.executable, "-m", "af_core", "explain", str(path), "--shape", shape, "--cores", str(CORES)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "predicted counters" in proc.stdout.lower()
    tables = [[c.strip() for c in line.split("│")[1:-1]] for line in proc.stdout.splitlines() if "│" in line]
    sklike = [cells for cells in tables if len(cells) == len(COUNTER_HEADERS) and cells[1] == "sklike"]
    assert sklike and sklike[0][2 + at] == str(cycles), proc.stdout
    assert sklike[0][-1] == rows["sklike"].terms.bound_by(), proc.stdout


# -- mask-register logic and Exp2 in registers -------------------------------------------------------------
def _logic_exp2_graph(dtype: str):
    """Where((|y| > s and not |y| < 0.5) xor |y| == s, Exp2(|y|), s): the four logical ops on mask registers
    (one cycle each) and Exp2's ten register instructions, float32 and int32 registers, in one run."""
    from af_core.builders import GraphBuilder, gather

    g = GraphBuilder(f"reg_cycles_logic_{dtype}")
    x = g.data("x", ["a0", "a1"], dtype)
    y = g.op("Abs", gather(x, 0, g.data("index", ["b0", "b1"], "int32")))
    s = g.data("s", ["b0", "b1"], dtype)
    e = g.op("Exp2", y)  # before the comparisons: a float16 run of masks holds 2-byte values only
    both = g.op("LogicalAnd", g.op("Gt", y, s), g.op("LogicalNot", g.op("Lts", y, value=0.5)))
    mask = g.op("LogicalOr", g.op("LogicalXor", both, g.op("Eq", y, s)), g.op("Gts", y, value=3.0))
    g.output(g.op("Where", mask, e, s), "y")
    return g.build()


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_mask_logic_and_exp2_predict_the_twins_register_counts_exactly(dtype):
    graph = _logic_exp2_graph(dtype)
    kernel = TwinSession(graph).result.kernel
    assert "AscendC::Reg::Xor(m" in kernel and "(AscendC::Reg::RegTensor<float>&)" in kernel
    _assert_exact(_compare(graph), ("logic / Exp2", dtype))


@pytest.mark.parametrize(
    ("dtype", "post", "text"),
    [
        (
            "uint16",
            ("Add(40000)", "Mul(3)", "Maximum(5)"),
            "AscendC::Reg::Muls(r2, r1, static_cast<uint16_t>(3)",
        ),
        ("int8", ("Neg", "Maximum(5)"), "AscendC::Reg::Neg(r1, r0, mask);"),
        ("float16", ("Ceil2Int", "Cast(uint32)", "Add(3)"), "(AscendC::Reg::RegTensor<uint32_t>&)"),
    ],
)
def test_unsigned_ops_int8_neg_and_cast_routes_predict_the_twins_register_counts_exactly(dtype, post, text):
    graph = chain_graph(rank=2, dim=0, dtype=dtype, post=post, name=f"reg_cycles_{dtype}")
    assert text in TwinSession(graph).result.kernel
    _assert_exact(_compare(graph), dtype)


@pytest.mark.parametrize("graph", ["arithmetic", "compare"])
@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_64bit_pair_sequences_predict_the_twins_register_counts_exactly(dtype, graph):
    """A run of 64-bit Add / Sub / Mul, Adds / Subs / Muls, bitwise ops and (int64) Neg / Abs / Relu, or of
    every Compare / Compares mode, mask logic and Select: each a register pair sequence of the 3510
    implementation (reg_cost.B64_SEQUENCES / B64_COMPARE / B64_SELECT, one cycle per computing call, the
    MaskPack / MaskUnPack and por / psel one each), predicted as the twin counts them, 32 elements a step."""
    from test_register_wide64 import compare_graph, wide_graph

    cases = _compare((wide_graph if graph == "arithmetic" else compare_graph)(dtype))
    # six 8-byte tiles and the int32 ones: at these sizes the SIMD case fits single-buffered
    assert {"simd/sb", "sklike"} <= set(cases), sorted(cases)
    for label, (predicted, measured) in cases.items():
        assert predicted == measured, (label, predicted, measured)
        if label.startswith(("simd", "sklike")):
            assert measured["reg_cycles"] > 0, label


@pytest.mark.parametrize(
    ("dtype", "post", "text"),
    [
        # int16 unpacked next to float32: Cast int16 -> float (32 / cycle), back to int16 (SAT, 32 / cycle)
        (
            "int16",
            ("Cast(float32)", "Mul(0.5)", "Cast(int16)"),
            "AscendC::Reg::Cast<float, int16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        ),
        # full 2-byte registers: half -> int16 (64 / cycle), int16 -> half (64 / cycle)
        ("float16", ("Cast(int16)", "Abs", "Cast(float16)"), "AscendC::Reg::Cast<int16_t, half,"),
        # the pairs table 10 has no row for: one cycle a vector
        ("uint32", ("Cast(uint16)", "Cast(uint32)"), "AscendC::Reg::Cast<uint32_t, uint16_t,"),
        ("float16", ("Cast(bfloat16)", "Cast(float16)"), "AscendC::Reg::Cast<bfloat16_t, half,"),
        # uint8 in the even byte lanes next to float16: DIST_UNPACK_B8 load, DIST_PACK_B16 store
        ("uint8", ("Cast(float16)", "Mul(0.5)", "Cast(uint8)"), "AscendC::Reg::Cast<uint8_t, half,"),
        # int8 / uint8 in every fourth byte lane next to 4-byte values: DIST_UNPACK4_B8 load (a quarter
        # vector, one cycle), the 1 -> 2-byte Cast under the 2-byte mask (its UpdateMask counts no cycle)
        ("int8", ("Cast(float32)", "Mul(0.5)"), "AscendC::Reg::LoadDist::DIST_UNPACK4_B8>"),
        ("uint8", ("Cast(int32)", "Add(3)"), "mask16 = AscendC::Reg::UpdateMask<uint16_t>(halves);"),
        # int32 narrowed to uint8: the low byte of each lane stored by DIST_PACK4_B32 (one store a step)
        ("int32", ("Abs", "Cast(uint8)"), "AscendC::Reg::StoreDist::DIST_PACK4_B32>"),
    ],
)
def test_two_byte_casts_predict_the_twins_register_counts_exactly(dtype, post, text):
    graph = chain_graph(rank=2, dim=0, dtype=dtype, post=post, name=f"reg_cycles_cast_{dtype}")
    kernel = TwinSession(graph).result.kernel
    assert text in kernel and "(VecElementwiseRegApiCall)" not in kernel
    _assert_exact(_compare(graph), (dtype, post))
