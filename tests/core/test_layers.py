"""The layer check (tools/check_layers.py): the real tree passes it, and every kind of violation is caught.

The synthetic trees are small packages with their own ``[[tool.af.layer]]``
table, so each test shows one rule failing with the message a developer sees.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "check_layers.py"

if not TOOL.exists():  # an sdist without the tools directory
    pytest.skip("tools/check_layers.py is not in this tree", allow_module_level=True)

_spec = importlib.util.spec_from_file_location("check_layers", TOOL)
check_layers = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("check_layers", check_layers)  # dataclasses look their module up there
_spec.loader.exec_module(check_layers)

PYPROJECT = """
[tool.af]
package = "pkg"
forbidden = ["af_elementwise", "af_indirect_load_*"]
package-names = ["__version__"]

[[tool.af.layer]]
name = "low"
modules = ["pkg", "pkg.low", "pkg.other"]

[[tool.af.layer]]
name = "high"
modules = ["pkg.high"]
"""


def make_tree(tmp_path: Path, files: dict[str, str], pyproject: str = PYPROJECT) -> Path:
    (tmp_path / "pyproject.toml").write_text(pyproject)
    base = {
        "pkg/__init__.py": "",
        "pkg/low.py": "",
        "pkg/other.py": "",
        "pkg/high/__init__.py": "",
        "pkg/high/top.py": "",
        "pkg/high/user.py": "import pkg.low\nfrom pkg import other\n",
    }
    for name, text in {**base, **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def test_the_real_tree_has_no_layering_problem():
    assert check_layers.check(ROOT) == []


def test_every_module_of_af_core_is_in_a_layer():
    config = check_layers.load_config(ROOT)
    modules = check_layers.module_files(ROOT, "af_core")
    assert "af_core.tiling.solve" in modules
    assert all(check_layers.layer_of(name, config.layers) is not None for name in modules)
    names = [layer.name for layer in config.layers]
    assert (
        names.index("ir")
        < names.index("tiling")
        < names.index("schedule")
        < names.index("codegen")
        < names.index("twin")
        < names.index("cli")
    )


def test_the_base_layer_imports_nothing_of_af_core_but_its_leaves():
    """Five leaves that import nothing of af_core themselves: the errors, the owner markers of cache
    directories (the toolchain builds precompiled headers in those), the lazy module attributes the
    package's ``__init__`` declares its names with, the collector module whose exit hook it registers,
    and the entry-point reader (``afc --version`` and the plugin manager)."""
    config = check_layers.load_config(ROOT)
    files = check_layers.module_files(ROOT, "af_core")
    base = [name for name in files if check_layers.layer_of(name, config.layers).name == "base"]
    assert "af_core.naming" in base
    leaves = {
        "af_core.errors",
        "af_core.owned_dirs",
        "af_core.lazy",
        "af_core.collector",
        "af_core.entry_points",
    }
    for name in base:
        targets = {
            imp.target
            for imp in check_layers.imports_of(name, files[name], set(files))
            if not imp.type_only and imp.target.startswith("af_core")
        }
        assert targets <= (set() if name in leaves else leaves), name


def test_a_clean_synthetic_tree_passes(tmp_path):
    assert check_layers.check(make_tree(tmp_path, {})) == []


def test_an_upward_import_inside_a_function_is_reported_with_both_layers(tmp_path):
    root = make_tree(
        tmp_path,
        {
            "pkg/low.py": """
        def late():
            from pkg.high.top import thing
            return thing
        """
        },
    )
    assert check_layers.check(root) == ["pkg.low:3: pkg.low (layer low) imports pkg.high.top (layer high)"]


def test_relative_and_from_package_imports_are_resolved(tmp_path):
    root = make_tree(
        tmp_path, {"pkg/other.py": "from .high import top\n", "pkg/low.py": "from pkg import high\n"}
    )
    assert check_layers.check(root) == [
        "pkg.low:1: pkg.low (layer low) imports pkg.high (layer high)",
        "pkg.other:1: pkg.other (layer low) imports pkg.high.top (layer high)",
    ]


def test_import_module_with_a_literal_name_counts(tmp_path):
    root = make_tree(
        tmp_path, {"pkg/low.py": "import importlib\nmod = importlib.import_module('pkg.high')\n"}
    )
    assert check_layers.check(root) == ["pkg.low:2: pkg.low (layer low) imports pkg.high (layer high)"]


def test_a_cycle_inside_one_layer_is_reported(tmp_path):
    root = make_tree(
        tmp_path, {"pkg/low.py": "import pkg.other\n", "pkg/other.py": "def f():\n    import pkg.low\n"}
    )
    assert check_layers.check(root) == ["import cycle among pkg.low, pkg.other"]


def test_type_checking_imports_may_name_a_higher_layer(tmp_path):
    root = make_tree(
        tmp_path,
        {
            "pkg/low.py": """
        from typing import TYPE_CHECKING
        import typing

        if TYPE_CHECKING:
            from pkg.high.top import Thing
        if typing.TYPE_CHECKING:
            import pkg.high
        else:
            import pkg.other
        """
        },
    )
    assert check_layers.check(root) == []


def test_a_type_checking_import_that_closes_a_cycle_is_reported(tmp_path):
    """low names high's class for the type checker; high imports low at run time: one knot all the same."""
    root = make_tree(
        tmp_path,
        {
            "pkg/low.py": """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from pkg.high.top import Thing
        """,
            "pkg/high/top.py": "import pkg.low\n",
        },
    )
    assert check_layers.check(root) == ["import cycle among pkg.high.top, pkg.low"]


def test_the_core_has_no_import_cycle_even_counting_type_checking_imports():
    """The tree's own check (not a synthetic one): no cycle, TYPE_CHECKING imports included."""
    assert [p for p in check_layers.check(ROOT) if p.startswith("import cycle")] == []


def test_a_plugin_import_is_reported_even_for_type_checking(tmp_path):
    root = make_tree(
        tmp_path,
        {
            "pkg/low.py": """
        from typing import TYPE_CHECKING

        import af_elementwise.ops

        if TYPE_CHECKING:
            from af_indirect_load_simt.template import SimtTemplate
        """
        },
    )
    assert check_layers.check(root) == [
        "pkg.low:4 imports the plugin package af_elementwise.ops; pkg never imports a plugin",
        "pkg.low:7 imports the plugin package af_indirect_load_simt.template; pkg never imports a plugin",
    ]


def test_names_the_top_package_resolves_lazily_are_imported_from_their_module(tmp_path):
    root = make_tree(
        tmp_path,
        {
            "pkg/__init__.py": "__version__ = '1'\n",
            "pkg/low.py": "from pkg import __version__, other, Thing\n",
            "pkg/high/top.py": "from pkg.high import a, b\n",
        },
    )
    assert check_layers.check(root) == [
        "pkg.low:1 imports Thing from the pkg package, which resolves it lazily out of sight of this check; "
        "import it from its module",
    ]


def test_a_module_in_no_layer_is_reported(tmp_path):
    root = make_tree(tmp_path, {"pkg/stray.py": "x = 1\n"})
    assert check_layers.check(root) == [
        "pkg.stray belongs to no layer of [[tool.af.layer]] in pyproject.toml"
    ]


def test_the_longest_declared_name_decides_the_layer(tmp_path):
    pyproject = PYPROJECT.replace('modules = ["pkg.high"]', 'modules = ["pkg.high", "pkg.low.deep"]')
    root = make_tree(
        tmp_path,
        {
            "pkg/low/__init__.py": "",
            "pkg/low/deep.py": "import pkg.high\n",
            "pkg/low/flat.py": "import pkg.low.deep\n",
        },
        pyproject,
    )
    (root / "pkg" / "low.py").unlink()
    assert check_layers.check(root) == [
        "pkg.low.flat:1: pkg.low.flat (layer low) imports pkg.low.deep (layer high)",
    ]


# the synthetic tree with a plugin API: pkg.api is the facade (its own top layer), pkg.hooks the hook specs
PLUGIN_PYPROJECT = (
    PYPROJECT.replace('"pkg.other"]', '"pkg.other", "pkg.hooks"]')
    + """
[[tool.af.layer]]
name = "api"
modules = ["pkg.api"]

[tool.af.plugin-api]
roots = ["plugins/*/af_*"]
facade = "pkg.api"
modules = ["pkg.api", "pkg.hooks"]
package-names = ["hookimpl"]
"""
)
PLUGIN_BASE = {"pkg/api.py": "", "pkg/hooks.py": "", "plugins/demo/af_demo/__init__.py": ""}


def test_the_plugin_rule_reads_every_plugin_and_example_package_of_the_real_tree():
    """The real tree passes the plugin rule because it was read, not because no file matched."""
    config = check_layers.load_config(ROOT)
    assert config.plugin_api is not None and config.plugin_api.facade == "af_core.template_api"
    files = check_layers.plugin_files(ROOT, config.plugin_api.roots)
    assert {name.split(".")[0] for name in files} == {
        "af_elementwise",
        "af_v35_regbase",
        "af_indirect_load_simt",
        "af_indirect_load_simd",
        "af_indirect_load_sklike",
        "af_indirect_load_dedup",
        "af_template_scalar",
        "af_template_rowcopy",
    }
    assert {
        "af_v35_regbase.row_select",
        "af_v35_regbase.api_calls.vf_chain",
        "af_template_rowcopy.plugin",
    } <= set(files)
    assert not any({"tests", "build"} & set(path.relative_to(ROOT).parts) for path in files.values())
    modules = set(check_layers.module_files(ROOT, "af_core"))
    assert check_layers.check_plugins(ROOT, config, modules) == []


def test_a_plugin_importing_the_core_past_its_api_is_reported_in_every_form(tmp_path):
    plugin = """
    import importlib
    from typing import TYPE_CHECKING

    import pkg
    import pkg.api as api
    import pkg.low
    from af_other.helpers import helper
    from pkg import api as facade, hookimpl, other, Thing
    from pkg.api import Case
    from pkg.hooks import spec

    from . import sibling

    if TYPE_CHECKING:
        from pkg.high.top import Top


    def late():
        from pkg.high import top

        return importlib.import_module("pkg.other"), top
    """
    not_the_plugin = "import pkg.low\n"  # the plugin's tests and a build's copy are not checked
    root = make_tree(
        tmp_path,
        {
            **PLUGIN_BASE,
            "plugins/demo/af_demo/template.py": plugin,
            "plugins/demo/af_demo/tests/test_demo.py": not_the_plugin,
            "plugins/demo/tests/test_demo.py": not_the_plugin,
            "plugins/demo/build/lib/af_demo/template.py": not_the_plugin,
            "plugins/demo/af_demo.egg-info/stray.py": not_the_plugin,
        },
        PLUGIN_PYPROJECT,
    )
    rule = "plugins import the core only through pkg.api"
    path = "plugins/demo/af_demo/template.py"
    assert check_layers.check(root) == [
        f"{path}:5: imports pkg; {rule}",
        f"{path}:7: imports pkg.low; {rule}",
        f"{path}:9: imports pkg.other; {rule}",
        f"{path}:9: imports pkg.Thing; {rule}",
        f"{path}:16: imports pkg.high.top; {rule}",
        f"{path}:20: imports pkg.high.top; {rule}",
        f"{path}:22: imports pkg.other; {rule}",
    ]
    assert check_layers.main(["check_layers.py", str(root)]) == 1


def test_a_core_module_importing_the_facade_is_reported_even_for_types(tmp_path):
    root = make_tree(
        tmp_path,
        {
            **PLUGIN_BASE,
            "pkg/low.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from pkg.api import Case\n",
            "pkg/high/top.py": "import pkg.api\n",
        },
        PLUGIN_PYPROJECT,
    )
    advice = "which is for plugins; import the name from the module that defines it"
    assert check_layers.check(root) == [
        f"pkg.high.top:1 imports pkg.api, {advice}",
        f"pkg.low:4 imports pkg.api, {advice}",
    ]


def test_a_plugin_api_that_names_no_module_or_matches_no_plugin_is_reported(tmp_path):
    pyproject = PLUGIN_PYPROJECT.replace('"pkg.hooks"]\npackage', '"pkg.hookspecs"]\npackage').replace(
        'roots = ["plugins/*/af_*"]', 'roots = ["plugin/*/af_*"]'
    )
    root = make_tree(tmp_path, PLUGIN_BASE, pyproject)
    assert check_layers.check(root) == [
        "[tool.af.plugin-api] allows pkg.hookspecs, which is not a module of pkg",
        "no plugin package matches [tool.af.plugin-api] roots ['plugin/*/af_*']",
    ]


def test_the_command_exits_non_zero_and_prints_each_problem(tmp_path, capsys):
    root = make_tree(tmp_path, {"pkg/low.py": "import pkg.high.top\n"})
    assert check_layers.main(["check_layers.py", str(root)]) == 1
    out = capsys.readouterr().out
    assert "pkg.low:1: pkg.low (layer low) imports pkg.high.top (layer high)" in out
    assert check_layers.main(["check_layers.py", str(make_tree(tmp_path, {"pkg/low.py": ""}))]) == 0


class _Row:  # an ApiCall's shape without the base class, and an object with neither
    name = "row"


@pytest.mark.parametrize(
    "value", [object(), _Row, type("NoName", (), {"generate": lambda self: ""}), "ApiCall"]
)
def test_the_registry_refuses_what_is_not_an_api_call_without_importing_codegen(value):
    # the registry sits below the code generator, so it checks the shape the kernel generator relies on
    from af_core.errors import PluginError
    from af_core.registry import _check_api_call

    with pytest.raises(PluginError, match="registered by 'af-x' is not an ApiCall subclass"):
        _check_api_call(value, "af-x")


def test_the_registry_accepts_api_calls_and_api_sources_and_refuses_malformed_sources():
    from af_core.codegen.api_call import ApiCall
    from af_core.codegen.api_source import ApiSource
    from af_core.errors import PluginError
    from af_core.registry import _check_api_call, _check_api_source

    class Copy(ApiCall):
        name = "copy"

    assert _check_api_call(Copy, "af-x") is Copy
    source = ApiSource("s", "int x;", ("t",))
    assert _check_api_source(source, "af-x") is source
    listed = ApiSource("s", "int x;", ["t"])  # a list of requirements, as before
    assert _check_api_source(listed, "af-x") is listed
    for bad in (ApiSource("s", "int x;", (3,)), ApiSource("s", None), object()):
        with pytest.raises(PluginError, match="is not an ApiSource with text fields"):
            _check_api_source(bad, "af-x")
