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
from af_core.tiling.spec import CeilDiv, FloorDiv, Min

SECTOR_BYTES = 32
API_CALL_BYTES = 256


LINE_BYTES = 128


def gather_read_bytes(
    index_values: Expr,
    run_bytes: Expr,
    rows: Expr | None = None,
    slice_bytes: Expr | None = None,
    cores: Expr = 1,
    cache_bytes: int | None = None,
) -> Expr:
    """Bytes a cache-line-based gather reads when ``cores`` cores split ``index_values`` reads evenly.

    Per index value, the lines of its contiguous run (``run_bytes`` at a random
    offset: ``run_bytes / 128`` lines plus half a line of misalignment on
    average). When the input slices a core's values can point into (its share
    of ``rows`` outer rows of ``slice_bytes`` each, at least one) fit its data
    cache of ``cache_bytes``, a line it fetched once serves every later value
    in it, so the core reads at most those slices; when they do not fit,
    random reads evict each other and every value pays for its lines. The data
    caches are per core: two cores reading one line both pay for it.
    """
    per_value = LINE_BYTES * CeilDiv(run_bytes, LINE_BYTES) + LINE_BYTES // 2
    if rows is None or slice_bytes is None or cache_bytes is None:
        return index_values * per_value
    per_core = CeilDiv(index_values, cores) * per_value
    footprint = CeilDiv(rows, cores) * LINE_BYTES * (CeilDiv(slice_bytes, LINE_BYTES) + 1)
    fits = Min(1, FloorDiv(cache_bytes, footprint))  # 1 when the footprint fits the cache, else 0
    return cores * (per_core - fits * (per_core - Min(per_core, footprint)))


def modelled_cost(
    gm_bytes: Expr, *, scattered: Expr = 0, api_calls: Expr = 0, serialized: bool = False
) -> Expr:
    cost = (
        sympy.sympify(gm_bytes)
        + SECTOR_BYTES * sympy.sympify(scattered)
        + API_CALL_BYTES * sympy.sympify(api_calls)
    )
    return cost + FloorDiv(cost, 4) if serialized else cost
