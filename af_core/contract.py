"""What each hook contract version changed, and whether a plugin written against an older one still fits.

A plugin states the contract version it was written against
(``AF_CONTRACT_VERSION``); the core provides
:data:`af_core.hookspecs.CONTRACT_VERSION`. One integer says *that* they
differ, not *what* differs, so a plugin refused for an older version could
not tell what to change, and a change that broke plugins without touching a
hook (a default, a moved module) had no place to be stated. :data:`CHANGES`
is that place: every version bump lists what it touched, and the load check
reads it.

* A plugin stating the core's version loads.
* A plugin one version behind (the compatibility window) loads with a
  warning when none of the changes since its version touch what it uses: a
  hook it implements, or a core module one of its modules imports. A touched
  default (the selection policy, say) is named in the warning but blocks
  nothing: the core cannot see which defaults a plugin relies on.
* Anything else is refused, and the refusal names each change between the
  two versions and which of them touch the plugin.

This module imports nothing heavy: the plugin manager uses it while loading.
"""

from __future__ import annotations

import ast
import enum
import sys
import types
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs


class Surface(enum.Enum):
    """What part of the contract a change touched."""

    HOOK = "hook"  # a hook's signature, or what it passes or expects back (name: the hook)
    # a core module or name plugins import moved or went away (name: the module, or for a name of the
    # declared plugin API ``af_core.template_api.<Name>``, which is how plugins import it)
    MODULE = "module"
    DEFAULT = "default"  # a default plugins may rely on (name: the setting)


@attrs.frozen
class Touch:
    """One thing a contract change touched, and what changed about it."""

    surface: Surface
    name: str
    detail: str

    def __str__(self) -> str:
        return f"{self.surface.value} {self.name}: {self.detail}"


@attrs.frozen
class ContractChange:
    """The changes that made ``version`` out of ``version - 1``."""

    version: int
    touches: tuple[Touch, ...]

    def summary(self) -> str:
        return f"version {self.version - 1} -> {self.version}: " + "; ".join(str(t) for t in self.touches)


#: Every contract change, oldest first. Version 1 is the first contract, so nothing precedes it; a bump of
#: ``CONTRACT_VERSION`` adds its entry here (``tests/core/test_contract.py`` checks the two agree).
CHANGES: tuple[ContractChange, ...] = ()

#: How many versions behind a plugin may be and still load (when no change since touches it).
WINDOW = 1
#: The first contract version; none precedes it.
FIRST_VERSION = 1


@attrs.frozen
class Verdict:
    """The outcome of :func:`check`: ``error`` refuses the plugin, ``warning`` loads it with a note.

    ``changed`` lists the contract changes between the plugin's version and
    the core's (empty when there are none, or none are known).
    """

    error: str | None = None
    warning: str | None = None
    changed: str = ""


def changes_between(
    old: int, new: int, changes: Sequence[ContractChange] | None = None
) -> list[ContractChange]:
    """The changes that lead from version ``old`` to version ``new`` (``old < new``), oldest first."""
    return [c for c in (CHANGES if changes is None else changes) if old < c.version <= new]


def modules_used(module: types.ModuleType) -> set[str]:
    """Every module the plugin's code imports, read from its source files (imports inside functions too).

    The files are those of the plugin's top-level package (or its one module
    file); ``from a.b import c`` counts as ``a.b`` and ``a.b.c``, since ``c``
    may be a module. Only plugins outside the core's exact version are read.
    """
    top = sys.modules.get(module.__name__.split(".")[0], module)
    paths = getattr(top, "__path__", None)
    single = getattr(top, "__file__", None)
    files: list[Path] = []
    if paths:
        files = sorted(p for d in paths for p in Path(d).rglob("*.py"))
    elif single:
        files = [Path(single)]
    used: set[str] = set()
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                used.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                used.add(node.module)
                used.update(f"{node.module}.{alias.name}" for alias in node.names)
    return used


def hooks_implemented(module: types.ModuleType) -> set[str]:
    """The hooks a plugin module implements (its ``af_*`` functions)."""
    return {name for name, value in vars(module).items() if name.startswith("af_") and callable(value)}


def touching(changes: Iterable[ContractChange], hooks: set[str], modules: set[str]) -> list[Touch]:
    """The touches among ``changes`` that reach a plugin implementing ``hooks`` and importing ``modules``."""
    hit = []
    for change in changes:
        for touch in change.touches:
            if touch.surface is Surface.HOOK and touch.name in hooks:
                hit.append(touch)
            elif touch.surface is Surface.MODULE and any(
                m == touch.name or m.startswith(touch.name + ".") for m in modules
            ):
                hit.append(touch)
    return hit


def check(
    stated: object,
    provided: int,
    module: types.ModuleType,
    changes: Sequence[ContractChange] | None = None,
) -> Verdict:
    """Whether a plugin module stating contract version ``stated`` loads under a core providing ``provided``."""
    if type(stated) is int and stated == provided:
        return Verdict()
    if type(stated) is not int:
        found = (
            "states no AF_CONTRACT_VERSION"
            if stated is None
            else f"was built for hook contract version {stated!r}"
        )
        return Verdict(error=found)
    if stated > provided:
        return Verdict(error=f"was built for hook contract version {stated}, newer than this core's")
    if stated < FIRST_VERSION:
        return Verdict(error=f"was built for hook contract version {stated}, which never existed")
    since = changes_between(stated, provided, changes)
    changed = "What changed: " + " | ".join(c.summary() for c in since) if since else ""
    if {c.version for c in since} != set(range(stated + 1, provided + 1)):
        return Verdict(
            error=f"was built for hook contract version {stated}, and this core does not say what changed since"
        )
    if provided - stated > WINDOW:
        return Verdict(
            error=f"was built for hook contract version {stated}, more than {WINDOW} behind", changed=changed
        )
    hits = touching(since, hooks_implemented(module), modules_used(module))
    if hits:
        return Verdict(
            error=f"was built for hook contract version {stated}, and changes since touch it ("
            + "; ".join(str(t) for t in hits)
            + ")",
            changed=changed,
        )
    return Verdict(
        warning=f"was built for hook contract version {stated}, {provided - stated} behind; loaded because no "
        "change since touches a hook it implements or a module it imports",
        changed=changed,
    )
