"""Fail when an af-* distribution in this environment did not come from this checkout.

Per-plugin tox environments install one plugin and what it declares; a
sibling package pulled from an index (or from another checkout) would make
the test run meaningless, so tox runs this before the tests.

Usage: python tools/check_origin.py ROOT
"""

from __future__ import annotations

import importlib.metadata as md
import json
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse


def origin(dist: md.Distribution) -> Path | None:
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    url = json.loads(text).get("url", "")
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path)).resolve()


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else ".").resolve()
    problems = []
    found = []
    for dist in md.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if not name.startswith("af-"):
            continue
        where = origin(dist)
        found.append(f"{name}=={dist.version} from {where}")
        if where is None or not where.is_relative_to(root):
            problems.append(f"{name} {dist.version} was not installed from {root} (origin: {where})")
    for line in sorted(found):
        print(f"  {line}")
    if problems:
        print("sibling packages from outside the checkout:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
