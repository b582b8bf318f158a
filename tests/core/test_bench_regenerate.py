"""benchmarks/regenerate.py: BENCHMARKS.md is the head plus one section per step, each under its command.

The steps themselves are the benchmarks (the bench env runs them); here fake commands stand in, so what is
checked is the document: the order, the facts each section states, that ``--only`` keeps the other
sections byte for byte, that a failed step writes nothing, and that a step the machine cannot run says so.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"


def _load():
    spec = importlib.util.spec_from_file_location("af_bench_regenerate", BENCH / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


regen = _load()


def _fake(stdout: str, code: int = 0):
    def runner(argv, **kw):
        return subprocess.CompletedProcess(argv, code, stdout=stdout, stderr="boom" if code else "")

    return runner


def test_every_step_names_a_script_of_the_tree_and_keys_are_unique():
    keys = [s.key for s in regen.STEPS]
    assert len(keys) == len(set(keys))
    for step in regen.STEPS:
        scripts = [a for a in step.argv if a.endswith(".py")]
        assert all((ROOT / s).is_file() for s in scripts), step.key


def test_every_run_benchmarks_step_is_a_section_it_has():
    text = (BENCH / "run_benchmarks.py").read_text(encoding="utf-8")
    table = text[text.index("SECTION_TABLE:") : text.index("#: Sections run only")]
    sections = set(re.findall(r'^    "([a-z0-9]+)": ', table, re.M))
    asked = {s.argv[-1] for s in regen.STEPS if "benchmarks/run_benchmarks.py" in s.argv}
    assert asked and asked <= sections
    extra = {"optlevel"}  # the sweep that chose the twin's optimisation level runs only when named
    assert sections - extra <= asked


def test_a_section_states_the_command_time_duration_and_load():
    step = regen.Step("k", "A title", ("python", "benchmarks/x.py", "--flag"))
    ran = regen.run_step(step, {}, runner=_fake("| a |\n|---|\n| 1 |\n"))
    text = regen.section(step, ran, cores=2)
    assert text.startswith("<!-- step: k -->\n## A title\n\n`python benchmarks/x.py --flag` · ")
    assert re.search(r"· \d+ s · 1-minute load average [\d.]+ before, [\d.]+ after \(2 cores\)", text)
    assert text.endswith("| a |\n|---|\n| 1 |\n<!-- end: k -->\n")


def test_a_failed_step_names_itself_and_its_command():
    step = regen.Step("k", "T", ("python", "benchmarks/x.py"))
    with pytest.raises(regen.StepFailed, match=r"step 'k' failed \(exit 3\): python benchmarks/x.py\nboom"):
        regen.run_step(step, {}, runner=_fake("", code=3))


def test_a_torch_step_without_a_torch_python_says_what_to_install():
    step = regen.Step("t", "Torch", ("python", "benchmarks/torch_models.py"), needs="torch")
    ran = regen.run_step(step, {}, runner=_fake("never"))
    assert ran.body.startswith("Not run: no Python with torch. Set AF_BENCH_TORCH_PYTHON")


def test_the_torch_step_runs_with_the_named_interpreter():
    seen = []

    def runner(argv, **kw):
        seen.append((argv, kw["env"]["PYTHONPATH"]))
        return subprocess.CompletedProcess(argv, 0, stdout="| row |", stderr="")

    step = regen.Step("t", "Torch", ("python", "benchmarks/torch_models.py"), needs="torch")
    regen.run_step(
        step, {"AF_BENCH_TORCH_PYTHON": "/opt/torch/bin/python", "PYTHONPATH": "/mine"}, runner=runner
    )
    ((argv, path),) = seen
    assert argv == ["/opt/torch/bin/python", "benchmarks/torch_models.py"]
    # the checkout's sources first (the torch env holds copies installed earlier), the caller's path after
    parts = path.split(os.pathsep)
    assert parts[0] == str(ROOT) and str(ROOT / "plugins" / "v35_regbase") in parts and parts[-1] == "/mine"


def test_an_optional_flag_is_passed_and_shown_by_its_variable_not_its_value():
    seen = []

    def runner(argv, **kw):
        seen.append(argv)
        return subprocess.CompletedProcess(argv, 0, stdout="| row |", stderr="")

    step = regen.Step("m", "Models", ("python", "m.py"), optional=(("AF_BENCH_DLRM", "--dlrm"),))
    ran = regen.run_step(step, {"AF_BENCH_DLRM": "/home/someone/dlrm"}, runner=runner)
    assert seen[0][1:] == ["m.py", "--dlrm", "/home/someone/dlrm"]
    assert ran.command == "python m.py --dlrm $AF_BENCH_DLRM" and "someone" not in regen.section(step, ran)
    regen.run_step(step, {}, runner=runner)
    assert seen[1][1:] == ["m.py"]


def test_pytest_benchmark_json_becomes_a_table_in_ms():
    data = {
        "benchmarks": [{"name": "test_chain[8]", "stats": {"min": 0.0123, "median": 0.01456, "rounds": 21}}]
    }
    assert regen.render_pytest_benchmark(data).splitlines()[-1] == "| test_chain[8] | 12.3 | 14.6 | 21 |"


def test_compose_orders_sections_by_steps_and_marks_the_missing():
    steps = (regen.Step("a", "A", ("python", "a.py")), regen.Step("b", "B", ("python", "b.py")))
    b = "<!-- step: b -->\n## B\n\nbody b\n<!-- end: b -->\n"
    doc = regen.compose("# Head\n", {"b": b, "zz": "<!-- step: zz -->\nold\n<!-- end: zz -->\n"}, steps)
    assert doc.index("## A") < doc.index("## B")
    assert "Not run yet: `python a.py`." in doc and b in doc and "zz" not in doc


def test_only_reruns_the_named_steps_and_keeps_the_rest_byte_for_byte(tmp_path, monkeypatch):
    out = tmp_path / "BENCHMARKS.md"
    calls = []

    def fake_run(step, env):
        calls.append(step.key)
        return regen.Ran(
            f"body of {step.key} #{len(calls)}", step.shown(), "2026-01-01 00:00 UTC", 1.0, 0.5, 0.5
        )

    monkeypatch.setattr(regen, "run_step", fake_run)
    assert regen.main(["-o", str(out)]) == 0
    first = out.read_text(encoding="utf-8")
    assert calls == [s.key for s in regen.STEPS]
    assert first.startswith(regen.HEAD.read_text(encoding="utf-8").rstrip())
    calls.clear()
    assert regen.main(["-o", str(out), "--only", "startup"]) == 0
    second = out.read_text(encoding="utf-8")
    assert calls == ["startup"]
    before, after = regen.sections_of(first), regen.sections_of(second)
    assert before.keys() == after.keys()
    assert [k for k in before if before[k] != after[k]] == ["startup"]


def test_a_failed_step_keeps_its_old_section_and_the_steps_before_it_are_written(tmp_path, monkeypatch):
    out = tmp_path / "BENCHMARKS.md"
    keys = [s.key for s in regen.STEPS]
    old = {k: f"<!-- step: {k} -->\nold {k}\n<!-- end: {k} -->\n" for k in keys}
    out.write_text(regen.compose("# Head\n", old), encoding="utf-8")
    broken = keys[2]

    def run(step, env):
        if step.key == broken:
            raise regen.StepFailed(f"step '{step.key}' failed (exit 1): x")
        return regen.Ran(f"new {step.key}", step.shown(), "2026-01-01 00:00 UTC", 1.0, 0.5, 0.5)

    monkeypatch.setattr(regen, "run_step", run)
    assert regen.main(["-o", str(out)]) == 1
    after = regen.sections_of(out.read_text(encoding="utf-8"))
    assert [k for k in keys if "new " in after[k]] == keys[:2]
    assert all(after[k] == old[k] for k in keys[2:])
    assert [p.name for p in tmp_path.iterdir()] == ["BENCHMARKS.md"]


def test_an_unknown_step_is_refused_naming_the_steps(capsys):
    with pytest.raises(SystemExit):
        regen.main(["--only", "nope"])
    assert "unknown step(s) ['nope']" in capsys.readouterr().err
