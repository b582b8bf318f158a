"""af-template-scalar: a fourth IndirectLoad template, added through af_core's public hooks only."""

__version__ = "0.1.0"
