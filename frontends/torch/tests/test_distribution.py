"""af-torch follows the packaging rules of the other distributions, and its plugin module imports no torch."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import af_torch

from af_core import hookspecs

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parents[1]
META = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))


def test_license_metadata_and_one_version_source():
    assert (HERE / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    project = META["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    assert (HERE / project["readme"]).is_file() and project["dynamic"] == ["version"]
    assert META["tool"]["setuptools"]["dynamic"]["version"]["attr"] == "af_torch.__version__"
    tree = ast.parse((HERE / "af_torch" / "__init__.py").read_text(encoding="utf-8"))
    versions = [
        n.value.value
        for n in tree.body
        if isinstance(n, ast.Assign)
        and [t.id for t in n.targets if isinstance(t, ast.Name)] == ["__version__"]
    ]
    assert versions == [af_torch.__version__]
    assert (HERE / "af_torch" / "py.typed").is_file()


def test_bounds_the_core_like_the_plugins_and_declares_what_it_imports():
    deps = META["project"]["dependencies"]
    assert "af-core~=0.1.0" in deps and "torch>=2.13" in deps
    declared = {d.split(">")[0].split("~")[0].split("=")[0] for d in deps}
    imported = set()
    for source in (HERE / "af_torch").rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    assert imported - {"af_torch", "af_core", "__future__"} - set(sys.stdlib_module_names) <= declared


def test_entry_points_and_contract():
    entry = META["project"]["entry-points"]
    assert entry["torch_dynamo_backends"] == {"af": "af_torch.backend:af_backend"}
    from af_torch import plugin

    assert plugin.AF_CONTRACT_VERSION == hookspecs.CONTRACT_VERSION


def test_plugin_module_imports_no_torch():
    probe = "import sys, af_torch.plugin; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
