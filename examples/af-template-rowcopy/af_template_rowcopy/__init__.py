"""af-template-rowcopy: an IndirectLoad template that copies whole table rows, added through af_core's public API."""

__version__ = "0.1.0"
