"""``afc`` subcommands added by plugins (hook ``af_register_commands``).

Collected only when ``afc`` meets a command word that is not its own, so
the built-in commands and ``--help`` start without loading plugins for it.
A malformed registration, a name that shadows a built-in command or a name
another distribution took first is reported as that plugin's load error and
the command is not added.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs


@attrs.frozen
class PluginCommand:
    name: str
    help: str
    configure: Callable[[Any], None]
    run: Callable[[Any], int]
    distribution: str


def plugin_commands(builtin: Iterable[str]) -> tuple[list[PluginCommand], list[str]]:
    """Every command plugins register (sorted by name) and one line per registration that failed."""
    from af_core.registry import get_registry

    manager = get_registry().manager
    taken = set(builtin)
    found: dict[str, PluginCommand] = {}
    errors: list[str] = []
    for plugin, dist, impl in manager.each("af_register_commands"):
        staged: list[PluginCommand] = []

        def register(
            name: str,
            help: str,
            configure: Callable[[Any], None],
            run: Callable[[Any], int],
            _dist: str = dist,
            _staged: list[PluginCommand] = staged,
        ) -> None:
            if not isinstance(name, str) or not name or name.startswith("-") or not name.isprintable():
                raise ValueError(f"command name {name!r} is not a command word")
            if not isinstance(help, str) or not callable(configure) or not callable(run):
                raise ValueError(f"command '{name}' needs a text help and callable configure and run")
            if name in taken:
                raise ValueError(f"command '{name}' is a built-in afc command")
            other = found.get(name) or next((c for c in _staged if c.name == name), None)
            if other is not None:
                raise ValueError(f"command '{name}' is already registered by '{other.distribution}'")
            _staged.append(PluginCommand(name, help, configure, run, _dist))

        try:
            manager.call_one("af_register_commands", impl, register=register)
        except (Exception, SystemExit) as exc:
            errors.append(
                f"plugin '{plugin}' ({dist}) failed in af_register_commands: {type(exc).__name__}: {exc}"
            )
            continue
        for command in staged:
            found[command.name] = command
    return [found[n] for n in sorted(found)], errors
