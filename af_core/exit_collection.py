"""Leave out the interpreter's last cyclic garbage collection when the process exits.

A process that imported sympy and compiled one graph holds a few hundred thousand objects the cyclic
collector tracks, and CPython walks every one of them in the full collection it runs while shutting
down (benchmarks/startup.py times a first compile with and without this hook). Python does not promise to finalize objects that are still alive at exit, so freezing
the collector from an exit hook gives up nothing the language guarantees: module teardown still frees
objects by reference counting, and the exit hooks registered before this one (``tempfile``'s cleanup
and ``weakref.finalize`` callbacks among them) still run, after it.

The hook is registered when ``af_core`` is imported. ``AF_EXIT_COLLECTION=full`` keeps the collection,
for a program whose objects in reference cycles must have their finalizers run at exit.
"""

from __future__ import annotations

import atexit
import gc
import os

#: the environment variable that keeps the last collection, and the value that does it
ENV_VAR, KEEP = "AF_EXIT_COLLECTION", "full"


def freeze_at_exit() -> None:
    """The exit hook: move every tracked object to the permanent generation, which no collection walks."""
    if os.environ.get(ENV_VAR) != KEEP:
        gc.freeze()


_installed = False


def install() -> None:
    """Register :func:`freeze_at_exit` once per process (importing ``af_core`` calls it)."""
    global _installed
    if not _installed:
        atexit.register(freeze_at_exit)
        _installed = True
