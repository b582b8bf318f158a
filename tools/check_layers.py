"""Fail when a module of af_core imports a higher layer, takes part in an import cycle or imports a plugin,
or when a plugin imports the core other than through its template API.

The layers are declared once, in ``[[tool.af.layer]]`` of pyproject.toml, from
the lowest to the highest; each names the modules and packages it holds (a
package stands for everything under it, the longest name wins; the top-level
package stands for its ``__init__`` alone). A module may
import its own layer and any lower one. Every module of af_core must belong to
a layer, so a new module is placed on purpose.

What counts as an import: every ``import`` and ``from ... import`` anywhere in
a module (at the top, inside functions, in ``try`` blocks) and every
``importlib.import_module("...")`` with a literal name. A function-level import
still loads the higher layer when it runs, so it is a dependency like any
other. Imports under ``if TYPE_CHECKING:`` are the one exception to the layer
order: they never run, so they cannot load a layer, and they let a low layer
name in annotations the types a higher one hands it.

Besides the order, the module graph must be free of cycles (within a layer
too), type-only imports counted: a low module that names a high one's class
and a high one that imports the low one at run time are one knot to read,
test and move, whether or not the interpreter runs both imports. No module
may import a package named in ``[tool.af].forbidden`` (the plugins: the core
never depends on one). The top-level ``__init__``
resolves its public names (``Autofuser``, ``ascir``, ...) on first use with
``importlib.import_module`` of a computed name, which no static check sees;
so modules may import from the top-level package itself only the names in
``[tool.af].package-names`` (``__version__``), everything else from the
module that defines it.

Plugins meet the core through a declared facade (``[tool.af.plugin-api]``):
every ``.py`` file of the packages matching its ``roots`` (``plugins/*/af_*``;
their ``tests`` and ``build`` folders are not the plugin) may import of the core
only the modules in ``modules`` (the template API, the hook specifications)
and, from the top-level package, only the names in ``package-names``
(``hookimpl``, ``deferred``). Every import form counts, inside functions and
under ``TYPE_CHECKING`` too: a deep import there ties the plugin to the core's
module layout all the same. Within the core, no module imports the facade
(``facade``), not even for types: it is for plugins, and each of its names is
defined by a module the core imports directly.

The checker uses only the standard library (the lint environment installs
nothing else) and never imports the code it checks.

Usage: python tools/check_layers.py [ROOT]   (ROOT holds pyproject.toml and af_core/)
"""

from __future__ import annotations

import ast
import fnmatch
import sys
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Layer:
    name: str
    rank: int
    modules: tuple[str, ...]


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module (or the nearest enclosing module that exists)
    line: int
    type_only: bool  # under ``if TYPE_CHECKING:``
    attribute: str = ""  # ``from pkg import attribute`` of a name that is not a module


@dataclass(frozen=True)
class PluginApi:
    """What plugin packages may import of the core (``[tool.af.plugin-api]``)."""

    roots: tuple[str, ...]  # glob patterns, relative to the root, of the plugin packages
    facade: str  # the module plugins import the core through; the core itself never imports it
    modules: tuple[str, ...]  # the core modules plugins may import (the facade among them)
    package_names: tuple[str, ...]  # the names plugins may import from the top-level package


@dataclass(frozen=True)
class Config:
    package: str
    layers: tuple[Layer, ...]
    forbidden: tuple[str, ...]
    package_names: tuple[str, ...] = ()  # names modules may import from the top-level package itself
    plugin_api: PluginApi | None = None  # None: no plugin rule (a tree without plugins)


def load_config(root: Path) -> Config:
    """The layer table, the forbidden packages and the plugin API from ``root/pyproject.toml``."""
    with (root / "pyproject.toml").open("rb") as handle:
        table = tomllib.load(handle)["tool"]["af"]
    layers = tuple(
        Layer(entry["name"], rank, tuple(entry["modules"])) for rank, entry in enumerate(table["layer"])
    )
    api = table.get("plugin-api")
    plugin_api = (
        PluginApi(
            tuple(api["roots"]),
            api["facade"],
            tuple(api["modules"]),
            tuple(api.get("package-names", ())),
        )
        if api is not None
        else None
    )
    return Config(
        table.get("package", "af_core"),
        layers,
        tuple(table.get("forbidden", ())),
        tuple(table.get("package-names", ())),
        plugin_api,
    )


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` under ``root``: dotted name -> file (``pkg/__init__.py`` is ``pkg``)."""
    found: dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


#: Folders inside a plugin package that are not the plugin's code (its tests, a build's copies).
SKIPPED_DIRS = frozenset({"tests", "build", "__pycache__"})


def plugin_files(root: Path, roots: Iterable[str]) -> dict[str, Path]:
    """Every module of the plugin packages matching ``roots``: dotted name -> file.

    A match counts only when it is a package (it has an ``__init__.py``), so
    the ``af_x.egg-info`` folder beside ``af_x`` is no plugin.
    """
    found: dict[str, Path] = {}
    for pattern in roots:
        for package in sorted(root.glob(pattern)):
            if not (package / "__init__.py").is_file():
                continue
            for path in sorted(package.rglob("*.py")):
                inner = path.relative_to(package).with_suffix("").parts
                if SKIPPED_DIRS.intersection(inner[:-1]):
                    continue
                parts = (package.name, *inner)
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _walk(node: ast.AST, type_only: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    """Every node below ``node``, with whether it sits in the body of an ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for stmt in child.body:
                yield stmt, True
                yield from _walk(stmt, True)
            for stmt in child.orelse:
                yield stmt, type_only
                yield from _walk(stmt, type_only)
            continue
        yield child, type_only
        yield from _walk(child, type_only)


def _resolve(name: str, modules: Iterable[str]) -> str:
    """``name`` itself when it is a module of the tree, else the nearest enclosing one."""
    known = set(modules)
    while name not in known and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def imports_of(module: str, path: Path, modules: set[str]) -> list[Import]:
    """What ``module`` imports, resolved to module names (relative imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    package_parts = module.split(".") if is_package else module.split(".")[:-1]
    found: list[Import] = []
    tops = {m.split(".")[0] for m in modules}
    for node, type_only in _walk(tree):
        names: list[
            tuple[str, str]
        ] = []  # (imported name, attribute taken from a package that is not a module)
        if isinstance(node, ast.Import):
            names = [(alias.name, "") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package_parts[: len(package_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # ``from pkg import sub`` imports the module pkg.sub when there is one
            names = [
                (f"{base}.{alias.name}", "") if f"{base}.{alias.name}" in modules else (base, alias.name)
                for alias in node.names
            ]
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module"
                or isinstance(node.func, ast.Name)
                and node.func.id in ("import_module", "__import__")
            )
        ):
            names = [(node.args[0].value, "")]
        for name, attribute in dict.fromkeys(names):
            target = _resolve(name, modules) if name.split(".")[0] in tops else name
            found.append(Import(module, target, node.lineno, type_only, attribute))
    return found


def layer_of(module: str, layers: Iterable[Layer]) -> Layer | None:
    """The layer whose longest declared name is ``module`` or a package enclosing it.

    A top-level package (``af_core``) stands for its ``__init__`` alone, so that
    declaring it never places the modules under it by accident.
    """
    best: tuple[int, Layer] | None = None
    for layer in layers:
        for name in layer.modules:
            if module == name or ("." in name and module.startswith(name + ".")):
                if best is None or len(name) > best[0]:
                    best = (len(name), layer)
    return None if best is None else best[1]


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def check_plugins(root: Path, config: Config, modules: set[str]) -> list[str]:
    """Every import of the core by a plugin module that goes past the plugin API, one message each.

    ``modules`` are the core's modules; what a plugin imports of its own or of
    other plugins is not this rule's business.
    """
    api = config.plugin_api
    if api is None:
        return []
    problems = [
        f"[tool.af.plugin-api] allows {name}, which is not a module of {config.package}"
        for name in (api.facade, *api.modules)
        if name not in modules
    ]
    files = plugin_files(root, api.roots)
    if not files:
        problems.append(f"no plugin package matches [tool.af.plugin-api] roots {list(api.roots)}")
    for name, path in files.items():
        shown = path.relative_to(root).as_posix()
        for imp in imports_of(name, path, modules):
            if imp.target.split(".")[0] != config.package or imp.target in api.modules:
                continue
            if imp.target == config.package and imp.attribute in api.package_names:
                continue
            what = (
                f"{imp.target}.{imp.attribute}"
                if imp.target == config.package and imp.attribute
                else imp.target
            )
            problems.append(
                f"{shown}:{imp.line}: imports {what}; plugins import the core only through {api.facade}"
            )
    return problems


def check(root: Path) -> list[str]:
    """Every violation under ``root``, one message each (empty when the tree is clean)."""
    config = load_config(root)
    files = module_files(root, config.package)
    modules = set(files)
    facade = config.plugin_api.facade if config.plugin_api else None
    problems: list[str] = []
    for name in sorted(modules):
        if layer_of(name, config.layers) is None:
            problems.append(f"{name} belongs to no layer of [[tool.af.layer]] in pyproject.toml")
    edges: dict[str, set[str]] = {}
    for name, path in sorted(files.items()):
        source_layer = layer_of(name, config.layers)
        for imp in imports_of(name, path, modules):
            top = imp.target.split(".")[0]
            if any(fnmatch.fnmatch(top, pattern) for pattern in config.forbidden):
                problems.append(
                    f"{name}:{imp.line} imports the plugin package {imp.target}; "
                    f"{config.package} never imports a plugin"
                )
                continue
            if imp.target == facade and name != facade:
                problems.append(
                    f"{name}:{imp.line} imports {facade}, which is for plugins; "
                    f"import the name from the module that defines it"
                )
                continue
            if imp.target not in modules:
                continue
            if imp.type_only:
                # no layer is loaded, but the modules are tied all the same: the edge counts towards cycles
                if imp.target != name and not name.startswith(imp.target + "."):
                    edges.setdefault(name, set()).add(imp.target)
                continue
            if (
                imp.target == config.package
                and imp.attribute
                and name != config.package
                and imp.attribute not in config.package_names
            ):
                problems.append(
                    f"{name}:{imp.line} imports {imp.attribute} from the {config.package} package, "
                    f"which resolves it lazily out of sight of this check; import it from its module"
                )
            # a package's __init__ runs before any of its modules, so importing a module of one's own package
            # from the package itself is the only edge that does not count towards a cycle
            if imp.target != name and not name.startswith(imp.target + "."):
                edges.setdefault(name, set()).add(imp.target)
            target_layer = layer_of(imp.target, config.layers)
            if source_layer and target_layer and target_layer.rank > source_layer.rank:
                problems.append(
                    f"{name}:{imp.line}: {name} (layer {source_layer.name}) imports "
                    f"{imp.target} (layer {target_layer.name})"
                )
    for component in _cycles(edges):
        problems.append("import cycle among " + ", ".join(component))
    problems += check_plugins(root, config, modules)
    return list(dict.fromkeys(problems))  # one message per import, however many names it takes


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parent.parent)
    problems = check(root)
    for problem in problems:
        print(problem)
    if problems:
        print(
            f"{len(problems)} layering problem(s); the layers are [[tool.af.layer]] and what plugins may "
            f"import is [tool.af.plugin-api], both in pyproject.toml and described in docs/architecture.md"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
