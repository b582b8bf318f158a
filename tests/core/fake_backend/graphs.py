"""The graph most fake back-end tests share, so that their twin builds are one cache entry."""

from __future__ import annotations

from af_core.ir.graph import HintGraph
from af_core.testing import chain_graph


def offset_chain() -> HintGraph:
    """y[i, j] = x[i, index[i, j] - 1] + 0.5, a -1 meaning the last column (need_check_negative).

    Sizes a0, a1 (x) and b0 <= a0, b1 (index and y); float32 data, int64 index.
    """
    return chain_graph(
        rank=2,
        dim=1,
        dtype="float32",
        index_dtype="int64",
        index_pre=("FakeOffset(-1)",),
        post=("FakeOffset(0.5)",),
        need_check_negative=True,
    )
