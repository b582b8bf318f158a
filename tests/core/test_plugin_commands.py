"""Plugins add afc subcommands through the hook af_register_commands; clashes are load errors."""

from __future__ import annotations

import sys

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

    def add(plugin, name, distribution="af-test-plugin"):
        manager.pm.register(plugin, name=name)
        manager._dist[name] = (distribution, "0.1")
        added.append((plugin, name))

    yield add
    for plugin, name in added:
        manager.pm.unregister(plugin)
        manager._dist.pop(name, None)


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


class Boom:
    """A plugin whose command ``boom`` runs ``run`` (and configures with ``configure``)."""

    def __init__(self, run, configure=None) -> None:
        self.run = run
        self.configure = configure or (lambda parser: None)

    @hookimpl
    def af_register_commands(self, register):
        register("boom", "a command that may fail", self.configure, self.run)


def _raise(exc):
    def run(args):
        raise exc

    return run


FAILURES = {
    "value-error": (
        _raise(ValueError("bad value\nsecond line")),
        "raised ValueError: bad value\\nsecond line",
    ),
    "os-error": (
        _raise(FileNotFoundError(2, "No such file")),
        "raised FileNotFoundError: [Errno 2] No such file",
    ),
    "key-error": (_raise(KeyError("k")), "raised KeyError: 'k'"),
    "base-exception": (_raise(GeneratorExit()), "raised GeneratorExit"),
    "exit-text": (lambda args: sys.exit("x"), "exited with 'x'; a command exits with 0 to 3"),
    "exit-999": (lambda args: sys.exit(999), "exited with 999"),
    "exit-minus-1": (lambda args: sys.exit(-1), "exited with -1"),
    "exit-true": (lambda args: sys.exit(True), "exited with True"),
    "return-999": (lambda args: 999, "returned 999; a command returns None or an exit code 0 to 3"),
    "return-text": (lambda args: "0", "returned '0'"),
    "return-float": (lambda args: 1.0, "returned 1.0"),
    "return-false": (lambda args: False, "returned False"),
}


@pytest.mark.parametrize("mode", sorted(FAILURES))
def test_every_failure_of_a_plugin_command_is_one_line_naming_the_plugin_exit_3(with_plugin, capsys, mode):
    run, said = FAILURES[mode]
    with_plugin(Boom(run), "boom_mod", "af-boom")
    assert cli.main(["boom"]) == cli.EXIT_INTERNAL
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("afc: internal error: plugin 'boom_mod' (af-boom) failed in command 'boom': "), (
        err
    )
    assert said in err[0] and "a bug of the plugin" in err[0], err


@pytest.mark.parametrize(
    "run, code",
    [
        (lambda args: None, 0),
        (lambda args: 1, 1),
        (lambda args: 3, 3),
        (lambda args: sys.exit(), 0),
        (lambda args: sys.exit(2), 2),
    ],
    ids=["none", "one", "three", "exit", "exit-2"],
)
def test_a_plugin_command_exits_with_its_own_code(with_plugin, capsys, run, code):
    with_plugin(Boom(run), "boom_mod", "af-boom")
    assert cli.main(["boom"]) == code
    assert capsys.readouterr().err == ""


def test_a_usage_error_from_a_plugin_command_stays_a_user_error(with_plugin, capsys):
    from af_core.errors import UsageError

    with_plugin(Boom(_raise(UsageError("'m.py' is not a .py file"))), "boom_mod", "af-boom")
    assert cli.main(["boom"]) == cli.EXIT_ERROR
    assert capsys.readouterr().err.splitlines() == ["afc: error: 'm.py' is not a .py file"]


@pytest.mark.parametrize(
    "configure, said",
    [
        (_raise(RuntimeError("no parser for me")), "configure raised RuntimeError: no parser for me"),
        (lambda parser: parser.add_argument("--debug"), "configure added arguments afc cannot use"),
    ],
    ids=["raises", "clashes"],
)
def test_a_failing_configure_fails_the_command_naming_the_plugin(with_plugin, capsys, configure, said):
    with_plugin(Boom(lambda args: 0, configure), "boom_mod", "af-boom")
    assert cli.main(["boom", "--any", "thing"]) == cli.EXIT_INTERNAL
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "plugin 'boom_mod' (af-boom) failed in command 'boom'" in err[0], err
    assert said in err[0], err
    assert cli.main(["plugins"]) == 0  # the other commands are not affected


def test_a_warning_is_one_afc_line_without_a_source_path(with_plugin, capsys):
    import warnings

    def run(args):
        warnings.warn("overflow \x1b[2J encountered in cast", RuntimeWarning, stacklevel=1)
        return 0

    with_plugin(Boom(run), "boom_mod", "af-boom")
    assert cli.main(["boom"]) == 0
    err = capsys.readouterr().err
    assert err == "afc: warning: RuntimeWarning: overflow \\x1b[2J encountered in cast\n", err
