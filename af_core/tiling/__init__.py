"""Tiling: resource formulas, tile rules and scores, evaluated in Python and in generated C++."""
