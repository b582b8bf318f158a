"""Fixtures that build and run C++ programs against the CPU twin headers.

The helpers live in ``twin_build.py`` next to this file; it is loaded by path so
the fixtures work whatever the rootdir, import mode or sys.path is.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location("af_v35_twin_build", Path(__file__).with_name("twin_build.py"))
twin_build = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = twin_build
_SPEC.loader.exec_module(twin_build)


@pytest.fixture(scope="session")
def twin_include_dir() -> Path:
    return twin_build.INCLUDE_DIR


@pytest.fixture(scope="session")
def twin_compile(tmp_path_factory):
    """compile(source, sanitize=False, flags=()) -> run(*args, stdin=None) -> (rc, stdout, stderr).

    Builds once and returns a runner, for tests that run one program several times.
    """
    if twin_build.compiler() is None:
        pytest.skip("no C++ compiler")

    def compile_(source: str, *, sanitize: bool = False, flags=()):
        exe = twin_build.build(source, tmp_path_factory.mktemp("twin"), sanitize=sanitize, extra_flags=flags)

        def run(*args, stdin: str | None = None, timeout: float = 60.0, race: str = "off"):
            return twin_build.run(exe, args, stdin=stdin, sanitize=sanitize, timeout=timeout, race=race)

        return run

    return compile_


@pytest.fixture
def twin_run():
    """run(source, *args, stdin=None, sanitize=False, flags=()) -> (returncode, stdout, stderr)."""
    if twin_build.compiler() is None:
        pytest.skip("no C++ compiler")

    def run(
        source: str, *args, stdin: str | None = None, sanitize: bool = False, flags=(), timeout: float = 60.0
    ):
        return twin_build.build_and_run(
            source, args, stdin=stdin, sanitize=sanitize, extra_flags=flags, timeout=timeout
        )

    return run


@pytest.fixture(scope="session")
def checker():
    """The official-header checker (af_core.ascendc) over the headers named by AF_ASCENDC_SRC; the tests that
    use it are skipped where those headers are not at hand."""
    import os

    from af_core.ascendc import SOURCE_ENV, AscendcChecker, find_source

    given = os.environ.get(SOURCE_ENV)
    if not given or not Path(given).exists():
        pytest.skip(f"no AscendC headers: set {SOURCE_ENV}")
    return AscendcChecker(find_source())
