"""af-v35-regbase: the A5 (v35) ApiCall set, AscendC API sources and the CPU twin headers."""

__version__ = "0.1.0"
