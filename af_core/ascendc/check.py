"""Type-check generated kernels against the official AscendC headers with g++.

``g++ -std=c++17 -fsyntax-only`` in the CPU-debug mode of the A5 vector core
(the defines and include directories of the asc-devkit README), with our
stand-ins for the closed CPU-debug files. ``AF_CPU_TWIN`` is never defined:
code under ``#if defined(AF_CPU_TWIN)`` belongs to the twin and is not
checked, the rest must be valid AscendC.

Two caches make a broad check affordable: ``kernel_operator.h`` and the
stand-ins are precompiled once per header tree (a ``.gch`` of ~200 MB; the
parse drops from ~4 s to well under 1 s per kernel), and each kernel's
result is stored under a hash of its text, the header tree, the stand-ins,
the flags and the compiler version. ``AF_ASCENDC_PCH=0`` turns the
precompiled header off.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs

from af_core import owned_dirs, toolchain
from af_core.ascendc.cache import build_in_cache, default_cache_dir, digest, write_atomic
from af_core.ascendc.diagnostics import Diagnostic, parse_errors
from af_core.ascendc.source import AscendcSource, find_source
from af_core.ascendc.standins import STANDIN_DIR, generate_tiling_header, standins_digest

#: CPU-debug mode for the A5 (SoC 3510) vector core, as the asc-devkit README gives it.
DEFINES = (
    "-D__NPU_ARCH__=3510",
    "-DASCENDC_CPU_DEBUG=1",
    "-D__DAV_C310__",
    "-D__DAV_C310_VEC__",
    "-D__DAV_VEC__",
    "-DASCENDC_DEBUG=1",
    "-DASCENDC_DUMP=0",
)
FLAGS = ("-std=c++17", "-w", *DEFINES)
PCH_ENV = "AF_ASCENDC_PCH"
TIMEOUT_S = 600
_PCH_HEADER = "af_ascendc_pch.h"
#: Part of the precompiled header's directory name: those made before owner markers are never in the way.
_PCH_LAYOUT = "owned-dirs-1"


class _PchFailed(Exception):
    """g++ could not precompile the headers (the scratch directory is removed, the check goes on without)."""


def _usable_pch(directory: Path) -> bool:
    """af's directory (see :func:`af_core.owned_dirs.owner`) holding the precompiled header."""
    return owned_dirs.owner(directory) is not None and (directory / f"{_PCH_HEADER}.gch").is_file()


@attrs.frozen
class KernelCheck:
    """The verdict on one kernel: ``ok`` when g++ reported no error."""

    key: str
    ok: bool
    errors: tuple[Diagnostic, ...]
    log: str
    seconds: float
    cached: bool

    @property
    def first_error(self) -> Diagnostic | None:
        return self.errors[0] if self.errors else None

    def describe(self, limit: int = 5, kernel_name: str = "kernel.cpp") -> str:
        if self.ok:
            return "ok"
        if not self.errors:
            return "g++ failed without an error line:\n" + self.log[-2000:]
        shown = [e.format(kernel_name) for e in self.errors[:limit]]
        more = len(self.errors) - limit
        return "\n".join(shown + ([f"... and {more} more error(s)"] if more > 0 else []))


class AscendcChecker:
    """g++ type checks of kernels against one official header tree (thread-safe)."""

    def __init__(
        self, source: AscendcSource, *, cache_dir: Path | None = None, pch: bool | None = None
    ) -> None:
        self.source = source
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self.cxx = toolchain.compiler()
        self.use_pch = pch if pch is not None else os.environ.get(PCH_ENV, "1") != "0"
        self._tiling_dir = generate_tiling_header(source, self.cache_dir)
        self.identity = digest(
            source.identity, standins_digest(), " ".join(FLAGS), toolchain.compiler_version(self.cxx)
        )
        self._pch_lock = threading.Lock()
        self._pch: Path | None = None
        self._pch_tried = False
        self.pch_seconds: float | None = None

    # -- command line -------------------------------------------------------------------------------------
    def include_flags(self) -> list[str]:
        dirs = [STANDIN_DIR, self._tiling_dir, *self.source.include_dirs()]
        return [f"-I{d}" for d in dirs if d is not None]

    def classify(self, path: str) -> str:
        resolved = Path(path).resolve()
        if resolved.is_relative_to(STANDIN_DIR) or (
            self._tiling_dir is not None and resolved.is_relative_to(self._tiling_dir.resolve())
        ):
            return "stand-in"
        if self.source.contains(resolved):
            return "official"
        return "other"

    def precompiled_header(self) -> Path | None:
        """The ``-include`` header whose ``.gch`` holds kernel_operator.h (built once; None if off or failing)."""
        if not self.use_pch:
            return None
        with self._pch_lock:
            if self._pch_tried:
                return self._pch
            self._pch_tried = True
            final = self.cache_dir / f"pch-{digest(self.identity, _PCH_LAYOUT)}"
            if not _usable_pch(final):
                try:
                    final = build_in_cache(final, self._build_pch, _usable_pch)
                except _PchFailed:
                    return None  # kernels are then checked without it, and show the header's errors
            self._pch = final / _PCH_HEADER
            return self._pch

    def _build_pch(self, work: Path) -> None:
        """``work/af_ascendc_pch.h`` and its ``.gch``; :class:`_PchFailed` when g++ rejects the headers."""
        (work / _PCH_HEADER).write_text('#include "kernel_operator.h"\n', encoding="utf-8")
        start = time.perf_counter()
        run = toolchain.run(
            [
                self.cxx,
                *FLAGS,
                *self.include_flags(),
                "-x",
                "c++-header",
                str(work / _PCH_HEADER),
                "-o",
                str(work / f"{_PCH_HEADER}.gch"),
            ],
            what="kernel_operator.h (precompiled)",
            timeout=TIMEOUT_S,
            check=False,
        )
        self.pch_seconds = time.perf_counter() - start
        if run.returncode != 0:
            raise _PchFailed

    # -- checking -----------------------------------------------------------------------------------------
    def key(self, text: str, headers: Mapping[str, str] | None = None) -> str:
        parts = [part for name in sorted(headers or {}) for part in (name, (headers or {})[name])]
        return digest(self.identity, "pch" if self.use_pch else "plain", text, *parts)

    def check(self, text: str, headers: Mapping[str, str] | None = None) -> KernelCheck:
        """Type-check one kernel; ``headers`` (file name -> text) are the files it includes by name beside it
        (a generated kernel includes its ``autofuse_tiling_data.h``)."""
        key = self.key(text, headers)
        stored = self.cache_dir / "results" / f"{key}.json"
        if stored.is_file():
            try:
                return _from_json(json.loads(stored.read_text(encoding="utf-8")), key)
            except (ValueError, KeyError, TypeError):
                pass  # a damaged entry is recomputed
        result = self._compile(text, key, headers or {})
        write_atomic(stored, json.dumps(_to_json(result), sort_keys=True))
        return result

    def check_many(
        self,
        texts: Sequence[str],
        *,
        jobs: int | None = None,
        headers: Sequence[Mapping[str, str] | None] | None = None,
    ) -> list[KernelCheck]:
        """Check ``texts`` with ``jobs`` g++ processes at once (default 2); results in order.

        ``headers``: per text, the files it includes beside it (see :meth:`check`).
        """
        workers = max(1, jobs or 2)
        beside = list(headers) if headers is not None else [None] * len(texts)
        if len(beside) != len(texts):
            raise ValueError(f"{len(texts)} kernels but {len(beside)} header sets")
        if len(texts) > 1:
            self.precompiled_header()  # once, before the workers start
        if workers == 1 or len(texts) <= 1:
            return [self.check(t, h) for t, h in zip(texts, beside, strict=True)]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(self.check, texts, beside))

    def _compile(self, text: str, key: str, headers: Mapping[str, str]) -> KernelCheck:
        pch = self.precompiled_header()
        with tempfile.TemporaryDirectory(prefix="af-ascendc-") as tmp:
            for name, header in sorted(headers.items()):
                if Path(name).name != name or not name.endswith(".h"):
                    raise ValueError(
                        f"a header beside the kernel must be a plain '.h' file name, not {name!r}"
                    )
                (Path(tmp) / name).write_text(header, encoding="utf-8")
            kernel = Path(tmp) / "kernel.cpp"
            kernel.write_text(text, encoding="utf-8")
            cmd = [self.cxx, "-fsyntax-only", *FLAGS, *self.include_flags()]
            if pch is not None:
                cmd += ["-include", str(pch)]
            start = time.perf_counter()
            run = toolchain.run([*cmd, str(kernel)], what="kernel.cpp", timeout=TIMEOUT_S, check=False)
            seconds = time.perf_counter() - start
            log = run.stderr.replace(str(kernel), "kernel.cpp")
            errors = parse_errors(log, self.classify, "kernel.cpp")
        ok = run.returncode == 0 and not errors
        return KernelCheck(key, ok, tuple(errors), "" if ok else log[:20000], seconds, False)


def _to_json(r: KernelCheck) -> dict:
    return {"ok": r.ok, "seconds": r.seconds, "log": r.log, "errors": [attrs.asdict(e) for e in r.errors]}


def _from_json(data: dict, key: str) -> KernelCheck:
    errors = tuple(Diagnostic(**e) for e in data["errors"])
    return KernelCheck(key, bool(data["ok"]), errors, data["log"], float(data["seconds"]), True)


def check_kernels(
    texts: Sequence[str],
    *,
    headers: Sequence[Mapping[str, str] | None] | None = None,
    src: AscendcSource | str | Path | None = None,
    jobs: int | None = None,
    cache_dir: Path | None = None,
    pch: bool | None = None,
) -> list[KernelCheck]:
    """Type-check each kernel text; results in the order of ``texts``.

    ``src`` is an :class:`AscendcSource` or a location for :func:`find_source`
    (default ``AF_ASCENDC_SRC``); ``jobs`` g++ processes run at once (default 2);
    ``headers``: per text, the files it includes beside it (a generated kernel's
    ``CodegenResult.kernel_headers()``).
    """
    source = src if isinstance(src, AscendcSource) else find_source(src, cache_dir=cache_dir)
    checker = AscendcChecker(source, cache_dir=cache_dir, pch=pch)
    return checker.check_many(texts, jobs=jobs, headers=headers)
