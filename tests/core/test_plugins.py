"""Plugin manager: isolation of broken plugins, strict mode, disabling, duplicates, listing."""

from __future__ import annotations

import textwrap

import pytest

from af_core.errors import DuplicateRegistrationError, PluginError
from af_core.plugin_manager import AfPluginManager
from af_core.registry import Registry


def make_dist(
    root,
    dist: str,
    module: str,
    source: str,
    entry_name: str | None = None,
    contract: str = "AF_CONTRACT_VERSION = 1\n",
) -> None:
    """A minimal installed distribution on ``root`` with one af_core entry point.

    ``contract`` is the module's first line: by default it states the contract version this core provides.
    """
    (root / f"{module}.py").write_text(contract + textwrap.dedent(source))
    info = root / f"{dist.replace('-', '_')}-0.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(f"[af_core]\n{entry_name or module} = {module}\n")


OP_PLUGIN = """
from af_core import hookimpl
from af_core.ops.opdef import OpDef, same_as_input

@hookimpl
def af_register_ops(register):
    register(OpDef(name="{op}", inputs=("x",), compute_type="elementwise", infer=same_as_input("x")))
"""


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_broken_plugin_is_recorded_and_skipped(site):
    make_dist(site, "af-broken", "af_broken_mod", "raise RuntimeError('boom at import')\n")
    make_dist(site, "af-good", "af_good_mod", OP_PLUGIN.format(op="GoodOp"))
    manager = AfPluginManager(env={})
    errors = {e.plugin: e for e in manager.load_errors}
    assert "af_broken_mod" in errors
    assert errors["af_broken_mod"].distribution == "af-broken"
    assert "boom at import" in errors["af_broken_mod"].error
    registry = Registry(manager)
    assert registry.entry("op", "GoodOp").distribution == "af-good"


@pytest.mark.parametrize(
    ("contract", "said"),
    [
        ("AF_CONTRACT_VERSION = 2\n", "was built for hook contract version 2"),
        ("AF_CONTRACT_VERSION = '1'\n", "was built for hook contract version '1'"),
        ("", "states no AF_CONTRACT_VERSION"),
    ],
    ids=["newer", "not-an-int", "missing"],
)
def test_a_plugin_built_for_another_contract_is_a_load_error_naming_it(site, contract, said):
    module = f"af_future_mod_{len(contract)}"  # one module name per case: sys.modules keeps imported ones
    make_dist(site, "af-future", module, OP_PLUGIN.format(op="FutureOp"), contract=contract)
    make_dist(site, "af-good", "af_good_mod5", OP_PLUGIN.format(op="Good5"))
    manager = AfPluginManager(env={})
    errors = {e.plugin: e for e in manager.load_errors}
    assert set(errors) == {module}
    error = errors[module]
    assert error.distribution == "af-future"
    assert (
        said in error.error
        and "af-future" in error.error
        and "provides hook contract version 1" in error.error
    )
    registry = Registry(manager)
    assert registry.get("op", "FutureOp") is None
    assert registry.entry("op", "Good5").distribution == "af-good"


def test_strict_mode_makes_a_contract_mismatch_fatal(site):
    make_dist(
        site,
        "af-future",
        "af_future_mod2",
        OP_PLUGIN.format(op="Future2"),
        contract="AF_CONTRACT_VERSION = 0\n",
    )
    with pytest.raises(PluginError, match="af_future_mod2.*af-future.*contract version 0"):
        AfPluginManager(env={"AF_STRICT_PLUGINS": "1"})


def test_strict_mode_makes_a_broken_plugin_fatal(site):
    make_dist(site, "af-broken", "af_broken_mod2", "import does_not_exist_anywhere\n")
    with pytest.raises(PluginError, match="af_broken_mod2.*af-broken.*AF_STRICT_PLUGINS"):
        AfPluginManager(env={"AF_STRICT_PLUGINS": "1"})


def test_disable_by_entry_point_or_distribution(site):
    make_dist(site, "af-one", "af_one_mod", OP_PLUGIN.format(op="OneOp"))
    make_dist(site, "af-two", "af_two_mod", OP_PLUGIN.format(op="TwoOp"))
    manager = AfPluginManager(env={"AF_DISABLE_PLUGINS": "af_one_mod, af-two"})
    registry = Registry(manager)
    assert registry.get("op", "OneOp") is None
    assert registry.get("op", "TwoOp") is None
    assert {"af_one_mod", "af_two_mod"} <= set(manager.disabled)


def test_duplicate_names_are_a_load_error_of_the_second_distribution(site):
    make_dist(site, "af-dup-a", "af_dup_a", OP_PLUGIN.format(op="SameOp"))
    make_dist(site, "af-dup-b", "af_dup_b", OP_PLUGIN.format(op="SameOp"))
    registry = Registry(AfPluginManager(env={}))
    assert registry.entry("op", "SameOp").distribution == "af-dup-a"
    errors = [e for e in registry.load_errors if e.distribution == "af-dup-b"]
    assert len(errors) == 1 and "SameOp" in errors[0].error and "af-dup-a" in errors[0].error
    assert not [e for e in registry.load_errors if e.distribution == "af-dup-a"]


def test_duplicate_names_raise_naming_both_distributions_when_strict(site):
    make_dist(site, "af-dup-a", "af_dup_a", OP_PLUGIN.format(op="SameOp"))
    make_dist(site, "af-dup-b", "af_dup_b", OP_PLUGIN.format(op="SameOp"))
    with pytest.raises(DuplicateRegistrationError) as info:
        Registry(AfPluginManager(env={"AF_STRICT_PLUGINS": "1"}))
    text = str(info.value)
    assert "af-dup-a" in text and "af-dup-b" in text and "SameOp" in text


def test_duplicate_of_a_core_op_names_af_core(site):
    make_dist(site, "af-shadow", "af_shadow", OP_PLUGIN.format(op="IndirectLoad"))
    registry = Registry(AfPluginManager(env={}))
    assert registry.entry("op", "IndirectLoad").distribution == "af-core"
    assert any("af-core" in e.error and e.distribution == "af-shadow" for e in registry.load_errors)
    with pytest.raises(DuplicateRegistrationError, match="af-core.*af-shadow"):
        Registry(AfPluginManager(env={"AF_STRICT_PLUGINS": "1"}))


def test_entry_point_name_clash_between_distributions_names_both(site):
    make_dist(site, "af-clash-a", "af_clash_a", OP_PLUGIN.format(op="ClashA"), entry_name="clash")
    make_dist(site, "af-clash-b", "af_clash_b", OP_PLUGIN.format(op="ClashB"), entry_name="clash")
    manager = AfPluginManager(env={})
    errors = [e for e in manager.load_errors if e.plugin == "clash"]
    assert len(errors) == 1 and errors[0].distribution == "af-clash-b" and "af-clash-a" in errors[0].error
    assert Registry(manager).get("op", "ClashA") is not None
    with pytest.raises(PluginError, match="af-clash-b.*af-clash-a"):
        AfPluginManager(env={"AF_STRICT_PLUGINS": "1"})


def test_a_misspelt_hook_is_a_load_error_naming_plugin_and_hook(site):
    make_dist(
        site,
        "af-typo",
        "af_typo_mod",
        """
        from af_core import hookimpl

        @hookimpl
        def af_register_template(register):
            pass
        """,
    )
    manager = AfPluginManager(env={})
    errors = [e for e in manager.load_errors if e.plugin == "af_typo_mod"]
    assert len(errors) == 1 and errors[0].distribution == "af-typo"
    assert (
        "'af_register_template'" in errors[0].error
        and "did you mean 'af_register_templates'" in errors[0].error
    )
    assert not manager.pm.has_plugin("af_typo_mod")


@pytest.mark.parametrize("body", ["import sys\nsys.exit(3)\n", "raise SystemExit('bye')\n"])
def test_sys_exit_at_import_is_a_load_error(site, body):
    make_dist(site, "af-exiting", "af_exiting_mod", body)
    errors = [e for e in AfPluginManager(env={}).load_errors if e.plugin == "af_exiting_mod"]
    assert len(errors) == 1 and errors[0].error.startswith("SystemExit")


@pytest.mark.parametrize(
    "value, message",
    [
        ("TEMPLATE = object()", "lacks a text 'name'"),
        ("TEMPLATE = type('T', (), {'name': 7, 'propose': len})()", "lacks a text 'name'"),
    ],
)
def test_malformed_registrations_are_load_errors(site, value, message):
    make_dist(
        site,
        "af-malformed",
        "af_malformed_mod",
        f"""
        from af_core import hookimpl
        {value}

        @hookimpl
        def af_register_templates(register):
            register(TEMPLATE)
        """,
    )
    registry = Registry(AfPluginManager(env={}))
    errors = [e for e in registry.load_errors if e.plugin == "af_malformed_mod"]
    assert len(errors) == 1 and message in errors[0].error


def test_twin_include_dirs_failures_name_the_plugin(site):
    from af_core.platform import Platform

    make_dist(
        site,
        "af-badheaders",
        "af_badheaders_mod",
        """
        from af_core import hookimpl

        @hookimpl
        def af_twin_include_dirs(platform):
            raise OSError("headers went missing")
        """,
    )
    manager = AfPluginManager(env={})
    with pytest.raises(PluginError, match="af_badheaders_mod.*af-badheaders.*headers went missing"):
        manager.twin_include_dirs(Platform())


def test_twin_include_dirs_values_are_checked(site):
    from af_core.platform import Platform

    make_dist(
        site,
        "af-nodir",
        "af_nodir_mod",
        """
        from af_core import hookimpl

        @hookimpl
        def af_twin_include_dirs(platform):
            return "/not/a/list"
        """,
    )
    with pytest.raises(PluginError, match="af_nodir_mod.*expected a list"):
        AfPluginManager(env={}).twin_include_dirs(Platform())


def test_hook_that_raises_is_isolated(site):
    make_dist(
        site,
        "af-hookfail",
        "af_hookfail",
        """
        from af_core import hookimpl

        @hookimpl
        def af_register_ops(register):
            raise ValueError("bad registration")
        """,
    )
    registry = Registry(AfPluginManager(env={}))
    failures = [e for e in registry.load_errors if e.plugin == "af_hookfail"]
    assert failures and "bad registration" in failures[0].error
    assert registry.get("op", "IndirectLoad") is not None


def test_plugins_listing_has_versions_and_hooks(site):
    make_dist(site, "af-good", "af_good_mod3", OP_PLUGIN.format(op="Good3"))
    infos = {p.name: p for p in AfPluginManager(env={}).plugins()}
    assert infos["af_core"].distribution == "af-core"
    assert infos["af_good_mod3"].version == "0.3"
    assert infos["af_good_mod3"].hooks == ("af_register_ops",)


def test_hook_tracing_prints_calls(site, capsys):
    make_dist(site, "af-good", "af_good_mod4", OP_PLUGIN.format(op="Good4"))
    make_dist(
        site,
        "af-dirs",
        "af_dirs_mod4",
        "from af_core import hookimpl\n\n@hookimpl\ndef af_twin_include_dirs(platform):\n    return []\n",
    )
    manager = AfPluginManager(env={"AF_TRACE_HOOKS": "1"})
    Registry(manager)
    from af_core.platform import Platform

    manager.twin_include_dirs(platform=Platform())
    err = capsys.readouterr().err
    assert "af_register_ops @ af_good_mod4" in err
    assert "af_twin_include_dirs @ af_dirs_mod4" in err  # hooks called plugin by plugin are traced too


MALFORMED_CASE = """
from af_core import hookimpl
from af_core.schedule.case import Case

class Sloppy:
    name = "sloppy"

    def propose(self, graph, node, ctx):
        return [Case("sloppy", "default", graph, impl="not an ImplGraph", tiling=None)]

@hookimpl
def af_register_templates(register):
    register(Sloppy())
"""


def test_a_malformed_case_becomes_a_rejection_naming_the_plugin(site):
    from af_core.autofuser import Autofuser
    from af_core.errors import ScheduleError
    from af_core.registry import get_registry, reset_registry
    from af_core.testing import chain_graph

    make_dist(site, "af-sloppy", "af_sloppy_mod", MALFORMED_CASE)
    previous = reset_registry(Registry(AfPluginManager(env={})))
    try:
        assert get_registry().entry("template", "sloppy").distribution == "af-sloppy"
        try:
            rejections = Autofuser().schedule(chain_graph(rank=2, dim=1)).rejections
        except ScheduleError as exc:  # only the core installed: no other template proposes a case
            rejections = exc.rejections
        sloppy = [r for r in rejections if r.template == "sloppy"]
        assert len(sloppy) == 1 and sloppy[0].plugin == "af-sloppy"
        assert "impl is str, not ImplGraph" in sloppy[0].reason
    finally:
        reset_registry(previous)


ODD_TEMPLATES = """
import sys

from af_core import hookimpl
from af_core.schedule.template import Rejected


class Nothing:
    name = "returns_none"

    def propose(self, graph, node, ctx):
        return None


class Exiting:
    name = "exits"

    def propose(self, graph, node, ctx):
        sys.exit(5)


class Stranger:
    name = "stranger"

    def propose(self, graph, node, ctx):
        return [Rejected(self.name, reason=["not", "text"]), 42]


@hookimpl
def af_register_templates(register):
    register(Nothing())
    register(Exiting())
    register(Stranger())
"""


def test_whatever_a_template_returns_or_raises_becomes_a_rejection(site):
    from af_core.autofuser import Autofuser
    from af_core.errors import ScheduleError
    from af_core.registry import reset_registry
    from af_core.testing import chain_graph

    make_dist(site, "af-odd", "af_odd_mod", ODD_TEMPLATES)
    previous = reset_registry(Registry(AfPluginManager(env={})))
    try:
        try:
            rejections = Autofuser().schedule(chain_graph(rank=2, dim=1)).rejections
        except ScheduleError as exc:
            rejections = exc.rejections
    finally:
        reset_registry(previous)
    mine = sorted((r.template, r.reason) for r in rejections if r.plugin == "af-odd")
    assert mine == [
        ("exits", "template raised SystemExit: 5"),
        ("returns_none", "template raised TypeError: 'NoneType' object is not iterable"),
        ("stranger", "template returned a Rejected with a non-text reason: ['not', 'text']"),
        ("stranger", "template returned int, not a Case or Rejected"),
    ]


def test_a_registration_hook_calling_sys_exit_is_a_load_error(site):
    make_dist(
        site,
        "af-exithook",
        "af_exithook_mod",
        """
        import sys
        from af_core import hookimpl

        @hookimpl
        def af_register_ops(register):
            sys.exit("no ops for you")
        """,
    )
    registry = Registry(AfPluginManager(env={}))
    errors = [e for e in registry.load_errors if e.plugin == "af_exithook_mod"]
    assert len(errors) == 1 and "af_register_ops: SystemExit: no ops for you" in errors[0].error


# -- the contract's changelog and its compatibility window (af_core.contract) ---------------------------------

TEMPLATE_PLUGIN = """
from af_core import hookimpl
import af_core.schedule.case

@hookimpl
def af_register_templates(register):
    pass
"""


@pytest.fixture
def version_two(monkeypatch):
    """A core one contract version ahead: version 2 changed a hook, moved a module and changed a default."""
    from af_core import contract, hookspecs

    change = contract.ContractChange(
        2,
        (
            contract.Touch(
                contract.Surface.HOOK, "af_register_templates", "Template.propose takes a graph view"
            ),
            contract.Touch(contract.Surface.MODULE, "af_core.schedule.case", "moved to af_core.template_api"),
            contract.Touch(contract.Surface.DEFAULT, "selection", "the default policy is cost, not seed"),
        ),
    )
    monkeypatch.setattr(hookspecs, "CONTRACT_VERSION", 2)
    monkeypatch.setattr(contract, "CHANGES", (change,))
    return change


def test_the_changelog_has_one_entry_per_version_after_the_first():
    from af_core import contract, hookspecs

    assert [c.version for c in contract.CHANGES] == list(range(2, hookspecs.CONTRACT_VERSION + 1))
    for change in contract.CHANGES:
        assert change.touches
        for touch in change.touches:
            assert touch.surface is not contract.Surface.MODULE or touch.name.startswith("af_core")


def test_a_plugin_one_version_behind_that_no_change_touches_loads_with_a_warning_saying_what_changed(
    site, version_two
):
    make_dist(
        site,
        "af-old-ops",
        "af_old_ops_mod",
        OP_PLUGIN.format(op="OldOp"),
        contract="AF_CONTRACT_VERSION = 1\n",
    )
    manager = AfPluginManager(env={})
    assert not [e for e in manager.load_errors if e.plugin == "af_old_ops_mod"]
    [warning] = [w for w in manager.load_warnings if w.plugin == "af_old_ops_mod"]
    assert "hook contract version 1, 1 behind; loaded" in warning.error
    assert (
        "What changed: version 1 -> 2: hook af_register_templates: Template.propose takes a graph view; "
        "module af_core.schedule.case: moved to af_core.template_api; "
        "default selection: the default policy is cost, not seed"
    ) in warning.error
    assert Registry(manager).entry("op", "OldOp").distribution == "af-old-ops"


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (TEMPLATE_PLUGIN, "hook af_register_templates: Template.propose takes a graph view"),
        (
            OP_PLUGIN.format(op="CaseUser") + "from af_core.schedule.case import Case\n",
            "module af_core.schedule.case",
        ),
        (
            OP_PLUGIN.format(op="LazyUser") + "def later():\n    from af_core.schedule import case\n",
            "module af_core.schedule.case",
        ),
    ],
    ids=["implements-a-changed-hook", "imports-a-moved-module", "imports-it-inside-a-function"],
)
def test_a_plugin_one_version_behind_that_a_change_touches_is_refused_naming_the_change(
    site, version_two, source, said
):
    module = f"af_touched_mod_{len(source)}"
    make_dist(site, "af-touched", module, source, contract="AF_CONTRACT_VERSION = 1\n")
    manager = AfPluginManager(env={})
    [error] = [e for e in manager.load_errors if e.plugin == module]
    assert not [w for w in manager.load_warnings if w.plugin == module]
    assert "changes since touch it (" in error.error and said in error.error
    assert "provides hook contract version 2" in error.error and "What changed: version 1 -> 2" in error.error


def test_a_plugin_two_versions_behind_is_refused_listing_every_change(site, version_two, monkeypatch):
    from af_core import contract, hookspecs

    three = contract.ContractChange(
        3, (contract.Touch(contract.Surface.HOOK, "af_register_samples", "takes kw"),)
    )
    monkeypatch.setattr(hookspecs, "CONTRACT_VERSION", 3)
    monkeypatch.setattr(contract, "CHANGES", (version_two, three))
    make_dist(
        site, "af-older", "af_older_mod", OP_PLUGIN.format(op="Older"), contract="AF_CONTRACT_VERSION = 1\n"
    )
    [error] = [e for e in AfPluginManager(env={}).load_errors if e.plugin == "af_older_mod"]
    assert "more than 1 behind" in error.error
    assert (
        "version 1 -> 2: " in error.error
        and "| version 2 -> 3: hook af_register_samples: takes kw" in error.error
    )


def test_a_version_the_changelog_does_not_cover_is_refused(site, monkeypatch):
    from af_core import hookspecs

    monkeypatch.setattr(hookspecs, "CONTRACT_VERSION", 2)  # a bump without a changelog entry
    make_dist(
        site,
        "af-unsaid",
        "af_unsaid_mod",
        OP_PLUGIN.format(op="Unsaid"),
        contract="AF_CONTRACT_VERSION = 1\n",
    )
    [error] = [e for e in AfPluginManager(env={}).load_errors if e.plugin == "af_unsaid_mod"]
    assert "does not say what changed since" in error.error


def test_every_command_warns_about_a_plugin_loaded_inside_the_window(site, version_two, capsys):
    from af_core import cli
    from af_core.registry import reset_registry

    make_dist(
        site,
        "af-old-cli",
        "af_old_cli_mod",
        OP_PLUGIN.format(op="OldCli"),
        contract="AF_CONTRACT_VERSION = 1\n",
    )
    previous = reset_registry()
    try:
        cli.warn_load_errors()
    finally:
        reset_registry(previous)
    err = capsys.readouterr().err
    assert (
        "afc: warning: plugin 'af_old_cli_mod' from 'af-old-cli' was built for hook contract version 1" in err
    )


# -- deferred registrations (af_core.deferred) -----------------------------------------------------------------

DEFERRED_PLUGIN = """
import sys
from af_core import deferred, hookimpl

class Template:
    name = "{name}"
    def propose(self, graph, il, ctx):
        return []

def make():
    {body}

@hookimpl
def af_register_templates(register):
    register(deferred("{name}", make))
"""


def test_a_deferred_template_is_built_on_first_use_only(site):
    (site / "af_lazy_heavy.py").write_text("BUILT = True\n")
    body = "import af_lazy_heavy\n    return Template()"
    make_dist(site, "af-lazy", "af_lazy_mod", DEFERRED_PLUGIN.format(name="lazy_one", body=body))
    import sys

    registry = Registry(AfPluginManager(env={}))
    entry = registry.entry("template", "lazy_one")
    assert entry.distribution == "af-lazy" and not entry.resolved
    assert "af_lazy_heavy" not in sys.modules  # listing it built nothing
    template = registry.get("template", "lazy_one")
    assert template.name == "lazy_one" and entry.resolved and "af_lazy_heavy" in sys.modules
    assert registry.get("template", "lazy_one") is template  # built once


@pytest.mark.parametrize(
    ("name", "body", "said"),
    [
        (
            "lazy_fails",
            "raise ImportError('no module named heavy_dep')",
            "failed to load: ImportError: no module",
        ),
        ("lazy_named", "t = Template(); t.name = 'other'; return t", "loaded a value named 'other', not"),
        ("lazy_shape", "return object()", "lacks a text 'name' or a 'propose' method"),
    ],
)
def test_a_deferred_registration_that_fails_is_an_error_naming_the_plugin_at_first_use(
    site, name, body, said
):
    module = f"af_{name}_mod"
    make_dist(site, "af-lazy-bad", module, DEFERRED_PLUGIN.format(name=name, body=body))
    registry = Registry(AfPluginManager(env={}))
    assert not [e for e in registry.load_errors if e.plugin == module]  # loading builds nothing
    with pytest.raises(PluginError) as err:
        registry.get("template", name)
    text = str(err.value)
    assert said in text and f"template '{name}' of plugin '{module}' (af-lazy-bad)" in text


def test_afc_plugins_load_reports_a_deferred_registration_that_fails(site, capsys):
    from af_core import cli
    from af_core.registry import reset_registry

    body = "raise RuntimeError('template module is broken')"
    make_dist(site, "af-lazy-cli", "af_lazy_cli_mod", DEFERRED_PLUGIN.format(name="lazy_cli", body=body))
    previous = reset_registry()
    try:
        listed = cli.main(["plugins"])
        out = capsys.readouterr().out
        loaded = cli.main(["plugins", "--load"])
        out_load = capsys.readouterr().out
    finally:
        reset_registry(previous)
    assert listed == 0 and "lazy_cli" in out and "template module is broken" not in out
    assert loaded == 1 and "template module is broken" in out_load.replace("\n", " ")
