"""Fixtures of the host-side check: the CANN host headers and one checker per test run.

The tests that compile skip only when the headers are absent (``AF_CANN_SRC`` or
``AF_ASCENDC_SRC`` naming nothing, and no shared directory beside the checkout);
with ``AF_CANN_CHECK=require`` (or ``1``) that absence fails them instead. A
location that exists but holds no usable headers is always an error.
"""

from __future__ import annotations

import pytest

from af_core.cann import CHECK_ENV, HostChecker, find_headers, required, skip_reason


@pytest.fixture(scope="session")
def host_headers():
    reason = skip_reason()
    if reason is not None:
        if required():
            pytest.fail(f"{CHECK_ENV} requires the host check, but: {reason}")
        pytest.skip(f"no CANN host headers: {reason}")
    return find_headers()


@pytest.fixture(scope="session")
def host_checker(host_headers):
    return HostChecker(host_headers)
