"""Fail unless every pin of the floors constraints file is the installed version.

`tox -e floors` installs with constraints-floors.txt; this check proves the
tests then ran against those versions and not against whatever pip kept or
preferred. It also fails when a pinned version is not the floor that an af-*
pyproject.toml declares for that dependency, so the file and the floors
cannot drift apart.

Usage: python tools/check_floors.py ROOT
"""

from __future__ import annotations

import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([A-Za-z0-9_.+-]+)$")
FLOOR = re.compile(r"^([A-Za-z0-9_.-]+)\s*>=\s*([A-Za-z0-9_.+-]+)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    found = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            match = PIN.match(line)
            if match is None:
                raise SystemExit(f"{path.name}: '{line}' is not NAME==VERSION")
            found[canonical(match[1])] = match[2]
    return found


def declared_floors(root: Path) -> dict[str, set[str]]:
    """Every `NAME>=VERSION` requirement (dependencies and extras) of every af-* pyproject."""
    floors: dict[str, set[str]] = {}
    for pyproject in sorted(
        [
            root / "pyproject.toml",
            *root.glob("plugins/*/pyproject.toml"),
            *root.glob("examples/*/pyproject.toml"),
        ]
    ):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        requirements = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            requirements.extend(extra)
        for requirement in requirements:
            match = FLOOR.match(requirement)
            if match is not None:
                floors.setdefault(canonical(match[1]), set()).add(match[2])
    return floors


def same_version(a: str, b: str) -> bool:
    """1.5 and 1.5.0 are the same release."""

    def key(v: str) -> list[str]:
        parts = v.split(".")
        while parts and parts[-1] == "0":
            parts.pop()
        return parts

    return key(a) == key(b)


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else ".").resolve()
    wanted = pins(root / "constraints-floors.txt")
    problems = []
    for name, floors in sorted(declared_floors(root).items()):
        if name == "pytest-benchmark":
            continue  # the bench extra: not installed by the floors env
        if name not in wanted:
            problems.append(
                f"{name}: declared floor(s) {sorted(floors)} but not pinned in constraints-floors.txt"
            )
        elif not all(same_version(floor, wanted[name]) for floor in floors):
            problems.append(f"{name}: pinned {wanted[name]}, declared floors {sorted(floors)}")
    for name, version in sorted(wanted.items()):
        try:
            installed = md.version(name)
        except md.PackageNotFoundError:
            problems.append(f"{name}: pinned {version} but not installed")
            continue
        print(f"  {name}=={installed}")
        if installed != version:
            problems.append(f"{name}: pinned {version} but {installed} is installed")
    if problems:
        print("floors check failed:", *problems, sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
