"""The exit hook af_core registers: it freezes the collector at exit unless AF_EXIT_COLLECTION=full."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from af_core import exit_collection

#: registered before af_core is imported, so it runs after af's hook (exit hooks run last-in, first-out)
PROBE = "import atexit, gc\natexit.register(lambda: print('frozen', gc.get_freeze_count()))\nimport af_core\n"


def run_probe(env_value: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if k != exit_collection.ENV_VAR}
    if env_value is not None:
        env[exit_collection.ENV_VAR] = env_value
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, env=env)
    frozen = [line for line in out.stdout.splitlines() if line.startswith("frozen ")]
    assert len(frozen) == 1, out.stdout
    return int(frozen[0].split()[1])


@pytest.mark.parametrize("value", [None, "", "no", "FULL"])
def test_the_collector_is_frozen_at_exit(value):
    """Every object the process still tracks is in the permanent generation when later hooks run."""
    assert run_probe(value) > 1000


def test_full_keeps_the_last_collection():
    assert run_probe(exit_collection.KEEP) == 0


def test_install_registers_once(monkeypatch):
    calls = []
    monkeypatch.setattr(exit_collection.atexit, "register", calls.append)
    monkeypatch.setattr(exit_collection, "_installed", False)
    exit_collection.install()
    exit_collection.install()
    assert calls == [exit_collection.freeze_at_exit]
