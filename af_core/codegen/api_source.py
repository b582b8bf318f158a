"""AscendC API sources: C++ helper text that generated kernels inline.

Like Autofuse's ``AscendCApiRegistry``, plugins register named sources; a
kernel inlines every source it needs exactly once, after the sources it
depends on, so the kernel file compiles on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import resources

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
        text = resources.files(package).joinpath(filename).read_text(encoding="utf-8")
        return cls(name, text, tuple(requires))


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
