"""AscendC API sources: C++ helper text that generated kernels inline.

Like Autofuse's ``AscendCApiRegistry``, plugins register named sources; a
kernel inlines every source it needs exactly once, after the sources it
depends on, so the kernel file compiles on its own.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from af_core.errors import CodegenError


@attrs.frozen
class ApiSource:
    """A named piece of C++ with the names of the sources it needs first."""

    name: str
    text: str
    requires: tuple[str, ...] = ()

    @classmethod
    def from_package(cls, name: str, package: str, filename: str, requires: Iterable[str] = ()) -> ApiSource:
        """Load the text from a file shipped inside a Python package."""
        return cls(name, _package_file_text(package, filename), tuple(requires))


def _package_file_text(package: str, filename: str) -> str:
    """The text of ``filename`` shipped beside the modules of ``package``.

    A package imported from a directory has the file beside its ``__init__``, read directly: the plugins
    register their sources while a fresh process loads them, and ``importlib.resources`` with the zip
    reader it imports costs about 3 ms there. Any other package (a zip, a namespace package) is read
    through ``importlib.resources``.
    """
    module = sys.modules.get(package) or importlib.import_module(package)
    origin = getattr(module, "__file__", None)
    if origin:
        path = Path(origin).parent / filename
        if path.is_file():
            return path.read_text(encoding="utf-8")
    from importlib import resources

    return resources.files(package).joinpath(filename).read_text(encoding="utf-8")


def resolve_order(names: Iterable[str], lookup: Callable[[str], ApiSource | None]) -> list[ApiSource]:
    """The sources for ``names`` and their dependencies, dependencies first, each once.

    Order is deterministic: a depth-first walk over sorted names.
    """
    ordered: list[ApiSource] = []
    state: dict[str, str] = {}

    def visit(name: str, chain: tuple[str, ...]) -> None:
        mark = state.get(name)
        if mark == "done":
            return
        if mark == "active":
            raise CodegenError(f"API sources depend on each other in a cycle: {' -> '.join(chain + (name,))}")
        source = lookup(name)
        if source is None:
            needed_by = f" (needed by {chain[-1]})" if chain else ""
            raise CodegenError(f"no plugin registers the API source '{name}'{needed_by}")
        state[name] = "active"
        for dep in sorted(source.requires):
            visit(dep, chain + (name,))
        state[name] = "done"
        ordered.append(source)

    for name in sorted(set(names)):
        visit(name, ())
    return ordered
