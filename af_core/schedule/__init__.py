"""Scheduling: templates propose cases for an IndirectLoad graph, or reject it with a reason."""
