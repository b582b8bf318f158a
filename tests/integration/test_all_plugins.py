"""All seven distributions load together without load errors."""

from __future__ import annotations

from af_core.registry import get_registry

DISTRIBUTIONS = {
    "af_core": "af-core",
    "elementwise": "af-elementwise",
    "v35_regbase": "af-v35-regbase",
    "indirect_load_simd": "af-indirect-load-simd",
    "indirect_load_simt": "af-indirect-load-simt",
    "indirect_load_sklike": "af-indirect-load-sklike",
    "indirect_load_dedup": "af-indirect-load-dedup",
}


def test_every_distribution_is_loaded():
    registry = get_registry()
    assert registry.load_errors == []
    loaded = {p.name: p.distribution for p in registry.manager.plugins()}
    for plugin, dist in DISTRIBUTIONS.items():
        assert loaded.get(plugin) == dist
    assert set(registry.names("template")) >= {"simd", "simt", "sklike", "dedup"}
