"""Graphs whose innermost size is a number while the others are symbols.

The templates' selection conditions are integer relations such as
``continuous_bytes * 2 >= 128``; with a concrete inner size sympy's Piecewise
divides the condition by its leading coefficient (``L*M >= 16/7`` for an inner
size of 7 float32 values), and the host tiling has to compare it in integers
(``af_core.tiling.int64``). These graphs gather with int64 ids, compute and
reduce, at every inner size from 1 to 65.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.builders import GraphBuilder, gather
from af_core.twin import TwinSession


def gather_dim1_sum_axis2(d: int):
    """Sum over axis 2 of Muls(gather(x, 1, idx)), x [A, L, M, d], idx [A, K, M, d]."""
    g = GraphBuilder(f"inner_dim1_{d}")
    x = g.data("x", ["A", "L", "M", d], "float32")
    idx = g.data("idx", ["A", "K", "M", d], "int64")
    g.output(g.reduce("Sum", g.op("Muls", gather(x, 1, idx), value=0.5), [2]), "y")
    return g.build()


def gather_dim2_sum_last(d: int):
    """Sum over the last axis (of size d) of gather(x, 2, idx), x [A, B, L, d], idx [A, B, K, d]."""
    g = GraphBuilder(f"inner_dim2_{d}")
    x = g.data("x", ["A", "B", "L", d], "float32")
    idx = g.data("idx", ["A", "B", "K", d], "int64")
    g.output(g.reduce("Sum", gather(x, 2, idx), [3]), "y")
    return g.build()


LAYOUTS = {"dim1_sum_axis2": gather_dim1_sum_axis2, "dim2_sum_last": gather_dim2_sum_last}


def _sizes(layout: str, a: int, b: int, l_: int, k: int) -> dict[str, int]:
    if layout == "dim1_sum_axis2":
        return {"A": a, "L": l_, "K": k, "M": b}
    return {"A": a, "B": b, "L": l_, "K": k}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_inner_size_7_compiles_for_every_template(layout):
    """The report's graphs (inner size 7: fractions 16/7 and 8/7 before) compile with each template kept alone."""
    graph = LAYOUTS[layout](7)
    templates = sorted({c.template for c in Autofuser(AutofuserOptions()).schedule(graph).cases})
    assert {"simd", "simt", "sklike"} <= set(templates)
    for template in templates:
        fuser = Autofuser(AutofuserOptions(force_template=template))
        _tiling_data, tiling, kernel = fuser.codegen(fuser.schedule(graph))
        assert "AutofuseTiling" in tiling and "TILING_KEY_IS" in kernel


@pytest.mark.twin
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_inner_size_7_runs_every_case_on_the_twin(layout):
    """Each case of either graph with inner size 7 matches the reference."""
    session = TwinSession(LAYOUTS[layout](7))
    sizes = _sizes(layout, 3, 2, 5, 4)
    for case in session.scheduled.cases:
        run = session.check(sizes, seed=3, tiling_key=case.tiling_key)
        assert run.ok, run.describe()


@settings(max_examples=15, deadline=None)
@given(d=st.integers(1, 65), layout=st.sampled_from(sorted(LAYOUTS)))
def test_every_concrete_inner_size_compiles(d, layout):
    """All cases' host tiling and kernels are generated, whatever the inner size."""
    fuser = Autofuser(AutofuserOptions())
    _tiling_data, tiling, _kernel = fuser.codegen(fuser.schedule(LAYOUTS[layout](d)))
    assert "AutofuseTiling" in tiling


@pytest.mark.twin
@settings(max_examples=2, deadline=None)
@given(
    d=st.integers(1, 65),
    layout=st.sampled_from(sorted(LAYOUTS)),
    a=st.integers(1, 6),
    b=st.integers(1, 5),
    l_=st.integers(1, 9),
    k=st.integers(1, 6),
)
def test_default_pick_matches_the_reference(d, layout, a, b, l_, k):
    """The case the host tiling picks at a drawn shape runs clean on the twin."""
    run = TwinSession(LAYOUTS[layout](d)).check(_sizes(layout, a, b, l_, k), seed=d)
    assert run.ok, run.describe()
