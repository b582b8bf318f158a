"""SIMD template on the CPU twin: outputs against the reference, counters against the formulas."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.builders import GraphBuilder, embedding, gather, index_select
from af_core.errors import ScheduleError, TilingError
from af_core.inputs import make_inputs
from af_core.testing import CORE_COUNTS as CORES
from af_core.testing import chain_graph, gather_sizes, random_runs
from af_core.tiling.solve import solve_scheduled
from af_core.twin import TwinSanitizerError, TwinSession, TwinTilingError

pytestmark = pytest.mark.twin
SIMD = AutofuserOptions(force_template="simd")
UB = 248 * 1024


@functools.cache
def session(**kw) -> TwinSession:
    return TwinSession(chain_graph(**kw), SIMD)


def check(s: TwinSession, sizes, seed: int, core_num: int, **kw):
    run = s.check(sizes, seed=seed, core_num=core_num, **kw)
    assert run.ok, f"sizes {sizes} on {core_num} cores:\n{run.describe()}"
    assert run.template.startswith("simd")
    tiling = solve_scheduled(s.scheduled, sizes, core_num)
    assert run.twin.struct == tiling.struct
    ub = tiling.chosen().resources["ub_bytes"]
    assert run.twin.counter("ub_high_water") <= ub <= UB
    return run


def check_many(s: TwinSession, rank: int, dim: int, seed: int, runs: int = 4, **kw) -> None:
    for run_seed, sizes, cores in random_runs(seed, rank, dim, runs):
        check(s, sizes, run_seed, cores, **kw)


@pytest.mark.parametrize("rank,dim", [(r, d) for r in range(1, 6) for d in range(r)])
def test_every_rank_and_dim(rank, dim):
    check_many(session(rank=rank, dim=dim), rank, dim, seed=rank * 11 + dim)


@pytest.mark.parametrize("rank,dim", [(2, -1), (4, -2)])
def test_negative_dims(rank, dim):
    check_many(session(rank=rank, dim=dim), rank, dim, seed=200 + rank)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "int32", "int8", "uint16"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_dtypes_are_bitwise(dtype, index_dtype):
    s = session(rank=3, dim=1, dtype=dtype, index_dtype=index_dtype)
    assert s.exact
    check_many(s, 3, 1, seed=sum(map(ord, dtype + index_dtype)), runs=3)


PRE8 = ("Abs", "Muls(0.5)", "Exp", "Adds(1.0)", "Log", "Sqrt", "Relu", "Neg")
POST8 = ("Muls(1.5)", "Sigmoid", "Adds(-0.25)", "Abs", "Maxs(0.1)", "Rsqrt", "Mins(2.0)", "Exp2")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_eight_ops_before_and_after(dtype):
    s = session(rank=3, dim=1, dtype=dtype, pre=PRE8, post=POST8)
    check_many(s, 3, 1, seed=71, runs=3)


def test_pre_chain_runs_in_input_coordinates_with_side_inputs():
    s = session(rank=3, dim=2, pre=("Add(side)", "Relu"), index_pre=("Maxs(0)",), post=("Mul(side)",))
    check_many(s, 3, 2, seed=73, runs=3)


def test_static_unary_ops_move_behind_the_gather():
    g = GraphBuilder("static_sink")
    x = g.data("x", [6, 40, 8], "float32")
    t = g.op("Exp", g.op("Abs", x))
    idx = g.data("index", [6, 5, 8], "int32")
    g.output(gather(t, 1, idx), "y")
    s = TwinSession(g.build(), SIMD)
    case = s.scheduled.cases[0]
    assert case.impl.meta["moved_behind_gather"] == ["abs", "exp"]
    run = check(s, {}, 1, 4)
    assert run.twin.counter("vector_calls") > 0


def test_broadcast_side_inputs():
    g = GraphBuilder("bcast")
    x = g.data("x", ["a0", "a1", "a2"], "float32")
    mask = g.data("mask", ["a0", "a1", 1], "float32")
    x = g.op("Mul", x, g.broadcast(mask, x.shape))
    idx = g.data("index", ["b0", "b1", "b2"], "int64")
    y = gather(x, 1, idx)
    target = g.data("target", ["b0", 1, "b2"], "float32")
    g.output(g.op("Add", y, g.broadcast(target, y.shape)), "y")
    s = TwinSession(g.build(), SIMD)
    check_many(s, 3, 1, seed=79, runs=3)


@pytest.mark.parametrize("kind", ["Sum", "Max", "Min", "Mean"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_reduce_inside_the_row(kind, dtype):
    s = session(rank=3, dim=1, dtype=dtype, reduce=(kind, (2,)))
    check_many(s, 3, 1, seed=83, runs=3)


def test_reduce_over_middle_axes_int32():
    s = session(rank=4, dim=1, dtype="int32", post=("Maxs(3)",), reduce=("Sum", (1, 2)))
    check_many(s, 4, 1, seed=89, runs=3)


def test_reduce_over_an_outer_axis_is_rejected():
    with pytest.raises(ScheduleError, match="outer axis"):
        Autofuser(SIMD).schedule(chain_graph(rank=3, dim=2, reduce=("Sum", (1,))))


@pytest.mark.parametrize("negative", [False, True])
@pytest.mark.parametrize("bound", [False, True])
def test_index_flags(negative, bound):
    s = session(rank=2, dim=1, index_dtype="int64", need_check_negative=negative, need_check_bound=bound)
    rng = np.random.default_rng(97)
    for k in range(3):
        check(
            s,
            gather_sizes(rng, 2, 1),
            k,
            CORES[k],
            negative_indices=negative,
            out_of_range=0.25 if bound else 0,
        )


def test_out_of_range_without_bound_check_is_reported():
    s = session(rank=2, dim=1)
    inputs = s.inputs({"a0": 3, "a1": 4, "b0": 3, "b1": 4}, seed=1)
    inputs.storage["index"][5] = 4
    with pytest.raises(TwinSanitizerError) as info:
        s.run(inputs, core_num=2)
    assert info.value.kind == "gather-out-of-range" and "index 4" in info.value.message


def index_select_graph(dim: int, rank: int = 3):
    g = GraphBuilder(f"isel{dim}")
    x = g.data("x", [f"a{i}" for i in range(rank)], "float32")
    i = g.data("i", ["n"], "int64")
    g.output(index_select(x, dim, i, need_check_negative=True), "y")
    return g.build()


def embedding_graph(k: int):
    g = GraphBuilder(f"emb{k}")
    w = g.data("w", ["V", "D"], "float16")
    i = g.data("ids", [f"b{j}" for j in range(k)], "int32")
    g.output(embedding(w, i, need_check_bound=True), "y")
    return g.build()


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_index_select_broadcast_index(dim):
    s = TwinSession(index_select_graph(dim), SIMD)
    rng = np.random.default_rng(dim)
    for k in range(3):
        a = [int(v) for v in rng.integers(1, 9, 3)]
        sizes = {"a0": a[0], "a1": a[1], "a2": a[2] * 8 if k else a[2], "n": int(rng.integers(1, 9))}
        run = check(s, sizes, k, CORES[k], negative_indices=True)
        assert run.twin.counter("scalar_gm_reads") == 0  # the index loads compact, no scalar reads


@pytest.mark.parametrize("width", [16, 5])
def test_embedding_suffix_and_scalar_offsets(width):
    s = TwinSession(embedding_graph(2), SIMD)
    run = check(s, {"V": 50, "D": width, "b0": 3, "b1": 4}, 2, 3, out_of_range=0.2)
    assert run.twin.counter("gather_elements") > 0


def test_slice_bytes_read_once_per_tile():
    s = session(rank=3, dim=1)
    sizes = {"a0": 12, "a1": 30, "a2": 8, "b0": 10, "b1": 6, "b2": 8}
    run = check(s, sizes, 4, 4)
    rows = 10
    slice_bytes = rows * 30 * 8 * 4  # every output row loads its [a1, a2] input row once
    index_bytes = rows * 6 * 8 * 4
    assert run.twin.counter("gm_read_bytes") == slice_bytes + index_bytes
    assert run.twin.counter("gm_write_bytes") == rows * 6 * 8 * 4
    assert run.twin.counter("scalar_gm_reads") == 0


def test_a_row_too_big_for_ub_is_dropped_at_tiling_time():
    s = session(rank=2, dim=1)
    sizes = {"a0": 2, "a1": 80000, "b0": 2, "b1": 4}
    with pytest.raises(TilingError, match="does not fit in UB"):
        solve_scheduled(s.scheduled, sizes, 8)
    with pytest.raises(TilingError, match="does not fit in UB"):  # a session refuses before the twin runs
        s.check(sizes, seed=1, core_num=8)
    inputs = make_inputs(s.graph, sizes, seed=1, info=s.scheduled.info)
    with pytest.raises(TwinTilingError) as info:  # and the generated host tiling agrees
        s.runner.run(s.build, inputs, core_num=8)
    assert info.value.code == 2


def test_eight_byte_data_is_rejected_there_is_no_8_byte_gather():
    with pytest.raises(ScheduleError, match="no 8-byte form"):
        Autofuser(SIMD).schedule(chain_graph(rank=3, dim=1, dtype="int64"))


@pytest.mark.parametrize(
    "dtype,width,tile", [("float16", 32767, 1), ("bfloat16", 10000, 6), ("int8", 30000, 2)]
)
def test_gather_source_span_is_bounded_for_packed_offsets(dtype, width, tile):
    """1-/2-byte Gather offsets are uint16 element indices on 3510: a tile's source (rows * pitch, then the zero
    slot) stays below 65536 elements, and a row that alone exceeds it drops the case at tiling time."""
    s = session(rank=2, dim=1, dtype=dtype)
    sizes = {"a0": 64, "a1": width, "b0": 64, "b1": 4}
    run = check(s, sizes, 5, 1)
    per_block = 32 // np.dtype("float16" if dtype == "bfloat16" else dtype).itemsize
    pitch = -(-width // per_block) * per_block
    assert run.twin.struct[f"c{run.twin.tiling_key}_tile"] == tile
    assert tile * pitch <= 65535 < (tile + 1) * pitch
    with pytest.raises(TilingError, match="uint16 offsets"):
        solve_scheduled(s.scheduled, {"a0": 2, "a1": 70000, "b0": 2, "b1": 4}, 8)


def test_non_dense_input_rows_are_rejected():
    g = GraphBuilder("transposed")
    x = g.data("x", [4, 6], "float32", strides=[1, 4])
    idx = g.data("index", [4, 3], "int32")
    g.output(gather(x, 1, idx), "y")
    with pytest.raises(ScheduleError, match="dense"):
        Autofuser(SIMD).schedule(g.build())


def test_two_hundred_random_shapes():
    graphs = [
        (dict(rank=2, dim=1), 2, 1),
        (dict(rank=3, dim=1, dtype="float16", post=("Relu",)), 3, 1),
        (dict(rank=3, dim=2, dtype="bfloat16", reduce=("Sum", (2,))), 3, 2),
        (dict(rank=4, dim=2, index_dtype="int64", need_check_bound=True), 4, 2),
    ]
    count = 0
    for i, (kw, rank, dim) in enumerate(graphs):
        s = session(**kw)
        for run_seed, sizes, cores in random_runs(
            2026 + i, rank, dim, 50, extents=(4, 12, 40), max_elements=6000
        ):
            check(s, sizes, run_seed, cores, out_of_range=0.1 if kw.get("need_check_bound") else 0)
            count += 1
    assert count == 200
