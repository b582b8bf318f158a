"""How af uses Python's cyclic garbage collector: held during a compile, frozen at exit.

A compile allocates many container objects that die young without cycles (sympy expressions, graph
copies, the modules and classes a first compile imports); the collector walks them again and again
while they live, and a process's first compile spends some 15 ms in those walks
(``benchmarks/startup.py``). :func:`paused` holds it for the duration of one compile and
:class:`af_core.autofuser.Autofuser` uses it: what a compile leaves in reference cycles (a few thousand
objects at most on the corpus workloads) waits for the next collection after the compile instead.

A process that imported sympy and compiled one graph holds a few hundred thousand objects the collector
tracks, and CPython walks every one of them in the full collection it runs while shutting down.
Python does not promise to finalize objects that are still alive at exit, so freezing the collector
from an exit hook gives up nothing the language guarantees: module teardown still frees objects by
reference counting, and the exit hooks registered before this one (``tempfile``'s cleanup and
``weakref.finalize`` callbacks among them) still run, after it. The hook is registered when
``af_core`` is imported; ``AF_EXIT_COLLECTION=full`` keeps the collection, for a program whose objects
in reference cycles must have their finalizers run at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import threading
from collections.abc import Iterator

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


#: how many :func:`paused` blocks are open, and whether the collector ran before the first of them
_holders, _resume = 0, False
_holders_lock = threading.Lock()


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Hold the collector for the ``with`` block, then restore it as it was.

    Nested and concurrent blocks (threads compiling at once) share one hold: the collector is disabled
    by the first block to enter, if it was running then, and enabled again by the last one to leave. A
    collector that was already disabled when the first block entered stays disabled.
    """
    global _holders, _resume
    with _holders_lock:
        if _holders == 0:
            _resume = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _holders_lock:
            _holders -= 1
            if _holders == 0 and _resume:
                gc.enable()
