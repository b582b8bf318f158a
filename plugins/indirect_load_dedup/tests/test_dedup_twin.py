"""The dedup template, forced, against the reference on the CPU twin: dtypes, index dtypes, index patterns, cores."""

from __future__ import annotations

import functools

import graphs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from af_core.autofuser import AutofuserOptions
from af_core.builders import GraphBuilder, index_select
from af_core.errors import AscirError
from af_core.registry import get_registry
from af_core.tiling.solve import solve_scheduled
from af_core.twin import TwinSanitizerError, TwinSession

pytestmark = pytest.mark.twin
DEDUP = AutofuserOptions(force_template="dedup")
SETTINGS = settings(max_examples=5, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
CORES = st.sampled_from([1, 2, 5, 48])
#: How the index values of a run are drawn: the reference's random draw, or an explicit pattern.
PATTERNS = st.sampled_from(["random", "all_equal", "all_distinct", "few_values"])


@pytest.fixture(autouse=True, scope="module")
def small_rows_and_columns():
    """Short rows are dropped and cut into columns only from 4 KiB on; lowered here, so that small shapes
    exercise every path: chunks, column tiles and their tails."""
    template = get_registry().get("template", "dedup")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(template, "min_row_bytes", 0)
        patch.setattr(template, "min_column_bytes", 64)
        yield
    session.cache_clear()


@functools.cache
def session(build, *args) -> TwinSession:
    return TwinSession(build(*args), DEDUP)


def index_values(pattern: str, k: int, n: int, rng: np.random.Generator, *, negative: bool) -> np.ndarray:
    """``k`` index values into ``n`` rows following ``pattern`` (some written negative when allowed)."""
    if pattern == "all_equal":
        values = np.full(k, rng.integers(0, n))
    elif pattern == "all_distinct":
        values = np.resize(rng.permutation(n), k)  # distinct as long as k <= n
    else:  # few_values
        values = rng.choice(rng.integers(0, n, size=3), size=k)
    if negative:
        values = np.where(rng.random(k) < 0.3, values - n, values)
    return values


def check(s: TwinSession, sizes: dict[str, int], seed: int, cores: int, *, pattern="random", **kw):
    """Run on the twin, compare with the reference and with the Python tiling; returns the run."""
    if pattern == "random":
        run = s.check(sizes, seed=seed, core_num=cores, **kw)
    else:
        drawn = s.inputs(sizes, seed=seed)
        data_name, index_name = kw.pop("names")
        arrays = {name: np.array(a) for name, a in drawn.logical.items()}
        n = arrays[data_name].shape[0]
        idx = arrays[index_name]
        values = index_values(pattern, idx.shape[0], n, np.random.default_rng(seed), **kw)
        shape = [1] * idx.ndim
        shape[0] = values.size
        arrays[index_name] = np.broadcast_to(values.astype(idx.dtype).reshape(shape), idx.shape)
        run = s.check(inputs=s.inputs(sizes, arrays=arrays), core_num=cores)
    assert run.ok, f"sizes {sizes} on {cores} cores, {pattern}:\n{run.describe()}"
    assert run.template == "dedup"
    tiling = solve_scheduled(s.scheduled, sizes, cores)
    assert run.twin.struct == tiling.struct
    assert run.twin.counter("ub_high_water") <= tiling.chosen().resources["ub_bytes"]
    return run


extent = functools.partial(st.integers, 1)


@pytest.mark.parametrize(
    "dtype,index_dtype",
    [("float32", "int64"), ("float16", "int32"), ("bfloat16", "int64"), ("int32", "int32")],
)
@SETTINGS
@given(n=extent(40), h=extent(300), k=extent(300), cores=CORES, seed=st.integers(0, 99), pattern=PATTERNS)
def test_index_select_over_dtypes_and_patterns(dtype, index_dtype, n, h, k, cores, seed, pattern):
    s = session(graphs.index_select_plain, dtype, index_dtype)
    kw = {"negative_indices": True} if pattern == "random" else {"names": ("x", "idx"), "negative": True}
    check(s, {"N": n, "H": h, "K": k}, seed, cores, pattern=pattern, **kw)


@pytest.mark.parametrize("dtype,index_dtype", [("float32", "int32"), ("float16", "int64")])
@SETTINGS
@given(n=extent(40), h=extent(200), k=extent(300), cores=CORES, seed=st.integers(0, 99), pattern=PATTERNS)
def test_post_chain_runs_once_per_distinct_row(dtype, index_dtype, n, h, k, cores, seed, pattern):
    s = session(graphs.index_select_chain, dtype, index_dtype)
    kw = {"negative_indices": True} if pattern == "random" else {"names": ("x", "idx"), "negative": True}
    check(s, {"N": n, "H": h, "K": k}, seed, cores, pattern=pattern, **kw)


@SETTINGS
@given(n=extent(40), h=extent(200), k=extent(200), cores=CORES, seed=st.integers(0, 99))
def test_bound_checked_rows_are_zero(n, h, k, cores, seed):
    check(session(graphs.index_select_bound), {"N": n, "H": h, "K": k}, seed, cores, out_of_range=0.25)


@pytest.mark.parametrize("dtype,index_dtype", [("bfloat16", "int32"), ("float32", "int64")])
@SETTINGS
@given(v=extent(30), d=extent(160), b=extent(9), s_=extent(40), cores=CORES, seed=st.integers(0, 99))
def test_embedding_with_two_index_axes(dtype, index_dtype, v, d, b, s_, cores, seed):
    check(session(graphs.embedding_2d, dtype, index_dtype), {"V": v, "D": d, "B": b, "S": s_}, seed, cores)


@SETTINGS
@given(a=extent(6), n=extent(20), h=extent(70), k=extent(30), cores=CORES, seed=st.integers(0, 99))
def test_positions_over_outer_axes(a, n, h, k, cores, seed):
    check(session(graphs.middle_axis_select), {"A": a, "N": n, "H": h, "K": k}, seed, cores)


def table_read_bytes(run) -> int:
    """GM bytes the run's DataCopy calls read (the index goes through scalar reads, counted apart)."""
    return run.twin.counter("gm_read_bytes")


@pytest.mark.parametrize("cores", [1, 48])
def test_a_repeated_row_is_read_once(cores):
    """16 positions selecting 3 distinct rows of 64 KiB: the table bytes read are the 3 rows, on 1 core or 48."""
    s = session(graphs.index_select_plain, "float32", "int64", False)
    sizes = {"N": 16, "H": 16384, "K": 16}
    x = np.random.default_rng(0).standard_normal((16, 16384)).astype(np.float32)
    idx = np.array([5, 5, 2, 9, 2, 5, 9, 9, 2, 5, 5, 2, 9, 9, 2, 5])
    run = s.check(
        inputs=s.inputs(sizes, arrays={"x": x, "idx": np.broadcast_to(idx[:, None], (16, 16384))}),
        core_num=cores,
    )
    assert run.ok, run.describe()
    fields = solve_scheduled(s.scheduled, sizes, cores).chosen().fields
    assert fields["chunk"] == 16 and (fields["used_cores"] > 1) == (cores > 1)
    assert table_read_bytes(run) == 3 * 16384 * 4
    assert run.twin.counter("gm_write_bytes") == 16 * 16384 * 4


def test_distinct_sorted_rows_share_one_copy_each_way():
    """Consecutive index values: one load and one store per work item, whatever the chunk holds."""
    s = session(graphs.index_select_plain, "float32", "int64", False)
    sizes = {"N": 64, "H": 40, "K": 48}
    x = np.random.default_rng(3).standard_normal((64, 40)).astype(np.float32)
    idx = np.arange(8, 56)
    run = s.check(
        inputs=s.inputs(sizes, arrays={"x": x, "idx": np.broadcast_to(idx[:, None], (48, 40))}), core_num=4
    )
    assert run.ok, run.describe()
    items = solve_scheduled(s.scheduled, sizes, 4).chosen().fields["items"]
    assert run.twin.counter("datacopy_calls") == 2 * items


def test_out_of_range_index_without_bound_check_is_reported():
    s = session(graphs.index_select_plain, "float32", "int64", False)
    sizes = {"N": 10, "H": 8, "K": 4}
    idx = np.broadcast_to(np.array([1, 2, 10, 3])[:, None], (4, 8))
    inputs = s.inputs(sizes, arrays={"x": np.zeros((10, 8), np.float32), "idx": idx})
    with pytest.raises(TwinSanitizerError) as info:
        s.run(inputs, core_num=2)
    assert info.value.kind == "gather-out-of-range"
    with pytest.raises(AscirError, match="index-in-range"):  # check() asks the reference first
        s.check(inputs=inputs, core_num=2)


@pytest.mark.parametrize("pattern", ["random", "all_equal", "few_values"])
def test_column_tiles_with_a_tail(pattern):
    """Few positions, long rows, 48 cores: rows are cut into column tiles, the last one shorter."""
    s = session(graphs.index_select_chain, "float16", "int64")
    sizes = {"N": 7, "H": 1000, "K": 9}
    fields = solve_scheduled(s.scheduled, sizes, 48).chosen().fields
    assert fields["col_tiles"] > 1 and 1000 % fields["col"] != 0
    kw = {"negative_indices": True} if pattern == "random" else {"names": ("x", "idx"), "negative": True}
    check(s, sizes, 3, 48, pattern=pattern, **kw)


@pytest.mark.parametrize(
    "graph,data,index,out,sizes",
    [
        ("1g", "a-b", "a_b", "x.y", ("beta", "O", "gamma")),
        ("class", "t", "block_dim", "class", ("t", "block_dim", "tiling_key")),
        ("tiling", "main", "x_gm", "workspace", ("core_num", "ub_size", "class")),
    ],
)
def test_odd_but_legal_names(graph, data, index, out, sizes):
    """Graph, tensor and size names that are C++ keywords or the kernel's own identifiers still build and match."""
    g = GraphBuilder(graph)
    x = g.data(data, [sizes[0], sizes[1]], "float32")
    idx = g.data(index, [sizes[2]], "int64")
    g.output(g.op("Relu", index_select(x, 0, idx, need_check_negative=True)), out)
    s = TwinSession(g.build(), DEDUP)
    check(s, dict(zip(sizes, (37, 5, 11))), 3, 7, negative_indices=True)
