"""af_core.entry_points finds what importlib.metadata finds, without importing it where it can.

Compared on every entry-point group of every distribution installed where the
tests run (each tox environment has its own set), on synthetic trees of
distributions, and on the cases it leaves to importlib.metadata (a zip file
on the path, a metadata directory named in upper case).
"""

from __future__ import annotations

import importlib.metadata as md
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from af_core import entry_points as ep_mod
from af_core.entry_points import EntryPoint, entry_points


def reference(group: str, path: list[str] | None = None) -> list[EntryPoint]:
    return sorted(ep_mod._from_importlib_metadata(group, path))


def installed_groups() -> list[str]:
    return sorted({ep.group for dist in md.distributions() for ep in dist.entry_points})


def dist(root: Path, dirname: str, name: str, version: str, entry_points_txt: str | None) -> None:
    info = root / dirname
    info.mkdir(parents=True)
    meta = "METADATA" if dirname.endswith(".dist-info") else "PKG-INFO"
    (info / meta).write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: x\n\nbody: no\n"
    )
    if entry_points_txt is not None:
        (info / "entry_points.txt").write_text(entry_points_txt)


def test_every_installed_group_is_found_as_importlib_metadata_finds_it():
    groups = installed_groups()
    assert "af_core" in groups or "console_scripts" in groups
    assert ep_mod._standard_finders_only()  # so the scan itself is what runs here
    for group in groups:
        assert sorted(ep_mod._scan(group, sys.path)) == reference(group), group
        assert sorted(entry_points(group)) == reference(group), group


def test_a_synthetic_tree(tmp_path):
    a, b, missing = tmp_path / "a", tmp_path / "b", tmp_path / "missing"
    text = (
        "# a comment\n\n[af_core]\nfirst = pkg.mod:attr.sub\n  second=pkg.other [extra1,extra2]\n"
        "[console_scripts]\ntool = pkg.cli:main\n"
    )
    dist(a, "af_one-1.0.dist-info", "af-one", "1.0", text)
    dist(b, "AF.One-2.0.dist-info", "AF.One", "2.0", "[af_core]\nshadowed = pkg.shadow\n")  # same name
    dist(b, "af_two-0.3.egg-info", "af_two", "0.3", "[af_core]\nthird = two\n")
    dist(b, "plain-1.dist-info", "plain", "1", None)  # no entry points at all
    path = [str(a), str(missing), str(b)]
    found = sorted(entry_points("af_core", path))
    assert found == reference("af_core", path)
    assert found == [
        EntryPoint("first", "pkg.mod:attr.sub", "af_core", "af-one", "1.0"),
        EntryPoint("second", "pkg.other [extra1,extra2]", "af_core", "af-one", "1.0"),
        EntryPoint("third", "two", "af_core", "af_two", "0.3"),
    ]
    assert entry_points("console_scripts", path) == reference("console_scripts", path)
    assert entry_points("nothing", path) == []


def test_what_it_leaves_to_importlib_metadata_is_still_found(tmp_path, monkeypatch):
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zipped-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped\nVersion: 1.0\n\n")
        z.writestr("zipped-1.0.dist-info/entry_points.txt", "[af_core]\nz = zipped.plugin\n")
    upper = tmp_path / "upper"
    dist(upper, "Upper-1.0.DIST-INFO", "upper", "1.0", "[af_core]\nu = upper\n")
    calls, general = [], ep_mod._from_importlib_metadata
    monkeypatch.setattr(ep_mod, "_from_importlib_metadata", lambda g, p: calls.append(p) or general(g, p))
    for path in ([str(archive)], [str(upper)]):
        found = entry_points("af_core", path)
        assert calls[-1] == path  # handed over
        assert [e.name for e in found] == (["z"] if path[0].endswith(".zip") else ["u"])


def test_an_unreadable_path_entry_goes_to_importlib_metadata(tmp_path, monkeypatch):
    """A directory on the path that cannot be listed (no read permission) is importlib.metadata's to judge."""
    locked = tmp_path / "locked"
    dist(locked, "locked-1.0.dist-info", "locked", "1.0", "[af_core]\nl = locked\n")
    listdir = ep_mod.os.listdir

    def refusing(path):
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return listdir(path)

    calls, general = [], ep_mod._from_importlib_metadata
    monkeypatch.setattr(ep_mod.os, "listdir", refusing)
    monkeypatch.setattr(ep_mod, "_from_importlib_metadata", lambda g, p: calls.append(p) or general(g, p))
    entry_points("af_core", [str(locked)])
    assert calls == [[str(locked)]]


def test_load_imports_the_module_and_follows_the_attribute_path():
    assert (
        EntryPoint("x", "af_core.naming:ident", "g", "d", "1").load()
        is __import__("af_core.naming").naming.ident
    )
    assert EntryPoint("x", "af_core.entry_points:EntryPoint.load", "g", "d", "1").load() is EntryPoint.load
    assert EntryPoint("x", "af_core.naming [extra]", "g", "d", "1").load().__name__ == "af_core.naming"
    with pytest.raises(ValueError, match="malformed value"):
        EntryPoint("x", "not a value!", "g", "d", "1").load()


def test_loading_the_plugins_does_not_import_importlib_metadata():
    pluggy_probe = "import sys, pluggy; print('importlib.metadata' in sys.modules)"
    if (
        subprocess.run([sys.executable, "-c", pluggy_probe], capture_output=True, text=True).stdout.strip()
        == "True"
    ):
        pytest.skip("this pluggy imports importlib.metadata itself (pluggy before 1.5)")
    probe = (
        "import sys\nfrom af_core.registry import get_registry\nget_registry()\n"
        "print('importlib.metadata' in sys.modules, 'email' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert out.split() == ["False", "False"]
