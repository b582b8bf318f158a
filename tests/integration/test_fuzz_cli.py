"""A bounded, structured fuzz of ``afc`` in process: graph files, .npy inputs, --shape values, environment.

Each example takes a sample graph, maybe mutates its JSON (huge strides, declared maxima, dtypes,
odd values, dropped keys, broken text), picks --shape values from the whole range and beyond, maybe
writes --inputs arrays and mutates them (dtypes, shapes, values, lying headers, FIFOs, symlinks),
sets AF_MAX_MEMORY, --max-memory, AF_TWIN_RACE and AF_TWIN_CACHE_MAX_MB, and runs ``afc run``,
``compile`` or ``explain`` through :func:`af_core.cli.main`. Whatever it gets, afc must:

- exit 0, 1 or 2: never 3 (the internal-error path, a bug) nor print a traceback;
- say a usage error (exit 2) in one line;
- write nothing but under ``-o`` (the build cache is AF_TWIN_CACHE, outside the tree watched), and
  leave its temporary directory empty;
- never run code from a graph file.

Every example's memory limit is at most 1 GiB or invalid, so no example can take the machine's
memory, and the examples stop after ``AF_FUZZ_SECONDS`` (default 45) of wall time, whatever their
count (about 1000 examples take 25 s on a 2-core machine). Hypothesis is derandomized, so every run
replays the same examples and a failure names one that reproduces; ``AF_FUZZ_RANDOM=1`` draws new
ones.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import signal
import stat
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from af_core.cli import main
from af_core.inputs import make_inputs
from af_core.ir.serialize import graph_to_dict
from af_core.samples import installed_samples, lookup
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin
BUDGET = float(os.environ.get("AF_FUZZ_SECONDS", "45"))
SAMPLES = [s.name for s in installed_samples()]
SENTINEL = Path(tempfile.gettempdir()) / f"af-fuzz-cli-sentinel-{os.getpid()}"
CODE = [
    f"__import__('os').system('touch {SENTINEL}')",
    f"(open)({str(SENTINEL)!r}, 'w')",
    '*/ static int x = std::system("touch ' + str(SENTINEL) + '"); /*',
]
ODD = [
    None,
    True,
    -1,
    1 << 63,
    -(1 << 70),
    10**30,
    1.5,
    float("nan"),
    float("inf"),
    "",
    "x" * 5000,
    "../../outside",
    "a\x00b",
    "line\nbreak",
    "\u202eevil",
    [],
    {},
    [[[[[[[[1]]]]]]]],
    "1x",
    *CODE,
]
#: --shape values: the range's ends and inside, and texts that are not sizes
SIZE_VALUES = [0, 1, 2, 1 << 31, (1 << 63) - 1, 1 << 63, -1, "x", "", "1e3", "0x10", " 7 ", "\u0663", "2**8"]
#: memory limits a run fits, a limit no run fits, and settings that are not limits
LIMITS = ["300M", "700M", "1G"]
BAD_LIMITS = ["64M", "1", "0", "junk", "-5", "1e9", "\uff11G", "1.5Q"]
#: AF_TWIN_RACE values; not "strict", which asks the twin to check the rules of older chips (a
#: PipeBarrier between dependent vector calls) that kernels generated for the 950 do not follow: its
#: race report (exit 3) is what that setting is for
RACE = [None, "off", "on", "", "STRICT", "x" * 300]
#: cache bounds: none small enough to evict the builds other tests share
CACHE_MB = [None, "2048", "99999999999999999999", "abc", "-1", "1.5", "\uff12", ""]


class _Timeout(BaseException):
    """Raised by the alarm; not an Exception, so afc's own handler does not turn it into an exit code."""


def _alarm(signum, frame):
    raise _Timeout()


@pytest.fixture(scope="module")
def graphs() -> dict[str, dict]:
    """Each sample's JSON graph, its build warmed (the examples then build only what a mutation makes)."""
    for name in SAMPLES:
        TwinSession(lookup(name).build())
    return {name: graph_to_dict(lookup(name).build()) for name in SAMPLES}


def _leaf_paths(tree, prefix=()):
    if isinstance(tree, dict):
        for key in sorted(tree):
            yield from _leaf_paths(tree[key], (*prefix, key))
    elif isinstance(tree, list) and tree:
        for i, value in enumerate(tree):
            yield from _leaf_paths(value, (*prefix, i))
    else:
        yield prefix


def _set(tree, path, value) -> None:
    for key in path[:-1]:
        tree = tree[key]
    tree[path[-1]] = value


@st.composite
def graph_texts(draw, base: dict) -> bytes:
    """The graph's JSON, unchanged or with one structured mutation (no valid change of a name, a
    dtype or an attribute: those would only cost a new build)."""
    tree = copy.deepcopy(base)
    data = [n for n in tree["nodes"] if n["type"] == "Data"]
    kind = draw(st.sampled_from(["none"] * 12 + ["stride", "max", "dtype", "drop", "odd", "static", "text"]))
    if kind == "stride":
        node = draw(st.sampled_from(data))
        axis = draw(st.integers(0, len(node["y"]["strides"]) - 1))
        node["y"]["strides"][axis] = draw(st.sampled_from([str(1 << 40), str(1 << 62), "-1", "V*", 1e300]))
    elif kind == "max":
        size = draw(st.sampled_from(tree["sizes"]))
        size["max"] = draw(st.sampled_from([1, 0, -1, "x", 1.5, True, [], 10**30]))
    elif kind == "dtype":
        node = draw(st.sampled_from(tree["nodes"]))
        node["y"]["dtype"] = draw(st.sampled_from(["complex64", "float8", "", 7, None]))
    elif kind == "drop":
        node = draw(st.sampled_from(tree["nodes"]))
        del node[draw(st.sampled_from(sorted(node)))]
    elif kind == "odd":
        paths = [p for p in _leaf_paths(tree) if p and p[-1] != "name" and "ir_attr" not in p]
        _set(tree, draw(st.sampled_from(paths)), copy.deepcopy(draw(st.sampled_from(ODD))))
    elif kind == "static":  # a size text of a Data node replaced by a number
        node = draw(st.sampled_from(data))
        axis = draw(st.integers(0, len(node["y"]["size"]) - 1))
        node["y"]["size"][axis] = draw(st.sampled_from(["0", str(1 << 40), str((1 << 63) - 1), "-3"]))
    text = json.dumps(tree, allow_nan=True).encode()
    if kind == "text":
        how = draw(st.sampled_from(["cut", "bytes", "deep", "empty"]))
        if how == "cut":
            text = text[: draw(st.integers(0, len(text) - 1))]
        elif how == "bytes":
            text = b"\xff\xfe" + text
        elif how == "deep":
            text = b"[" * 100000 + b"]" * 100000
        else:
            text = b""
    return text


def _shape_text(draw, base: dict[str, int]) -> str:
    """``--shape`` for the sample's sizes: most examples change one size or none, a few break the text."""
    parts = []
    changed = draw(st.sampled_from([None, *base]))
    for name, value in base.items():
        if name == changed:
            if draw(st.integers(0, 5)):
                parts.append(f"{name}={draw(st.sampled_from(SIZE_VALUES))}")
        else:
            parts.append(f"{name}={value}")
    extra = draw(st.sampled_from([None] * 12 + ["ghost=3", "dup", "=4", ",,"]))
    if extra == "dup" and parts:
        parts.append(parts[0].split("=")[0] + "=99")
    elif extra:
        parts.append(extra)
    return ",".join(parts)


@st.composite
def npy_files(draw, sample: str) -> dict[str, object]:
    """``<Data name>.npy`` contents for the sample's smallest shape, each maybe mutated: an array,
    raw bytes, or a special file ("fifo", "dir", "devzero", "missing")."""
    shape = min(lookup(sample).shapes, key=lambda s: sum(s.values()))
    made = make_inputs(lookup(sample).build(), shape, seed=draw(st.integers(0, 3)))
    files: dict[str, object] = {}
    for name, array in made.logical.items():
        array = np.ascontiguousarray(array)
        how = draw(
            st.sampled_from(
                ["keep"] * 12 + ["dtype", "shape", "values", "lie", "bytes", "special", "missing"]
            )
        )
        if how == "dtype":
            kind = draw(st.sampled_from(["float64", "int8", "bool", "complex64", "<U3", "object"]))
            files[name] = array.astype(kind)
        elif how == "shape":
            files[name] = draw(
                st.sampled_from(
                    [array[..., None], array.reshape(-1), np.concatenate([array, array]), array[:0]]
                )
            )
        elif how == "values":
            value = draw(st.sampled_from([10**6, -(10**6), 1 << 40, float("nan"), float("inf"), -0.0]))
            changed = array.astype(np.float64 if isinstance(value, float) else np.int64)
            if changed.size:
                changed.reshape(-1)[draw(st.integers(0, changed.size - 1))] = value
            files[name] = changed
        elif how == "lie":
            header = io.BytesIO()
            claimed = {"descr": array.dtype.str, "fortran_order": False, "shape": (10**13,)}
            np.lib.format.write_array_header_1_0(header, claimed)
            files[name] = header.getvalue() + bytes(16)
        elif how == "bytes":
            files[name] = draw(st.sampled_from([b"", b"\x93NUMPY", b"not an array", bytes(range(256))]))
        elif how == "special":
            files[name] = draw(st.sampled_from(["fifo", "dir", "devzero"]))
        elif how == "keep":
            files[name] = array
    if draw(st.booleans()) and draw(st.booleans()):
        files["ghost"] = np.zeros(3)
    return files


def _write_inputs(directory: Path, files: dict[str, object]) -> None:
    directory.mkdir()
    for name, content in files.items():
        path = directory / f"{name}.npy"
        if isinstance(content, np.ndarray):
            np.save(path, content, allow_pickle=content.dtype == object)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        elif content == "fifo":
            os.mkfifo(path)
        elif content == "dir":
            path.mkdir()
        elif content == "devzero":
            path.symlink_to("/dev/zero")


@st.composite
def invocations(draw, graphs: dict[str, dict]):
    sample = draw(st.sampled_from(SAMPLES))
    base = min(lookup(sample).shapes, key=lambda s: sum(s.values()))
    text = draw(graph_texts(graphs[sample]))
    command = draw(st.sampled_from(["run", "run", "run", "run", "compile", "explain"]))
    args: list[str] = []
    files = None
    if command == "run" and draw(st.integers(0, 3)) == 0:
        files = draw(npy_files(sample))
        if draw(st.booleans()):
            args += ["--shape", _shape_text(draw, base)]
    elif command != "compile" or draw(st.booleans()):
        args += ["--shape", _shape_text(draw, base)]
    if command == "run":
        for option, values in (
            ("--seed", ["0", "7", "12345", "-1", "x"]),
            ("--cores", ["1", "3", "7", "48", "0", "9999999999"]),
            ("--tiling-key", ["1", "2", "3", "4", "99", "-1"]),
        ):
            if draw(st.integers(0, 5)) == 0:
                args += [option, draw(st.sampled_from(values))]
    env = {
        "AF_MAX_MEMORY": draw(st.sampled_from(LIMITS * 16 + [*BAD_LIMITS, ""])),
        "AF_TWIN_RACE": draw(st.sampled_from(RACE)),
        "AF_TWIN_CACHE_MAX_MB": draw(st.sampled_from([None] * 8 + CACHE_MB)),
        "AF_FORCE_TEMPLATE": draw(st.sampled_from([None] * 12 + ["no-such-template"])),
    }
    max_memory = draw(st.sampled_from([None] * 40 + LIMITS * 4 + BAD_LIMITS))
    if command == "run" and max_memory is None and not env["AF_MAX_MEMORY"]:
        max_memory = "512M"  # never the machine's default: every run stays under 1 GiB
    if command == "run" and max_memory is not None:
        args += ["--max-memory", max_memory]
    suffix = draw(st.sampled_from([".json"] * 12 + [".JSON", ".txt"]))
    return sample, command, text, suffix, args, files, env


def _tree(root: Path) -> dict[str, tuple]:
    """Every path under ``root`` with its type, size and modification time (symlinks not followed)."""
    found = {}
    for path in root.rglob("*"):
        info = path.lstat()
        found[str(path.relative_to(root))] = (stat.S_IFMT(info.st_mode), info.st_size, info.st_mtime_ns)
    return found


@contextlib.contextmanager
def _environment(env: dict[str, str | None], tmp: Path):
    saved = {k: os.environ.get(k) for k in [*env, "TMPDIR"]}
    saved_tempdir = tempfile.tempdir
    try:
        for key, value in {**env, "TMPDIR": str(tmp)}.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        tempfile.tempdir = str(tmp)
        yield
    finally:
        tempfile.tempdir = saved_tempdir
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_afc_fails_cleanly_on_fuzzed_graphs_inputs_shapes_and_environment(graphs, tmp_path_factory):
    outcomes: dict[int, int] = {}
    started: list[float] = []

    @settings(
        max_examples=1000,
        deadline=None,
        derandomize=os.environ.get("AF_FUZZ_RANDOM") is None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(invocation=invocations(graphs))
    def fuzz(invocation):
        if not started:
            started.append(time.monotonic())
        if time.monotonic() - started[0] > BUDGET:
            return  # the wall-time budget is spent: the remaining examples pass untried
        sample, command, text, suffix, args, files, env = invocation
        work = tmp_path_factory.mktemp("fuzz")
        tmp = work / "tmp"
        tmp.mkdir()
        graph = work / f"{sample}{suffix}"
        graph.write_bytes(text)
        argv = [command, str(graph), *args]
        if files is not None:
            _write_inputs(work / "in", files)
            argv += ["--inputs", str(work / "in")]
        if command == "compile":
            argv += ["-o", str(work / "out")]
        before = _tree(work)
        out, err = io.StringIO(), io.StringIO()
        previous = signal.signal(signal.SIGALRM, _alarm)
        cwd = os.getcwd()
        try:
            os.chdir(work)
            with _environment(env, tmp), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                signal.alarm(120)
                try:
                    code = main(argv)
                except SystemExit as exc:  # argparse refuses an argument with exit 2
                    code = exc.code
        except _Timeout:
            pytest.fail(f"afc {argv} did not finish (env {env})")
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
            os.chdir(cwd)
        stdout, stderr = out.getvalue(), err.getvalue()
        where = f"afc {argv} (env {env}): exit {code}\n{stderr}"
        assert code in (0, 1, 2), where
        assert "Traceback" not in stderr and "Traceback" not in stdout, where
        if code == 2:
            lines = [line for line in stderr.splitlines() if not line.startswith("afc: warning:")]
            assert len(lines) == 1, where
        after = _tree(work)
        changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
        # the temporary directory's own time changes with what a run made and removed there
        assert all(p in ("out", "tmp") or p.startswith("out/") for p in changed), (where, sorted(changed))
        assert not any(tmp.iterdir()), (where, sorted(p.name for p in tmp.iterdir()))
        outcomes[code] = outcomes.get(code, 0) + 1

    fuzz()
    assert not SENTINEL.exists(), "a graph file ran code"
    assert outcomes.get(0, 0) and outcomes.get(2, 0), outcomes  # the fuzz reached both runs and refusals
