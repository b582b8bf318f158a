"""The one jinja2 Environment of the process.

Core templates live in ``af_core/codegen/templates``; ApiCalls from plugins
render their own template text through :func:`render_string`, which caches
the compiled template per text so nothing is compiled twice.

jinja2 compiles a template to Python the first time a process renders it,
which costs a fresh process's first compile about 15 ms for the four kernel
and host templates. So each core template ships compiled as well, as a module
of ``af_core.codegen.compiled_templates`` (``tools/compile_templates.py``
writes them; ``tests/core/test_compiled_templates.py`` fails when one is out
of date), and Python's own bytecode cache keeps those modules. A module is
used only while it holds the template's current text and was compiled by the
installed jinja2's version; in any other case the template is compiled from
its text, as jinja2 always does.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import MutableMapping
from typing import Any

import jinja2

from af_core import naming

#: the package of the compiled core templates
COMPILED_PACKAGE = "af_core.codegen.compiled_templates"


def compiled_module(template_name: str) -> str:
    """The module name (within :data:`COMPILED_PACKAGE`) of a core template's compiled code."""
    return template_name.replace("/", "__").replace(".", "_").replace("-", "_")


def _shipped_namespace(template_name: str, filename: str | None) -> dict[str, Any] | None:
    """The compiled module of ``template_name`` run in a namespace of its own (so no two Environments
    share its globals), or None when there is none. ``__file__`` is the template's file, as jinja2 sets
    it for the code it compiles: its tracebacks point into the template."""
    try:
        spec = importlib.util.find_spec(f"{COMPILED_PACKAGE}.{compiled_module(template_name)}")
    except ImportError:  # the package itself is missing (a copy of af_core without it)
        return None
    if spec is None or spec.loader is None:
        return None
    code = spec.loader.get_code(spec.name)  # type: ignore[attr-defined]  # a SourceFileLoader
    namespace: dict[str, Any] = {"__file__": filename}
    exec(code, namespace)  # our own package's module, run as importing it would run it
    return namespace


class ShippedCodeLoader(jinja2.PackageLoader):
    """A PackageLoader that takes a template's compiled code from its shipped module when that module
    holds the template's current text and was compiled by the installed jinja2."""

    def load(
        self,
        environment: jinja2.Environment,
        name: str,
        globals: MutableMapping[str, Any] | None = None,  # noqa: A002 - jinja2's parameter name
    ) -> jinja2.Template:
        source, filename, _uptodate = self.get_source(environment, name)
        namespace = _shipped_namespace(name, filename)
        if (
            namespace is not None
            and namespace.get("SOURCE") == source
            and namespace.get("JINJA2") == jinja2.__version__
        ):
            return environment.template_class.from_module_dict(environment, namespace, globals or {})
        return super().load(environment, name, globals)


ENV = jinja2.Environment(
    loader=ShippedCodeLoader("af_core", "codegen/templates"),
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    autoescape=False,
)
# user text (graph, node and size names, messages that quote them) goes through one of these
ENV.filters["comment"] = naming.comment  # inside // or /* */
ENV.filters["cstr"] = naming.c_string  # a whole C++ string literal, quotes included
ENV.filters["ident"] = naming.ident  # a C++ identifier


def compiled_module_text(template_name: str, source: str | None = None) -> str:
    """The text of the compiled module of a core template (``tools/compile_templates.py`` writes it):
    jinja2's Python code for it, then the template text and the jinja2 version it was compiled from
    (after the code, so the line numbers jinja2 maps template errors with stay right)."""
    loader = ENV.loader
    assert isinstance(loader, ShippedCodeLoader)
    if source is None:
        source = loader.get_source(ENV, template_name)[0]
    # defer_init: the code looks ``environment`` up when it renders, as the code jinja2's own
    # ModuleLoader runs does, so one module serves any Environment that loads it
    code = ENV.compile(source, template_name, raw=True, defer_init=True)
    return (
        f"{code.rstrip()}\n\n"
        f"# Written by tools/compile_templates.py from af_core/codegen/templates/{template_name} with jinja2\n"
        "# (its compiled code, above): do not edit. af_core.codegen.jinja runs this code only while SOURCE is\n"
        "# that template's text and JINJA2 the installed jinja2's version.\n"
        f"SOURCE = {source!r}\n"
        f"JINJA2 = {jinja2.__version__!r}\n"
    )


def render(template_name: str, /, **context: Any) -> str:
    """Render a core template by file name."""
    return ENV.get_template(template_name).render(**context)


@functools.lru_cache(maxsize=512)
def _compiled(text: str) -> jinja2.Template:
    return ENV.from_string(text)


def render_string(text: str, **context: Any) -> str:
    """Render template text (compiled once per distinct text)."""
    return _compiled(text).render(**context)
