"""One size contract: every size ``--shape`` takes (0 .. 2^63-1) runs or is refused naming the size.

``afc run`` of every size of every sample graph at 0, 1, 2^31 and 2^63-1 (the other sizes at the
sample's smallest shape) exits 0 with an output matching the reference, or 2 with one line naming
the size and its value: never 3, the internal-error path. Sizes of 0 that leave every output empty
run without launching a kernel.
"""

from __future__ import annotations

import numpy as np
import pytest

from af_core.builders import GraphBuilder, index_select
from af_core.cli import main
from af_core.errors import AscirError, SizeError, TilingError
from af_core.inputs import make_inputs
from af_core.ir.serialize import to_json
from af_core.samples import installed_samples, lookup
from af_core.tiling.solve import solve_scheduled
from af_core.twin import TwinSession, TwinTilingError

pytestmark = pytest.mark.twin
VALUES = (0, 1, 1 << 31, (1 << 63) - 1)
SAMPLES = [s.name for s in installed_samples()]


def smallest(sample) -> dict[str, int]:
    return min(sample.shapes, key=lambda shape: sum(shape.values()))


@pytest.mark.parametrize("name", SAMPLES)
def test_every_size_of_a_sample_runs_or_is_refused_naming_it(name, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("AF_MAX_MEMORY", "1G")  # the same refusals on every machine
    sample = lookup(name)
    graph = tmp_path / f"{name}.json"
    graph.write_text(to_json(sample.build()))
    base = smallest(sample)
    outcomes = {}
    for size in base:
        for value in VALUES:
            shape = ",".join(f"{k}={value if k == size else v}" for k, v in base.items())
            code = main(["run", str(graph), "--shape", shape])
            out, err = capsys.readouterr()
            where = f"{name} {size}={value}: exit {code}: {err}"
            assert code in (0, 2), where
            if code == 0:
                assert "match" in out and "MISMATCH" not in out and err == "", where
            else:
                lines = err.strip().splitlines()
                assert len(lines) == 1 and lines[0].startswith("afc: error: "), where
                assert f"{size}={value}" in lines[0], where
            outcomes[size, value] = code
    assert 0 in outcomes.values() and 2 in outcomes.values()
    assert all(outcomes[size, 1 << 31] == 2 for size in base)  # over the 1 GiB budget
    assert all(outcomes[size, (1 << 63) - 1] == 2 for size in base)  # bytes beyond int64


def _session(name: str) -> TwinSession:
    return TwinSession(lookup(name).build(), defer_build=True)


def test_an_index_larger_than_its_input_names_both_sizes():
    """Used to reach the twin's host tiling: "host tiling returned 1 (invalid sizes)", no size named."""
    session = _session("seed_minimal")
    sizes = {**smallest(lookup("seed_minimal")), "s0": 1}
    with pytest.raises(SizeError, match=r"^sizes s0=1, s4=2: index size s4 exceeds input size s0 on axis 0"):
        session.check(sizes)
    inputs = make_inputs(session.graph, sizes, info=session.scheduled.info)
    with pytest.raises(TwinTilingError, match=r"returned 1 \(invalid sizes\) for sizes s0=1, s1=3, s2=10"):
        session.runner.run(session.build, inputs)  # the generated host tiling, asked anyway, names them too
    with pytest.raises(
        TilingError, match="exceeds input size s0 on axis 0 of 'indirect_load' at sizes s0=1, s4=2"
    ):
        solve_scheduled(session.scheduled, sizes)  # and so does its Python twin


def test_a_gather_from_an_empty_axis_is_refused_naming_the_size():
    """Used to fail in numpy's random draw with "high <= 0"."""
    session = _session("embedding_post")
    with pytest.raises(
        SizeError, match=r"^size V=0: tensor 'weight' is empty while output 'y' would hold 28"
    ):
        session.check({"V": 0, "D": 4, "B": 7})
    session = _session("index_select_sum")
    with pytest.raises(
        SizeError, match=r"^size H=0: .* output 'y' would hold 200 elements"
    ):  # a sum over H=0
        session.check({"N": 500, "H": 0, "K": 200})


def test_sizes_whose_bytes_leave_int64_are_refused_naming_them():
    """Used to fail in numpy with "Maximum allowed dimension exceeded"."""
    session = _session("embedding_post")
    with pytest.raises(
        SizeError, match=r"^sizes V=9223372036854775807, D=4: tensor 'weight' would span \d+ bytes"
    ):
        session.inputs({"V": (1 << 63) - 1, "D": 4, "B": 7})


@pytest.mark.parametrize(
    "name,sizes",
    [
        ("embedding_post", {"V": 50, "D": 4, "B": 0}),
        ("embedding_post", {"V": 50, "D": 0, "B": 7}),
        ("embedding_post", {"V": 0, "D": 4, "B": 0}),  # an empty table and no index
        ("gather_rows", {"B": 3, "L": 5, "D": 3, "K": 0}),
        ("index_select_sum", {"N": 500, "H": 96, "K": 0}),
        ("seed_minimal", {"s0": 2, "s1": 3, "s2": 0, "s3": 8, "s4": 0, "s5": 3, "s6": 6, "s7": 8}),
    ],
)
def test_a_size_of_0_that_empties_every_output_runs_without_a_launch(name, sizes):
    session = _session(name)
    run = session.check(sizes)
    assert run.ok and not run.twin.launched and run.template == "none", run.describe()
    assert session._build is None  # nothing to launch, nothing built
    for output, expected in run.reference.items():
        assert run.twin.outputs[output].size == 0 and run.twin.outputs[output].shape == expected.shape
    assert "no kernel launched" in run.describe()


def test_sizes_outside_the_range_or_a_declared_maximum_are_refused():
    g = GraphBuilder("bounded")
    x = g.data("x", [g.size("N", max_value=1000), "H"], "float32")
    idx = g.data("idx", ["K"], "int64")
    g.output(g.reduce("Sum", index_select(x, 0, idx), [1]), "y")
    session = TwinSession(g.build(), defer_build=True)
    with pytest.raises(SizeError, match=r"^size N=1001 exceeds 1000, the maximum the graph declares for it"):
        session.check({"N": 1001, "H": 4, "K": 3})
    for bad in (-1, 1 << 63):
        with pytest.raises(SizeError, match=rf"^size H={bad} is outside 0 \.\. 2\^63-1"):
            session.check({"N": 10, "H": bad, "K": 3})
    with pytest.raises(SizeError, match="^size K must be an integer, got '3'"):
        session.check({"N": 10, "H": 4, "K": "3"})
    with pytest.raises(SizeError, match="^no value for size K"):
        session.check({"N": 10, "H": 4})
    assert session.check({"N": 10, "H": 4, "K": np.int64(3)}).ok


def test_an_index_out_of_range_is_refused_by_the_reference_before_the_twin(tmp_path, capsys):
    """A user's index past the input, where the graph checks no bounds: exit 2 naming the values, not
    the twin's sanitizer report as an internal error (exit 3)."""
    g = GraphBuilder("rows")
    x = g.data("x", ["N", "H"], "float32")
    idx = g.data("idx", ["K"], "int64")
    g.output(g.reduce("Sum", index_select(x, 0, idx), [1]), "y")
    graph = tmp_path / "rows.json"
    graph.write_text(to_json(g.build()))
    inputs = tmp_path / "in"
    inputs.mkdir()
    np.save(inputs / "x.npy", np.ones((4, 8), np.float32))
    np.save(inputs / "idx.npy", np.repeat(np.array([[0], [3], [9]], np.int64), 8, axis=1))  # a row a position
    assert main(["run", str(graph), "--inputs", str(inputs)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "afc: error: node 'indirect_load' port 'x2': rule 'index-in-range': index values [9, 9"
    )
    session = TwinSession(g.build(), defer_build=True)
    wild = make_inputs(session.graph, {"N": 4, "H": 8, "K": 3}, out_of_range=1.0)
    with pytest.raises(AscirError, match="index-in-range"):
        session.check(inputs=wild)
    assert session._build is None
