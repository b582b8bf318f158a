"""af-indirect-load-dedup: a row-gather IndirectLoad template that reads each distinct row tile once per work item
(plugin ``indirect_load_dedup``)."""

__version__ = "0.1.0"
