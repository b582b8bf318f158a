"""Finding the host headers: a clear error when they are absent, a tarball unpacked once, the skip rule."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from host_probe import host_probe

from af_core.cann import (
    CHECK_ENV,
    SOURCE_ENV,
    CannSourceError,
    HostFilesError,
    available,
    check_host,
    find_metadef,
    required,
    skip_reason,
)
from af_core.cann import source as cann_source
from af_core.errors import AfError


def test_a_missing_location_raises_the_clear_error(tmp_path):
    with pytest.raises(CannSourceError, match="does not exist"):
        find_metadef(tmp_path / "absent")
    with pytest.raises(CannSourceError, match="no inc/external and no metadef-"):
        find_metadef(tmp_path)
    assert issubclass(CannSourceError, AfError)


def test_no_location_at_all_names_the_variable(monkeypatch, tmp_path):
    monkeypatch.delenv(SOURCE_ENV, raising=False)
    monkeypatch.setattr(cann_source, "_CHECKOUT", tmp_path)  # an installed package: no checkout default
    with pytest.raises(CannSourceError, match=SOURCE_ENV):
        find_metadef()


def test_check_host_without_headers_raises_the_clear_error(tmp_path):
    with pytest.raises(CannSourceError, match="does not exist"):
        check_host(host_probe(), metadef=tmp_path / "absent", cache_dir=tmp_path)
    tree = tmp_path / "metadef"
    (tree / "inc" / "external").mkdir(parents=True)  # metadef found, asc-devkit not
    with pytest.raises(CannSourceError, match="platform_ascendc.h"):
        check_host(host_probe(), metadef=tree, ascendc=tmp_path / "absent", cache_dir=tmp_path)


@pytest.mark.parametrize(
    "files",
    [{"../escape.cpp": ""}, {"sub/file.cpp": ""}, {"..": ""}, {"only_a_header.h": "int x;"}, {}],
)
def test_files_that_cannot_be_checked_are_refused(files, tmp_path):
    with pytest.raises(HostFilesError):
        check_host(files, metadef=tmp_path / "absent", cache_dir=tmp_path)


def test_skip_reason_and_required(monkeypatch, tmp_path):
    monkeypatch.setenv(SOURCE_ENV, str(tmp_path / "absent"))
    reason = skip_reason()
    assert reason is not None and SOURCE_ENV in reason and not available()
    monkeypatch.setenv(SOURCE_ENV, str(tmp_path))  # exists: not a reason to skip (it fails instead)
    monkeypatch.setenv("AF_ASCENDC_SRC", str(tmp_path))
    assert skip_reason() is None and available()
    for value, expected in [("require", True), ("1", True), ("auto", False), ("0", False), ("", False)]:
        monkeypatch.setenv(CHECK_ENV, value)
        assert required() is expected


@pytest.fixture(scope="module")
def tarball() -> Path:
    given = os.environ.get(SOURCE_ENV)
    where = Path(given) if given else cann_source.checkout_default("cann-metadef")
    found: list[Path] = []
    if where is not None and where.is_file():
        found = [where]
    elif where is not None and where.is_dir():
        found = sorted(where.glob("metadef-*.tar.*"))
    if not found:
        pytest.skip(f"{SOURCE_ENV} names no metadef tarball: the unpacking tests need one")
    return found[0]


def test_a_tarball_is_unpacked_once_into_the_cache(tarball, tmp_path):
    def listing():
        return {p.name: p.stat().st_mtime_ns for p in tarball.parent.iterdir()}

    before = listing()
    source = find_metadef(tarball.parent, cache_dir=tmp_path)
    assert source.root.is_relative_to(tmp_path)
    assert (source.root / "inc" / "external" / "register" / "op_impl_registry.h").is_file()
    mtime = source.root.stat().st_mtime_ns
    again = find_metadef(tarball, cache_dir=tmp_path)  # the tarball itself, same content hash
    assert (again.root, again.identity) == (source.root, source.identity)
    assert source.root.stat().st_mtime_ns == mtime
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporaries left
    assert listing() == before  # the source is never written
    tree = find_metadef(source.root, cache_dir=tmp_path)  # the extracted tree, as it is
    assert tree.root == source.root and tree.identity != source.identity
