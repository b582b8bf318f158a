"""Write the core templates' compiled modules (af_core/codegen/compiled_templates) from the templates.

Each template under ``af_core/codegen/templates`` gets one module: jinja2's Python code for it, the
template text and the jinja2 version (``af_core.codegen.jinja.compiled_module_text``). A process then
renders a core template without compiling it (``af_core.codegen.jinja`` checks the text and version
first). tests/core/test_compiled_templates.py fails when a module is out of date.

Usage:
    python tools/compile_templates.py            # rewrite what is out of date; exit 1 when something was
    python tools/compile_templates.py --check    # only compare; exit 1 (naming the modules) when stale

A module of the package that no template has any more is removed when it carries the marker line this
tool writes; any other file there is reported and left alone.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from af_core.codegen.jinja import ENV, compiled_module, compiled_module_text

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "af_core" / "codegen" / "compiled_templates"
#: the line every module this tool writes carries
MARKER = "# Written by tools/compile_templates.py from af_core/codegen/templates/"


def expected() -> dict[Path, str]:
    """Every module's path and text, as the templates are now."""
    return {
        PACKAGE / f"{compiled_module(name)}.py": compiled_module_text(name) for name in ENV.list_templates()
    }


def _write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, write nothing")
    args = parser.parse_args(argv)
    want = expected()
    stale = 0
    for path, text in sorted(want.items()):
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old == text:
            continue
        stale = 1
        name = path.relative_to(ROOT)
        if args.check:
            print(f"{name} is {'missing' if old is None else 'out of date'}")
        else:
            _write(path, text)
            print(f"{name} written")
    for path in sorted(PACKAGE.glob("*.py")):
        if path.name == "__init__.py" or path in want:
            continue
        stale = 1
        name = path.relative_to(ROOT)
        if MARKER not in path.read_text(encoding="utf-8"):
            print(f"{name} is no template's module and was not written by this tool: left alone")
        elif args.check:
            print(f"{name} belongs to no template")
        else:
            path.unlink()
            print(f"{name} belonged to no template; removed")
    return stale


if __name__ == "__main__":
    sys.exit(main())
