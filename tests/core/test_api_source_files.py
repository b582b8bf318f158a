"""ApiSource.from_package reads a source file beside a package's modules, wherever the package comes from."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from af_core.codegen.api_source import ApiSource

TEXT = "// a helper\ninline int af_one() { return 1; }\n"


@pytest.fixture
def on_path(monkeypatch):
    """Put a path entry first on sys.path and forget the probe packages afterwards."""

    def add(entry: Path) -> None:
        monkeypatch.syspath_prepend(str(entry))

    yield add
    for name in [m for m in sys.modules if m.startswith("af_probe_")]:
        del sys.modules[name]


def test_a_directory_package_file_is_read_beside_its_init(tmp_path, on_path):
    pkg = tmp_path / "af_probe_dir"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "one.h").write_text(TEXT)
    on_path(tmp_path)
    source = ApiSource.from_package("af_one", "af_probe_dir", "one.h", ["af_base"])
    assert (source.name, source.text, source.requires) == ("af_one", TEXT, ("af_base",))


def test_a_zipped_package_is_read_through_importlib_resources(tmp_path, on_path):
    archive = tmp_path / "probe.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("af_probe_zip/__init__.py", "")
        z.writestr("af_probe_zip/one.h", TEXT)
    on_path(archive)
    assert ApiSource.from_package("af_one", "af_probe_zip", "one.h").text == TEXT
    assert ".zip" in sys.modules["af_probe_zip"].__file__


def test_a_namespace_package_is_read_through_importlib_resources(tmp_path, on_path):
    pkg = tmp_path / "af_probe_ns"
    pkg.mkdir()
    (pkg / "one.h").write_text(TEXT)
    on_path(tmp_path)
    assert ApiSource.from_package("af_one", "af_probe_ns", "one.h").text == TEXT
    assert getattr(sys.modules["af_probe_ns"], "__file__", None) is None


def test_a_missing_file_is_an_error_naming_it(tmp_path, on_path):
    pkg = tmp_path / "af_probe_missing"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    on_path(tmp_path)
    with pytest.raises(FileNotFoundError, match="absent.h"):
        ApiSource.from_package("af_one", "af_probe_missing", "absent.h")
