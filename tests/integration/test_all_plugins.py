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


def test_every_declared_api_call_fills_the_roles_it_declared():
    """Building each ApiCall checks its declaration (deferred(..., roles=)): none is refused, and the
    v35 back end declares every one of its classes, so a lookup by role builds only what it needs."""
    table = get_registry().api_calls
    declared = {e.name: e.declared_roles for e in table.entries()}
    for entry in table.entries():
        if declared[entry.name] is not None:
            assert frozenset(entry.value.roles) == declared[entry.name], entry.name
    v35 = [e for e in table.entries() if e.distribution == "af-v35-regbase"]
    assert v35 and all(declared[e.name] is not None for e in v35)
