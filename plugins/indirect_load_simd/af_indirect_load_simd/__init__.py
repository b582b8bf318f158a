"""af-indirect-load-simd: the SIMD IndirectLoad template for af_core (plugin ``indirect_load_simd``)."""

__version__ = "0.1.0"
