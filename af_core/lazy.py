"""Lazy module attributes: a package's public names imported from their defining modules on first use.

``af_core`` and ``af_core.template_api`` both declare a table of public name -> defining module and must not
import those modules up front (``import af_core`` would load sympy, numpy and networkx; a plugin module that
imports the template API would load the core's heavy layers before it proposes anything). Both get their
module ``__getattr__`` and ``__dir__`` from :func:`lazy_attributes`, so the two behave alike.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, MutableMapping


def lazy_attributes(
    package: str, table: Mapping[str, str], namespace: MutableMapping[str, object], public: Iterable[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``, whose globals are ``namespace``.

    ``__getattr__(name)`` imports ``table[name]`` and returns the module itself when the name is the
    module's own (``af_core.ascir`` for ``ascir``), else its attribute ``name``; the value is kept in
    ``namespace``, so the next lookup does not come here. A name outside the table is an AttributeError
    naming the package. ``__dir__`` lists ``public`` (resolved or not) and the module's dunder names, so
    ``dir()`` and completion show the whole API."""
    dunders = {"__doc__", "__file__", "__name__", "__spec__"} | (
        {"__path__"} if "__path__" in namespace else set()
    )
    names = sorted({*public, *dunders})

    def getattr_(name: str) -> object:
        module_name = table.get(name)
        if module_name is None:
            raise AttributeError(f"module '{package}' has no attribute '{name}'")
        module = importlib.import_module(module_name)
        value = module if module_name == f"af_core.{name}" else getattr(module, name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return list(names)

    return getattr_, dir_
