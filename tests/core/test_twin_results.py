"""The twin's run directory is checked before use: a missing, malformed or short result.json or out<i>.bin
is a TwinError naming the file and what is wrong, never raw decoder or errno text or a TypeError.

A fake executable stands in for the built harness, so no compiler runs."""

from __future__ import annotations

import json
import stat
import sys
import textwrap

import fake_backend
import pytest

from af_core.autofuser import Autofuser
from af_core.builders import GraphBuilder, gather
from af_core.errors import TwinError
from af_core.inputs import make_inputs
from af_core.twin.runner import TwinBuild, TwinRunner, TwinTilingError

SIZES = {"a0": 2, "a1": 4, "b0": 1, "b1": 3}
OUT_BYTES = 1 * 3 * 4  # the output is b0 x b1 float32


@pytest.fixture(scope="module")
def compiled():
    # the core's fake back end compiles it (the core alone has no template): only the generated tables
    # matter here, a fake executable stands in for the build
    with fake_backend.installed():
        g = GraphBuilder("g")
        x = g.data("x", ["a0", "a1"], "float32")
        i = g.data("index", ["b0", "b1"], "int32")
        g.output(gather(x, 1, i), "y")
        graph = g.build()
        fuser = Autofuser()
        return graph, fuser.generate(fuser.schedule(graph))


def good_report(result) -> dict:
    struct = {field: 0 for field in result.struct_fields}
    struct["block_dim"] = 1
    return {"status": "ok", "struct": struct, "counters": {"gm_read_bytes": 8, "stage_cores": [1]}}


def fake_harness(directory, body: str):
    """An executable that runs ``body`` with ``run`` the run directory (a pathlib.Path)."""
    path = directory / "harness"
    path.write_text(
        f"#!{sys.executable}\nimport json, os, pathlib, sys\nrun = pathlib.Path(sys.argv[1])\n"
        + textwrap.dedent(body)
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def run_fake(tmp_path, compiled, body: str):
    graph, result = compiled
    build = TwinBuild(fake_harness(tmp_path, body), tmp_path, "fake", result, True)
    return TwinRunner().run(build, make_inputs(graph, SIZES, seed=1), core_num=4)


def write_result(report) -> str:
    return f"(run / 'result.json').write_text(json.dumps({report!r}))\n"


def with_output(size: int = OUT_BYTES) -> str:
    return f"(run / 'out0.bin').write_bytes(bytes({size}))\n"


def test_good_files_are_read(tmp_path, compiled):
    report = good_report(compiled[1])
    run = run_fake(tmp_path, compiled, write_result(report) + with_output())
    assert run.struct == report["struct"] and run.counters == {"gm_read_bytes": 8}
    assert run.stage_cores == (1,) and run.outputs["y"].shape == (1, 3)


def test_a_tiling_refusal_is_read(tmp_path, compiled):
    with pytest.raises(TwinTilingError, match="host tiling returned 2"):
        run_fake(tmp_path, compiled, write_result({"status": "tiling", "code": 2}))


def broken_reports(result) -> dict[str, tuple[object, str]]:
    """name -> (result.json content, or a dict to dump, what the message says)."""
    good = good_report(result)
    struct = good["struct"]
    return {
        "missing": (None, "result.json is missing"),
        "empty": ("", "result.json is not JSON"),
        "truncated": (json.dumps(good)[:40], "result.json is not JSON"),
        "not-utf8": (b"\xff\xfe{}", "result.json is not UTF-8 text"),
        "a-list": ([1, 2], "result.json holds a JSON list, not an object"),
        "no-status": ({"struct": struct}, "has status None; expected 'ok' or 'tiling'"),
        "odd-status": ({**good, "status": "done"}, "has status 'done'"),
        "tiling-no-code": ({"status": "tiling"}, "status 'tiling' without an integer 'code'"),
        "tiling-text-code": ({"status": "tiling", "code": "2"}, "without an integer 'code' (got '2')"),
        "no-struct": ({"status": "ok", "counters": {}}, "has no 'struct' object (got NoneType)"),
        "struct-list": ({**good, "struct": [1]}, "has no 'struct' object (got list)"),
        "struct-lacks": (
            {**good, "struct": {k: v for k, v in struct.items() if k != "tiling_key"}},
            "'struct' lacks tiling data field(s) tiling_key",
        ),
        "struct-extra": ({**good, "struct": {**struct, "bogus": 1}}, "has field(s) 'bogus'"),
        "struct-text": (
            {**good, "struct": {**struct, "block_dim": "1"}},
            "field block_dim is '1', not an integer",
        ),
        "struct-float": ({**good, "struct": {**struct, "block_dim": 1.0}}, "field block_dim is 1.0"),
        "struct-bool": ({**good, "struct": {**struct, "block_dim": True}}, "field block_dim is True"),
        "no-counters": ({"status": "ok", "struct": struct}, "has no 'counters' object"),
        "counter-float": ({**good, "counters": {"gm_read_bytes": 1.5}}, "counter 'gm_read_bytes' is 1.5"),
        "counter-null": ({**good, "counters": {"gm_read_bytes": None}}, "counter 'gm_read_bytes' is None"),
        "stage-cores": ({**good, "counters": {"stage_cores": "3"}}, "'stage_cores' is '3', not a list"),
        "stage-cores-items": ({**good, "counters": {"stage_cores": [1, "x"]}}, "'stage_cores' is [1, 'x']"),
    }


CASES = sorted(
    broken_reports(type("R", (), {"struct_fields": ("tiling_key", "block_dim", "workspace_size")}))
)


@pytest.mark.parametrize("case", CASES)
def test_a_malformed_result_is_a_twin_error_naming_the_file(tmp_path, compiled, case):
    reports = broken_reports(compiled[1])
    assert sorted(reports) == sorted(CASES)
    content, said = reports[case]
    if content is None:
        body = with_output()
    elif isinstance(content, bytes):
        body = f"(run / 'result.json').write_bytes({content!r})\n" + with_output()
    elif isinstance(content, str):
        body = f"(run / 'result.json').write_text({content!r})\n" + with_output()
    else:
        body = write_result(content) + with_output()
    with pytest.raises(TwinError) as caught:
        run_fake(tmp_path, compiled, body)
    message = str(caught.value)
    assert message.startswith("twin produced no result for kernel '"), message
    assert said in message, message


@pytest.mark.parametrize(
    "body, said",
    [
        ("", "out0.bin is missing"),
        (with_output(OUT_BYTES - 1), f"out0.bin holds {OUT_BYTES - 1} bytes, expected {OUT_BYTES} bytes"),
        (with_output(0), f"out0.bin holds 0 bytes, expected {OUT_BYTES} bytes (3 element(s) of float32)"),
        (with_output(OUT_BYTES + 4), f"out0.bin holds {OUT_BYTES + 4} bytes, expected {OUT_BYTES}"),
        ("os.mkfifo(run / 'out0.bin')\n", "out0.bin is not a regular file"),
        ("(run / 'out0.bin').mkdir()\n", "out0.bin is not a regular file"),
        (
            "(run / 'real.bin').write_bytes(bytes(12))\nos.symlink(run / 'real.bin', run / 'out0.bin')\n",
            "out0.bin cannot be read",
        ),
    ],
    ids=["missing", "short", "empty", "long", "fifo", "directory", "symlink"],
)
def test_a_missing_or_wrong_sized_output_is_a_twin_error_naming_the_file(tmp_path, compiled, body, said):
    with pytest.raises(TwinError) as caught:
        run_fake(tmp_path, compiled, write_result(good_report(compiled[1])) + body)
    message = str(caught.value)
    assert message.startswith("twin produced no output 'y' for kernel '"), message
    assert said in message, message


def test_a_result_that_is_not_a_regular_file_is_refused_without_waiting(tmp_path, compiled):
    with pytest.raises(TwinError, match="result.json is not a regular file"):
        run_fake(tmp_path, compiled, "os.mkfifo(run / 'result.json')\n" + with_output())
