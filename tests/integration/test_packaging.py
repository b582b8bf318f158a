"""Every distribution of the repository carries the license, metadata and version source the release needs."""

from __future__ import annotations

import ast
import importlib
import os
import sys
import tomllib
from pathlib import Path

import pytest

from af_core import hookspecs

ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTIONS = sorted(
    [
        ROOT,
        *(p.parent for p in ROOT.glob("plugins/*/pyproject.toml")),
        *(p.parent for p in ROOT.glob("examples/*/pyproject.toml")),
    ]
)


def project(directory: Path) -> dict:
    return tomllib.loads((directory / "pyproject.toml").read_text(encoding="utf-8"))


def package_of(directory: Path) -> str:
    return project(directory)["tool"]["setuptools"]["dynamic"]["version"]["attr"].rsplit(".", 1)[0]


def ids(directory: Path) -> str:
    return directory.relative_to(ROOT).as_posix() or "af-core"


def test_nine_distributions_are_checked():
    # af-torch (frontends/torch) has its own packaging test in its env: importing it needs torch
    assert len(DISTRIBUTIONS) == 9


def pyproject_directories(root: Path) -> list[str]:
    """Every directory of the source tree holding a pyproject.toml (hidden, build and dist trees skipped)."""
    found = []
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("build", "dist", "node_modules")]
        if "pyproject.toml" in files:
            found.append(Path(here).relative_to(root).as_posix())
    return sorted(found)


def test_the_dist_check_builds_every_distribution_of_the_tree():
    assert sorted(_check_dist().DISTRIBUTIONS) == pyproject_directories(ROOT)


@pytest.mark.parametrize("directory", DISTRIBUTIONS, ids=ids)
def test_license_readme_and_metadata(directory):
    assert (directory / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    assert "Apache License" in (ROOT / "LICENSE").read_text(encoding="utf-8").splitlines()[1]
    meta = project(directory)
    assert meta["project"]["license"] == "Apache-2.0" and meta["project"]["license-files"] == ["LICENSE"]
    assert (directory / meta["project"]["readme"]).is_file()
    assert meta["project"]["authors"] and meta["project"]["classifiers"]
    assert not any(
        c.startswith("License ::") for c in meta["project"]["classifiers"]
    )  # PEP 639: the expression only
    assert meta["build-system"]["requires"] == ["setuptools>=77.0.3"]
    assert "urls" not in meta["project"]


def _installed(package: str):
    """The package if this env installs it, else None."""
    try:
        return importlib.import_module(package)
    except ModuleNotFoundError:
        return None


@pytest.mark.parametrize("directory", DISTRIBUTIONS, ids=ids)
def test_one_version_source_a_literal_in_the_package(directory):
    meta = project(directory)
    assert "version" not in meta["project"] and meta["project"]["dynamic"] == ["version"]
    package = package_of(directory)
    tree = ast.parse((directory / package / "__init__.py").read_text(encoding="utf-8"))
    literals = [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__version__"]
        and isinstance(node.value, ast.Constant)
    ]
    assert len(literals) == 1 and isinstance(literals[0], str)
    installed = _installed(package)
    if installed is not None:  # this env installs the distribution: the literal is what it reports
        assert literals == [installed.__version__]
    assert (directory / package / "py.typed").is_file()
    assert "py.typed" in str(meta["tool"]["setuptools"]["package-data"])


@pytest.mark.parametrize("directory", [d for d in DISTRIBUTIONS if d != ROOT], ids=ids)
def test_plugins_bound_the_core_state_their_contract_and_register_markers(directory):
    meta = project(directory)
    af_requirements = [r for r in meta["project"]["dependencies"] if r.startswith("af-")]
    assert "af-core~=0.1.0" in af_requirements
    assert all("~=0.1.0" in r for r in af_requirements)
    (entry_point,) = meta["project"]["entry-points"]["af_core"].values()
    # read from the source: the check holds for every distribution, whichever ones this env installs
    module = ast.parse((directory / (entry_point.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
    stated = [
        node.value.value
        for node in module.body
        if isinstance(node, ast.Assign)
        and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["AF_CONTRACT_VERSION"]
        and isinstance(node.value, ast.Constant)
    ]
    assert stated == [hookspecs.CONTRACT_VERSION]
    markers = " ".join(meta["tool"]["pytest"]["ini_options"]["markers"])
    assert all(f"{name}:" in markers for name in ("twin", "torch", "slow"))
    assert (directory / "MANIFEST.in").read_text(encoding="utf-8").splitlines()[1] == "graft tests"


@pytest.mark.parametrize("directory", [d for d in DISTRIBUTIONS if d != ROOT], ids=ids)
def test_plugins_declare_the_libraries_they_import(directory):
    meta = project(directory)
    declared = {r.split(">")[0].split("~")[0].split("=")[0] for r in meta["project"]["dependencies"]}
    imported = set()
    for source in (directory / package_of(directory)).rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = {"sympy", "numpy", "networkx", "jinja2", "attrs", "pluggy", "rich"}
    assert imported & third_party <= declared


def _check_dist():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import check_dist
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return check_dist


def _wheel(path: Path, metadata: str, license_file: bool) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("af_x-1.0.dist-info/METADATA", metadata)
        if license_file:
            zf.writestr("af_x-1.0.dist-info/licenses/LICENSE", "Apache License")
    return path


def test_the_dist_check_refuses_a_wheel_without_license_file_or_metadata(tmp_path):
    check_dist = _check_dist()
    good = "Metadata-Version: 2.4\nName: af-x\nVersion: 1.0\nLicense-Expression: Apache-2.0\nLicense-File: LICENSE\n"
    problems: list[str] = []
    check_dist.check_license(_wheel(tmp_path / "good.whl", good, True), problems)
    assert problems == []
    check_dist.check_license(
        _wheel(tmp_path / "bare.whl", "Metadata-Version: 2.4\nName: af-x\n", False), problems
    )
    assert len(problems) == 3 and all(p.startswith("bare.whl") for p in problems)


def test_the_dist_check_reads_a_match_only_with_the_installed_template():
    matched_with = _check_dist().matched_with
    row = "│ emb   │ V=100,B=4,L=8 │ simt     │ 0   │ 4     │ match  │ 0         │"
    assert matched_with(row, {"simt"})
    assert not matched_with(row, {"simd"})
    assert not matched_with(row.replace("match ", "MISMATCH"), {"simt"})
    assert matched_with(row.replace("simt    ", "simd/db "), {"simd"})
    assert not matched_with(row.replace("simt    ", "simd/db "), {"db"})


def test_the_dist_check_runs_the_readme_example():
    snippet, args = _check_dist().readme_example(ROOT)
    compile(snippet, "emb.py", "exec")
    assert "graph = " in snippet and args[0] == "--shape"
