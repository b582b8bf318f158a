"""The host-side check: generated host C++ type-checked against the CANN host headers.

    from af_core.cann import check_host
    result = check_host({"op_host.cpp": host_text, "op_tiling.h": header_text})
    assert result.ok, result.describe()

Tiling functions, infer-shape functions and op registration are compiled
with ``g++ -std=c++17 -fsyntax-only`` against CANN's metadef headers
(``AF_CANN_SRC``) and asc-devkit's ``platform_ascendc.h`` (``AF_ASCENDC_SRC``),
as :mod:`af_core.ascendc` does for kernels. Modules:
:mod:`~af_core.cann.source` finds (and unpacks) metadef,
:mod:`~af_core.cann.headers` puts the include path together and says
whether the headers are there, :mod:`~af_core.cann.standins` holds our
replacements of the three headers they include but do not ship,
:mod:`~af_core.cann.check` runs g++ with caching.
"""

from af_core.cann.check import FileCheck, HostCheck, HostChecker, HostFilesError, check_host
from af_core.cann.headers import CHECK_ENV, HostHeaders, available, find_headers, required, skip_reason
from af_core.cann.source import SOURCE_ENV, CannSourceError, MetadefSource, find_metadef

__all__ = [
    "CHECK_ENV",
    "SOURCE_ENV",
    "CannSourceError",
    "FileCheck",
    "HostCheck",
    "HostChecker",
    "HostFilesError",
    "HostHeaders",
    "MetadefSource",
    "available",
    "check_host",
    "find_headers",
    "find_metadef",
    "required",
    "skip_reason",
]
