"""Build generated kernels with g++ against the CPU twin and run them.

A build compiles ``kernel.cpp`` and, at the same time, ``tiling.cpp`` +
``infer_shape.cpp`` + the harness table (:mod:`af_core.twin.harness`), and
links them with the harness main. What does not depend on the graph is built
once per twin-header content, flag set and compiler and kept in the cache
beside the builds: the twin headers precompiled (``pch-<key>``) and the
harness main's object (``harness-<key>``), which also holds the twin's
common template instances (``af_twin/instances.h``) that the kernel's
compile declares extern instead of generating again. Everything goes through
:mod:`af_core.toolchain` (the compiler, the flags, the parallel compiles,
the messages of a failing compile).

A build is cached by a hash of every source, every twin header, the harness
main and the flags (where: :mod:`af_core.twin.cache`). A cache entry records
the SHA-256 of its binary and is checked before each use; a broken entry (a
truncated binary, say) is rebuilt. Every directory a build makes there
carries af's owner marker; scratch directories of builds that were killed
are found by it and removed by the next build, and least recently used
entries once the cache outgrows its bound. A run writes the inputs'
global-memory bytes to a scratch directory, runs the executable (one
process per run: a sanitizer abort cannot take the caller down) and reads
back the outputs, the tiling data and the counters, each checked before use
(:func:`read_result`, :func:`read_output`: a missing, malformed or
wrong-sized file is a :class:`TwinError` naming it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from af_core import dtypes as dt
from af_core import owned_dirs, toolchain
from af_core.ascendc.gate import require_official
from af_core.codegen.codegen import CodegenResult, KernelIO
from af_core.errors import ToolchainError, TwinError
from af_core.inputs import GraphInputs
from af_core.naming import demangle
from af_core.platform import Platform
from af_core.reference.bfloat16 import bits_to_f32, f32_to_bits
from af_core.registry import Registry, get_registry
from af_core.twin.cache import (  # noqa: F401 - CHECKSUM_FILE, OWNER_FILE and discard_entry are public here too
    CHECKSUM_FILE,
    LAYOUT,
    OWNER_FILE,
    cache_entry_ok,
    clean_stale_builds,
    default_cache_dir,
    discard_entry,
    evict,
    file_digest,
    is_usable,
    max_cache_bytes,
    open_cache,
    remove_entry,
    touch,
)
from af_core.twin.harness import GRAPH_HEADER, HARNESS_DIR, MAIN_SOURCE, harness_table

#: The twin build's flags (command-line form), without and with the sanitizers.
BASE_FLAGS = tuple(toolchain.TWIN.args())
SANITIZE_FLAGS = toolchain.SANITIZE_FLAGS
#: The entry header of the twin that kernels include first; it is precompiled.
ENTRY_HEADER = "kernel_operator.h"
MAIN_OBJECT = "af_harness_main.o"
_ERROR_LINE = re.compile(r"AF_TWIN_ERROR kind=(?P<kind>[\w-]+) core=(?P<core>-?\d+): (?P<message>.*)")


class TwinSanitizerError(TwinError):
    """The twin stopped a kernel: ``kind`` is the sanitizer's category."""

    def __init__(self, kind: str, core: int, message: str, log: str = "") -> None:
        self.kind = kind
        self.core = core
        self.message = message
        super().__init__(f"twin sanitizer [{kind}] on core {core}: {message}", log=log)


class TwinTilingError(TwinError):
    """Host tiling returned an error code (1 bad sizes, 2 nothing fits, 3 bad arguments); ``sizes``
    (``V=100, B=4``) are the sizes it was given."""

    def __init__(self, code: int, sizes: str = "") -> None:
        self.code = code
        self.sizes = sizes
        meaning = {1: "invalid sizes", 2: "no case fits", 3: "bad arguments"}.get(code, "unknown")
        at = f" for sizes {sizes}" if sizes else ""
        super().__init__(f"host tiling returned {code} ({meaning}){at}")


@attrs.frozen
class TwinBuild:
    executable: Path
    directory: Path
    key: str
    result: CodegenResult
    cached: bool
    #: wall seconds of each step of this build ("pch", "harness main", "kernel", "tiling", "link"); empty if cached
    timings: Mapping[str, float] = attrs.field(factory=dict)


@attrs.frozen
class TwinRun:
    outputs: dict[str, np.ndarray]
    tiling_key: int
    block_dim: int
    workspace_size: int
    struct: dict[str, int]
    counters: dict[str, int]
    stage_cores: tuple[int, ...] = ()  # cores that entered each stage (twin's MarkStage)
    #: False for a run whose every output is empty: no kernel was launched (:func:`no_launch`)
    launched: bool = True

    def counter(self, name: str) -> int:
        return int(self.counters[name])


@attrs.frozen
class TwinParts:
    """What every twin build links or includes, built once per twin identity.

    ``pch`` is the directory holding ``kernel_operator.h.gch`` (None when no
    twin include directory has the entry header), ``main`` the harness main's
    object file.
    """

    identity: str
    pch: Path | None
    main: Path


class TwinRunner:
    """Builds (cached) and runs generated kernels on the CPU twin.

    ``sanitize`` builds with ASan and UBSan; ``optimize`` overrides the
    optimisation level (default :data:`af_core.toolchain.OPTIMIZE`, for
    measurements); ``jobs`` compiler processes run at once; ``pch=False``
    builds without the precompiled twin headers. All but ``jobs`` are part of
    the cache key (a parallel build links the binary a serial one does).
    ``registry`` gives the plugins whose twin headers the builds include
    (default: the registry in force at the first build).
    """

    def __init__(
        self,
        platform: Platform | None = None,
        *,
        cache_dir: Path | None = None,
        sanitize: bool = False,
        cxx: str | None = None,
        timeout: float = 300.0,
        optimize: str | None = None,
        jobs: int = 2,
        pch: bool = True,
        registry: Registry | None = None,
    ) -> None:
        from af_core.platform import current_platform

        self.platform = platform or current_platform()
        self.registry = registry
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self.sanitize = sanitize
        self.cxx = cxx or toolchain.compiler()
        self.timeout = timeout
        self.jobs = jobs
        self.use_pch = pch
        self.build_flags = toolchain.TWIN.replace(
            sanitize=sanitize,
            optimize=optimize or toolchain.TWIN.optimize,
            defines=(*toolchain.TWIN_DEFINES, toolchain.TWIN_EXTERN_INSTANCES),
        )
        #: the harness main's flags: it defines the common template instances the kernels declare extern
        self.main_flags = self.build_flags.replace(
            defines=(*toolchain.TWIN_DEFINES, toolchain.TWIN_INSTANTIATE)
        )
        self._lock = threading.Lock()
        self._cache_checked = False
        #: builds this process keeps in their scratch directories, by entry name: their entry's
        #: name is taken by a directory that is not af's or not private (see owned_dirs.build_dir)
        self._kept: dict[str, Path] = {}

    # -- build -------------------------------------------------------------
    def _cache(self) -> Path:
        """The cache directory, checked (and created private) before the first build puts anything there."""
        if not self._cache_checked:
            open_cache(self.cache_dir)
            self._cache_checked = True
        return self.cache_dir

    def _entry(self, final: Path, fill: Callable[[Path], None], usable: Callable[[Path], bool]) -> Path:
        """``final`` built by ``fill`` (:func:`af_core.owned_dirs.build_dir`), or this process's own build
        of it when a directory that is not af's holds its name."""
        kept = self._kept.get(final.name)
        if kept is not None:
            return kept
        if usable(final):  # built meanwhile by another process
            return final
        remove_entry(final)  # af's but broken or no longer private: built again; nothing else is touched
        built = owned_dirs.build_dir(final, fill, usable)
        if built != final:
            self._kept[final.name] = built
        return built

    def include_dirs(self) -> list[str]:
        registry = get_registry() if self.registry is None else self.registry
        dirs = registry.manager.twin_include_dirs(self.platform)
        if not dirs:
            raise ToolchainError(
                f"no installed plugin provides CPU twin headers for SoC {self.platform.soc} "
                "(install af-v35-regbase)"
            )
        return dirs

    def flags(self) -> list[str]:
        return self.build_flags.args()

    def harness(self, result: CodegenResult) -> str:
        """The harness table of ``result`` (``harness.cpp``); the harness main is the same for every kernel."""
        return harness_table(result)

    def identity(self, dirs: list[str]) -> str:
        """A hash of what every build shares: compiler, flags, twin headers, harness main."""
        return _digest(
            toolchain.compiler_version(self.cxx),
            " ".join(self.flags()),
            " ".join(self.main_flags.args()),
            toolchain.tree_digest(dirs),
            MAIN_SOURCE.read_text(encoding="utf-8"),
            GRAPH_HEADER.read_text(encoding="utf-8"),
            "pch" if self.use_pch else "no-pch",
            LAYOUT,
        )[:24]

    def parts(self, dirs: list[str] | None = None, timings: dict[str, float] | None = None) -> TwinParts:
        """The precompiled twin headers and the harness main's object, built (in parallel) when missing."""
        dirs = dirs if dirs is not None else self.include_dirs()
        ident = self.identity(dirs)
        cache = self._cache()
        pch_dir = cache / f"pch-{ident}"
        main_dir = cache / f"harness-{ident}"
        has_entry = any((Path(d) / ENTRY_HEADER).is_file() for d in dirs)
        want_pch = self.use_pch and has_entry
        timings = timings if timings is not None else {}
        found = {pch_dir.name: pch_dir, main_dir.name: main_dir}

        def fill_pch(work: Path) -> None:
            toolchain.precompile_into(
                ENTRY_HEADER,
                work,
                self.build_flags,
                includes=dirs,
                cxx=self.cxx,
                what="the twin headers (precompiled)",
            )

        def fill_main(work: Path) -> None:
            unit = toolchain.Unit(
                (str(MAIN_SOURCE),), "the twin harness main", self.main_flags, (str(HARNESS_DIR), *dirs)
            )
            toolchain.run([*unit.command(self.cxx), "-o", str(work / MAIN_OBJECT)], what=unit.what, cwd=work)

        def job(step: str, final: Path, fill: Callable[[Path], None]) -> Callable[[], None]:
            def run() -> None:
                start = time.perf_counter()
                found[final.name] = self._entry(final, fill, is_usable)
                timings[step] = time.perf_counter() - start

            return run

        jobs = [
            build
            for build, missing in (
                (job("pch", pch_dir, fill_pch), want_pch and not is_usable(pch_dir)),
                (job("harness main", main_dir, fill_main), not is_usable(main_dir)),
            )
            if missing
        ]
        if jobs:
            with ThreadPoolExecutor(max_workers=max(1, min(self.jobs, len(jobs)))) as pool:
                for future in [pool.submit(build) for build in jobs]:
                    future.result()
        pch = found[pch_dir.name] if want_pch else None
        main = found[main_dir.name]
        for entry in (pch, main):
            if entry is not None:
                touch(entry)
        return TwinParts(ident, pch, main / MAIN_OBJECT)

    def build(self, result: CodegenResult) -> TwinBuild:
        cache = self._cache()  # a cache that cannot be used is refused before any work
        bound = max_cache_bytes()  # as is a bad bound
        # AF_ASCENDC_CHECK: the real API must accept it too
        require_official(result.kernel, result.kernel_name, result.kernel_headers())
        dirs = self.include_dirs()
        sources = {
            "kernel.cpp": result.kernel,
            "tiling.cpp": result.tiling,
            "autofuse_tiling_data.h": result.tiling_data,
            "infer_shape.cpp": result.infer_shape,
            "harness.cpp": self.harness(result),
        }
        h = hashlib.sha256()
        for name in sorted(sources):
            h.update(name.encode())
            h.update(sources[name].encode())
        h.update(self.identity(dirs).encode())
        key = h.hexdigest()[:24]
        final = cache / key
        if cache_entry_ok(final):
            touch(final)
            return TwinBuild(final / "harness", final, key, result, True)
        if key in self._kept:
            return TwinBuild(self._kept[key] / "harness", self._kept[key], key, result, True)
        clean_stale_builds(cache)
        timings: dict[str, float] = {}
        parts = self.parts(dirs, timings)

        def fill(work: Path) -> None:
            for name, text in sources.items():
                (work / name).write_text(text, encoding="utf-8")
            self._compile(result, work, dirs, parts, timings)
            (work / CHECKSUM_FILE).write_text(file_digest(work / "harness"), encoding="utf-8")

        built = self._entry(final, fill, cache_entry_ok)
        touch(built)
        evict(cache, bound, keep=[built, parts.main.parent, *([parts.pch] if parts.pch else [])])
        return TwinBuild(built / "harness", built, key, result, False, timings)

    def _compile(
        self, result: CodegenResult, work: Path, dirs: list[str], parts: TwinParts, timings: dict[str, float]
    ) -> None:
        """Kernel and host side compiled at once, then linked with the harness main; objects removed after."""
        includes = [str(work)]
        local_pch = work / f"{ENTRY_HEADER}.gch"
        if parts.pch is not None:
            # a link in the kernel's own directory, found first and kept alive if the entry is evicted meanwhile
            if not _link_or_copy(parts.pch / f"{ENTRY_HEADER}.gch", local_pch, copy=False):
                includes.append(str(parts.pch))
        main = work / MAIN_OBJECT
        _link_or_copy(parts.main, main, copy=True)
        name = result.kernel_name
        units = [
            toolchain.Unit(
                ("kernel.cpp",), f"kernel '{name}' for the twin", self.build_flags, (*includes, *dirs)
            ),
            toolchain.Unit(
                ("tiling.cpp", "infer_shape.cpp", "harness.cpp"),
                f"host tiling and harness table of '{name}' for the twin",
                self.build_flags,
                (str(work), str(HARNESS_DIR)),
            ),
        ]
        step: dict[str, float] = {}
        try:
            objects = toolchain.compile_units(units, work, jobs=self.jobs, cxx=self.cxx, timings=step)
            timings["kernel"] = step[units[0].what]
            timings["tiling"] = step[units[1].what]
            start = time.perf_counter()
            toolchain.link(
                [*objects, MAIN_OBJECT],
                "harness",
                work,
                self.build_flags,
                what=f"twin executable of '{name}'",
                cxx=self.cxx,
            )
            timings["link"] = time.perf_counter() - start
        finally:
            for leftover in [local_pch, main, *(work / o for u in units for o in u.objects())]:
                leftover.unlink(missing_ok=True)

    # -- run ---------------------------------------------------------------
    def run(
        self,
        build: TwinBuild,
        inputs: GraphInputs,
        *,
        core_num: int | None = None,
        ub_size: int | None = None,
        struct: Mapping[str, int] | None = None,
    ) -> TwinRun:
        """Run once; ``struct`` (tiling data by field) bypasses the generated host tiling."""
        result = build.result
        core_num = core_num or self.platform.core_num
        ub_size = ub_size or self.platform.ub_size
        with tempfile.TemporaryDirectory(prefix="af-run-") as tmp:
            run_dir = Path(tmp)
            in_bytes = []
            for i, io in enumerate(result.inputs):
                raw = _to_storage(inputs.storage[io.node], dt.get(io.dtype))
                (run_dir / f"in{i}.bin").write_bytes(raw)
                in_bytes.append(len(raw))
            sizes = [int(inputs.sizes[n]) for n in result.size_names]
            if struct is not None:
                (run_dir / "tiling.txt").write_text(
                    " ".join(str(int(struct[f])) for f in result.struct_fields) + "\n"
                )
            l2 = [self.platform.l2_size, self.platform.l2_line, self.platform.l2_ways]
            machine = [core_num, ub_size, self.platform.dcache_reserve, *l2]
            (run_dir / "run.txt").write_text(" ".join(str(v) for v in [*machine, *sizes, *in_bytes]) + "\n")
            env = dict(os.environ)
            if self.sanitize:
                env.setdefault("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=0")
                env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
            try:
                proc = subprocess.run(
                    [str(build.executable), str(run_dir)],
                    capture_output=True,
                    text=True,
                    timeout=self.timeout,
                    env=env,
                )
            except subprocess.TimeoutExpired:
                raise TwinError(
                    f"kernel '{result.kernel_name}' did not finish within {self.timeout} s "
                    "on the twin (deadlock?)"
                ) from None
            match = _ERROR_LINE.search(proc.stderr)
            if match:
                raise TwinSanitizerError(match["kind"], int(match["core"]), match["message"], log=proc.stderr)
            if proc.returncode != 0:
                raise TwinError(
                    f"twin run of '{result.kernel_name}' failed (exit {proc.returncode}):\n"
                    f"{proc.stderr[-4000:]}",
                    log=proc.stderr,
                )
            report = read_result(run_dir, result)
            if report["status"] == "tiling":
                shown = ", ".join(f"{demangle(n)}={inputs.sizes[n]}" for n in result.size_names)
                raise TwinTilingError(int(report["code"]), shown)
            outputs = {}
            for i, io in enumerate(result.outputs):
                dtype = dt.get(io.dtype)
                shape = tuple(_shape(io, inputs.sizes))
                raw = read_output(run_dir, i, io.node, dtype, shape, result.kernel_name)
                outputs[io.node] = _from_storage(raw, dtype, shape)
        struct = dict(report["struct"])
        counters = dict(report["counters"])
        stage_cores = tuple(counters.pop("stage_cores", []))
        return TwinRun(
            outputs,
            struct["tiling_key"],
            struct["block_dim"],
            struct["workspace_size"],
            struct,
            counters,
            stage_cores,
        )


# -- what a run leaves in its directory -------------------------------------------------------------------------
#: The run's report (status, tiling data, counters) and the largest one read.
RESULT_FILE = "result.json"
MAX_RESULT_BYTES = 1 << 20
#: Tiling data fields every kernel's struct has; the runner reads them.
REQUIRED_FIELDS = ("tiling_key", "block_dim", "workspace_size")


def _no_result(kernel: str, what: str) -> TwinError:
    return TwinError(f"twin produced no result for kernel '{kernel}': {what}")


def _read_regular(path: Path, limit: int) -> bytes:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes (no link followed, no FIFO
    waited on); OSError, or ValueError saying what the file is instead ("is not a regular file",
    "holds N bytes")."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    chunks: list[bytes] = []
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("is not a regular file")
        total = 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise ValueError(f"holds {max(info.st_size, len(data))} bytes")
    return data


def _is_int(value: object) -> bool:
    return type(value) is int  # JSON numbers with a fraction or exponent, and true / false, are not


def _malformed(kernel: str, what: str) -> TwinError:
    """The error for a ``result.json`` that was read but does not say what the runner expects."""
    return _no_result(kernel, f"{RESULT_FILE} {what}")


def _load_report(run_dir: Path, kernel: str) -> Any:
    """The JSON value of the run's ``result.json``, whatever it is; a missing, unreadable, oversized,
    non-UTF-8 or non-JSON file is a :class:`TwinError` saying which."""
    try:
        raw = _read_regular(run_dir / RESULT_FILE, MAX_RESULT_BYTES)
    except FileNotFoundError:
        raise _no_result(kernel, f"{RESULT_FILE} is missing") from None
    except OSError as exc:
        raise _no_result(kernel, f"{RESULT_FILE} cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        more = f", more than the {MAX_RESULT_BYTES} a result may hold" if "bytes" in str(exc) else ""
        raise _no_result(kernel, f"{RESULT_FILE} {exc}{more}") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise _no_result(kernel, f"{RESULT_FILE} is not UTF-8 text (byte {exc.start})") from None
    except ValueError as exc:
        raise _no_result(kernel, f"{RESULT_FILE} is not JSON ({exc})") from None
    except RecursionError:
        raise _no_result(kernel, f"{RESULT_FILE} is nested too deeply") from None


def _check_struct(struct: object, result: CodegenResult, kernel: str) -> None:
    """``struct`` must hold exactly the kernel's tiling data fields (and the ones the runner reads), each
    an integer: the runner builds the :class:`TwinRun` from them."""
    if not isinstance(struct, dict):
        raise _malformed(kernel, f"has no 'struct' object (got {type(struct).__name__})")
    expected = set(result.struct_fields) | set(REQUIRED_FIELDS)
    missing, extra = sorted(expected - set(struct)), sorted(set(struct) - expected)
    if missing:
        raise _malformed(kernel, f"'struct' lacks tiling data field(s) {', '.join(missing)}")
    if extra:
        raise _malformed(
            kernel, f"'struct' has field(s) {', '.join(map(repr, extra))} the kernel's tiling data has not"
        )
    bad = sorted(k for k, v in struct.items() if not _is_int(v))
    if bad:
        raise _malformed(kernel, f"'struct' field {bad[0]} is {struct[bad[0]]!r}, not an integer")


def _check_counters(counters: object, kernel: str) -> None:
    """``counters`` must map names to integers, but ``stage_cores``, a list of integers."""
    if not isinstance(counters, dict):
        raise _malformed(kernel, f"has no 'counters' object (got {type(counters).__name__})")
    for name, value in counters.items():
        if name == "stage_cores":
            if not isinstance(value, list) or not all(_is_int(v) for v in value):
                raise _malformed(kernel, f"counter 'stage_cores' is {value!r}, not a list of integers")
        elif not _is_int(value):
            raise _malformed(kernel, f"counter {name!r} is {value!r}, not an integer")


def read_result(run_dir: Path, result: CodegenResult) -> dict[str, Any]:
    """``result.json`` of a run of ``result``'s kernel, checked against what the runner reads.

    ``{"status": "tiling", "code": int}`` when the host tiling refused the
    sizes, else ``{"status": "ok", "struct": {field: int} (exactly the
    kernel's tiling data fields), "counters": {name: int, "stage_cores":
    [int]}}``. Anything else, a missing or unreadable file included, is a
    :class:`TwinError` ("twin produced no result ...") naming the file and
    what is wrong with it.
    """
    kernel = result.kernel_name
    report = _load_report(run_dir, kernel)
    if not isinstance(report, dict):
        raise _malformed(kernel, f"holds a JSON {type(report).__name__}, not an object")
    status = report.get("status")
    if status == "tiling":
        if not _is_int(report.get("code")):
            raise _malformed(
                kernel, f"has status 'tiling' without an integer 'code' (got {report.get('code')!r})"
            )
        return report
    if status != "ok":
        raise _malformed(kernel, f"has status {status!r}; expected 'ok' or 'tiling'")
    _check_struct(report.get("struct"), result, kernel)
    _check_counters(report.get("counters"), kernel)
    return report


def read_output(
    run_dir: Path, index: int, node: str, dtype: dt.DType, shape: tuple[int, ...], kernel: str
) -> bytes:
    """The global-memory bytes of output ``index`` (``out<index>.bin``): exactly the size of ``shape``
    elements of ``dtype``, else a :class:`TwinError` naming the file and what is wrong."""
    name = f"out{index}.bin"
    count = 1
    for n in shape:
        count *= n
    size = count * dtype.itemsize

    def wrong(what: str) -> TwinError:
        return TwinError(f"twin produced no output '{node}' for kernel '{kernel}': {name} {what}")

    try:
        raw = _read_regular(run_dir / name, size)
    except FileNotFoundError:
        raise wrong("is missing") from None
    except OSError as exc:
        raise wrong(f"cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        held = str(exc)
    else:
        if len(raw) == size:
            return raw
        held = f"holds {len(raw)} bytes"
    raise wrong(f"{held}, expected {size} bytes ({count} element(s) of {dtype.name})")


#: The tiling key of a run that launched no kernel.
NO_LAUNCH = -1


def no_launch(result: CodegenResult, sizes: Mapping[str, int]) -> TwinRun:
    """The run of a kernel whose every output is empty at ``sizes``: nothing is launched, as a framework
    skips empty tensors; the outputs are empty arrays of their shapes."""
    outputs = {
        io.node: _from_storage(b"", dt.get(io.dtype), tuple(_shape(io, sizes))) for io in result.outputs
    }
    return TwinRun(outputs, NO_LAUNCH, 0, 0, {}, {}, (), launched=False)


def _shape(io: KernelIO, sizes: Mapping[str, int]) -> list[int]:
    from af_core.ir.evaluate import eval_int

    return [eval_int(s, sizes) for s in io.shape]


def _to_storage(values: np.ndarray, dtype: dt.DType) -> bytes:
    if dtype.name == "bfloat16":
        return f32_to_bits(np.asarray(values, dtype=np.float32)).tobytes()
    if dtype.is_bool:
        return np.asarray(values).astype(np.uint8).tobytes()
    return np.ascontiguousarray(values, dtype=dtype.np).tobytes()


def _from_storage(raw: bytes, dtype: dt.DType, shape: tuple[int, ...]) -> np.ndarray:
    if dtype.name == "bfloat16":
        return bits_to_f32(np.frombuffer(raw, dtype=np.uint16)).reshape(shape)
    if dtype.is_bool:
        return np.frombuffer(raw, dtype=np.uint8).astype(bool).reshape(shape)
    return np.frombuffer(raw, dtype=dtype.np).reshape(shape).copy()


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _link_or_copy(source: Path, target: Path, *, copy: bool) -> bool:
    """A hard link of ``source`` at ``target`` (a copy when links fail and ``copy``); False if neither."""
    try:
        os.link(source, target)
        return True
    except OSError:
        if not copy:
            return False
    shutil.copyfile(source, target)
    return True
