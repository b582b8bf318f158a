"""A pytest plugin that lists every elementwise op the SIMD / SK-like chains of a test run keep as a single
memory-based call, to check the claim that a test suite's chains are all register vector functions.

Every schedule the run makes records, per case, why each op that did not join a vector function stays a
single call (``meta["vector_chains"]``, the notes ``afc explain`` prints). The plugin collects those notes,
leaves out the ones a test asked for (``kept a memory call by the test``: the memory-path twins that register
forms are compared with) and writes the rest, sorted, to the JSON file ``AF_CHAIN_AUDIT`` names (default
``chain_audit.json``), with the number of schedules seen.

Usage:
    PYTHONPATH=tools python -m pytest -p chain_audit tests/integration plugins/*/tests
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

STAYS = "stays a single vector call"
ASKED = "kept a memory call by the test"

_kept: set[tuple[str, str, str]] = set()
_seen = {"schedules": 0}


def pytest_configure(config: pytest.Config) -> None:
    from af_core.autofuser import Autofuser

    schedule = Autofuser.schedule

    def recording(self, graph):
        result = schedule(self, graph)
        _seen["schedules"] += 1
        for case in result.cases:
            for note in case.impl.meta.get("vector_chains", ()):
                if STAYS in note and not note.endswith(ASKED):
                    _kept.add((graph.name, case.impl.template, note))
        return result

    Autofuser.schedule = recording  # type: ignore[method-assign]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    target = Path(os.environ.get("AF_CHAIN_AUDIT", "chain_audit.json"))
    body = {
        "schedules": _seen["schedules"],
        "kept": [{"graph": g, "template": t, "note": n} for g, t, n in sorted(_kept)],
    }
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(body, f, indent=1)
    os.replace(tmp, target)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(
            f"chain audit: {len(_kept)} memory call note(s) over {_seen['schedules']} schedules -> {target}"
        )
