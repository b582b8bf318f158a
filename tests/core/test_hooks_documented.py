"""Every hook in the hookspec module is documented in docs/hooks.md, and vice versa."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from af_core import hookspecs

DOC = Path(__file__).resolve().parents[2] / "docs" / "hooks.md"


def spec_names() -> set[str]:
    return {name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("af_")}


def test_every_hook_has_a_docstring():
    for name in spec_names():
        doc = inspect.getdoc(getattr(hookspecs, name)) or ""
        assert ":param" in doc or ":return" in doc, f"{name} lacks argument documentation"


def test_every_hook_is_documented_in_docs():
    text = DOC.read_text(encoding="utf-8")
    documented = set(re.findall(r"^## `(af_\w+)\(", text, flags=re.M))
    assert spec_names() == documented, (
        f"undocumented: {sorted(spec_names() - documented)}, "
        f"documented but not specified: {sorted(documented - spec_names())}"
    )


def test_documented_signatures_match():
    text = DOC.read_text(encoding="utf-8")
    for name in spec_names():
        params = ", ".join(inspect.signature(getattr(hookspecs, name)).parameters)
        assert f"## `{name}({params})`" in text, f"docs/hooks.md signature of {name} is out of date"
