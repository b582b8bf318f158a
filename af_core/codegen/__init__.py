"""Kernel and host code generation from scheduled cases."""
