"""A bounded fuzz of hostile graph files through ``afc compile``.

Random mutations of a valid graph's JSON (wrong types, deleted keys,
duplicated nodes, huge and negative numbers, deep nesting, odd strings,
path-like names) must end in exit 0, 1 or 2, never print a traceback
without ``--debug`` and never write a file outside ``-o``. The mutations are
seeded, so a failure names the seed that reproduces it.
"""

from __future__ import annotations

import copy
import json
import os
import random
import signal
import tempfile
from pathlib import Path

import pytest

from af_core.builders import GraphBuilder, gather
from af_core.cli import main
from af_core.ir.serialize import graph_to_dict

pytestmark = pytest.mark.twin
SEEDS = 48  # bounded: a few seconds in process

#: created only if some size text or name were ever run as code
SENTINEL = Path(tempfile.gettempdir()) / f"af-fuzz-sentinel-{os.getpid()}"
CODE = [
    f"a0+(len)((repr)((exec)('open({str(SENTINEL)!r}, \\'w\\')')))*0",
    "9**9**9",
    f"__import__('os').system('touch {SENTINEL}')",
    f"(open)({str(SENTINEL)!r}, 'w')",
    '*/ static int x = std::system("touch ' + str(SENTINEL) + '"); /*',
]
ODD_VALUES = CODE + [
    None,
    True,
    False,
    -1,
    0,
    1 << 63,
    -(1 << 70),
    10**30,
    1.5,
    -0.0,
    float("nan"),
    float("inf"),
    "",
    "x" * 5000,
    "../../outside",
    "/abs/path",
    "a\x00b",
    "line\nbreak",
    "\u202eevil",
    "*/ int x; /*",
    "é",
    "[/x][bold]",
    [],
    {},
    [[[[[[[[[[1]]]]]]]]]],
    {"a": {"b": {"c": {}}}},
    "int64_t",
    "1x",
]


def seed_graph() -> dict:
    g = GraphBuilder("fuzzed")
    x = g.data("x", ["a0", "a1"], "float16")
    i = g.data("index", ["b0", "b1"], "int32")
    y = g.op("Relu", gather(x, 1, i))
    g.output(g.op("Muls", y, value=0.5), "y")
    return graph_to_dict(g.build())


def _paths(tree, prefix=()):
    yield prefix
    if isinstance(tree, dict):
        for k in sorted(tree):
            yield from _paths(tree[k], (*prefix, k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from _paths(v, (*prefix, i))


def _get(tree, path):
    for p in path:
        tree = tree[p]
    return tree


def mutate(tree: dict, rng: random.Random) -> dict:
    tree = copy.deepcopy(tree)
    for _ in range(rng.randint(1, 3)):
        paths = [p for p in _paths(tree) if p]
        path = rng.choice(paths)
        parent, key = _get(tree, path[:-1]), path[-1]
        action = rng.random()
        if action < 0.45:
            parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))
        elif action < 0.6:
            del parent[key]
        elif action < 0.7 and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))  # duplicate names, duplicate nodes
        elif action < 0.8:
            other = _get(tree, rng.choice(paths))
            parent[key] = copy.deepcopy(other)
        elif action < 0.9:
            parent[key] = _nested(rng.choice([10, 40, 200]))
        else:
            value = parent[key]
            parent[key] = (
                -value if isinstance(value, int) and not isinstance(value, bool) else rng.randint(-9, 1 << 40)
            )
    return tree


def _nested(depth: int):
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("batch", range(4))
def test_hostile_graph_files_fail_cleanly(tmp_path, capsys, batch):
    base = seed_graph()
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for seed in range(batch * SEEDS // 4, (batch + 1) * SEEDS // 4):
            rng = random.Random(seed)
            work = tmp_path / f"s{seed}"
            work.mkdir()
            graph = work / "g.json"
            graph.write_text(json.dumps(mutate(base, rng), allow_nan=True))
            out = work / "out"
            signal.alarm(120)
            try:
                code = main(["compile", str(graph), "-o", str(out)])
            except _Timeout:
                pytest.fail(f"seed {seed}: afc compile did not finish")
            finally:
                signal.alarm(0)
            captured = capsys.readouterr()
            assert code in (0, 1, 2), (seed, code, captured.err)
            assert "Traceback" not in captured.err, (seed, captured.err)
            if code == 2:
                assert len(captured.err.strip().splitlines()) == 1, (seed, captured.err)
            outside = {f for f in _files(work) if f != "g.json" and not f.startswith("out")}
            assert not outside, (seed, outside)
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert not SENTINEL.exists(), "a graph file ran code"


def test_the_unmutated_graph_compiles(tmp_path, capsys):
    graph = tmp_path / "g.json"
    graph.write_text(json.dumps(seed_graph()))
    assert main(["compile", str(graph), "-o", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "kernel.cpp").exists() and capsys.readouterr().err == ""


def test_an_axis_sized_by_an_undeclared_size_is_a_user_error(tmp_path, capsys):
    data = seed_graph()
    data["sizes"] = [s for s in data["sizes"] if s["name"] != "a0"]
    graph = tmp_path / "g.json"
    graph.write_text(json.dumps(data))
    assert main(["compile", str(graph), "-o", str(tmp_path / "out")]) == 2


def test_code_in_any_text_of_a_graph_file_never_runs(tmp_path, capsys):
    """Each payload in every text field of the graph (names, size texts, dtypes, attributes) in turn."""
    base = seed_graph()
    texts = [p for p in _paths(base) if p and isinstance(_get(base, p), str)]
    assert len(texts) > 10
    for n, path in enumerate(texts):
        for payload in CODE:
            tree = copy.deepcopy(base)
            _get(tree, path[:-1])[path[-1]] = payload
            graph = tmp_path / f"g{n}.json"
            graph.write_text(json.dumps(tree))
            code = main(["compile", str(graph), "-o", str(tmp_path / f"out{n}")])
            err = capsys.readouterr().err
            assert code in (0, 2) and "Traceback" not in err, (path, payload, code, err)
    assert not SENTINEL.exists(), "a graph file ran code"
