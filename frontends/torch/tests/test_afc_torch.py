"""``afc torch FILE.py``: the command comes from af-torch (hook af_register_commands) and prints the region table."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from af_core import cli  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.twin]

MODEL_FILE = """\
from af_torch.models import VocabParallelShard
model = VocabParallelShard()
example_inputs = model.example_inputs(4)
"""


def test_afc_torch_prints_the_region_table(tmp_path, capsys):
    path = tmp_path / "shard.py"
    path.write_text(MODEL_FILE)
    assert cli.main(["torch", str(path)]) == 0
    out = capsys.readouterr().out
    assert "region VocabParallelShard_embedding: aten.sub -> aten.where -> aten.embedding -> aten.where" in out
    assert "lt (aten.lt): no fused form next to a gather" in out
    assert "fused result equals eager: yes" in out
    assert "twin-counted GM traffic" in out and "artifacts " in out


def test_afc_torch_refuses_a_file_without_model_in_one_line(tmp_path, capsys):
    path = tmp_path / "empty.py"
    path.write_text("x = 1\n")
    assert cli.main(["torch", str(path)]) == cli.EXIT_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "must define 'model' and 'example_inputs'" in err[0]
