"""The host memory of a twin run: an upper bound, and the limit it must stay under.

A run of :class:`af_core.twin.TwinSession` holds, at its peak, the inputs (each Data node's storage,
plus the arrays one input is drawn or checked with), the numpy reference's value of every node of
the graph, the CPU twin's global-memory copies of the inputs, outputs and workspace, the twin's race
check shadow (of every output and the workspace: at most 17 bytes a byte),
its per-core UB and UB shadow, its shared-L2 model (the log of the launch's GM accesses, which the twin
bounds, and the cache's tables), the outputs read back, and the arrays the comparison makes.
:func:`estimate_memory` adds all of them up from the bytes of every tensor of the graph at the run's
sizes, as if they were all alive at once, so it is an upper bound.

:func:`memory_limit` is what the estimate is compared with: ``--max-memory`` (``afc run``) or the
``max_memory`` of a session, else ``AF_MAX_MEMORY``, else half the memory available (``MemAvailable``
of ``/proc/meminfo``, lowered to what a cgroup limit leaves), else 2 GiB. A run over the limit is
refused with :class:`af_core.errors.MemoryBudgetError` before any of its arrays is allocated.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path

import attrs

from af_core.errors import MemoryBudgetError, UsageError
from af_core.platform import Platform
from af_core.reference.interpreter import VALUE_PRESERVING

#: The environment variable that sets the memory limit (``--max-memory`` wins over it).
ENV_VAR = "AF_MAX_MEMORY"
#: The share of the available memory a run may take when no limit is given.
DEFAULT_SHARE = 0.5
#: The limit when the available memory cannot be read.
FALLBACK_LIMIT = 2 << 30

#: Bytes per storage element while one input is drawn (int64 draws, masks) or packed and checked
#: (an integer array is compared as Python objects, about 40 bytes an element).
INPUT_SCRATCH_BYTES = 48
#: Bytes per element the reference keeps for every node that computes (it computes in float64 / int64;
#: loads, stores and broadcasts are views of their input).
REFERENCE_BYTES = 8
#: Wide arrays of the largest computing node one reference op may hold while it computes.
REFERENCE_SCRATCH = 4
#: Bytes per output element the comparison makes (float64 copies of both sides, their difference,
#: masks); the part named "comparison" also holds :data:`RUN_OBJECT_BYTES`.
COMPARE_BYTES = 40
#: The twin's race check, per byte of every output and workspace allocation, at most: a 32-byte block
#: holds two uint64 records and a uint32 slot index (20 bytes), and a block that partial accesses split
#: holds two uint64 records a byte in its slot (512 bytes): 532 / 32 bytes.
RACE_SHADOW_BYTES = 17
#: The twin's line counters: 10 bytes per 128-byte line of every global-memory allocation.
LINE_BYTES, LINE = 10, 128
#: A twin worker's UB (the physical 256 KiB), and the race check's shadow of it, at most: per 32-byte
#: block 5 uint32 records and a slot index, and 5 uint32 records a byte of a split block (664 / 32 bytes).
WORKER_BYTES, WORKER_SHADOW_BYTES = 256 * 1024, 256 * 1024 * 21
#: Twin workers run at most this many cores at once.
MAX_WORKERS = 256
#: The twin's shared-L2 model (``af_twin/l2.h``) logs each core's GM accesses as 8-byte records, at most
#: ``L2_MAX_RECORDS`` a launch (``kL2MaxRecords``; past it the cores stop logging and the launch reports no
#: L2 replay); a worker adds its records to the launch's count every ``L2_FLUSH`` records, so a launch can log
#: that many more per worker before the cores stop. The logs grow by doubling: their capacity, plus the old buffer of a growth in
#: progress, is at most 3 times the records. Each core of the launch also has a log header (``L2_CORE_BYTES``).
L2_MAX_RECORDS, L2_FLUSH, L2_RECORD_BYTES, L2_CORE_BYTES = 1 << 22, 4096, 8, 128
#: The L2 cache's tables: a tag, a last-use stamp and a dirty flag per line of the platform's L2.
L2_LINE_BYTES = 17
#: The twin process itself (code, libraries, its tables): about 90 MiB measured on x86-64.
TWIN_PROCESS_BYTES = 128 << 20
#: A twin built with ASan and UBSan (``sanitize``): ASan's shadow and redzones about double what the
#: kernel's memory takes, and its quarantine holds up to 256 MiB of freed blocks.
SANITIZE_FACTOR, SANITIZE_BYTES = 2, 256 << 20
#: The run's own Python objects besides its arrays (the tiling, the comparison, numpy's buffers).
RUN_OBJECT_BYTES = 16 << 20
#: Lines of the default platform's L2.
DEFAULT_L2_LINES = Platform().l2_size // Platform().l2_line

_UNITS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
_SIZE = re.compile(r"([0-9]{1,30}(?:\.[0-9]{1,12})?)\s?([kmgtpe]?)(i?b)?", re.IGNORECASE | re.ASCII)


def parse_bytes(text: str, what: str = "a memory size") -> int:
    """A byte count from ``512M``, ``8G``, ``1.5GiB``, ``100000`` (K, M, G, T, P, E: powers of 1024).

    Raises :class:`af_core.errors.UsageError` naming ``what`` for anything else, and for 0.
    """
    match = _SIZE.fullmatch(text.strip())
    unit = match[2].lower() if match else ""
    if match is None or (not unit and (match[3] or "").lower() == "ib"):
        raise UsageError(
            f"{what} must be a byte count such as 512M, 8G or 1.5T (K, M, G, T, P, E are powers of 1024), "
            f"got '{text}'"
        )
    value = int(Decimal(match[1]) * (1024 ** _UNITS[unit]))
    if value < 1:
        raise UsageError(f"{what} must be at least 1 byte, got '{text}'")
    return value


def format_bytes(count: int) -> str:
    """``count`` bytes for people: ``512 B``, ``12.3 MiB``, ``596.0 GiB``."""
    if count < 1024:
        return f"{count} B"
    value = float(count)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value / 1024:.1f} EiB"


@attrs.frozen
class MemoryLimit:
    """The bytes a run may take and where that figure came from (shown when a run is refused)."""

    bytes: int
    source: str


def _meminfo(path: Path) -> int | None:
    try:
        for line in path.read_text(encoding="ascii", errors="replace").splitlines():
            if line.startswith("MemAvailable:"):
                fields = line.split()
                return int(fields[1]) * 1024 if len(fields) >= 2 and fields[1].isdigit() else None
    except OSError:
        return None
    return None


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_left(root: Path) -> int | None:
    """What a cgroup memory limit leaves (v2 ``memory.max``, else v1), None when there is none."""
    for limit_file, usage_file in (
        ("memory.max", "memory.current"),
        ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes"),
    ):
        limit = _read_int(root / limit_file)
        usage = _read_int(root / usage_file)
        if limit is not None and usage is not None:
            return max(0, limit - usage)
    return None


def available_memory(
    meminfo: Path = Path("/proc/meminfo"), cgroup: Path = Path("/sys/fs/cgroup")
) -> int | None:
    """Bytes of memory available to this process: ``MemAvailable``, lowered to a cgroup limit's room."""
    found = [v for v in (_meminfo(meminfo), _cgroup_left(cgroup)) if v is not None]
    return min(found) if found else None


def memory_limit(
    explicit: int | MemoryLimit | None = None, environ: Mapping[str, str] | None = None
) -> MemoryLimit:
    """The limit a run's estimate is compared with: ``explicit``, else ``AF_MAX_MEMORY``, else half
    the available memory, else :data:`FALLBACK_LIMIT` (an empty ``AF_MAX_MEMORY`` counts as unset)."""
    if isinstance(explicit, MemoryLimit):
        return explicit
    if explicit is not None:
        if explicit < 1:
            raise UsageError(f"max_memory must be at least 1 byte, got {explicit}")
        return MemoryLimit(int(explicit), "max_memory")
    environ = os.environ if environ is None else environ
    text = environ.get(ENV_VAR, "")
    if text.strip():
        return MemoryLimit(parse_bytes(text, ENV_VAR), ENV_VAR)
    available = available_memory()
    if available is None:
        return MemoryLimit(FALLBACK_LIMIT, "the default when the available memory cannot be read")
    return MemoryLimit(max(1, int(available * DEFAULT_SHARE)), "half the memory available")


@attrs.frozen
class TensorBytes:
    """One tensor of a graph at concrete sizes: its elements and its buffer."""

    name: str
    kind: str  # the op's compute type: "data", "output", "elementwise", ...
    elements: int
    storage: int  # elements of its buffer: a Data node's strided view spans them; any other node's = elements
    itemsize: int

    @property
    def nbytes(self) -> int:
        return self.storage * self.itemsize


@attrs.frozen
class MemoryEstimate:
    """Upper bounds of the host memory of one run, by part, in bytes; ``elements`` is the work: the
    elements the graph's computing nodes produce (the reference and the twin each compute them once).
    ``largest`` names the tensor that takes the most memory of its own, ``largest_bytes``."""

    inputs: int
    reference: int
    twin: int
    compare: int
    elements: int
    largest: str = ""
    largest_bytes: int = 0

    @property
    def total(self) -> int:
        return self.inputs + self.reference + self.twin + self.compare

    def parts(self) -> str:
        """The parts of :attr:`total` as text (inputs, reference, CPU twin, comparison, largest tensor)."""
        text = (
            f"inputs {format_bytes(self.inputs)}, reference {format_bytes(self.reference)}, "
            f"CPU twin {format_bytes(self.twin)}, comparison {format_bytes(self.compare)}; "
            f"{self.elements} elements to compute"
        )
        if self.largest:
            text += f"; the largest tensor, '{self.largest}', takes {format_bytes(self.largest_bytes)}"
        return text


def race_check_on(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the twin's race check shadows global memory (``AF_TWIN_RACE=off`` turns it off)."""
    environ = os.environ if environ is None else environ
    return environ.get("AF_TWIN_RACE") != "off"


def estimate_memory(
    tensors: Sequence[TensorBytes],
    *,
    workspace: int = 0,
    block_dim: int = 0,
    launch: bool = True,
    race: bool = True,
    sanitize: bool = False,
    held: int = 0,
    l2_lines: int = DEFAULT_L2_LINES,
) -> MemoryEstimate:
    """The host memory of a run over ``tensors`` (every node of the graph), an upper bound.

    ``workspace`` is the GM workspace of the case that runs and ``block_dim`` its cores; with
    ``launch`` False (every output empty) no kernel runs and the twin takes nothing. ``race``: the
    twin's race check shadows outputs, workspace and each worker's UB; ``sanitize``: the twin is built
    with ASan and UBSan. ``held``: bytes of input arrays the caller already holds (``--inputs``
    files), counted with the inputs. ``l2_lines``: lines of the platform's L2 (``l2_size // l2_line``),
    the size of the twin's L2 tables.
    """
    data = [t for t in tensors if t.kind == "data"]
    outputs = [t for t in tensors if t.kind == "output"]
    computed = [t for t in tensors if t.kind != "data" and t.kind not in VALUE_PRESERVING]
    storage = sum(t.nbytes for t in data)
    inputs = held + storage + max((t.storage * INPUT_SCRATCH_BYTES for t in data), default=0)
    widest = max((t.elements for t in computed), default=0)
    reference = (sum(t.elements for t in computed) + widest * REFERENCE_SCRATCH) * REFERENCE_BYTES
    out_bytes = sum(t.nbytes for t in outputs)
    twin = 0
    if launch:
        gm = storage + out_bytes + workspace
        shadow = (out_bytes + workspace) * RACE_SHADOW_BYTES if race else 0
        lines = -(-gm // LINE) * LINE_BYTES
        worker = WORKER_BYTES + (WORKER_SHADOW_BYTES if race else 0)
        running = min(max(block_dim, 1), MAX_WORKERS)
        workers = running * worker
        l2_log = (
            3 * (L2_MAX_RECORDS + running * L2_FLUSH) * L2_RECORD_BYTES + max(block_dim, 1) * L2_CORE_BYTES
        )
        l2 = l2_log + l2_lines * L2_LINE_BYTES
        process = gm + shadow + lines + workers + l2 + TWIN_PROCESS_BYTES
        if sanitize:
            process = process * SANITIZE_FACTOR + SANITIZE_BYTES
        # the inputs' bytes written for the twin, the twin process, the outputs read back and converted
        twin = storage + process + 2 * out_bytes + 4 * sum(t.elements for t in outputs)
    compare = max((t.elements for t in outputs), default=0) * COMPARE_BYTES + RUN_OBJECT_BYTES
    own = {t.name: t.nbytes for t in (*data, *outputs)}
    own.update({t.name: t.elements * REFERENCE_BYTES for t in computed})
    largest = max(own, key=lambda name: own[name], default="")
    return MemoryEstimate(
        inputs,
        reference,
        twin,
        compare,
        sum(t.elements for t in computed),
        largest,
        own.get(largest, 0),
    )


def check_memory(estimate: MemoryEstimate, limit: MemoryLimit, sizes: str) -> None:
    """Refuse (:class:`af_core.errors.MemoryBudgetError`) a run whose estimate exceeds ``limit``;
    ``sizes`` is the run's sizes as text (``V=100, B=4``)."""
    if estimate.total <= limit.bytes:
        return
    raise MemoryBudgetError(
        f"sizes {sizes or '(static)'} need an estimated {format_bytes(estimate.total)} of host memory "
        f"({estimate.parts()}), over the limit of {format_bytes(limit.bytes)} ({limit.source}); lower the "
        f"sizes, or raise the limit with --max-memory or {ENV_VAR}",
        estimate=estimate.total,
        limit=limit.bytes,
    )
