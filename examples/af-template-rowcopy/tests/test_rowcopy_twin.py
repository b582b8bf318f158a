"""The rowcopy template, forced, against the reference on the CPU twin over many shapes and dtypes."""

from __future__ import annotations

import functools

import graphs
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from af_core.autofuser import AutofuserOptions
from af_core.errors import AscirError
from af_core.registry import get_registry
from af_core.tiling.solve import solve_scheduled
from af_core.twin import TwinSanitizerError, TwinSession

pytestmark = pytest.mark.twin
ROWCOPY = AutofuserOptions(force_template="rowcopy")
SETTINGS = settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
CORES = st.sampled_from([1, 2, 5, 48])


@functools.cache
def session(build, *args) -> TwinSession:
    return TwinSession(build(*args), ROWCOPY)


def check(s: TwinSession, sizes: dict[str, int], seed: int, cores: int, **kw):
    run = s.check(sizes, seed=seed, core_num=cores, **kw)
    assert run.ok, f"sizes {sizes} on {cores} cores:\n{run.describe()}"
    assert run.template == "rowcopy"
    tiling = solve_scheduled(s.scheduled, sizes, cores)
    assert run.twin.struct == tiling.struct
    assert run.twin.counter("ub_high_water") <= tiling.chosen().resources["ub_bytes"]
    return run


extent = functools.partial(st.integers, 1)


@pytest.mark.parametrize("dtype,index_dtype", [("float32", "int64"), ("float16", "int32"), ("int8", "int32")])
@SETTINGS
@given(n=extent(40), h=extent(300), k=extent(120), cores=CORES, seed=st.integers(0, 99))
def test_index_select(dtype, index_dtype, n, h, k, cores, seed):
    s = session(graphs.index_select_relu, dtype, index_dtype)
    check(s, {"N": n, "H": h, "K": k}, seed, cores, negative_indices=True)


@SETTINGS
@given(n=extent(40), h=extent(200), k=extent(120), cores=CORES, seed=st.integers(0, 99))
def test_bound_checked_rows_are_zero_and_side_inputs_broadcast(n, h, k, cores, seed):
    check(session(graphs.index_select_scaled_bound), {"N": n, "H": h, "K": k}, seed, cores, out_of_range=0.25)


@SETTINGS
@given(v=extent(30), d=extent(160), b=extent(9), s_=extent(20), cores=CORES, seed=st.integers(0, 99))
def test_embedding_with_two_index_axes(v, d, b, s_, cores, seed):
    check(session(graphs.embedding_2d_sigmoid), {"V": v, "D": d, "B": b, "S": s_}, seed, cores)


@SETTINGS
@given(a=extent(6), n=extent(20), h=extent(70), k=extent(30), cores=CORES, seed=st.integers(0, 99))
def test_rows_over_outer_axes_without_post_chain(a, n, h, k, cores, seed):
    check(session(graphs.middle_axis_select), {"A": a, "N": n, "H": h, "K": k}, seed, cores)


@pytest.mark.parametrize("kind,dtype", [("Sum", "float32"), ("Max", "float16")])
@SETTINGS
@given(n=extent(20), h=extent(12), w=extent(40), k=extent(60), cores=CORES, seed=st.integers(0, 99))
def test_reduce_inside_rows(kind, dtype, n, h, w, k, cores, seed):
    check(session(graphs.row_reduce, kind, dtype), {"N": n, "H": h, "W": w, "K": k}, seed, cores)


def test_neighbouring_rows_share_one_copy():
    """Sorted consecutive indices: each tile is one DataCopyPad (plus its store), not one per row."""
    s = session(graphs.index_select_relu, "float32", "int64")
    sizes = {"N": 64, "H": 40, "K": 48}
    x = np.random.default_rng(3).standard_normal((64, 40)).astype(np.float32)
    cores = 4

    def rows(idx):  # the index as the graph holds it: a stride-0 view [K, H]
        return s.inputs(sizes, arrays={"x": x, "idx": np.broadcast_to(idx[:, None], (48, 40))})

    tiles = solve_scheduled(s.scheduled, sizes, cores).chosen().fields["tiles"]
    consecutive = s.check(inputs=rows(np.arange(8, 56)), core_num=cores)
    assert consecutive.ok, consecutive.describe()
    assert consecutive.twin.counter("datacopy_calls") == 2 * tiles
    scattered = s.check(inputs=rows(np.arange(47, -1, -1)), core_num=cores)
    assert scattered.ok, scattered.describe()
    assert scattered.twin.counter("datacopy_calls") == 48 + tiles


def test_out_of_range_index_without_bound_check_is_reported():
    s = session(graphs.index_select_relu, "float32", "int64")
    sizes = {"N": 10, "H": 8, "K": 4}
    x = np.zeros((10, 8), np.float32)
    idx = np.broadcast_to(np.array([1, 2, 10, 3])[:, None], (4, 8))
    inputs = s.inputs(sizes, arrays={"x": x, "idx": idx})
    with pytest.raises(TwinSanitizerError) as info:
        s.run(inputs, core_num=2)
    assert info.value.kind == "gather-out-of-range"
    with pytest.raises(AscirError, match="index-in-range"):  # check(): the reference refuses the input first
        s.check(inputs=inputs, core_num=2)


@pytest.mark.parametrize(
    "names", [("R", "t", "Rt", "RTB", "RTb"), ("int", "a-b", "x_gm", "pipe", "blockIdx")]
)
def test_any_axis_names_compile(names, monkeypatch):
    """Axis names become C++ only through the kernel generator's loop_variable(): `t`, keywords, `a-b` all work."""
    monkeypatch.setattr(get_registry().get("template", "rowcopy"), "axis_names", names)
    s = TwinSession(graphs.index_select_relu("float32", "int64"), ROWCOPY)
    assert [a.name for a in s.scheduled.cases[0].impl.stages[0].axes] == list(names)
    check(s, {"N": 30, "H": 20, "K": 17}, seed=4, cores=3)
