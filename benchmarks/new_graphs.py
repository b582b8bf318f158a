"""Graphs no cache has seen, for compile latency with cold caches.

Compiling the same graph again is served by caches of ours (printed C++ texts,
evaluated formulas) and of sympy (printing, simplification of the same
symbols). A user's new graph hits none of them: :func:`new_minimal_graph` gives
the seed's minimal graph under a graph name and size names never used before in
the process, so every formula the compiler prints or simplifies is new.
"""

from __future__ import annotations

import itertools

from af_core.builders import GraphBuilder, gather
from af_core.ir.graph import HintGraph

_SERIAL = itertools.count()


def new_minimal_graph() -> HintGraph:
    """x float16 [4 sizes] gathered along axis 2 by an int32 index [4 sizes] (the seed's minimal graph),
    named ``minimal_new_<n>`` with sizes ``s<n>_<i>`` and ``t<n>_<i>``, n new on every call."""
    n = next(_SERIAL)
    g = GraphBuilder(f"minimal_new_{n}")
    x = g.data("x", [f"s{n}_{i}" for i in range(4)], "float16")
    index = g.data("index", [f"t{n}_{i}" for i in range(4)], "int32")
    g.output(gather(x, 2, index), "y")
    return g.build()


#: A fresh interpreter: import the compiler, then compile the seed's minimal graph once. Prints the
#: seconds of the imports and of the first compile (plugin loading included: it happens on first use).
FRESH_PROCESS = r"""
import time
start = time.perf_counter()
from af_core.autofuser import Autofuser
from af_core.samples import seed_minimal
imported = time.perf_counter()
fuser = Autofuser()
result = fuser.generate(fuser.schedule(seed_minimal()))
done = time.perf_counter()
assert "TILING_KEY_IS(" in result.kernel
print(imported - start, done - imported)
"""
