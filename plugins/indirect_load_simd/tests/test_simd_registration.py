"""The simd template is discovered from its own distribution."""

from __future__ import annotations

from af_core.registry import get_registry


def test_template_registered():
    entry = get_registry().entry("template", "simd")
    assert entry is not None
    assert entry.distribution == "af-indirect-load-simd"
