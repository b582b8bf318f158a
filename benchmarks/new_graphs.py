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


#: A fresh interpreter: import the compiler, then compile the seed's minimal graph once, every artifact
#: read (the proto is rendered on first read). Prints the
#: seconds of the imports and of the first compile (plugin loading included: it happens on first use),
#: as wall time and as this process's CPU time (user + system), which a loaded machine inflates less.
FRESH_PROCESS = r"""
import time
start, start_cpu = time.perf_counter(), time.process_time()
from af_core.autofuser import Autofuser
from af_core.samples import seed_minimal
imported, imported_cpu = time.perf_counter(), time.process_time()
fuser = Autofuser()
result = fuser.generate(fuser.schedule(seed_minimal()))
result.files()
done, done_cpu = time.perf_counter(), time.process_time()
assert "TILING_KEY_IS(" in result.kernel
print(imported - start, done - imported, imported_cpu - start_cpu, done_cpu - imported_cpu)
"""

#: The floor sympy sets a fresh process: CPU seconds of ``import sympy``, then of its first sum of two
#: symbols (the first Add imports sympy.tensor and sympy.combinatorics, whatever the formula).
SYMPY_FLOOR = r"""
import time
start = time.process_time()
import sympy
imported = time.process_time()
a, b = sympy.symbols("a b", integer=True, positive=True)
a - b + 1
print(imported - start, time.process_time() - imported)
"""


def bytecode_env() -> dict[str, str]:
    """This environment with bytecode caching on, as an installed package has it.

    With PYTHONDONTWRITEBYTECODE set (some CI and sandbox setups), a checkout's modules would be
    compiled from source in every fresh process (about 70 ms of af_core and the plugins); the
    benchmarks run one process first to write the bytecode, then measure with it.
    """
    import os

    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
