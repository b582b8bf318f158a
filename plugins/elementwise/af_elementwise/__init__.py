"""af-elementwise: elementwise op definitions for af_core (plugin ``elementwise``)."""

__version__ = "0.1.0"
