"""af-indirect-load-simt: the SIMT IndirectLoad template for af_core (plugin ``indirect_load_simt``)."""

__version__ = "0.1.0"
