"""afc's error contract, run as a subprocess for each hostile or odd input.

User errors: one line on stderr, exit 2. Mismatch: exit 1. Internal errors:
one line with a hint to --debug, exit 3. Ctrl-C: exit 130. No traceback
without --debug, ever; plugins that fail to load are one warning line each.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from af_core.builders import GraphBuilder, gather
from af_core.hookspecs import CONTRACT_VERSION
from af_core.ir.serialize import to_json

pytestmark = pytest.mark.twin
ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "minimal_graph.py")


def afc(
    *args: str, cwd: Path | None = None, env: dict | None = None, preexec_fn=None, timeout: float = 900
) -> subprocess.CompletedProcess:
    full = dict(os.environ)
    full.setdefault("AF_TWIN_CACHE", str(Path.home() / ".cache" / "af-twin"))
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "af_core", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full,
        timeout=timeout,
        preexec_fn=preexec_fn,
    )


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def user_error(proc: subprocess.CompletedProcess, text: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    err = lines(proc.stderr)
    assert len(err) == 1 and err[0].startswith("afc"), proc.stderr
    assert text in err[0], err[0]
    assert "Traceback" not in proc.stderr


def graph_json(name: str = "g", dtype: str = "float32") -> str:
    g = GraphBuilder(name)
    x = g.data("x", ["a0", "a1"], dtype)
    i = g.data("index", ["b0", "b1"], "int32")
    g.output(g.op("Relu", gather(x, 1, i)), "y")
    return to_json(g.build())


def graph_file(directory: Path, name: str = "g", suffix: str = ".json") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}{suffix}"
    path.write_text(graph_json(name))
    return path


def fake_plugin(root: Path, dist: str, module: str, source: str, entry: str | None = None) -> dict:
    """An installed distribution with one af_core entry point (built for the core's hook contract version);
    returns the env that puts it on the path."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(
        f"AF_CONTRACT_VERSION = {CONTRACT_VERSION}\n" + textwrap.dedent(source)
    )
    info = root / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[af_core]\n{entry or module} = {module}\n")
    return {"PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}


# -- graph files -----------------------------------------------------------------------------------------------
def test_deeply_nested_json_is_a_user_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100000 + "]" * 100000)
    user_error(afc("compile", str(path), "-o", str(tmp_path / "out")), "nests 100000 levels deep")
    path.write_text('{"format": ' + "[" * 500 + "]" * 500 + "}")
    user_error(afc("explain", str(path)), "nests")
    assert not (tmp_path / "out").exists()


def test_a_directory_or_a_missing_file_as_graph(tmp_path):
    (tmp_path / "dir.json").mkdir()
    user_error(afc("compile", str(tmp_path / "dir.json"), "-o", str(tmp_path / "out")), "is a directory")
    user_error(afc("graph", str(tmp_path)), "must end in .json")
    user_error(afc("run", str(tmp_path / "nothere.json")), "does not exist")


def test_only_py_files_run_as_code(tmp_path):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('x')\nfrom af_core.samples import seed_minimal\ngraph = seed_minimal()\n"
    for name in ("g.JSON", "g.json", "g.txt", "g.PY", "g.py.bak", "g"):
        (tmp_path / name).write_text(code)
        proc = afc("compile", str(tmp_path / name), "-o", str(tmp_path / "out"))
        assert proc.returncode == 2 and len(lines(proc.stderr)) == 1, proc.stderr
        assert not marker.exists(), name
    (tmp_path / "g.py").write_text(code)
    proc = afc("compile", str(tmp_path / "g.py"), "-o", str(tmp_path / "out"))
    assert proc.returncode == 0 and marker.exists(), proc.stderr


def test_json_suffix_is_case_insensitive_data(tmp_path):
    path = graph_file(tmp_path, "upper", ".JSON")
    proc = afc("compile", str(path), "-o", str(tmp_path / "out"))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert (tmp_path / "out" / "kernel.cpp").exists()


@pytest.mark.parametrize(
    "source, text",
    [
        ("graph = (\n", "line 1: syntax error"),
        ("raise RuntimeError('no graph today')\n", "raised RuntimeError: no graph today"),
        ("import sys\nsys.exit(0)\n", "raised SystemExit"),
        ("x = 1\n", "defines no 'graph'"),
        ("def build():\n    return {}['k']\n", "build() of graph script"),
    ],
    ids=["syntax", "raises", "exits", "no-graph", "build-raises"],
)
def test_broken_python_graphs_are_user_errors(tmp_path, source, text):
    path = tmp_path / "broken.py"
    path.write_text(source)
    user_error(afc("compile", str(path), "-o", str(tmp_path / "out")), text)
    assert not (tmp_path / "out").exists()


def test_debug_before_or_after_the_subcommand_shows_the_traceback(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("raise RuntimeError('boom')\n")
    for args in (
        ["--debug", "compile", str(path)],
        ["compile", str(path), "--debug"],
        ["explain", "--debug", str(path)],
    ):
        proc = afc(*args, cwd=tmp_path)
        assert proc.returncode == 2 and "Traceback" in proc.stderr, (args, proc.stderr)
        assert lines(proc.stderr)[-1].startswith("afc: error:")


def test_an_internal_error_exits_3_with_a_hint(tmp_path):
    path = tmp_path / "sabotage.py"
    path.write_text(
        textwrap.dedent("""
        import af_core.autofuser
        from af_core.samples import seed_minimal

        def broken(self, scheduled):
            raise ZeroDivisionError("a bug in codegen")

        af_core.autofuser.Autofuser.generate = broken
        graph = seed_minimal()
        """)
    )
    proc = afc("compile", str(path), "-o", str(tmp_path / "out"))
    assert proc.returncode == 3, proc.stderr
    err = lines(proc.stderr)
    assert (
        len(err) == 1
        and "internal error: ZeroDivisionError: a bug in codegen" in err[0]
        and "--debug" in err[0]
    )
    proc = afc("compile", str(path), "-o", str(tmp_path / "out"), "--debug")
    assert proc.returncode == 3 and "Traceback" in proc.stderr


# -- arguments -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, text",
    [
        (["explain", SEED, "--shape", "s0=-5"], "--shape s0 must be between 0 and 2^63-1"),
        (["explain", SEED, "--shape", f"s0={1 << 63}"], "must be between 0 and 2^63-1"),
        (["explain", SEED, "--shape", "s0=1,s0=2"], "gives s0 twice"),
        (["explain", SEED, "--shape", "s0=1,bogus=2"], "unknown size(s) bogus"),
        (["run", SEED, "--shape", "N=3"], "unknown size(s) N"),
        (["explain", SEED, "--cores", "0"], "--cores: must be a positive integer"),
        (["compile", SEED, "-j", "0"], "-j/--jobs: must be a positive integer"),
        (["compile", SEED, "--cores", "-3"], "must be a positive integer"),
        (["explain", SEED, "--ub", "zero"], "--ub: must be a positive integer"),
        ([], "the following arguments are required"),
    ],
    ids=[
        "negative",
        "too-big",
        "twice",
        "unknown-explain",
        "unknown-run",
        "cores0",
        "jobs0",
        "cores-neg",
        "ub",
        "none",
    ],
)
def test_bad_arguments_are_one_line(args, text):
    user_error(afc(*args), text)


# -- output ----------------------------------------------------------------------------------------------------
def test_output_that_is_a_file_or_not_writable(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    user_error(afc("compile", SEED, "-o", str(afile)), "exists and is not a directory")
    user_error(afc("compile", SEED, "-o", str(afile / "sub")), "afile")
    assert afile.read_text() == "keep me"
    user_error(afc("compile", SEED, "-o", "/proc/afc-cannot-write-here"), "cannot write artifacts")
    user_error(afc("graph", SEED, "--format", "dot", "-o", str(afile)), "exists and is not a directory")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_output_in_a_read_only_directory(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        user_error(afc("compile", SEED, "-o", str(ro / "out")), "Permission denied")
    finally:
        ro.chmod(0o700)


def _small_file_limit() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))  # kernel.cpp is larger: a "full disk"


def test_a_full_disk_leaves_no_truncated_artifact(tmp_path):
    out = tmp_path / "out"
    proc = afc("compile", SEED, "-o", str(out), preexec_fn=_small_file_limit)
    user_error(proc, "File too large")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == []
    # into an existing directory: the old complete kernel stays, no scratch is left behind
    assert afc("compile", SEED, "-o", str(out)).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    user_error(
        afc(
            "compile",
            str(graph_file(tmp_path / "src", "other")),
            "-o",
            str(out),
            preexec_fn=_small_file_limit,
        ),
        "File too large",
    )
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(after) == set(before)
    assert after["kernel.cpp"] == before["kernel.cpp"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "src"]


def test_recompiling_into_one_output_leaves_no_stale_picture_and_every_user_file(tmp_path):
    path = graph_file(tmp_path / "src")
    out = tmp_path / "out"
    proc = afc("compile", str(path), "-o", str(out), "--force-template", "simd")
    assert proc.returncode == 0, proc.stderr
    simd = sorted(p.name for p in out.glob("case*_simd*.mmd"))
    assert simd and not list(out.glob("case*_simt*.mmd"))
    (out / "notes.md").write_text("the user's")
    (out / "case99_simd.mmd").write_text("a picture af did not write")
    proc = afc("compile", str(path), "-o", str(out), "--force-template", "simt")
    assert proc.returncode == 0, proc.stderr
    assert list(out.glob("case*_simt*.mmd")) and not any((out / name).exists() for name in simd)
    assert (out / "notes.md").read_text() == "the user's" and (out / "case99_simd.mmd").exists()
    for name in simd:
        assert f"removed {out / name}" in proc.stdout
    assert "afc-manifest.json" in proc.stdout


def test_colliding_output_names_are_refused(tmp_path):
    a, b = graph_file(tmp_path / "A", "g"), graph_file(tmp_path / "B", "g")
    out = tmp_path / "out"
    user_error(afc("compile", str(a), str(b), "-o", str(out)), "would both be written to")
    assert not out.exists()
    c = graph_file(tmp_path / "C", "G", ".JSON")
    user_error(afc("compile", str(a), str(c), "-o", str(out)), "would both be written to")


def test_output_directories_are_safe_names(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    odd = src / "..\x07 we\u00efrd name.json"
    odd.write_text(graph_json("odd"))
    plain = graph_file(src, "plain")
    out = tmp_path / "out"
    proc = afc("compile", str(odd), str(plain), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in out.iterdir())
    assert "plain" in names and len(names) == 2
    other = next(n for n in names if n != "plain")
    assert not other.startswith(".") and all(ch.isascii() and (ch.isalnum() or ch in "._-") for ch in other)
    assert (out / other / "kernel.cpp").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "src"]


def test_many_graphs_report_each_failure_on_one_line(tmp_path):
    good = graph_file(tmp_path / "src", "good")
    bad = tmp_path / "src" / "bad.json"
    bad.write_text("{")
    proc = afc("compile", str(good), str(bad), "-j", "2", "-o", str(tmp_path / "out"))
    assert proc.returncode == 2 and "compiled 'good'" in proc.stdout
    err = lines(proc.stderr)
    assert len(err) == 1 and "bad.json" in err[0] and "Traceback" not in proc.stderr


def test_ctrl_c_during_parallel_compile_stops_the_workers(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for k in range(4):
        (src / f"slow{k}.py").write_text(
            textwrap.dedent(f"""
            import os, time
            open({str(src / f"pid{k}")!r}, 'w').write(str(os.getpid()))
            os.replace({str(src / f"pid{k}")!r}, {str(src / f"started{k}")!r})  # appears with its content
            time.sleep(600)
            from af_core.samples import seed_minimal
            graph = seed_minimal()
            """)
        )
    env = dict(os.environ)
    env.setdefault("AF_TWIN_CACHE", str(Path.home() / ".cache" / "af-twin"))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "af_core",
            "compile",
            *(str(p) for p in sorted(src.glob("*.py"))),
            "-j",
            "2",
            "-o",
            str(tmp_path / "out"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        for _ in range(1200):  # both workers are inside a graph script
            if len(list(src.glob("started*"))) >= 2:
                break
            time.sleep(0.1)
        workers = [int(p.read_text()) for p in src.glob("started*")]
        assert len(workers) >= 2
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert lines(err) == ["afc: interrupted"], err
    for pid in workers:
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"worker {pid} still runs")
    assert len(list(src.glob("started*"))) == 2  # the queued graphs never started
    assert not (tmp_path / "out").exists()


def test_ctrl_c_in_a_single_compile_exits_130_without_a_traceback(tmp_path):
    script = tmp_path / "slow.py"
    started = tmp_path / "started"
    script.write_text(f"import time\nopen({str(started)!r}, 'w').close()\ntime.sleep(600)\n")
    env = dict(os.environ)
    env.setdefault("AF_TWIN_CACHE", str(Path.home() / ".cache" / "af-twin"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "af_core", "compile", str(script), "-o", str(tmp_path / "out")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        for _ in range(1200):
            if started.exists():
                break
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130 and lines(err) == ["afc: interrupted"], err
    assert not (tmp_path / "out").exists()


def test_a_closed_stdout_ends_quietly_with_141(tmp_path):
    """``afc ... | head``: the reader closes the pipe; afc stops printing, says nothing, exits 141."""
    closed = tmp_path / "stdout-closed"
    graph = tmp_path / "waits.py"  # the graph program waits until the test has closed the pipe
    graph.write_text(
        f"import os, time\nwhile not os.path.exists({str(closed)!r}):\n    time.sleep(0.05)\n"
        "from af_core.samples import seed_minimal\ngraph = seed_minimal()\n"
    )
    shape = "s0=6,s1=2,s2=40,s3=32,s4=6,s5=2,s6=16,s7=32"
    env = dict(os.environ)
    env.setdefault("AF_TWIN_CACHE", str(Path.home() / ".cache" / "af-twin"))
    for args in (
        ["compile", str(graph), "-o", str(tmp_path / "out")],
        ["explain", str(graph), "--shape", shape],
        ["plugins"],
        ["cache", "info"],
        ["--help"],
    ):
        closed.unlink(missing_ok=True)
        proc = subprocess.Popen(
            [sys.executable, "-m", "af_core", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        closed.touch()
        try:
            err = proc.stderr.read().decode("utf-8", "replace")
            proc.wait(timeout=300)
        finally:
            proc.kill()
        assert proc.returncode == 141 and err == "", (args, proc.returncode, err)


def test_a_plugin_command_printing_into_a_closed_pipe_ends_quietly_with_141(tmp_path):
    env = fake_plugin(
        tmp_path / "site",
        "af-chatty",
        "af_chatty_mod",
        """
        import os, time
        from af_core import hookimpl

        def run(args):
            while not os.path.exists(args.closed):
                time.sleep(0.05)
            for i in range(100):
                print("line", i, flush=True)
            return 0

        @hookimpl
        def af_register_commands(register):
            register("chatty", "prints a lot", lambda p: p.add_argument("closed"), run)
        """,
    )
    closed = tmp_path / "stdout-closed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "af_core", "chatty", str(closed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    closed.touch()
    try:
        err = proc.stderr.read().decode("utf-8", "replace")
        proc.wait(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 141 and err == "", (proc.returncode, err)


def test_a_failing_plugin_command_is_one_line_naming_the_plugin(tmp_path):
    env = fake_plugin(
        tmp_path / "site",
        "af-failing",
        "af_failing_mod",
        """
        from af_core import hookimpl

        @hookimpl
        def af_register_commands(register):
            register("fail", "fails", lambda p: None, lambda args: int("not a number"))
        """,
    )
    proc = afc("fail", env=env)
    assert proc.returncode == 3, proc.stderr
    err = lines(proc.stderr)
    assert len(err) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "plugin 'af_failing_mod' (af-failing) failed in command 'fail': raised ValueError" in err[0]


# -- inputs ----------------------------------------------------------------------------------------------------
def test_lossy_inputs_are_refused_naming_array_and_value(tmp_path):
    path = graph_file(tmp_path)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    np.save(inputs / "x.npy", np.arange(8, dtype=np.float32).reshape(2, 4))
    np.save(inputs / "index.npy", np.array([[0, (1 << 32) + 1]], dtype=np.int64))
    shape = "a0=2,a1=4,b0=1,b1=2"
    user_error(
        afc("run", str(path), "--shape", shape, "--inputs", str(inputs)),
        "input array 'index' (int64) holds 4294967297",
    )
    np.save(inputs / "index.npy", np.array([[0, 1.7]]))
    user_error(afc("run", str(path), "--shape", shape, "--inputs", str(inputs)), "holds 1.7 at index (0, 1)")
    np.save(inputs / "index.npy", np.array([[0, 3.0]]))
    proc = afc("run", str(path), "--shape", shape, "--inputs", str(inputs))
    assert proc.returncode == 0 and "match" in proc.stdout, proc.stderr
    np.save(inputs / "stray.npy", np.zeros(2))
    user_error(
        afc("run", str(path), "--shape", shape, "--inputs", str(inputs)), "'stray.npy' names no Data node"
    )


@pytest.mark.parametrize("kind", ["fifo", "link-to-fifo", "directory", "dangling-link"])
def test_inputs_that_are_not_regular_files_are_refused_without_opening(tmp_path, kind):
    path = graph_file(tmp_path)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    np.save(inputs / "index.npy", np.array([[0, 3]], dtype=np.int32))
    target = inputs / "x.npy"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "link-to-fifo":
        os.mkfifo(tmp_path / "pipe")
        target.symlink_to(tmp_path / "pipe")
    elif kind == "directory":
        target.mkdir()
    else:
        target.symlink_to(tmp_path / "nowhere.npy")
    proc = afc("run", str(path), "--shape", "a0=2,a1=4,b0=1,b1=2", "--inputs", str(inputs), timeout=120)
    said = "cannot be read" if kind == "dangling-link" else "is not a regular file"
    user_error(proc, f"--inputs file '{target}' {said}")


def test_a_kernel_file_that_is_a_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "kernel.cpp")
    proc = afc(
        "run", SEED, "--shape", "s0=6,s1=2,s2=40,s3=32,s4=6,s5=2,s6=16,s7=32", "--kernel",
        str(tmp_path / "kernel.cpp"), timeout=120,
    )  # fmt: skip
    user_error(proc, "is not a regular file")


def test_float16_indices_print_no_numpy_warning(tmp_path):
    path = graph_file(tmp_path)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    np.save(inputs / "x.npy", np.arange(8, dtype=np.float32).reshape(2, 4))
    np.save(inputs / "index.npy", np.array([[0, 3]], dtype=np.float16))
    proc = afc("run", str(path), "--shape", "a0=2,a1=4,b0=1,b1=2", "--inputs", str(inputs))
    assert proc.returncode == 0 and "match" in proc.stdout, proc.stderr
    assert proc.stderr == ""


def test_an_index_out_of_range_names_the_value_given_not_the_shifted_one(tmp_path):
    g = GraphBuilder("negative")
    x = g.data("x", ["a0", "a1"], "float32")
    i = g.data("index", ["b0", "b1"], "int64")
    g.output(gather(x, 1, i, need_check_negative=True), "y")
    path = tmp_path / "negative.json"
    path.write_text(to_json(g.build()))
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    np.save(inputs / "x.npy", np.arange(32, dtype=np.float32).reshape(2, 16))
    np.save(inputs / "index.npy", np.array([[3, -16, -17, 15]]))  # -16 is 0; -17 is outside
    shape = "a0=2,a1=16,b0=1,b1=4"
    user_error(
        afc("run", str(path), "--shape", shape, "--inputs", str(inputs)),
        "index values [-17] fall outside [-16, 16) and need_check_bound is off",
    )
    np.save(inputs / "index.npy", np.array([[3, -16, 16, 15]]))
    user_error(afc("run", str(path), "--shape", shape, "--inputs", str(inputs)), "index values [16] fall")


# -- plugins ---------------------------------------------------------------------------------------------------
def test_a_plugin_exiting_at_import_is_a_warning_everywhere(tmp_path):
    env = fake_plugin(tmp_path / "site", "af-quitter", "af_quitter_mod", "import sys\nsys.exit(7)\n")
    proc = afc("plugins", env=env)
    assert proc.returncode == 0 and "af_quitter_mod" in proc.stdout
    assert lines(proc.stderr) == [
        "afc: warning: plugin 'af_quitter_mod' (af-quitter) failed to load: SystemExit: 7"
    ]
    out = tmp_path / "out"
    proc = afc("compile", SEED, "-o", str(out), env=env)
    assert proc.returncode == 0 and len(lines(proc.stderr)) == 1 and "af-quitter" in proc.stderr
    report = (out / "report.md").read_text()
    assert "## Plugin load errors" in report and "`af_quitter_mod` (af-quitter): SystemExit: 7" in report


def test_a_duplicate_template_name_is_a_load_error_not_a_failure(tmp_path):
    # entry points load sorted by name: "zz_copycat" comes after the real simt plugin, so it is the second
    env = fake_plugin(
        tmp_path / "site",
        "af-copycat",
        "af_copycat_mod",
        entry="zz_copycat",
        source="""
        from af_core import hookimpl

        class Copy:
            name = "simt"

            def propose(self, graph, node, ctx):
                return []

        @hookimpl
        def af_register_templates(register):
            register(Copy())
        """,
    )
    proc = afc("plugins", env=env)
    assert proc.returncode == 0, proc.stderr
    err = lines(proc.stderr)
    assert len(err) == 1 and err[0].startswith("afc: warning: plugin 'zz_copycat' (af-copycat)")
    assert "'simt' is registered by both 'af-indirect-load-simt' and 'af-copycat'" in err[0]
    proc = afc("explain", SEED, "--shape", "s0=6,s1=2,s2=40,s3=32,s4=6,s5=2,s6=16,s7=32", env=env)
    assert proc.returncode == 0 and "af-indirect-load-simt" in proc.stdout and len(lines(proc.stderr)) == 1


def test_a_misspelt_hook_is_reported(tmp_path):
    env = fake_plugin(
        tmp_path / "site",
        "af-typo",
        "af_typo_cli",
        """
        from af_core import hookimpl

        @hookimpl
        def af_register_template(register):
            pass
        """,
    )
    proc = afc("plugins", env=env)
    assert proc.returncode == 0
    assert lines(proc.stderr) == [
        "afc: warning: plugin 'af_typo_cli' (af-typo) failed to load: implements unknown "
        "hook 'af_register_template' (did you mean 'af_register_templates'?)"
    ]


def test_an_entry_point_name_clash_names_both_distributions(tmp_path):
    site = tmp_path / "site"
    env = fake_plugin(site, "af-clash-one", "af_clash_one", "", entry="clashing")
    fake_plugin(site, "af-clash-two", "af_clash_two", "", entry="clashing")
    proc = afc("plugins", env=env)
    err = lines(proc.stderr)
    assert proc.returncode == 0 and len(err) == 1 and "af-clash-one" in err[0] and "af-clash-two" in err[0]
    proc = afc("plugins", env={**env, "AF_STRICT_PLUGINS": "1"})
    user_error(proc, "af-clash-one")


def test_a_raising_twin_include_dirs_hook_is_a_user_error(tmp_path):
    env = fake_plugin(
        tmp_path / "site",
        "af-noheaders",
        "af_noheaders_mod",
        """
        from af_core import hookimpl

        @hookimpl
        def af_twin_include_dirs(platform):
            raise RuntimeError("lost my headers")
        """,
    )
    proc = afc("run", str(graph_file(tmp_path)), "--shape", "a0=2,a1=4,b0=1,b1=2", env=env)
    user_error(proc, "plugin 'af_noheaders_mod' (af-noheaders) failed in af_twin_include_dirs")


def test_a_malformed_case_is_a_rejection_naming_the_plugin(tmp_path):
    env = fake_plugin(
        tmp_path / "site",
        "af-sloppy",
        "af_sloppy_cli",
        """
        from af_core import hookimpl
        from af_core.schedule.case import Case

        class Sloppy:
            name = "sloppy"

            def propose(self, graph, node, ctx):
                return [Case("sloppy", "default", graph, impl=None, tiling="fast")]

        @hookimpl
        def af_register_templates(register):
            register(Sloppy())
        """,
    )
    out = tmp_path / "out"
    proc = afc("compile", SEED, "-o", str(out), env=env)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    report = (out / "report.md").read_text()
    assert (
        "sloppy (af-sloppy) rejected at schedule: template returned a Case whose impl is NoneType" in report
    )


def test_user_and_plugin_text_is_never_read_as_console_markup(tmp_path):
    env = fake_plugin(
        tmp_path / "site", "af-markup", "af_markup_mod", "raise RuntimeError('[/boom] [bold]x')\n"
    )
    proc = afc("plugins", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "RuntimeError: [/boom] [bold]x" in proc.stdout and "RuntimeError: [/boom] [bold]x" in proc.stderr
    data = json.loads(graph_json("named"))
    data["name"] = "g[/x][red]"
    path = tmp_path / "markup.json"
    path.write_text(json.dumps(data))
    proc = afc("explain", str(path), "--shape", "a0=2,a1=4,b0=1,b1=2")
    if proc.returncode == 2:  # the validator may refuse such a graph name: then with one line
        user_error(proc, "")
    else:
        assert proc.returncode == 0 and proc.stdout.startswith("g[/x][red] at a0=2"), proc.stderr


def test_control_characters_in_user_text_stay_on_one_escaped_line(tmp_path):
    path = tmp_path / "evil\x1b[2J\nname.json"
    path.write_text("{")
    proc = afc("compile", str(path), "-o", str(tmp_path / "out"))
    user_error(proc, "evil\\x1b[2J\\nname.json")
    assert "\x1b" not in proc.stderr
    proc = afc("explain", SEED, "--shape", "s0=1,bad\u202ename=2")
    user_error(proc, "bad\\u202ename")
