"""The core templates' shipped compiled modules: current, used, and never used when stale.

``af_core.codegen.jinja`` renders a core template from its module in
``af_core.codegen.compiled_templates`` (written by tools/compile_templates.py)
while that module holds the template's text and was compiled by the installed
jinja2; otherwise it compiles the text, as jinja2 does.
"""

from __future__ import annotations

import importlib.util
from importlib.resources import files
from pathlib import Path

import jinja2
import pytest

from af_core.codegen import jinja

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "compile_templates.py"
NAMES = sorted(jinja.ENV.list_templates())


def load_tool():
    spec = importlib.util.spec_from_file_location("compile_templates", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shipped_text(name: str) -> str:
    return (files(jinja.COMPILED_PACKAGE) / f"{jinja.compiled_module(name)}.py").read_text(encoding="utf-8")


def shipped_version(name: str) -> str:
    namespace: dict = {}
    exec(shipped_text(name), namespace)
    return namespace["JINJA2"]


def fresh_env(loader: jinja2.BaseLoader) -> jinja2.Environment:
    """An Environment with the core one's settings and filters, on ``loader``."""
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters.update({k: jinja.ENV.filters[k] for k in ("comment", "cstr", "ident")})
    return env


def test_every_core_template_has_a_module():
    assert len(NAMES) >= 12  # the four kernel and host templates and the operator package's
    for name in NAMES:
        assert shipped_text(name).count(f"af_core/codegen/templates/{name} ") == 1


@pytest.mark.parametrize("name", NAMES)
def test_the_shipped_module_is_the_templates_code(name):
    if shipped_version(name) != jinja2.__version__:
        pytest.skip(f"the modules are jinja2 {shipped_version(name)}'s code; this is {jinja2.__version__}")
    assert shipped_text(name) == jinja.compiled_module_text(name), (
        f"the compiled module of {name} is out of date: run python tools/compile_templates.py"
    )


@pytest.mark.parametrize("name", NAMES)
def test_a_core_template_runs_its_shipped_code_while_current(name):
    template = fresh_env(jinja.ShippedCodeLoader("af_core", "codegen/templates")).get_template(name)
    code_file = Path(template.root_render_func.__code__.co_filename)
    shipped = shipped_version(name) == jinja2.__version__
    assert (code_file.parent.name == "compiled_templates") is shipped
    assert Path(template.filename).name == Path(name).name  # tracebacks point into the template


def test_a_changed_template_is_compiled_from_its_text(monkeypatch):
    """A module that no longer holds its template's text is not run: the template's new text is."""
    name = "tiling_data.h.j2"
    loader = jinja.ShippedCodeLoader("af_core", "codegen/templates")
    get_source = loader.get_source

    def edited(environment, template):
        source, filename, uptodate = get_source(environment, template)
        return ("// edited\n" + source if template == name else source), filename, uptodate

    monkeypatch.setattr(loader, "get_source", edited)
    template = fresh_env(loader).get_template(name)
    assert Path(template.root_render_func.__code__.co_filename).parent.name != "compiled_templates"
    first = next(iter(template.root_render_func(template.new_context({}, shared=True))))
    assert first.startswith("// edited\n")  # the edited text renders


def test_a_module_of_another_jinja2_version_is_not_run(monkeypatch):
    monkeypatch.setattr(jinja2, "__version__", "0.0.0")
    template = fresh_env(jinja.ShippedCodeLoader("af_core", "codegen/templates")).get_template(
        "kernel.cpp.j2"
    )
    assert Path(template.root_render_func.__code__.co_filename).parent.name != "compiled_templates"


def test_two_environments_do_not_share_a_modules_globals():
    envs = [fresh_env(jinja.ShippedCodeLoader("af_core", "codegen/templates")) for _ in range(2)]
    templates = [env.get_template("tiling_data.h.j2") for env in envs]
    assert [t.root_render_func.__globals__["environment"] for t in templates] == envs


def test_the_tool_writes_checks_and_removes_only_its_own_modules(tmp_path, monkeypatch, capsys):
    tool = load_tool()
    monkeypatch.setattr(tool, "PACKAGE", tmp_path)
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "notes.py").write_text("# somebody's file\n")
    (tmp_path / "gone_j2.py").write_text(f"{tool.MARKER}gone.j2 with jinja2\n")
    assert tool.main(["--check"]) == 1  # every module missing, one belonging to no template
    assert sorted(p.name for p in tmp_path.iterdir()) == ["__init__.py", "gone_j2.py", "notes.py"]
    assert tool.main([]) == 1
    written = {p.name for p in tmp_path.glob("*_j2.py")}
    assert written == {f"{jinja.compiled_module(n)}.py" for n in NAMES}  # gone_j2.py removed
    assert (tmp_path / "notes.py").read_text() == "# somebody's file\n"  # not the tool's: left alone
    assert "notes.py is no template's module" in capsys.readouterr().out
    (tmp_path / "notes.py").unlink()
    assert tool.main(["--check"]) == 0


def test_without_the_compiled_package_templates_are_compiled_from_text(monkeypatch):
    monkeypatch.setattr(jinja, "COMPILED_PACKAGE", "af_core_missing_package.compiled_templates")
    template = fresh_env(jinja.ShippedCodeLoader("af_core", "codegen/templates")).get_template(
        "tiling_data.h.j2"
    )
    assert Path(template.root_render_func.__code__.co_filename).parent.name != "compiled_templates"
