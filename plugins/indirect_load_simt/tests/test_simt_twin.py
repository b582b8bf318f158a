"""SIMT template on the CPU twin: every output compared with the reference interpreter."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.testing import CORE_COUNTS as CORES
from af_core.testing import chain_graph, gather_sizes, random_runs
from af_core.twin import TwinSanitizerError, TwinSession

pytestmark = pytest.mark.twin
SIMT = AutofuserOptions(force_template="simt")


@functools.cache
def session(**kw) -> TwinSession:
    return TwinSession(chain_graph(**kw), SIMT)


def check_many(s: TwinSession, rank: int, dim: int, seed: int, runs: int = 4, **kw) -> None:
    for run_seed, sizes, core_num in random_runs(seed, rank, dim, runs, max_elements=20000):
        run = s.check(sizes, seed=run_seed, core_num=core_num, **kw)
        assert run.ok, f"sizes {sizes} on {core_num} cores:\n{run.describe()}"
        assert run.template.startswith("simt")
        assert 1 <= run.twin.block_dim <= core_num


RANK_DIM = [(r, d) for r in range(1, 6) for d in range(r)]


@pytest.mark.parametrize("rank,dim", RANK_DIM)
def test_every_rank_and_dim(rank, dim):
    check_many(session(rank=rank, dim=dim), rank, dim, seed=rank * 7 + dim)


@pytest.mark.parametrize("rank,dim", [(1, -1), (3, -1), (4, -3), (5, -5)])
def test_negative_dims(rank, dim):
    check_many(session(rank=rank, dim=dim), rank, dim, seed=100 + rank)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int32", "int8", "uint16", "int64"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_dtypes_are_bitwise(dtype, index_dtype):
    s = session(rank=3, dim=1, dtype=dtype, index_dtype=index_dtype)
    assert s.exact
    check_many(s, 3, 1, seed=sum(map(ord, dtype + index_dtype)), runs=3)


def test_single_elements_and_one_core():
    s = session(rank=3, dim=2)
    sizes = {"a0": 1, "a1": 1, "a2": 1, "b0": 1, "b1": 1, "b2": 1}
    for core_num in (1, 48):
        run = s.check(sizes, seed=3, core_num=core_num)
        assert run.ok and run.twin.block_dim == 1


def test_large_split_uses_many_cores():
    s = session(rank=2, dim=1)
    sizes = {"a0": 300, "a1": 50, "b0": 300, "b1": 70}
    run = s.check(sizes, seed=5, core_num=48)
    assert run.ok, run.describe()
    # 21000 lanes: rounds of 1024 threads would reach 21 cores, fewer than half of 48; rounds of 512
    # reach 42, so each core takes one round of 512 threads
    assert run.twin.block_dim == 42
    assert run.twin.counter("simt_threads") == 300 * 70


@pytest.mark.parametrize(
    "total,core_num,threads",
    [
        (131072, 48, 2048),  # 64 rounds of 2048 reach more than 24 cores
        (21000, 48, 512),
        (12800, 48, 512),  # 25 rounds of 512, 13 of 1024
        (2000, 48, 128),  # even 128 threads give only 16 rounds: the floor
        (100, 1, 2048),  # one core: half of it is no core, nothing to spread
        (4096, 8, 1024),  # 4 rounds of 1024 reach half of 8 cores, 2 of 2048 do not
    ],
)
def test_vf_threads_follow_the_official_halving_rule(total, core_num, threads):
    from af_indirect_load_simt.template import vf_threads

    from af_core.tiling.spec import CORE_NUM

    assert int(vf_threads(total).subs(CORE_NUM, core_num)) == threads


def test_a_small_gather_takes_whole_rounds_of_threads_on_fewer_cores():
    s = session(rank=2, dim=1)
    sizes = {"a0": 40, "a1": 50, "b0": 40, "b1": 320}  # 12800 lanes: 512 threads, 25 cores
    run = s.check(sizes, seed=6, core_num=48)
    assert run.ok, run.describe()
    assert run.twin.block_dim == 25
    assert run.twin.counter("simt_threads") == 12800


PRE8 = ("Abs", "Muls(0.5)", "Exp", "Adds(1.0)", "Log", "Sqrt", "Relu", "Neg")
POST8 = ("Muls(1.5)", "Sigmoid", "Adds(-0.25)", "Abs", "Maxs(0.1)", "Rsqrt", "Mins(2.0)", "Exp2")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_eight_ops_before_and_after(dtype):
    s = session(rank=3, dim=1, dtype=dtype, pre=PRE8, post=POST8)
    rewrite = s.scheduled.cases[0].impl.meta["rewrite"]
    assert rewrite["moved"] and len(rewrite["gathers"]) == 1
    check_many(s, 3, 1, seed=41, runs=3)


def test_binary_input_op_gets_one_gather_per_input():
    s = session(rank=3, dim=2, pre=("Add(side)", "Relu"), index_pre=("Maxs(0)",), post=("Mul(side)",))
    case = s.scheduled.cases[0]
    assert len(case.impl.meta["rewrite"]["gathers"]) == 2
    gathers = case.graph.nodes_of_type("IndirectLoad")
    assert {g.x2.name for g in gathers} == {gathers[0].x2.name}  # the index is shared
    check_many(s, 3, 2, seed=43, runs=3)


def test_broadcast_side_input_in_both_chains():
    from af_core.builders import GraphBuilder, gather

    g = GraphBuilder("bcast")
    x = g.data("x", ["a0", "a1", "a2"], "float32")
    mask = g.data("mask", ["a0", "a1", 1], "float32")
    x = g.op("Mul", x, g.broadcast(mask, x.shape))
    idx = g.data("index", ["b0", "b1", "b2"], "int64")
    y = gather(x, 1, idx)
    target = g.data("target", ["b0", 1, "b2"], "float32")
    y = g.op("Add", y, g.broadcast(target, y.shape))
    g.output(y, "y")
    s = TwinSession(g.build(), SIMT)
    check_many(s, 3, 1, seed=47, runs=3)


@pytest.mark.parametrize("kind", ["Sum", "Max", "Min", "Mean"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_reduce_last_axis(kind, dtype):
    s = session(rank=3, dim=1, dtype=dtype, reduce=(kind, (2,)))
    check_many(s, 3, 1, seed=51, runs=3)


@pytest.mark.parametrize("dtype", ["bfloat16", "int32"])
def test_reduce_middle_axis_with_post_ops(dtype):
    post = ("Mul(side)",) if dtype == "int32" else ("Cast(float32)", "Muls(0.5)")
    s = session(rank=3, dim=0, dtype=dtype, post=post, reduce=("Sum", (1,)))
    check_many(s, 3, 0, seed=53, runs=3)


def test_reduce_tile_holds_whole_groups():
    s = session(rank=3, dim=1, reduce=("Sum", (2,)))
    sizes = {"a0": 97, "a1": 5, "a2": 33, "b0": 97, "b1": 6, "b2": 33}
    key = next(c.tiling_key for c in s.scheduled.cases if c.label == "simt")
    run = s.check(sizes, seed=7, core_num=48, tiling_key=key)
    assert run.ok, run.describe()
    fields = run.twin.struct
    c = f"c{key}_"
    assert fields[c + "group"] == 33 and fields[c + "rows"] == 97 * 6
    assert fields[c + "tile"] * fields[c + "tiles"] >= fields[c + "rows"]
    assert run.twin.counter("ub_high_water") <= 248 * 1024 - 32 * 1024


@pytest.mark.parametrize("negative", [False, True])
@pytest.mark.parametrize("bound", [False, True])
def test_index_flags(negative, bound):
    s = session(rank=2, dim=1, need_check_negative=negative, need_check_bound=bound, pre=("Exp",))
    rng = np.random.default_rng(61)
    for k in range(3):
        sizes = gather_sizes(rng, 2, 1)
        run = s.check(
            sizes, seed=k, core_num=CORES[k], negative_indices=negative, out_of_range=0.2 if bound else 0.0
        )
        assert run.ok, run.describe()
    if bound:
        # zero for out-of-range lanes happens after the moved Exp (exp(0) would be 1)
        run = s.check(
            {"a0": 4, "a1": 5, "b0": 4, "b1": 6}, seed=9, out_of_range=0.5, negative_indices=negative
        )
        assert run.ok and (run.reference["y"] == 0).any()


def test_out_of_range_without_bound_check_is_reported():
    s = session(rank=2, dim=1)
    inputs = s.inputs({"a0": 3, "a1": 4, "b0": 3, "b1": 4}, seed=1)
    inputs.storage["index"][5] = 4  # one past the end, still inside the buffer
    with pytest.raises(TwinSanitizerError) as info:
        s.run(inputs, core_num=2)
    assert info.value.kind == "gather-out-of-range"
    assert "index 4" in info.value.message


def test_negative_index_without_flag_is_reported():
    s = session(rank=2, dim=1, need_check_bound=False)
    inputs = s.inputs({"a0": 3, "a1": 4, "b0": 3, "b1": 4}, seed=1)
    inputs.storage["index"][0] = -1
    with pytest.raises(TwinSanitizerError, match="index -1"):
        s.run(inputs)


def test_counters_match_one_read_per_lane():
    s = session(rank=2, dim=1)
    sizes = {"a0": 6, "a1": 50, "b0": 6, "b1": 40}
    run = s.check(sizes, seed=2, core_num=4)
    n = 6 * 40
    assert run.twin.counter("scalar_gm_reads") == 2 * n  # index + input per lane
    assert run.twin.counter("scalar_gm_writes") == n
    assert run.twin.counter("gm_read_bytes") == 0  # no DataCopy in the SIMT path
    assert run.twin.counter("simt_threads") >= n


@pytest.mark.parametrize("width", [4, 16, 32, 48])
def test_dcache_misses_are_the_distinct_lines_when_everything_fits(width):
    """One core, a table that fits the data cache: every line is fetched exactly once.

    GM buffers are line aligned in the twin, so row r of a ``width``-float
    table covers lines (r * width * 4) // 128 .. ((r + 1) * width * 4 - 1) // 128.
    """
    from af_core.builders import GraphBuilder, embedding

    g = GraphBuilder(f"emb{width}")
    table = g.data("weight", [40, width], "float32")
    ids = g.data("ids", [300], "int64")
    g.output(embedding(table, ids), "y")
    s = TwinSession(g.build(), SIMT)
    rng = np.random.default_rng(width)
    picked = rng.integers(0, 40, 300)
    ids_logical = np.broadcast_to(picked[:, None], (300, width))  # the normalized index is broadcast along D
    inputs = s.inputs({}, arrays={"ids": ids_logical, "weight": rng.random((40, width), np.float32)})
    run = s.check(inputs=inputs, core_num=1)
    assert run.ok, run.describe()
    rows = np.unique(picked)
    row_bytes = width * 4
    lines = {line for r in rows for line in range(r * row_bytes // 128, ((r + 1) * row_bytes - 1) // 128 + 1)}
    index_lines = -(-300 * 8 // 128)
    assert run.twin.counter("dcache_misses") == len(lines) + index_lines


def test_dcache_reserve_is_recorded():
    scheduled = Autofuser(SIMT).schedule(chain_graph(rank=2, dim=1))
    case = scheduled.cases[0]
    assert case.meta["dcache_reserve"] == 32 * 1024
    assert case.graph.attrs["dcache_size"] == 32 * 1024
    assert str(case.tiling.resources["dcache_bytes"]) == "32768"


def keys(s: TwinSession) -> dict[str, int]:
    return {c.label: c.tiling_key for c in s.scheduled.cases}


@pytest.mark.parametrize("kind", ["Sum", "Max", "Min", "Mean"])
def test_lane_reduce_variant(kind):
    s = session(rank=3, dim=1, dtype="float16", post=("Abs",), reduce=(kind, (1, 2)))
    lanes = keys(s)["simt/lanes"]
    rng = np.random.default_rng(59)
    for k in range(3):
        run = s.check(gather_sizes(rng, 3, 1), seed=k, core_num=CORES[k], tiling_key=lanes)
        assert run.ok, run.describe()
        assert run.twin.tiling_key == lanes and run.twin.counter("ub_high_water") == 0


def test_non_contiguous_reduce_takes_the_lane_reduce_case():
    s = session(rank=3, dim=1, reduce=("Sum", (0, 2)))
    assert list(keys(s)) == ["simt/lanes"]
    reasons = [r.reason for r in s.scheduled.rejections if r.template == "simt"]
    assert reasons and "not contiguous" in reasons[0]
    check_many(s, 3, 1, seed=61, runs=3)


def test_groups_too_big_for_ub_fall_back_to_lane_reduce():
    s = session(rank=3, dim=1, reduce=("Sum", (1,)))
    sizes = {"a0": 2, "a1": 80, "a2": 1000, "b0": 2, "b1": 70, "b2": 1000}  # 70 x 1000 floats per group
    run = s.check(sizes, seed=3, core_num=8)
    assert run.ok, run.describe()
    assert run.template == "simt/lanes"
    small = {"a0": 16, "a1": 8, "a2": 16, "b0": 16, "b1": 4, "b2": 16}
    ub_reduce = next(c.tiling_key for c in s.scheduled.cases if c.label == "simt")
    assert s.check(small, seed=4, core_num=8, tiling_key=ub_reduce).ok  # the UB reduce runs where it fits


def test_ub_reduce_tile_keeps_the_budget_of_a_vf_call_kernel():
    """Given the whole 256 KiB as usable UB, the UB-reduce tile still leaves the 8 KiB system reserve and the
    32 KiB data cache free: 262144 - 8192 - 32768 = 221184 TPipe bytes, the budget the twin checks."""
    s = session(rank=3, dim=1, reduce=("Sum", (2,)))
    key = keys(s)["simt"]
    sizes = {"a0": 200, "a1": 5, "a2": 1000, "b0": 200, "b1": 1, "b2": 1000}
    inputs = s.inputs(sizes, seed=11)
    full = s.run(inputs, core_num=1, ub_size=256 * 1024, tiling_key=key)
    assert 200000 < full.counter("ub_high_water") <= 221184
    usual = s.check(inputs=inputs, core_num=1, tiling_key=key)
    assert usual.ok, usual.describe()
    for name, values in usual.twin.outputs.items():
        np.testing.assert_array_equal(full.outputs[name], values)


@pytest.mark.parametrize("dtype", ["int32", "int8"])
def test_integer_mean_floor_divides_like_the_reference(dtype):
    """An integer Mean is the floor of the wide sum over the group size, on every SIMT case."""
    s = session(rank=3, dim=1, dtype=dtype, reduce=("Mean", (1, 2)))
    rng = np.random.default_rng(67)
    assert keys(s)
    for label, key in keys(s).items():
        for k in range(2):
            run = s.check(gather_sizes(rng, 3, 1), seed=k, core_num=CORES[k], tiling_key=key)
            assert run.ok, (label, run.describe())


@pytest.mark.parametrize(
    "steps,core_num,threads,used",
    [
        # groups of 24 float32 lanes: a step reads an index line and one input line (2 lines, 256 B);
        # 20 steps -> 5120 B per group, 3 groups in half the 32 KiB cache, but at least 256 lanes: 11 groups
        (20, 2, 264, 2),  # 960 outputs, 480 per core (20 groups)
        (20, 3, 264, 3),  # 320 per core rounded up to 14 groups = 336
        (20, 5, 264, 4),  # 192 -> at least 256 -> 11 groups = 264 per core, 4 cores
        # 2 steps -> 512 B per group, 32 groups fit: 768 threads
        (2, 1, 768, 1),
    ],
)
def test_lane_reduce_launches_whole_groups_that_fit_the_data_cache(steps, core_num, threads, used):
    s = session(rank=3, dim=1, reduce=("Mean", (1,)))
    key = keys(s)["simt/lanes"]
    sizes = {"a0": 40, "a1": 30, "a2": 24, "b0": 40, "b1": steps, "b2": 24}
    run = s.check(sizes, seed=steps, core_num=core_num, tiling_key=key)
    assert run.ok, run.describe()
    assert run.twin.block_dim == used
    shares = _shares(960, core_num, 24)
    assert len(shares) == used
    assert run.twin.counter("simt_threads") == sum(min(c, threads) for c in shares)


def _shares(total: int, core_num: int, group: int) -> list[int]:
    """Outputs per used core: equal shares of at least 256, rounded up to whole groups (the last less)."""
    per = group * -(-max(-(-total // core_num), 256) // group)
    return [min(per, total - c * per) for c in range(-(-total // per))]


@functools.cache
def row_gather_session(negative: bool = False, bound: bool = False, kind: str = "Sum") -> TwinSession:
    """x[a0, a1, d] gathered along dim 1 by index[a0, k] (expanded along d), reduced over d: the index is
    the same at every step of a lane's reduce."""
    from af_core.builders import GraphBuilder, expand_index, gather

    g = GraphBuilder("row_dot")
    x = g.data("x", ["a0", "a1", "d"], "float32")
    index = expand_index(g.data("index", ["a0", "k"], "int32"), ["d"])
    y = gather(x, 1, index, need_check_negative=negative, need_check_bound=bound)
    g.output(g.reduce(kind, g.op("Mul", y, y) if kind == "Sum" else y, [2]), "y")
    return TwinSession(g.build(), SIMT)


def _predicted(s: TwinSession, key: int, sizes: dict[str, int], core_num: int) -> int:
    from af_core.tiling.solve import CaseRef, solve

    sch = s.scheduled
    refs = [CaseRef.of(c) for c in sch.cases]
    evs = solve(refs, sch.size_names, sizes, core_num, sch.platform.ub_size, sch.guards).evaluations
    return int(next(ev for ev in evs if ev.tiling_key == key).resources["scalar_accesses"])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    a0=st.integers(1, 5),
    a1=st.integers(1, 40),
    d=st.integers(1, 48),
    k=st.integers(1, 9),
    cores=st.sampled_from([1, 3, 8, 48]),
    seed=st.integers(0, 2**16),
)
def test_lane_reduce_reads_an_index_constant_along_the_reduce_once(a0, a1, d, k, cores, seed):
    """The lane reads its index once and a table value per step: d + 1 reads per output, not 2 d."""
    s = row_gather_session()
    key = keys(s)["simt/lanes"]
    inputs = s.inputs({"a0": a0, "a1": a1, "d": d, "k": k}, seed=seed)
    run = s.check(inputs=inputs, core_num=cores, tiling_key=key)
    assert run.ok, run.describe()
    outputs = a0 * k
    measured = run.twin.counter("scalar_gm_reads") + run.twin.counter("scalar_gm_writes")
    assert run.twin.counter("scalar_gm_reads") == outputs * (d + 1)
    assert measured == _predicted(s, key, inputs.sizes, cores)
    if d > 1:
        assert measured < outputs * (2 * d + 1)  # every step read the index again


@pytest.mark.parametrize("kind", ["Sum", "Max", "Mean"])
@pytest.mark.parametrize("negative,bound", [(True, True), (True, False), (False, True)])
def test_hoisted_index_keeps_its_normalisation_and_checks(kind, negative, bound):
    s = row_gather_session(negative, bound, kind)
    key = keys(s)["simt/lanes"]
    rng = np.random.default_rng(71)
    for k in range(3):
        sizes = {"a0": int(rng.integers(1, 5)), "a1": int(rng.integers(2, 30)), "d": 33, "k": 7}
        run = s.check(
            sizes,
            seed=k,
            core_num=CORES[k],
            tiling_key=key,
            negative_indices=negative,
            out_of_range=0.3 if bound else 0.0,
        )
        assert run.ok, run.describe()


def test_hoisted_index_out_of_range_is_still_reported():
    s = row_gather_session()
    key = keys(s)["simt/lanes"]
    inputs = s.inputs({"a0": 2, "a1": 4, "d": 8, "k": 3}, seed=1)
    inputs.storage["index"][4] = 4  # one past the end
    with pytest.raises(TwinSanitizerError) as info:
        s.run(inputs, core_num=2, tiling_key=key)
    assert info.value.kind == "gather-out-of-range"


def bag_session(rows: int, width: int, bags: int, bag: int, kind="Sum", dtype="float32", **flags):
    """An embedding bag: table[rows, width] gathered by ids[bags, bag], reduced over the bag."""
    from af_core.builders import GraphBuilder, embedding

    g = GraphBuilder("bag")
    table = g.data("weight", [rows, width], dtype)
    ids = g.data("ids", [bags, bag], "int64")
    g.output(g.reduce(kind, embedding(table, ids, **flags), [1]), "y")
    return TwinSession(g.build(), SIMT)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    width=st.sampled_from([2, 6, 12, 32, 33]),
    bags=st.integers(1, 300),
    bag=st.integers(2, 9),
    cores=st.sampled_from([1, 4, 48]),
)
def test_bag_lanes_read_the_index_once_for_several_outputs(width, bags, bag, cores):
    """A lane sums 4 (or 2) consecutive outputs of its bag: per step one index read and 4 table reads,
    1 + 1/4 reads per output instead of 2."""
    s = bag_session(50, width, bags, bag)
    key = keys(s)["simt/lanes"]
    inputs = s.inputs({}, seed=bags)
    run = s.check(inputs=inputs, core_num=cores, tiling_key=key)
    assert run.ok, run.describe()
    w = next(n for n in (4, 2, 1) if width % n == 0)
    outputs = bags * width
    reads = run.twin.counter("scalar_gm_reads")
    assert reads == outputs // w * bag * (1 + w)
    assert reads + run.twin.counter("scalar_gm_writes") == _predicted(s, key, inputs.sizes, cores)
    if w > 1:
        assert reads < outputs * bag * 2  # one index read per output and step
    lanes = outputs // w
    assert 1 <= run.twin.block_dim <= min(cores, -(-lanes // 256))
    assert run.twin.counter("simt_threads") <= lanes


@pytest.mark.parametrize(
    "kind,dtype,flags",
    [
        ("Mean", "int32", {}),
        ("Mean", "float16", {"need_check_bound": True}),
        ("Max", "float32", {"need_check_negative": True, "need_check_bound": True}),
        ("Min", "bfloat16", {"need_check_negative": True}),
    ],
)
def test_bag_lanes_of_several_outputs_for_every_kind_and_index_flag(kind, dtype, flags):
    s = bag_session(40, 12, 70, 6, kind, dtype, **flags)
    key = keys(s)["simt/lanes"]
    for k in range(2):
        run = s.check(
            seed=k,
            core_num=CORES[k],
            tiling_key=key,
            negative_indices=flags.get("need_check_negative", False),
            out_of_range=0.2 if flags.get("need_check_bound") else 0.0,
        )
        assert run.ok, run.describe()
        assert run.twin.struct[f"c{key}_lanes"] == 70 * 12 // 4
