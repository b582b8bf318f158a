"""Compiling (schedule + codegen) in a fresh process loads neither numpy, networkx nor importlib.metadata.

numpy and networkx each cost about 80 ms of a fresh process's first compile, importlib.metadata about 12
(af_core.entry_points reads the plugins' entry points without it), importlib.resources with its zip reader
about 3 (the plugins' C++ sources are read beside their packages). numpy is for the
reference interpreter, the twin and the few dtype rules that compute with it
(an integer scalar comparison, moving an op behind the gather); networkx only
for ``HintGraph.nx`` and to name a cycle. The samples compile with every
installed plugin loaded, as a user's first ``Autofuser().compile`` does.
"""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from af_core.autofuser import Autofuser
from af_core.samples import installed_samples
fuser = Autofuser()
names = []
for sample in installed_samples():
    result = fuser.generate(fuser.schedule(sample.build()))
    assert "TILING_KEY_IS(" in result.kernel
    names.append(sample.name)
print(" ".join(names))
print(" ".join(sorted({m.split(".")[0] for m in sys.modules} & {"numpy", "networkx"})))
print("importlib.metadata" in sys.modules, "email" in sys.modules, "importlib.resources" in sys.modules)
"""


def test_compiling_the_samples_loads_neither_numpy_networkx_nor_importlib_metadata():
    out = subprocess.run([sys.executable, "-c", PROBE], check=True, capture_output=True, text=True).stdout
    compiled, loaded, metadata = out.split("\n")[:3]
    assert "seed_minimal" in compiled.split() and "gather_rows" in compiled.split()
    assert loaded == ""
    assert metadata == "False False False"


SEED_PROBE = """
import sys
from af_core.autofuser import Autofuser
from af_core.samples import seed_minimal
Autofuser().compile(seed_minimal())
print(sorted(m for m in sys.modules if m.startswith("af_v35_regbase.api_calls.vf_chain")))
"""


def test_a_graph_without_elementwise_ops_or_reduces_imports_no_register_chain_code():
    """The chain's ApiCall declares its role (deferred(..., roles=)) and no node of the seed graph could
    join a run, so its 20 modules are not imported."""
    out = subprocess.run(
        [sys.executable, "-c", SEED_PROBE], check=True, capture_output=True, text=True
    ).stdout
    assert out.strip() == "[]"
