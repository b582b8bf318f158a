"""``afc package``: a CANN operator package whose host code type-checks against the CANN headers.

Every sample graph is packaged; its op_host sources pass g++ -fsyntax-only
against the metadef headers (all three OP_ADD forms), its kernel passes the
official AscendC check and is the kernel the twin runs. Wrong variants of the
generated files fail the same checks, and a graph whose sizes the tiling
function could not recover is refused naming the size.
"""

from __future__ import annotations

import json
import os

import pytest

from af_core import cli, samples
from af_core.autofuser import Autofuser
from af_core.builders import GraphBuilder, index_select
from af_core.ir.serialize import to_json
from af_core.package import PackageError, build_package, operator_names, snake_case
from af_core.platform import reset_platform

SAMPLES = [s.name for s in samples.installed_samples()]


def _package(name: str):
    try:
        fuser = Autofuser()
        return fuser, build_package(fuser.schedule(samples.lookup(name).build()))
    finally:
        reset_platform()  # the seed script sets a platform of its own


@pytest.fixture(scope="module", params=SAMPLES)
def packaged(request):
    return request.param, *_package(request.param)


@pytest.mark.parametrize(
    "define", [(), ("OP_TILING_LIB",), ("OP_PROTO_LIB",)], ids=["all", "tiling", "proto"]
)
def test_every_host_file_of_every_sample_type_checks_against_the_cann_headers(packaged, host_checker, define):
    _name, _fuser, package = packaged
    result = host_checker.check(package.host_check_files(), defines=define)
    assert result.ok, result.describe()
    assert {f.name for f in result.files} >= {
        f"{package.names.kernel}_tiling.cpp",
        f"{package.names.kernel}_infershape.cpp",
        f"{package.names.kernel}_def.cpp",
        "autofuse_tiling.cpp",
        "autofuse_infer_shape.cpp",
    }


def test_the_package_kernel_is_the_twin_kernel_and_passes_the_official_check(packaged):
    from af_core.ascendc import check_kernels
    from af_core.ascendc.gate import skip_reason

    name, fuser, package = packaged
    scheduled = fuser.schedule(samples.lookup(name).build())
    reset_platform()
    twin = fuser.generate(scheduled)
    kernel = package.files["op_kernel"][f"{package.names.kernel}.cpp"]
    assert twin.kernel_name == package.names.kernel  # the samples' names are ordinary: the same entry
    assert kernel == twin.kernel
    assert package.files["op_kernel"]["autofuse_tiling_data.h"] == twin.tiling_data
    assert package.files["op_host"]["autofuse_tiling.cpp"] == twin.tiling
    if skip_reason() is not None or not os.environ.get("AF_ASCENDC_SRC"):
        pytest.skip("no official AscendC headers")
    [verdict] = check_kernels([kernel], headers=[{"autofuse_tiling_data.h": twin.tiling_data}])
    assert verdict.ok, verdict.describe()


def _mutated(package, file: str, old: str, new: str) -> dict[str, str]:
    files = package.host_check_files()
    assert old in files[file], (file, old)
    files[file] = files[file].replace(old, new, 1)
    return files


def test_wrong_variants_of_the_generated_host_files_fail_in_the_file_that_is_wrong(host_checker):
    _fuser, package = _package("embedding_post")
    k = package.names.kernel
    wrong = {
        f"{k}_tiling.cpp": [
            ("context->SetTilingKey(static_cast<uint64_t>(t->tiling_key));", "context->SetTilingKey(t);"),
            ("context->SetDynUBufSize(", "context->SetDynUbufSize("),
            ('#include "autofuse_tiling_data.h"', ""),
        ],
        f"{k}_infershape.cpp": [
            ("shape->AppendDim(", "shape->AppendDims("),
            ('#include "register/op_impl_registry.h"\n', ""),
        ],
        f"{k}_def.cpp": [
            (".ParamType(REQUIRED)", ".ParamType(MANDATORY)"),
            ("ge::DT_", "ge::DT_NO_SUCH_"),
            ('AddConfig("ascend950", config)', "AddConfig(950, config)"),
        ],
    }
    for file, variants in wrong.items():
        for old, new in variants:
            result = host_checker.check(_mutated(package, file, old, new))
            assert not result.ok, (file, old, new)
            assert [f.name for f in result.failures] == [file], (file, old, new, result.describe())


def test_a_size_only_inside_a_product_is_refused_naming_it():
    g = GraphBuilder("doubled")
    x = g.data("x", ["N", "H"], "float32")
    idx = g.data("idx", [2 * g.size("K")], "int64")
    g.output(index_select(x, 0, idx), "y")
    with pytest.raises(
        PackageError, match=r"size 'K' cannot be recovered from the input shapes: it appears only"
    ):
        build_package(Autofuser().schedule(g.build()))


def test_the_size_map_binds_each_size_once_and_checks_the_other_dimensions():
    _fuser, package = _package("embedding_post")
    data = json.loads(package.files[""]["size_map.json"])
    bound = {entry["size"] for entry in data["sizes"]}
    assert bound == {b.size for b in package.sizes.bindings}
    # every input dimension is either a binding or a check, never neither
    dims = {(e["input"], e["dim"]) for e in data["sizes"]} | {
        (e["input"], e["dim"]) for e in data["checked_dims"]
    }
    assert len(dims) == sum(data["input_ranks"])
    tiling = package.files["op_host"][f"{package.names.kernel}_tiling.cpp"]
    for check in data["checked_dims"]:
        assert f"dims[{check['input']}][{check['dim']}] != " in tiling


@pytest.mark.parametrize(
    "graph_name, op_type, kernel",
    [
        ("gather_rows", "AutofuseGatherRows", "autofuse_gather_rows"),
        ("gather_2d", "AutofuseGather2d", "autofuse_gather2d"),
        ("EmbeddingBag", "AutofuseEmbeddingbag", "autofuse_embeddingbag"),
        ("a b/c", "AutofuseAfx", None),
    ],
)
def test_the_op_type_maps_back_to_the_kernel_entry(graph_name, op_type, kernel):
    names = operator_names(graph_name)
    assert names.op_type.startswith(op_type)
    assert kernel is None or names.kernel == kernel
    assert snake_case(names.op_type) == names.kernel
    assert names.op_type.isidentifier() and names.kernel.isidentifier()


def test_afc_package_writes_the_package_and_a_second_run_replaces_only_its_files(tmp_path, capsys):
    graph = tmp_path / "embedding_post.json"
    graph.write_text(to_json(samples.lookup("embedding_post").build()))
    out = tmp_path / "pkg"
    assert cli.main(["package", str(graph), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    _fuser, package = _package("embedding_post")
    assert f"packaged operator {package.names.op_type}" in said
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    expected = sorted(
        [
            *package.all_files(),
            "afc-manifest.json",
            *(f"{d}/afc-manifest.json" for d in ("op_host", "op_kernel", "launch")),
        ]
    )
    assert written == expected
    for rel, text in package.all_files().items():
        assert (out / rel).read_text() == text
    mine = out / "op_host" / "my_notes.txt"  # not af's: a second package run leaves it alone
    mine.write_text("keep")
    assert cli.main(["package", str(graph), "-o", str(out)]) == 0
    assert mine.read_text() == "keep"


def test_afc_package_refuses_an_unrecoverable_size_with_a_user_error(tmp_path, capsys):
    g = GraphBuilder("doubled")
    x = g.data("x", ["N", "H"], "float32")
    idx = g.data("idx", [2 * g.size("K")], "int64")
    g.output(index_select(x, 0, idx), "y")
    graph = tmp_path / "doubled.json"
    graph.write_text(to_json(g.build()))
    assert cli.main(["package", str(graph), "-o", str(tmp_path / "pkg")]) == cli.EXIT_ERROR
    assert "size 'K' cannot be recovered" in capsys.readouterr().err
    assert not (tmp_path / "pkg").exists()


def _workloads():
    from af_core.workloads import load_workloads

    return load_workloads()


#: 8 of the 26 corpus workloads (each costs a host check of five files and a kernel check)
CORPUS = [
    "dlrm_kaggle_d16",
    "tbe_default_bag20",
    "llama3_token_embedding",
    "hstu_neg_dot_ml20m",
    "moe_unpermute_dsv3_k8",
    "nll_ignore_index",
    "dsv3_gate_gather_sum",
    "gather_last_axis_negative",
]


def test_the_corpus_subset_names_real_workloads():
    assert set(CORPUS) <= {w.name for w in _workloads()}


@pytest.mark.parametrize("workload", CORPUS)
def test_corpus_workloads_package_and_their_host_files_type_check(workload, host_checker, ascendc_checker):
    """A corpus workload: sizes bound or dimensions checked, host sources and kernel pass the checks."""
    [w] = [w for w in _workloads() if w.name == workload]
    package = build_package(Autofuser().schedule(w.graph))
    result = host_checker.check(package.host_check_files())
    assert result.ok, result.describe()
    data = json.loads(package.files[""]["size_map.json"])
    assert {e["size"] for e in data["sizes"]} == {v.symbol.name for v in w.graph.sizes()}
    assert len(data["sizes"]) + len(data["checked_dims"]) == sum(data["input_ranks"])
    if ascendc_checker is not None:
        kernel = package.files["op_kernel"][f"{package.names.kernel}.cpp"]
        verdict = ascendc_checker.check(
            kernel, {"autofuse_tiling_data.h": package.files["op_kernel"]["autofuse_tiling_data.h"]}
        )
        assert verdict.ok, verdict.describe()


@pytest.fixture(scope="module")
def ascendc_checker():
    """The official AscendC kernel check, or None where the asc-devkit headers are absent."""
    from af_core.ascendc import AscendcChecker, find_source
    from af_core.ascendc.gate import skip_reason

    if skip_reason() is not None or not os.environ.get("AF_ASCENDC_SRC"):
        return None
    return AscendcChecker(find_source())


def test_a_kernel_without_the_task_type_macro_is_flagged(monkeypatch):
    """The official check cannot see it (the macro is empty in CPU-debug mode); the package refuses it."""
    import attrs

    from af_core.codegen.codegen import Codegen
    from af_core.errors import CodegenError
    from af_core.package.operator import kernel_entry_problems

    generate = Codegen.generate

    def without(self, scheduled):
        result = generate(self, scheduled)
        return attrs.evolve(
            result, kernel=result.kernel.replace("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);", "")
        )

    fuser = Autofuser()
    scheduled = fuser.schedule(samples.lookup("gather_rows").build())
    good = fuser.generate(scheduled)
    assert kernel_entry_problems(good.kernel, good.kernel_name) == []
    monkeypatch.setattr(Codegen, "generate", without)
    with pytest.raises(CodegenError, match=r"lacks KERNEL_TASK_TYPE_DEFAULT\(KERNEL_TYPE_AIV_ONLY\)"):
        build_package(scheduled)


def test_afc_package_static_bakes_the_given_platform_and_refuses_a_graph_with_sizes(tmp_path, capsys):
    from af_core.workloads import load_workloads

    [w] = [w for w in load_workloads() if w.name == "dlrm_kaggle_d16"]
    graph = tmp_path / "dlrm.json"
    graph.write_text(to_json(w.graph))
    out = tmp_path / "pkg"
    assert (
        cli.main(["package", str(graph), "-o", str(out), "--static", "--cores", "8", "--ub", "200000"]) == 0
    )
    [kernel] = (out / "op_kernel").glob("autofuse_*.cpp")
    assert "for 8 cores and 200000 B of UB" in kernel.read_text()
    tiling = (out / "op_host" / f"{kernel.stem}_tiling.cpp").read_text()
    assert "info->core_num != 8 || info->ub_size != 200000" in tiling
    capsys.readouterr()
    dynamic = tmp_path / "rows.json"
    dynamic.write_text(to_json(samples.lookup("gather_rows").build()))
    assert cli.main(["package", str(dynamic), "-o", str(tmp_path / "p2"), "--static"]) == cli.EXIT_ERROR
    assert "static tiling needs every size known" in capsys.readouterr().err
