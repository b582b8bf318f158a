"""Build generated kernels with g++ against the CPU twin and run them.

A build compiles ``kernel.cpp`` + ``tiling.cpp`` + a generated harness into
one executable, cached by a hash of every source, every twin header and the
compiler flags (where: :mod:`af_core.twin.cache`). A cache
entry records the SHA-256 of its binary and is checked before each use; a
broken entry (a truncated binary, say) is rebuilt. Scratch directories of
builds that were killed are removed by the next build, and least recently
used entries once the cache outgrows its bound. A run
writes the inputs' global-memory bytes to a scratch directory, runs the
executable (one process per run: a sanitizer abort cannot take the caller
down) and reads back the outputs, the tiling data and the counters.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

import attrs
import jinja2
import numpy as np

from af_core import __version__
from af_core import dtypes as dt
from af_core.ascendc.gate import require_official
from af_core.codegen.codegen import MAX_RANK, CodegenResult
from af_core.codegen.jinja import ENV
from af_core.errors import ToolchainError, TwinError
from af_core.inputs import GraphInputs
from af_core.platform import Platform
from af_core.reference.bfloat16 import bits_to_f32, f32_to_bits
from af_core.registry import get_registry
from af_core.twin.cache import (  # noqa: F401 - CHECKSUM_FILE, OWNER_FILE and discard_entry are public here too
    CHECKSUM_FILE,
    OWNER_FILE,
    _owner_text,
    cache_entry_ok,
    clean_stale_builds,
    default_cache_dir,
    discard_entry,
    evict,
    file_digest,
    max_cache_bytes,
    touch,
)

BASE_FLAGS = ("-std=c++17", "-O1", "-g0", "-pthread", "-DAF_CPU_TWIN=1")
SANITIZE_FLAGS = ("-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined")
_ERROR_LINE = re.compile(r"AF_TWIN_ERROR kind=(?P<kind>[\w-]+) core=(?P<core>-?\d+): (?P<message>.*)")
#: The twin's own templates (af_core/twin/templates: the harness), rendered with the code generator's
#: settings and filters.
_TWIN_TEMPLATES = ENV.overlay(loader=jinja2.PackageLoader("af_core", "twin/templates"))


class TwinSanitizerError(TwinError):
    """The twin stopped a kernel: ``kind`` is the sanitizer's category."""

    def __init__(self, kind: str, core: int, message: str, log: str = "") -> None:
        self.kind = kind
        self.core = core
        self.message = message
        super().__init__(f"twin sanitizer [{kind}] on core {core}: {message}", log=log)


class TwinTilingError(TwinError):
    """Host tiling returned an error code (1 bad sizes, 2 nothing fits, 3 bad arguments)."""

    def __init__(self, code: int) -> None:
        self.code = code
        meaning = {1: "invalid sizes", 2: "no case fits", 3: "bad arguments"}.get(code, "unknown")
        super().__init__(f"host tiling returned {code} ({meaning})")


@attrs.frozen
class TwinBuild:
    executable: Path
    directory: Path
    key: str
    result: CodegenResult
    cached: bool


@attrs.frozen
class TwinRun:
    outputs: dict[str, np.ndarray]
    tiling_key: int
    block_dim: int
    workspace_size: int
    struct: dict[str, int]
    counters: dict[str, int]
    stage_cores: tuple[int, ...] = ()  # cores that entered each stage (twin's MarkStage)

    def counter(self, name: str) -> int:
        return int(self.counters[name])


def _compiler_version(cxx: str) -> str:
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ToolchainError(f"C++ compiler '{cxx}' is not usable: {exc}") from None
    return out.splitlines()[0] if out else cxx


def _header_digest(dirs: list[str]) -> str:
    h = hashlib.sha256()
    for d in dirs:
        for path in sorted(Path(d).rglob("*")):
            if path.is_file():
                h.update(str(path.relative_to(d)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


class TwinRunner:
    """Builds (cached) and runs generated kernels on the CPU twin."""

    def __init__(self, platform: Platform | None = None, *, cache_dir: Path | None = None,
                 sanitize: bool = False, cxx: str | None = None, timeout: float = 300.0) -> None:
        from af_core.platform import current_platform

        self.platform = platform or current_platform()
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self.sanitize = sanitize
        self.cxx = cxx or os.environ.get("CXX", "g++")
        self.timeout = timeout
        self._lock = threading.Lock()

    # -- build -------------------------------------------------------------
    def include_dirs(self) -> list[str]:
        dirs = get_registry().manager.twin_include_dirs(self.platform)
        if not dirs:
            raise ToolchainError(
                f"no installed plugin provides CPU twin headers for SoC {self.platform.soc} "
                "(install af-v35-regbase)"
            )
        return dirs

    def flags(self) -> list[str]:
        return list(BASE_FLAGS) + (list(SANITIZE_FLAGS) if self.sanitize else [])

    def harness(self, result: CodegenResult) -> str:
        return _TWIN_TEMPLATES.get_template("harness.cpp.j2").render(
            name=result.kernel_name,
            version=__version__,
            size_names=list(result.size_names),
            params=[io.param for io in result.inputs + result.outputs],
            inputs=result.inputs,
            outputs=result.outputs,
            fields=list(result.struct_fields),
            max_rank=MAX_RANK,
        )

    def build(self, result: CodegenResult) -> TwinBuild:
        require_official(result.kernel, result.kernel_name)  # AF_ASCENDC_CHECK: the real API must accept it too
        dirs = self.include_dirs()
        harness = self.harness(result)
        sources = {
            "kernel.cpp": result.kernel,
            "tiling.cpp": result.tiling,
            "autofuse_tiling_data.h": result.tiling_data,
            "infer_shape.cpp": result.infer_shape,
            "harness.cpp": harness,
        }
        h = hashlib.sha256()
        for name in sorted(sources):
            h.update(name.encode())
            h.update(sources[name].encode())
        h.update(" ".join(self.flags()).encode())
        h.update(_header_digest(dirs).encode())
        h.update(_compiler_version(self.cxx).encode())
        key = h.hexdigest()[:24]
        final = self.cache_dir / key
        exe = final / "harness"
        if final.exists():
            if cache_entry_ok(final):
                touch(final)
                return TwinBuild(exe, final, key, result, True)
            discard_entry(final)  # truncated or tampered with: build it again
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        clean_stale_builds(self.cache_dir)
        work = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=self.cache_dir))
        try:
            (work / OWNER_FILE).write_text(_owner_text(), encoding="utf-8")
            for name, text in sources.items():
                (work / name).write_text(text, encoding="utf-8")
            cmd = [self.cxx, *self.flags(), *(f"-I{d}" for d in dirs), f"-I{work}",
                   "kernel.cpp", "tiling.cpp", "infer_shape.cpp", "harness.cpp", "-o", "harness"]
            proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
            if proc.returncode != 0:
                log = proc.stderr[-20000:]
                raise TwinError(f"g++ failed to build kernel '{result.kernel_name}' for the twin "
                                f"(exit {proc.returncode}):\n{_first_errors(log)}", log=log)
            (work / CHECKSUM_FILE).write_text(file_digest(work / "harness"), encoding="utf-8")
            (work / OWNER_FILE).unlink()
            try:
                os.replace(work, final)
            except OSError:
                if not cache_entry_ok(final):  # another process won the race with a complete build
                    raise
        finally:
            if work.exists():
                shutil.rmtree(work, ignore_errors=True)
        touch(final)
        evict(self.cache_dir, max_cache_bytes(), keep=final)
        return TwinBuild(exe, final, key, result, False)

    # -- run ---------------------------------------------------------------
    def run(self, build: TwinBuild, inputs: GraphInputs, *, core_num: int | None = None,
            ub_size: int | None = None, struct: Mapping[str, int] | None = None) -> TwinRun:
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
                    " ".join(str(int(struct[f])) for f in result.struct_fields) + "\n")
            (run_dir / "run.txt").write_text(
                " ".join(str(v) for v in [core_num, ub_size, self.platform.dcache_reserve, *sizes, *in_bytes])
                + "\n"
            )
            env = dict(os.environ)
            if self.sanitize:
                env.setdefault("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=0")
                env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
            try:
                proc = subprocess.run([str(build.executable), str(run_dir)], capture_output=True, text=True,
                                      timeout=self.timeout, env=env)
            except subprocess.TimeoutExpired:
                raise TwinError(f"kernel '{result.kernel_name}' did not finish within {self.timeout} s "
                                "on the twin (deadlock?)") from None
            match = _ERROR_LINE.search(proc.stderr)
            if match:
                raise TwinSanitizerError(match["kind"], int(match["core"]), match["message"], log=proc.stderr)
            if proc.returncode != 0:
                raise TwinError(f"twin run of '{result.kernel_name}' failed (exit {proc.returncode}):\n"
                                f"{proc.stderr[-4000:]}", log=proc.stderr)
            report = json.loads((run_dir / "result.json").read_text())
            if report["status"] == "tiling":
                raise TwinTilingError(int(report["code"]))
            outputs = {}
            for i, io in enumerate(result.outputs):
                dtype = dt.get(io.dtype)
                raw = (run_dir / f"out{i}.bin").read_bytes()
                outputs[io.node] = _from_storage(raw, dtype, tuple(_shape(io, inputs.sizes)))
        struct = {k: int(v) for k, v in report["struct"].items()}
        counters = dict(report["counters"])
        stage_cores = tuple(int(v) for v in counters.pop("stage_cores", []))
        return TwinRun(outputs, struct["tiling_key"], struct["block_dim"], struct["workspace_size"], struct,
                       {k: int(v) for k, v in counters.items()}, stage_cores)


def _shape(io, sizes: Mapping[str, int]) -> list[int]:
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


def _first_errors(log: str, limit: int = 40) -> str:
    lines = [line for line in log.splitlines() if "error" in line or "note:" in line]
    return "\n".join((lines or log.splitlines())[:limit])
