"""The sweep split of the integration tests: broad twin sweeps run a fixed quarter by default.

A twin test parametrized over 8 or more combinations (dtype x form x shape
sweeps of the register back end, the numerics contract, the policy
differential) builds a kernel per combination, and together they took half of
the integration run. By default a fixed quarter of each such sweep runs: the
combinations whose id hashes (crc32, so the choice is the same on every machine
and in every process) to 0 mod 4, and always the first one. The other three
quarters are marked ``sweep``; README's test command deselects them
(``-m "not sweep"`` in the integration environment) and ``tox -e sweep`` runs
exactly them, so the two runs together are the whole sweep.
"""

from __future__ import annotations

import zlib
from collections import defaultdict

import pytest

#: a parametrized twin test with at least this many combinations is a sweep
SWEEP_MIN = 8
#: one combination in this many runs by default
SWEEP_KEEP = 4


def pytest_collection_modifyitems(config, items):
    groups: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and item.get_closest_marker("twin") is not None:
            groups[item.nodeid.split("[", 1)[0]].append(item)
    for members in groups.values():
        if len(members) < SWEEP_MIN:
            continue
        for position, item in enumerate(members):
            kept = position == 0 or zlib.crc32(item.callspec.id.encode()) % SWEEP_KEEP == 0
            if not kept:
                item.add_marker(pytest.mark.sweep)
