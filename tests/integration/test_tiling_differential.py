"""The generated C++ host tiling and its Python twin agree field for field."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.errors import TilingError
from af_core.testing import chain_graph, gather_sizes
from af_core.tiling.native import NativeTiling
from af_core.tiling.solve import solve_scheduled

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
