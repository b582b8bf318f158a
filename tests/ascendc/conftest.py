"""Fixtures of the official-header check: the header tree and one checker per test run.

The tests skip only when no headers are found at all (``AF_ASCENDC_SRC`` unset,
or naming nothing that exists, as on a clone without the shared directory beside
it); a location that exists but holds no usable headers is an error, not a skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from af_core.ascendc import SOURCE_ENV, AscendcChecker, find_source


@pytest.fixture(scope="session")
def ascendc_source():
    given = os.environ.get(SOURCE_ENV)
    if not given or not Path(given).exists():
        pytest.skip(
            f"no AscendC headers: set {SOURCE_ENV} to an asc-devkit tree or tarball directory "
            f"(now: {given or 'unset'})"
        )
    return find_source()


@pytest.fixture(scope="session")
def checker(ascendc_source):
    return AscendcChecker(ascendc_source)
