"""The modelled cost that breaks ties between candidates of equal score.

Units are bytes of global-memory traffic; every other effect is converted to
bytes with the constants below (rough A5 figures, documented so a template
author can reason about them):

- ``gm_bytes``: bytes the case moves between GM and UB (DataCopy / DataCopyPad),
  including workspaces written and read back;
- ``cachelines``: scattered accesses (SIMT lanes, scalar reads) cost a whole
  sector each: :data:`SECTOR_BYTES` per access;
- ``api_calls``: every API call issued per tile has a fixed issue cost of
  :data:`API_CALL_BYTES`;
- ``serialized``: a case that cannot overlap copies with compute (single
  buffering) pays a quarter more.

The host tiling evaluates the same formula; lower is better.
"""

from __future__ import annotations

import sympy

from af_core.ir.sizes import Expr
from af_core.tiling.spec import FloorDiv

SECTOR_BYTES = 32
API_CALL_BYTES = 256


LINE_BYTES = 128


def gather_read_bytes(index_values: Expr, run_bytes: Expr) -> Expr:
    """Bytes a cache-line-based gather reads: per index value, the lines of its contiguous run.

    A run of ``b`` bytes at a random offset touches ``b / 128`` lines plus
    half a line of misalignment on average.
    """
    from af_core.tiling.spec import CeilDiv

    return index_values * (LINE_BYTES * CeilDiv(run_bytes, LINE_BYTES) + LINE_BYTES // 2)


def modelled_cost(gm_bytes: Expr, *, scattered: Expr = 0, api_calls: Expr = 0, serialized: bool = False) -> Expr:
    cost = sympy.sympify(gm_bytes) + SECTOR_BYTES * sympy.sympify(scattered) + API_CALL_BYTES * sympy.sympify(api_calls)
    return cost + FloorDiv(cost, 4) if serialized else cost
