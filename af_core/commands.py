"""``afc`` subcommands added by plugins (hook ``af_register_commands``).

Collected only when ``afc`` meets a command word that is not its own, so
the built-in commands and ``--help`` start without loading plugins for it.
A malformed registration, a name that shadows a built-in command or a name
another distribution took first is reported as that plugin's load error and
the command is not added. A command runs isolated (:func:`run_command`):
whatever way it fails becomes one :class:`~af_core.errors.PluginCommandError`
naming the plugin and its distribution.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeGuard

import attrs

from af_core.errors import AfError, PluginCommandError

#: The exit codes a command may return or exit with: afc's own (0 success, 1 a mismatch, 2 a user error,
#: 3 an internal error).
EXIT_CODES = range(4)


@attrs.frozen
class PluginCommand:
    name: str
    help: str
    configure: Callable[[Any], None]
    run: Callable[[Any], int]
    distribution: str
    plugin: str

    def failure(self, what: str) -> PluginCommandError:
        """The error saying this command failed (``what``: how)."""
        return PluginCommandError(self.plugin, self.distribution, self.name, what)


def _is_exit_code(value: object) -> TypeGuard[int]:
    return type(value) is int and value in EXIT_CODES


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def configure_command(command: PluginCommand, parser: Any) -> None:
    """``command.configure(parser)``; any failure becomes :meth:`PluginCommand.failure`."""
    try:
        command.configure(parser)
    except (Exception, SystemExit) as exc:
        raise command.failure(f"configure raised {_describe(exc)}") from exc


def run_command(command: PluginCommand, args: Any) -> int:
    """Run ``command`` isolated and return its exit code (None counts as 0).

    An :class:`~af_core.errors.AfError` (a ``UsageError`` for a user error)
    and Ctrl-C pass through with their own meaning; any other exception, a
    ``SystemExit`` whose code is not None or an int from 0 to 3, and a return
    value that is neither become :meth:`PluginCommand.failure`.
    """
    try:
        result: object = command.run(args)
    except SystemExit as exc:
        if exc.code is None:
            return 0
        if _is_exit_code(exc.code):
            return exc.code
        raise command.failure(f"exited with {exc.code!r}; a command exits with 0 to 3") from None
    except (KeyboardInterrupt, AfError):
        raise
    except BaseException as exc:  # noqa: BLE001 - a plugin's bug, reported as one line naming it
        raise command.failure(f"raised {_describe(exc)}") from exc
    if result is None:
        return 0
    if _is_exit_code(result):
        return result
    text = repr(result)
    text = text if len(text) <= 80 else text[:77] + "..."
    raise command.failure(f"returned {text}; a command returns None or an exit code 0 to 3")


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
            _plugin: str = plugin,
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
            _staged.append(PluginCommand(name, help, configure, run, _dist, _plugin))

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
