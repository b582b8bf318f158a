"""``afc --help``, ``afc --version`` and ``afc plugins`` start without the heavy libraries.

``--version`` lists every distribution.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import subprocess
import sys

import pytest

import af_core
from af_core.cli import VERSION_ENTRY_POINT_GROUP
from af_core.plugin_manager import ENTRY_POINT_GROUP

HEAVY = ("sympy", "numpy", "networkx", "jinja2", "rich")


def run_afc(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run ``python -m af_core ARGS`` and return the process and the heavy top-level modules it loaded."""
    probe = (
        "import runpy, sys\n"
        f"sys.argv = ['afc', *{list(args)!r}]\n"
        "try:\n"
        "    runpy.run_module('af_core', run_name='__main__', alter_sys=True)\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "else:\n"
        "    code = 0\n"
        f"print('LOADED', *sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    loaded_line = [line for line in proc.stderr.splitlines() if line.startswith("LOADED")]
    assert loaded_line, proc.stderr
    return proc, set(loaded_line[-1].split()[1:])


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("compile", "--help")])
def test_help_and_version_load_no_heavy_library(args):
    proc, loaded = run_afc(*args)
    assert proc.returncode == 0, proc.stderr
    assert loaded == set()


def test_the_probe_sees_heavy_libraries_when_a_command_loads_them():
    proc, loaded = run_afc("plugins")
    assert proc.returncode == 0, proc.stderr
    assert "rich" in loaded  # the table printer; so an empty set above means something


def core_only_env() -> dict[str, str]:
    """The environment of an install with no plugin: every installed entry point disabled (so never imported)."""
    names = sorted({ep.name for ep in md.entry_points(group=ENTRY_POINT_GROUP)})
    return {**os.environ, "AF_DISABLE_PLUGINS": ",".join(names)}


def test_plugins_with_only_the_core_loads_nothing_heavy_but_the_table_printer():
    proc, loaded = run_afc("plugins", env=core_only_env())
    assert proc.returncode == 0, proc.stderr
    assert loaded == {"rich"}
    assert "af-core" in proc.stdout and "register_ops" in proc.stdout
    assert "load errors: none" in proc.stdout


def test_the_core_registry_validates_its_ops_without_sympy_or_numpy():
    """Building the registry runs every registration through its check; the ops it holds still work."""
    probe = (
        "import sys\n"
        "from af_core.registry import get_registry\n"
        "registry = get_registry()\n"
        "print(*registry.names('op'))\n"
        "print(*sorted({m.split('.')[0] for m in sys.modules} & {'sympy', 'numpy', 'networkx', 'jinja2'}))\n"
        "print(repr(type(registry.get('op', 'Load').attr_specs['offset'].default)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=core_only_env())
    assert proc.returncode == 0, proc.stderr
    ops, heavy_before_use, offset_type = proc.stdout.splitlines()
    assert {"Data", "Load", "Store", "Output", "Broadcast", "IndirectLoad", "Sum"} <= set(ops.split())
    assert heavy_before_use == ""
    assert "sympy" in offset_type  # an unset expr attribute still reads as a sympy expression


def test_plugins_builds_no_graph_whatever_is_installed():
    proc, loaded = run_afc("plugins")
    assert proc.returncode == 0, proc.stderr
    assert "networkx" not in loaded


def test_version_lists_core_and_every_plugin_distribution():
    proc = subprocess.run([sys.executable, "-m", "af_core", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert lines[0] == f"af-core {af_core.__version__}"
    expected = sorted(
        {
            (ep.dist.name, ep.dist.version)
            for ep in md.entry_points(group=ENTRY_POINT_GROUP)
            if ep.dist is not None and ep.dist.name != "af-core"
        }
    )
    assert lines[1:] == [f"{name} {version}" for name, version in expected]


def test_version_reads_plugin_metadata_without_importing_the_plugin(tmp_path):
    """A plugin distribution whose module would fail on import is still listed, and not imported."""
    (tmp_path / "af_never_imported.py").write_text("raise SystemExit('imported')\n")
    info = tmp_path / "af_fake_template-9.8.7.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: af-fake-template\nVersion: 9.8.7\n")
    (info / "entry_points.txt").write_text("[af_core]\nfake = af_never_imported\n")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "af_core", "--version"], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"af-core {af_core.__version__}"
    assert "af-fake-template 9.8.7" in lines[1:]
    assert lines[1:] == sorted(lines[1:])


def test_version_reads_the_plugin_managers_entry_point_group():
    assert VERSION_ENTRY_POINT_GROUP == ENTRY_POINT_GROUP


def test_plugins_with_every_installed_plugin_loads_nothing_heavy_but_the_table_printer():
    """Plugins register their templates, ApiCalls and samples deferred: listing them imports no sympy."""
    installed = {ep.name for ep in md.entry_points(group=ENTRY_POINT_GROUP)}
    proc, loaded = run_afc("plugins")
    assert proc.returncode == 0, proc.stderr
    assert loaded == {"rich"}
    assert "load errors: none" in proc.stdout
    for name in sorted(installed):
        assert name in proc.stdout


def test_plugins_load_builds_every_deferred_registration_and_then_loads_the_heavy_layers():
    templates = {ep.name for ep in md.entry_points(group=ENTRY_POINT_GROUP)} - {"elementwise", "v35_regbase"}
    proc, loaded = run_afc("plugins", "--load")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "load errors: none" in proc.stdout
    if templates:  # a template was built: its module uses the formula engine
        assert "sympy" in loaded
    else:  # af-core alone (the core env): nothing is deferred, so nothing heavy is built
        assert loaded == {"rich"}
