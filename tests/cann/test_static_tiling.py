"""Static shapes: the tiling solved when the kernel is generated and baked into it (seed 004 §2).

For graphs without size symbols (the corpus workloads), ``Codegen(static=True)``
holds the chosen case only, with its tiling data as constants. It must be the
case the run-time tiling (the generated C++ ``AutofuseTiling``, run by the
twin) picks for the same platform, compute the reference's result on the
twin, pass the official AscendC check, and its package's tiling function
must hand the runtime the same key, block dim and workspace without calling
the tiling.
"""

from __future__ import annotations

import os

import pytest

from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.builders import GraphBuilder, index_select
from af_core.codegen.codegen import Codegen
from af_core.errors import UsageError
from af_core.package import build_package
from af_core.platform import Platform, current_platform
from af_core.tiling.solve import solve_scheduled
from af_core.twin import TwinSession
from af_core.workloads import load_workloads

pytestmark = pytest.mark.twin

#: (workload, core count): families the default policy sends to different templates, small enough for a
#: twin run each, and a smaller core count where the pick and the block dim differ
RUNS = [
    ("dlrm_kaggle_d16", 48),
    ("moe_unpermute_dsv3_k8", 48),
    ("gather_last_axis_negative", 48),
    ("dlrm_kaggle_d16", 8),
    ("dsv3_gate_gather_sum", 8),
]
WORKLOADS = sorted({name for name, _ in RUNS})


def _workload(name: str):
    found = [w for w in load_workloads() if w.name == name]
    if not found:
        pytest.skip(f"no corpus workload {name}")
    return found[0]


@pytest.mark.parametrize("name, cores", RUNS)
def test_the_baked_case_is_the_run_time_pick_and_computes_the_reference(name, cores):
    w = _workload(name)
    plat = Platform(current_platform().soc, cores, current_platform().ub_size)
    options = AutofuserOptions(platform=plat)
    scheduled = Autofuser(options).schedule(w.graph)
    static = Codegen(static=True).generate(scheduled)
    baked = static.static
    assert baked is not None and (baked.core_num, baked.ub_size) == (cores, plat.ub_size)
    solved = solve_scheduled(scheduled, {}, cores, plat.ub_size)
    assert baked.tiling_key == solved.tiling_key and baked.block_dim == solved.block_dim
    assert list(baked.values) == [solved.struct[f] for f in static.struct_fields]
    assert "GET_TILING_DATA" not in static.kernel and "TILING_KEY_IS" not in static.kernel
    session = TwinSession(w.graph, options, kernel=static.kernel)
    run = session.check(core_num=cores)
    assert run.ok, run.describe()
    assert run.twin.tiling_key == baked.tiling_key  # the C++ run-time tiling picked the baked case


def test_the_static_kernel_passes_the_official_check():
    from af_core.ascendc import check_kernels
    from af_core.ascendc.gate import skip_reason

    if skip_reason() is not None or not os.environ.get("AF_ASCENDC_SRC"):
        pytest.skip("no official AscendC headers")
    results = []
    for name in WORKLOADS[:3]:
        generated = Codegen(static=True).generate(Autofuser().schedule(_workload(name).graph))
        results.append((generated.kernel, generated.kernel_headers()))
    verdicts = check_kernels([k for k, _ in results], headers=[h for _, h in results])
    assert all(v.ok for v in verdicts), [v.describe() for v in verdicts if not v.ok]


def test_a_graph_with_sizes_is_refused_naming_them():
    g = GraphBuilder("dynamic")
    x = g.data("x", ["N", "H"], "float32")
    g.output(index_select(x, 0, g.data("idx", ["K"], "int64")), "y")
    scheduled = Autofuser().schedule(g.build())
    with pytest.raises(UsageError, match=r"static tiling needs every size known .* size\(s\) N, H, K"):
        Codegen(static=True).generate(scheduled)
    with pytest.raises(UsageError):
        build_package(scheduled, static=True)


def test_the_static_package_hands_the_baked_tiling_to_the_runtime_and_refuses_another_platform(
    tmp_path, host_checker
):
    import subprocess

    from test_tiling_func import FAKE, SYSTEM_WORKSPACE, _build, _line

    w = _workload(WORKLOADS[0])
    scheduled = Autofuser().schedule(w.graph)
    package = build_package(scheduled, static=True)
    assert host_checker.check(package.host_check_files()).ok
    tiling = package.files["op_host"][f"{package.names.kernel}_tiling.cpp"]
    assert "AutofuseTiling(t," not in tiling  # no tiling call per launch
    exe = _build(tmp_path, package)
    result = Codegen(package.names.kernel, static=True).generate(scheduled)
    shapes = [[int(d) for d in io.shape] for io in result.inputs]
    fields = len(result.struct_fields)
    plat = scheduled.platform
    baked = result.static
    solved = solve_scheduled(scheduled, {}, plat.core_num, plat.ub_size)
    dcache = solved.chosen().resources.get("dcache_bytes") or 0
    for core_num, expect_ok in ((plat.core_num, True), (plat.core_num // 2, False)):
        stdin = f"{core_num} {plat.ub_size} {SYSTEM_WORKSPACE} {fields}\n{_line(shapes)}\n"
        run = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, timeout=120, check=True)
        words = [int(x) for x in run.stdout.split()]
        if not expect_ok:
            assert words[0] == 1  # baked for another core count: refused
            continue
        assert words[:5] == [
            0,
            baked.tiling_key,
            baked.block_dim,
            baked.workspace_size + SYSTEM_WORKSPACE,
            plat.ub_size - dcache,
        ]
        assert words[5:] == list(baked.values)
    assert FAKE.is_dir()
