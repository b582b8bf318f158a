"""The generated C++ host tiling and its Python twin agree field for field."""

from __future__ import annotations

import functools
import math
import runpy
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.errors import TilingError
from af_core.testing import chain_graph, gather_sizes
from af_core.tiling.solve import solve_scheduled
from af_core.twin.native_tiling import NativeTiling

pytestmark = pytest.mark.twin

GRAPHS = {
    "plain": dict(rank=3, dim=1),
    "reduce_last": dict(rank=3, dim=1, dtype="float16", reduce=("Sum", (2,))),
    "reduce_mid": dict(rank=4, dim=2, dtype="bfloat16", reduce=("Mean", (1, 2))),
    "chains": dict(rank=2, dim=0, pre=("Abs", "Add(side)"), post=("Exp",)),
}


@functools.cache
def compiled(name: str, force: str | None = None):
    fuser = Autofuser(AutofuserOptions(force_template=force))
    scheduled = fuser.schedule(chain_graph(**GRAPHS[name]))
    result = fuser.generate(scheduled)
    return scheduled, result, NativeTiling(result)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_python_and_cpp_tiling_agree(name):
    scheduled, result, native = compiled(name)
    rng = np.random.default_rng(len(name))
    rank, dim = GRAPHS[name]["rank"], GRAPHS[name]["dim"]
    checked = 0
    for _k in range(60):
        sizes = gather_sizes(rng, rank, dim, max_extent=int(rng.choice([4, 40, 400])), max_elements=10**8)
        core_num = int(rng.choice([1, 2, 7, 48, 64]))
        ub_size = int(rng.choice([248 * 1024, 192 * 1024, 40 * 1024, 16 * 1024]))
        got = native(sizes, core_num, ub_size)
        try:
            want = solve_scheduled(scheduled, sizes, core_num, ub_size)
        except TilingError:
            assert got.code in (1, 2), f"Python found no case for {sizes} but C++ returned {got.code}"
            continue
        assert got.code == 0, f"C++ failed ({got.code}) where Python chose key {want.tiling_key}"
        assert got.struct == want.struct, f"sizes {sizes}, cores {core_num}, ub {ub_size}"
        assert got.block_dim == want.block_dim and got.workspace_size == want.workspace_size
        checked += 1
    assert checked >= 20


def test_invalid_sizes_return_an_error_without_writing():
    scheduled, result, native = compiled("plain")
    sizes = {n: 4 for n in result.size_names}
    sizes["b0"] = 9  # index larger than the input on a non-dim axis
    got = native(sizes, 8, 248 * 1024)
    assert got.code == 1
    assert all(v == 0 for v in got.struct.values())
    with pytest.raises(TilingError, match="exceeds input size"):
        solve_scheduled(scheduled, sizes, 8, 248 * 1024)
    sizes = {n: 4 for n in result.size_names}
    sizes["a2"] = 0
    assert native(sizes, 8, 248 * 1024).code == 1


def test_nothing_fits_is_code_two():
    scheduled, result, native = compiled("plain", "simt")
    sizes = {n: 4 for n in result.size_names}
    got = native(sizes, 8, 16 * 1024)  # below the 32 KiB SIMT data cache
    assert got.code == 2
    with pytest.raises(TilingError, match="DCache"):
        solve_scheduled(scheduled, sizes, 8, 16 * 1024)


# -- the int64 contract at the extremes --------------------------------------------------------------------------

SEED_SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "minimal_graph.py"
INT64_MAX = (1 << 63) - 1


@functools.cache
def seed_compiled():
    ns = runpy.run_path(str(SEED_SCRIPT))
    fuser = Autofuser(AutofuserOptions())
    scheduled = fuser.schedule(ns["graph"])
    result = fuser.generate(scheduled)
    return scheduled, result, NativeTiling(result)


def _boundaries() -> list[int]:
    """Sizes where a product or sum of sizes crosses int64 (or a power of two) by one."""
    values = {1, 2, 3, 1 << 62}
    for k in range(1, 63):
        values.update({(1 << k) - 1, 1 << k, (1 << k) + 1})
    for parts in (2, 3, 4):
        for itemsize in (1, 2, 4, 8, 16):
            root = (
                math.isqrt(INT64_MAX // itemsize)
                if parts == 2
                else round((INT64_MAX // itemsize) ** (1 / parts))
            )
            values.update({root - 1, root, root + 1})
    for divisor in (2, 3, 4, 8, 16, 32, 48, 64, 128):
        values.update({INT64_MAX // divisor, INT64_MAX // divisor + 1})
    return sorted(v for v in values if 1 <= v <= 1 << 62)


SIZE = st.one_of(st.integers(1, 1 << 62), st.sampled_from(_boundaries()), st.integers(1, 300))
CORES = st.sampled_from([1, 2, 7, 48, 64, (1 << 32) - 1])
UB = st.sampled_from([16 * 1024, 40 * 1024, 192 * 1024, 248 * 1024, (1 << 32) - 1])


def assert_agree(scheduled, native, sizes, core_num, ub_size) -> str:
    """C++ and Python agree on success/failure (and its kind) and on every field; returns the outcome."""
    got = native(sizes, core_num, ub_size)
    try:
        want = solve_scheduled(scheduled, sizes, core_num, ub_size)
    except TilingError as exc:
        expected = 2 if str(exc).startswith("no case fits") else 1
        assert got.code == expected, (
            f"Python: {exc}; C++ returned {got.code} for {sizes}, {core_num}, {ub_size}"
        )
        assert all(v == 0 for v in got.struct.values()), "C++ wrote tiling data on failure"
        return f"code{expected}"
    assert got.code == 0, f"C++ failed ({got.code}) where Python chose key {want.tiling_key} for {sizes}"
    assert got.struct == want.struct, f"sizes {sizes}, cores {core_num}, ub {ub_size}"
    assert (got.block_dim, got.workspace_size) == (want.block_dim, want.workspace_size)
    return "ok"


def _related(draw, names, relations):
    """Sizes with index sizes clipped to input sizes most of the time (so cases get evaluated)."""
    sizes = {n: draw(SIZE) for n in names}
    if draw(st.integers(0, 3)):
        for small, big in relations:
            sizes[small] = min(sizes[small], sizes[big])
    return sizes


SEED_RELATIONS = [("s4", "s0"), ("s5", "s1"), ("s7", "s3")]


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data(), core_num=CORES, ub_size=UB)
def test_seed_graph_agrees_up_to_2_pow_62(data, core_num, ub_size):
    scheduled, result, native = seed_compiled()
    sizes = _related(data.draw, result.size_names, SEED_RELATIONS)
    outcome = assert_agree(scheduled, native, sizes, core_num, ub_size)
    event(outcome)


@pytest.mark.parametrize("name", sorted(GRAPHS))
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data(), core_num=CORES, ub_size=UB)
def test_chain_graphs_agree_up_to_2_pow_62(name, data, core_num, ub_size):
    scheduled, result, native = compiled(name)
    rank, dim = GRAPHS[name]["rank"], GRAPHS[name]["dim"]
    relations = [(f"b{i}", f"a{i}") for i in range(rank) if i != dim]
    sizes = _related(data.draw, result.size_names, relations)
    assert_agree(scheduled, native, sizes, core_num, ub_size)


def test_seed_graph_sizes_2_pow_61_agree():
    """The reported case: s0 = s2 = 2**61 is rejected by both sides, whatever the other sizes."""
    scheduled, result, native = seed_compiled()
    for rest in (1, 2, 4, 1 << 20, 1 << 61):
        sizes = {n: rest for n in result.size_names}
        sizes.update(s0=1 << 61, s2=1 << 61)
        assert native(sizes, 48, 248 * 1024).code == 1
        with pytest.raises(TilingError, match="spans more than int64 bytes"):
            solve_scheduled(scheduled, sizes, 48, 248 * 1024)


def test_largest_tensor_that_fits_int64_still_tiles():
    """One element under the x guard's limit passes the guards on both sides; one over fails both."""
    scheduled, result, native = seed_compiled()
    sizes = {n: 1 for n in result.size_names}
    sizes["s0"] = INT64_MAX // 2  # x is float16: 2 bytes per element
    outcomes = {assert_agree(scheduled, native, sizes, 48, 248 * 1024)}
    sizes["s0"] += 1
    assert assert_agree(scheduled, native, sizes, 48, 248 * 1024) == "code1"
    assert outcomes <= {"ok", "code2"}


def test_case_formulas_that_leave_int64_drop_the_case_on_both_sides():
    """Sizes that pass every guard, but whose modelled cost leaves int64: no case fits, in C++ and in Python."""
    scheduled, result, native = seed_compiled()
    sizes = {n: 1 for n in result.size_names}
    sizes.update(s0=1 << 60, s4=1 << 60)  # every tensor spans at most 2**62 bytes
    assert assert_agree(scheduled, native, sizes, 48, 248 * 1024) == "code2"
    with pytest.raises(TilingError, match="leaves int64"):
        solve_scheduled(scheduled, sizes, 48, 248 * 1024)
    sizes.update(s0=1 << 40, s4=1 << 40)  # small enough for every formula
    assert assert_agree(scheduled, native, sizes, 48, 248 * 1024) == "ok"
