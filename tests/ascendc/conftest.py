"""Fixtures of the official-header check: the header tree and one checker per session.

The tests skip only when no headers are given at all (``AF_ASCENDC_SRC`` unset);
a location that is set but unusable is an error, not a skip.
"""

from __future__ import annotations

import os

import pytest

from af_core.ascendc import SOURCE_ENV, AscendcChecker, find_source


@pytest.fixture(scope="session")
def ascendc_source():
    if not os.environ.get(SOURCE_ENV):
        pytest.skip(f"no AscendC headers: set {SOURCE_ENV} to an asc-devkit tree or tarball directory")
    return find_source()


@pytest.fixture(scope="session")
def checker(ascendc_source):
    return AscendcChecker(ascendc_source)
