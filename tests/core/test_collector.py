"""af_core.collector: the collector held during a compile and restored after it; the exit hook that
freezes it at exit unless AF_EXIT_COLLECTION=full."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading

import fake_backend
import pytest

from af_core import collector

#: registered before af_core is imported, so it runs after af's hook (exit hooks run last-in, first-out)
PROBE = "import atexit, gc\natexit.register(lambda: print('frozen', gc.get_freeze_count()))\nimport af_core\n"


def run_probe(env_value: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if k != collector.ENV_VAR}
    if env_value is not None:
        env[collector.ENV_VAR] = env_value
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, env=env)
    frozen = [line for line in out.stdout.splitlines() if line.startswith("frozen ")]
    assert len(frozen) == 1, out.stdout
    return int(frozen[0].split()[1])


@pytest.mark.parametrize("value", [None, "", "no", "FULL"])
def test_the_collector_is_frozen_at_exit(value):
    """Every object the process still tracks is in the permanent generation when later hooks run."""
    assert run_probe(value) > 1000


def test_full_keeps_the_last_collection():
    assert run_probe(collector.KEEP) == 0


def test_install_registers_once(monkeypatch):
    calls = []
    monkeypatch.setattr(collector.atexit, "register", calls.append)
    monkeypatch.setattr(collector, "_installed", False)
    collector.install()
    collector.install()
    assert calls == [collector.freeze_at_exit]


@pytest.fixture
def collector_running():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_holds_the_collector_and_restores_it(collector_running):
    with collector.paused():
        assert not gc.isenabled()
        with collector.paused():  # nested: the inner block's end does not resume it
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), collector.paused():
        raise KeyError("x")
    assert gc.isenabled()


def test_paused_leaves_a_disabled_collector_disabled(collector_running):
    gc.disable()
    with collector.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_overlapping_threads_resume_the_collector_when_the_last_leaves(collector_running):
    inside, leave = threading.Barrier(2), threading.Event()
    states = []

    def first():
        with collector.paused():
            inside.wait()
            leave.wait()  # leaves after the second thread left
        states.append(("first left", gc.isenabled()))

    def second():
        with collector.paused():
            inside.wait()
        states.append(("second left", gc.isenabled()))
        leave.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert states == [("second left", False), ("first left", True)]


def test_a_compile_runs_with_the_collector_held(collector_running, monkeypatch):
    from af_core.autofuser import Autofuser
    from af_core.codegen import codegen
    from af_core.samples import seed_minimal
    from af_core.schedule import scheduler

    seen = []
    schedule, generate = scheduler.schedule, codegen.Codegen.generate

    def spy_schedule(*args, **kwargs):
        seen.append(("schedule", gc.isenabled()))
        return schedule(*args, **kwargs)

    def spy_generate(self, *args, **kwargs):
        seen.append(("generate", gc.isenabled()))
        return generate(self, *args, **kwargs)

    monkeypatch.setattr(scheduler, "schedule", spy_schedule)
    monkeypatch.setattr(codegen.Codegen, "generate", spy_generate)
    with fake_backend.installed():  # a template, whatever is installed
        fuser = Autofuser()
        fuser.compile(seed_minimal())
        fuser.generate(fuser.schedule(seed_minimal()))
    assert seen == [("schedule", False), ("generate", False)] * 2
    assert gc.isenabled()
