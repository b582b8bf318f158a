"""The v35 plugin is discovered and serves twin headers for SoC 3510 only."""

from __future__ import annotations

from pathlib import Path

from af_core.platform import Platform
from af_core.registry import get_registry


def test_plugin_loaded_from_its_distribution():
    manager = get_registry().manager
    infos = {p.name: p for p in manager.plugins()}
    assert infos["v35_regbase"].distribution == "af-v35-regbase"
    assert "af_twin_include_dirs" in infos["v35_regbase"].hooks


def test_twin_include_dir_for_3510():
    dirs = get_registry().manager.twin_include_dirs(Platform())
    assert any(Path(d).name == "include" and Path(d).is_dir() for d in dirs)
