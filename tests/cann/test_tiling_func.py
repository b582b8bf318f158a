"""The generated TilingFunc, run on a fake TilingContext, against AutofuseTiling's Python mirror.

``op_host/<kernel>_tiling.cpp`` (and the ``autofuse_tiling.cpp`` it calls) is
compiled with g++ against ``fake_gert/``: the CANN host types it uses, built
from test shapes instead of the runtime's kernel context (the real headers
type-check the same file in ``test_package.py``). For 100+ input shapes per
graph it must give what ``af_core.tiling.solve_scheduled`` gives for the sizes
those shapes carry: the tiling data word for word, the tiling key, the block
dim, the workspace plus the system workspace, and a dynamic UB size of UB
minus the chosen case's data cache; shapes whose other dimensions disagree
with the bound sizes, or of the wrong rank, must fail.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
import sympy

from af_core import samples, toolchain
from af_core.autofuser import Autofuser
from af_core.codegen.codegen import Codegen
from af_core.errors import AfError
from af_core.package import build_package
from af_core.platform import reset_platform
from af_core.tiling.solve import solve_scheduled

FAKE = Path(__file__).resolve().parent / "fake_gert"
SYSTEM_WORKSPACE = 16 * 1024 * 1024
VALUES = (1, 2, 3, 5, 8, 16, 31, 64, 100, 128, 257, 1000, 4096, 40000)


def _build(tmp_path: Path, package, mutate=None) -> Path:
    for name, text in package.host_check_files().items():
        (tmp_path / name).write_text(mutate(name, text) if mutate else text)
    sources = [tmp_path / f"{package.names.kernel}_tiling.cpp", tmp_path / "autofuse_tiling.cpp"]
    exe = tmp_path / "tiling_func"
    toolchain.run(
        [
            toolchain.compiler(),
            "-std=c++17",
            "-O1",
            "-w",
            f"-I{FAKE}",
            f"-I{tmp_path}",
            *map(str, sources),
            str(FAKE / "af_fake_main.cpp"),
            "-o",
            str(exe),
        ],
        what="the fake TilingContext harness",
        timeout=300,
    )
    return exe


def _shapes(result, env: dict[str, int]) -> list[list[int]]:
    """Each input's dimensions for the size values ``env`` (its shape expressions evaluated)."""
    out = []
    for io in result.inputs:
        dims = []
        for expr in io.shape:
            expr = sympy.sympify(expr)
            dims.append(int(expr.xreplace({s: sympy.Integer(env[s.name]) for s in expr.free_symbols})))
        out.append(dims)
    return out


def _line(shapes: list[list[int]]) -> str:
    return " ".join([str(len(shapes)), *(" ".join(map(str, [len(s), *s])) for s in shapes)])


GRAPHS = [s.name for s in samples.installed_samples()]


@pytest.mark.parametrize("name", GRAPHS)
def test_the_tiling_function_matches_autofuse_tiling_on_100_shapes(name, tmp_path):
    compared, calls, mismatches = _differential(name, tmp_path)
    print(f"{name}: {compared} of {calls} calls compared")
    assert mismatches == []
    assert compared >= 50, f"only {compared} of {calls} shapes had a case that fits"


@pytest.mark.parametrize(
    "old, new",
    [
        ("+ static_cast<size_t>(info->system_workspace)", ""),  # the system workspace forgotten
        ("ub_size - dcache", "ub_size"),  # the SIMT data cache not kept
        (
            "AutofuseTiling(V, D, B, t",
            "AutofuseTiling(V, B, D, t",
        ),  # sizes swapped
    ],
)
def test_the_differential_sees_a_wrong_tiling_function(old, new, tmp_path):
    def mutate(name: str, text: str) -> str:
        return text.replace(old, new) if name.endswith("_tiling.cpp") and old in text else text

    _compared, _calls, mismatches = _differential("embedding_post", tmp_path, mutate, require=old)
    assert mismatches


def _differential(name: str, tmp_path: Path, mutate=None, require: str | None = None):
    """(calls compared, calls made, mismatching calls) of the generated tiling function on ``name``."""
    try:
        fuser = Autofuser()
        scheduled = fuser.schedule(samples.lookup(name).build())
        platform = scheduled.platform
    finally:
        reset_platform()
    package = build_package(scheduled)
    result = Codegen(package.names.kernel).generate(scheduled)
    if require is not None:
        assert require in package.files["op_host"][f"{package.names.kernel}_tiling.cpp"], require
    exe = _build(tmp_path, package, mutate)
    rng = random.Random(name)
    size_names = list(result.size_names)
    calls: list[tuple[str, dict | None]] = []
    bases = [scheduled.normalized.size_env(shape) for shape in samples.lookup(name).shapes]
    for _ in range(110):
        # a sample shape with the sizes of one or two values moved together (relations such as
        # "index rows == table rows" hold for sizes that were equal), or all sizes drawn at random
        env = dict(rng.choice(bases))
        for _ in range(rng.choice((0, 1, 2))):
            old, new = rng.choice(sorted(set(env.values()))), rng.choice(VALUES)
            env = {k: (new if v == old else v) for k, v in env.items()}
        if rng.random() < 0.1:
            env = {s: rng.choice(VALUES) for s in size_names}
        shapes = _shapes(result, env)
        calls.append((_line(shapes), env))
        checked = package.sizes.checks
        if checked and rng.random() < 0.3:  # a dimension that disagrees with the bound sizes
            c = rng.choice(checked)
            shapes[c.input_index][c.dim] += 1
            calls.append((_line(shapes), None))
    if result.inputs:  # a rank other than the OpDef's
        wrong = _shapes(result, {s: 4 for s in size_names})
        wrong[0] = [*wrong[0], 1]
        calls.append((_line(wrong), None))
    fields = len(result.struct_fields)
    stdin = f"{platform.core_num} {platform.ub_size} {SYSTEM_WORKSPACE} {fields + 4}\n"
    stdin += "\n".join(line for line, _ in calls) + "\n"
    run = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == len(calls)
    compared, mismatches = 0, []
    for (shape_line, env), out in zip(calls, lines):
        words = [int(w) for w in out.split()]
        rc = words[0]
        if env is None:
            if rc != 1:  # disagreeing dimension or rank: the tiling function must refuse
                mismatches.append((shape_line, "accepted"))
            continue
        try:
            expected = solve_scheduled(scheduled, env, platform.core_num, platform.ub_size)
        except AfError:
            if rc != 1:
                mismatches.append((shape_line, "accepted sizes AutofuseTiling refuses"))
            continue
        dcache = expected.chosen().resources.get("dcache_bytes") or 0
        want = [
            0,
            expected.tiling_key,
            expected.block_dim,
            expected.workspace_size + SYSTEM_WORKSPACE,
            platform.ub_size - dcache,
            *(expected.struct[f] for f in result.struct_fields),
            *([-1] * 4),  # nothing written past the struct
        ]
        if words != want:
            mismatches.append((shape_line, words, want))
        compared += 1
    return compared, len(calls), mismatches
