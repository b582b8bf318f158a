"""tools/artifact_hashes.py: one hash per generated file, the same in a fresh process, and a change found."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "artifact_hashes.py"


def load_tool():
    spec = importlib.util.spec_from_file_location("artifact_hashes", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_template_choice_of_a_sample_is_hashed_and_a_changed_file_is_reported(tmp_path):
    tool = load_tool()
    hashes = tool.artifact_hashes(frozenset({"gather_rows"}))
    keys = sorted(hashes)
    for template in ("default", "simd", "sklike"):
        assert any(k.startswith(f"gather_rows/{template}/") for k in keys), keys
    assert all(len(v) == 64 or v.startswith("error ") for v in hashes.values())
    before = tmp_path / "before.json"
    before.write_text(json.dumps(hashes))
    # a fresh process with another hash seed writes the same hashes
    env = {**os.environ, "PYTHONHASHSEED": "7"}
    after = tmp_path / "after.json"
    made = subprocess.run(
        [sys.executable, str(TOOL), "hash", str(after), "--only", "gather_rows"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    same = subprocess.run(
        [sys.executable, str(TOOL), "compare", str(before), str(after)], capture_output=True, text=True
    )
    assert same.returncode == 0 and same.stdout.strip().endswith(f"0 of {len(hashes)} differ"), same.stdout
    changed = dict(hashes)
    first = keys[0]
    changed[first] = "0" * 64
    del changed[keys[-1]]
    assert tool.differences(hashes, changed) == sorted({first, keys[-1]})
    other = tmp_path / "changed.json"
    other.write_text(json.dumps(changed))
    found = subprocess.run(
        [sys.executable, str(TOOL), "compare", str(before), str(other)], capture_output=True, text=True
    )
    assert found.returncode == 1 and first in found.stdout.splitlines(), found.stdout
