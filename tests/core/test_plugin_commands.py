"""Plugins add afc subcommands through the hook af_register_commands; clashes are load errors."""

from __future__ import annotations

import pytest

from af_core import cli, hookimpl
from af_core.commands import plugin_commands
from af_core.registry import get_registry


class Greeter:
    """A plugin object registering one command (and, when asked, a bad one)."""

    def __init__(self, name: str = "hello") -> None:
        self.name = name

    @hookimpl
    def af_register_commands(self, register):
        register(
            self.name, "say hello", lambda p: p.add_argument("who"), lambda args: print("hi", args.who) or 0
        )


@pytest.fixture
def with_plugin():
    manager = get_registry().manager
    added = []

    def add(plugin, name):
        manager.pm.register(plugin, name=name)
        added.append(plugin)

    yield add
    for plugin in added:
        manager.pm.unregister(plugin)


def test_builtin_command_list_matches_the_parser():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) == set(cli.BUILTIN_COMMANDS)


def test_a_plugin_command_runs_through_afc(with_plugin, capsys):
    with_plugin(Greeter(), "greeter")
    assert cli.main(["hello", "world"]) == 0
    assert capsys.readouterr().out.strip() == "hi world"


def test_a_command_shadowing_a_builtin_is_a_load_error_and_not_added(with_plugin):
    with_plugin(Greeter("run"), "shadow")
    commands, errors = plugin_commands(cli.BUILTIN_COMMANDS)
    assert "run" not in [c.name for c in commands]
    assert any("'shadow'" in e and "built-in" in e for e in errors)


def test_an_unknown_command_is_a_one_line_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["no-such-command"])
    assert exc.value.code == cli.EXIT_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "invalid choice" in err[0]


def test_help_says_plugins_may_add_commands(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "Installed plugins may add more commands" in capsys.readouterr().out
