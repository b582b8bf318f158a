"""The one jinja2 Environment of the process.

Core templates live in ``af_core/codegen/templates``; ApiCalls from plugins
render their own template text through :func:`render_string`, which caches
the compiled template per text so nothing is compiled twice.
"""

from __future__ import annotations

import functools
from typing import Any

import jinja2

from af_core import naming

ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("af_core", "codegen/templates"),
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


def render(template_name: str, /, **context: Any) -> str:
    """Render a core template by file name."""
    return ENV.get_template(template_name).render(**context)


@functools.lru_cache(maxsize=512)
def _compiled(text: str) -> jinja2.Template:
    return ENV.from_string(text)


def render_string(text: str, **context: Any) -> str:
    """Render template text (compiled once per distinct text)."""
    return _compiled(text).render(**context)
