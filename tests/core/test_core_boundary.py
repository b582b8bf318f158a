"""The core names no back-end class, built-in template or elementwise op: plugins meet it through roles.

Scans every string constant and identifier of af_core's Python code (docstrings
and comments excluded: prose may mention what a plugin does) and its code
templates for the names the plugins of this repository define. The plugin
sources are read from the repository, so the check runs with af-core alone.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "af_core"
PLUGINS = ROOT / "plugins"

# attributes of these modules (sympy.Add, sympy.Le, ...) are the library's names, not the plugins'
LIBRARIES = {"sympy", "np", "numpy", "math"}
# (file, name) pairs that are another thing of the same spelling, with the reason
SAME_SPELLING = {
    ("af_core/ir/evaluate.py", "Abs"): "the size-expression function abs(), part of the size grammar",
    ("af_core/tiling/int64.py", "Abs"): "sympy.Abs in the int64 lowering of size expressions",
}


def _string_constants(tree: ast.AST) -> set[str]:
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.add(node.value)
        elif isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and not (
            isinstance(node.value, ast.Name) and node.value.id in LIBRARIES
        ):
            found.add(node.attr)
    return found


def _plugin_names() -> dict[str, str]:
    """name -> what it is, from the plugin sources of this repository."""
    names: dict[str, str] = {}
    for path in (PLUGINS / "v35_regbase").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.name.endswith("ApiCall"):
                names[node.name] = "a v35 ApiCall class"
    for path in PLUGINS.glob("indirect_load_*/af_*/template.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                for stmt in node.body:
                    if (
                        isinstance(stmt, ast.Assign)
                        and any(getattr(t, "id", "") == "name" for t in stmt.targets)
                        and isinstance(stmt.value, ast.Constant)
                    ):
                        names[stmt.value.value] = "a built-in template name"
    ops = (PLUGINS / "elementwise" / "af_elementwise" / "ops.py").read_text()
    core_ops = (CORE / "ops" / "core_ops.py").read_text()
    core_names = set(re.findall(r'name="(\w+)"', core_ops)) | set(
        re.findall(r'_reduce_op\("(\w+)"', core_ops)
    )
    for name in set(re.findall(r'(?:name=|_\w+\()"([A-Z]\w*)"', ops)) | set(
        re.findall(r'\("([A-Z]\w+)", np\.', ops)
    ):
        if name not in core_names:
            names[name] = "an op of the elementwise plugin"
    return names


NAMES = _plugin_names()


def test_the_plugin_name_list_is_not_empty():
    kinds = set(NAMES.values())
    assert kinds == {"a v35 ApiCall class", "a built-in template name", "an op of the elementwise plugin"}
    assert {"simd", "simt", "sklike", "Muls", "Sigmoid", "Cast", "Where", "VecElementwiseRegApiCall"} <= set(
        NAMES
    )


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_core_module_names_no_plugin_thing(path):
    rel = str(path.relative_to(ROOT))
    used = _string_constants(ast.parse(path.read_text()))
    hits = sorted(f"{name} ({NAMES[name]})" for name in used & set(NAMES) if (rel, name) not in SAME_SPELLING)
    assert not hits, f"{rel} names {', '.join(hits)}; ask the registry for a role or trait instead"


def test_core_code_templates_name_no_plugin_thing():
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, NAMES), key=len, reverse=True)) + r")\b")
    for path in sorted(p for p in (CORE / "codegen" / "templates").rglob("*") if p.is_file()):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            hit = pattern.search(line)
            assert hit is None, (
                f"{path.relative_to(ROOT)}:{number} names {hit.group(0)} ({NAMES[hit.group(0)]})"
            )
