"""af-indirect-load-sklike: the SK-like IndirectLoad template for af_core (plugin ``indirect_load_sklike``)."""

__version__ = "0.1.0"
