"""The generated host tiling, compiled as a shared library and called through ctypes.

Used by the differential tests (C++ against :mod:`af_core.tiling.solve`,
field by field) and by the host-tiling benchmark. It lives with the twin:
like a twin build it compiles generated C++ and keeps the result as an
entry of the twin's build cache (``tiling-<key>``).
"""

from __future__ import annotations

import ctypes
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from af_core import owned_dirs, toolchain
from af_core.twin.cache import LAYOUT, default_cache_dir, is_usable, open_cache, remove_entry, touch

if TYPE_CHECKING:
    from af_core.codegen.codegen import CodegenResult


@attrs.frozen
class NativeTilingResult:
    code: int
    struct: dict[str, int]
    workspace_size: int
    block_dim: int


class NativeTiling:
    """``AutofuseTiling`` from ``result.tiling``, loaded in-process."""

    def __init__(
        self, result: CodegenResult, *, cache_dir: Path | None = None, cxx: str | None = None
    ) -> None:
        self.result = result
        cxx = cxx or toolchain.compiler()
        flags = toolchain.HOST_TILING
        text = result.tiling + result.tiling_data
        key = hashlib.sha256("\0".join([text, cxx, *flags.args(), LAYOUT]).encode()).hexdigest()[:24]
        cache = open_cache(cache_dir or default_cache_dir())
        directory = cache / f"tiling-{key}"

        def fill(work: Path) -> None:
            (work / "tiling.cpp").write_text(result.tiling)
            (work / "autofuse_tiling_data.h").write_text(result.tiling_data)
            toolchain.build_program(
                ["tiling.cpp"],
                work / "libtiling.so",
                flags.replace(extra=("-shared",)),
                includes=["."],
                what=f"host tiling of '{result.kernel_name}'",
                cxx=cxx,
            )

        if not is_usable(directory):
            remove_entry(directory)  # af's but broken or no longer private; nothing else is touched
            directory = owned_dirs.build_dir(directory, fill, is_usable)
        touch(directory)  # last use, for the cache's least-recently-used eviction
        lib = directory / "libtiling.so"
        self.library = ctypes.CDLL(str(lib))
        fields = [(name, ctypes.c_int64) for name in result.struct_fields]
        self.Struct = type("AutofuseTilingData", (ctypes.Structure,), {"_fields_": fields})
        fn = self.library.AutofuseTiling
        fn.restype = ctypes.c_int64
        fn.argtypes = [ctypes.c_int64] * len(result.size_names) + [
            ctypes.POINTER(self.Struct),
            ctypes.POINTER(ctypes.c_uint32),
            ctypes.POINTER(ctypes.c_uint32),
            ctypes.c_uint32,
            ctypes.c_uint32,
        ]
        self.function = fn

    def __call__(self, sizes: Mapping[str, int], core_num: int, ub_size: int) -> NativeTilingResult:
        data = self.Struct()
        ws = ctypes.c_uint32(0)
        bd = ctypes.c_uint32(0)
        args = [int(sizes[n]) for n in self.result.size_names]
        code = self.function(*args, ctypes.byref(data), ctypes.byref(ws), ctypes.byref(bd), core_num, ub_size)
        struct = {name: int(getattr(data, name)) for name in self.result.struct_fields}
        return NativeTilingResult(int(code), struct, int(ws.value), int(bd.value))
