"""Fixtures shared by the core and integration tests."""

from __future__ import annotations

import pytest

from af_core.platform import reset_platform
from af_core.registry import get_registry, reset_registry


@pytest.fixture(autouse=True)
def _fresh_platform():
    reset_platform()
    yield
    reset_platform()


@pytest.fixture
def registry_env(monkeypatch):
    """Rebuild the plugin registry under a modified environment, restore afterwards."""
    previous = reset_registry()

    def build(**env):
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        reset_registry()
        return get_registry()

    yield build
    reset_registry(previous)


def plugin_installed(name: str) -> bool:
    return get_registry().manager.pm.has_plugin(name)
