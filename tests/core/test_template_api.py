"""af_core.template_api: the declared facade plugins import the core through.

It re-exports (never redefines) the names the plugins and examples of this
repository use, resolves each on first use so that loading a plugin module
stays light, and shows type checkers every name.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import af_core.template_api as api

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("sympy", "numpy", "networkx", "jinja2", "rich")
#: Names of the hook contract (docs/hooks.md tells authors to import them) that no built-in plugin uses yet,
#: and the per-role protocols ``api_call_for`` returns (a plugin annotating what it got names them).
CONTRACT_ONLY = {
    "SelectionPolicy",
    "ScoreTerm",
    "ResourceFormula",
    "RoleCall",
    "OpCall",
    "GatherCall",
    "VectorChainCall",
}
#: Names docs/writing-templates.md tells authors to use in their own plugin's tests, which no plugin module needs.
TESTS_ONLY = {"ScheduleError", "solve_scheduled"}


def defining_object(name: str) -> object:
    module = importlib.import_module(api._LAZY[name])
    return module if module.__name__ == f"af_core.{name}" else getattr(module, name)


def test_every_declared_name_is_the_defining_modules_object():
    assert api.__all__ == sorted(api._LAZY)
    for name in api.__all__:
        assert getattr(api, name) is defining_object(name), name
    assert set(api.__all__) <= set(dir(api))


def test_type_checkers_see_every_declared_name():
    tree = ast.parse(Path(api.__file__).read_text(encoding="utf-8"))
    block = next(
        node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    seen = {
        alias.asname or alias.name
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert seen == set(api.__all__)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="af_core.template_api' has no attribute 'HintGraf'"):
        api.HintGraf  # noqa: B018


def test_a_plugin_module_importing_a_light_name_loads_no_heavy_library():
    probe = (
        "from af_core.template_api import ApiSource, Role\n"
        "import sys\n"
        f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert out.split() == []


def _names_plugins_import() -> set[str]:
    found: set[str] = set()
    for package in [*ROOT.glob("plugins/*/af_*"), *ROOT.glob("examples/*/af_*")]:
        if not (package / "__init__.py").is_file():
            continue
        for path in package.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module == "af_core.template_api":
                    found.update(alias.name for alias in node.names)
    return found


def test_the_table_is_what_the_plugins_use_plus_the_hook_contract_types_and_test_helpers():
    used = _names_plugins_import()
    if not used:
        pytest.skip("the plugin sources are not in this tree")
    assert used <= set(api.__all__)
    assert set(api.__all__) - used == CONTRACT_ONLY | TESTS_ONLY
