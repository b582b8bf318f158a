"""docs/api.md is what tools/api_reference.py generates from the docstrings, and the generation is deterministic."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "api_reference.py"


def load_tool():
    spec = importlib.util.spec_from_file_location("api_reference", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_reference_is_up_to_date():
    tool = load_tool()
    assert (ROOT / "docs" / "api.md").read_text(encoding="utf-8") == tool.render(), (
        "docs/api.md is out of date: run python tools/api_reference.py"
    )


def test_every_public_name_of_the_listed_modules_is_in_it():
    tool = load_tool()
    text = tool.render()
    for name in tool.MODULES:
        module = importlib.import_module(name)
        assert f"## `{name}`" in text
        for public in tool._public_names(module):
            assert f"`{public}" in text, f"{name}.{public} is missing from the reference"


def test_same_text_whatever_the_hash_seed(tmp_path):
    outputs = []
    for seed in ("0", "123"):
        out = tmp_path / f"api{seed}.md"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, str(TOOL), "-o", str(out)], env=env, capture_output=True, text=True
        )
        assert proc.returncode == 1 and "rewritten" in proc.stderr  # a new file counts as out of date
        outputs.append(out.read_text(encoding="utf-8"))
    assert outputs[0] == outputs[1]
    check = subprocess.run(
        [sys.executable, str(TOOL), "--check", "-o", str(tmp_path / "api0.md")],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr


def test_check_reports_a_stale_file(tmp_path):
    stale = tmp_path / "api.md"
    stale.write_text("# API reference\n\nold text\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(TOOL), "--check", "-o", str(stale)], capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert "is out of date" in proc.stderr and "-old text" in proc.stderr
    assert stale.read_text(encoding="utf-8") == "# API reference\n\nold text\n"
