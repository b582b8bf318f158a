"""CANN custom-operator packages: ``afc package`` and :func:`build_package`.

A package holds the kernel, the host tiling and infer-shape functions af
generates, and the CANN glue around them (OpDef, TilingFunc / TilingParse,
InferShape / InferDataType registration, a launch function, CMake files),
all generated from one schedule. :func:`build_package` refuses a graph whose
sizes cannot be recovered from its input shapes (:class:`PackageError`).
"""

from __future__ import annotations

from af_core.package.binding import DimCheck, PackageError, SizeBinding, SizeMap, size_map
from af_core.package.names import OperatorNames, operator_names, snake_case
from af_core.package.operator import GE_DTYPES, OperatorPackage, build_package, write_package
from af_core.package.resources import PackageResources

__all__ = [
    "GE_DTYPES",
    "DimCheck",
    "OperatorNames",
    "OperatorPackage",
    "PackageError",
    "PackageResources",
    "SizeBinding",
    "SizeMap",
    "build_package",
    "operator_names",
    "size_map",
    "snake_case",
    "write_package",
]
