"""The same graph gives byte-identical artifacts whatever PYTHONHASHSEED is."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = r"""
import hashlib
from af_core.autofuser import Autofuser
from af_core.samples import installed_samples
from af_core.testing import chain_graph

graphs = [s.build() for s in installed_samples()]
graphs.append(chain_graph(rank=4, dim=2, dtype="float16", pre=("Abs", "Add(side)"), index_pre=("Maxs(0)",),
                          post=("Exp", "Mul(side)"), reduce=("Sum", (3,))))
digest = hashlib.sha256()
for graph in graphs:
    fuser = Autofuser()
    for name, text in sorted(fuser.generate(fuser.schedule(graph)).files().items()):
        digest.update(name.encode())
        digest.update(text.encode())
print(digest.hexdigest())
"""


def artifacts_digest(seed: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_artifacts_do_not_depend_on_the_hash_seed():
    digests = {seed: artifacts_digest(seed) for seed in ("0", "1", "12345", "random")}
    assert len(set(digests.values())) == 1, digests
