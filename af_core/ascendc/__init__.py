"""The official-header check: generated kernels type-checked against asc-devkit.

    from af_core.ascendc import check_kernels
    results = check_kernels([kernel_text], src="path/to/asc-devkit")   # or AF_ASCENDC_SRC
    assert results[0].ok, results[0].describe()

Modules: :mod:`~af_core.ascendc.source` finds (and unpacks) the headers,
:mod:`~af_core.ascendc.standins` holds our replacements of the closed
CPU-debug files, :mod:`~af_core.ascendc.check` runs g++ with caching,
:mod:`~af_core.ascendc.diagnostics` reads its errors. See docs/ascendc-check.md.
"""

from af_core.ascendc.check import AscendcChecker, KernelCheck, check_kernels
from af_core.ascendc.diagnostics import Diagnostic
from af_core.ascendc.source import SOURCE_ENV, AscendcSource, AscendcSourceError, find_source

__all__ = [
    "SOURCE_ENV",
    "AscendcChecker",
    "AscendcSource",
    "AscendcSourceError",
    "Diagnostic",
    "KernelCheck",
    "check_kernels",
    "find_source",
]
