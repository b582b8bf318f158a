"""A CANN custom-operator package for one scheduled graph: every file generated from the schedule.

Layout (what ``afc package`` writes)::

    README.md, CMakeLists.txt, size_map.json, proto.json
    op_kernel/  <kernel>.cpp (the kernel, entry named after the OpType),
                autofuse_tiling_data.h (the tiling struct, shared with op_host),
                CMakeLists.txt
    op_host/    <kernel>_def.cpp (OpDef for ascend950, the graph's dtypes),
                <kernel>_tiling.cpp (TilingFunc, TilingParse, IMPL_OP_OPTILING),
                <kernel>_infershape.cpp (InferShape, InferDataType, IMPL_OP_INFERSHAPE),
                autofuse_tiling.cpp, autofuse_infer_shape.cpp (the generated host functions they call),
                CMakeLists.txt
    launch/     <kernel>_launch.cpp (AutofuseLaunch: the kernel call with <<<blockDim, 0, stream>>>)

The kernel, the tiling and the infer-shape functions are the same text that
the twin builds and runs; the package adds only the CANN glue around them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import attrs
import sympy

from af_core import __version__
from af_core.codegen.cexpr import INT_HELPERS, to_cpp
from af_core.codegen.codegen import MAX_RANK, Codegen, CodegenResult, KernelIO
from af_core.codegen.jinja import render
from af_core.errors import CodegenError
from af_core.package.binding import PackageError, SizeMap, size_map
from af_core.package.names import OperatorNames, operator_names
from af_core.package.resources import PackageResources, resources_for
from af_core.schedule.scheduler import ScheduleResult
from af_core.tiling.solve import CaseRef

#: af dtype name -> ge::DataType enumerator (inc/external/graph/types.h of CANN metadef)
GE_DTYPES: Mapping[str, str] = {
    "float32": "ge::DT_FLOAT",
    "float16": "ge::DT_FLOAT16",
    "bfloat16": "ge::DT_BF16",
    "int8": "ge::DT_INT8",
    "uint8": "ge::DT_UINT8",
    "int16": "ge::DT_INT16",
    "uint16": "ge::DT_UINT16",
    "int32": "ge::DT_INT32",
    "uint32": "ge::DT_UINT32",
    "int64": "ge::DT_INT64",
    "uint64": "ge::DT_UINT64",
    "bool": "ge::DT_BOOL",
}

#: the package's sub-directories, in write order (the top level first)
SUBDIRS = ("", "op_kernel", "op_host", "launch")


@attrs.frozen
class OperatorPackage:
    """The files of a package: ``files[subdir][name]`` (subdir "" is the top level)."""

    names: OperatorNames
    sizes: SizeMap
    resources: PackageResources
    files: Mapping[str, Mapping[str, str]]

    def host_check_files(self) -> dict[str, str]:
        """The op_host sources with the header they include from op_kernel beside them, as the build's
        include path puts it (what :func:`af_core.cann.check_host` type-checks)."""
        files = {n: t for n, t in self.files["op_host"].items() if n.endswith((".cpp", ".h"))}
        files["autofuse_tiling_data.h"] = self.files["op_kernel"]["autofuse_tiling_data.h"]
        return files

    def all_files(self) -> dict[str, str]:
        """Relative path -> text, every file of the package."""
        return {
            (f"{sub}/{name}" if sub else name): text
            for sub in SUBDIRS
            for name, text in sorted(self.files.get(sub, {}).items())
        }


#: What a kernel entry must state for the op framework, which g++ cannot check: in CPU-debug mode
#: KERNEL_TASK_TYPE_DEFAULT expands to nothing, so the official check passes a kernel without it.
KERNEL_ENTRY_MACROS = (
    ("KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY)", "the kernel type (vector cores only)"),
    ("REGISTER_TILING_DEFAULT(AutofuseTilingData)", "the tiling struct the framework parses"),
    ("GET_TILING_DATA_WITH_STRUCT(AutofuseTilingData,", "the tiling data read from the tiling argument"),
)


#: A static kernel (:class:`af_core.codegen.codegen.StaticTiling`) holds its tiling data instead of reading it.
STATIC_TILING_DATA = "constexpr AutofuseTilingData t = {"


def kernel_entry_problems(kernel: str, entry: str) -> list[str]:
    """What the entry ``entry`` of ``kernel`` lacks of :data:`KERNEL_ENTRY_MACROS` (empty: nothing)."""
    start = kernel.find(f'extern "C" __global__ __aicore__ void {entry}(')
    if start < 0:
        return [f"no kernel entry {entry}"]
    body = kernel[start:]
    return [
        f"{entry} lacks {macro}: {why}"
        for macro, why in KERNEL_ENTRY_MACROS
        if macro not in body and not (macro.startswith("GET_TILING_DATA") and STATIC_TILING_DATA in body)
    ]


def _ge_dtype(io: KernelIO) -> str:
    try:
        return GE_DTYPES[io.dtype]
    except KeyError:
        raise PackageError(f"{io.node}: dtype {io.dtype} has no ge::DataType in this package") from None


def build_package(scheduled: ScheduleResult, *, static: bool = False) -> OperatorPackage:
    """Generate the package of ``scheduled`` (raises :class:`PackageError` naming what cannot be packaged).

    ``static``: the static-shape path for a graph without size symbols (the tiling solved now for the
    schedule's platform and baked into the kernel and the tiling function).
    """
    names = operator_names(scheduled.graph.name)
    result: CodegenResult = Codegen(names.kernel, static=static).generate(scheduled)
    if result.kernel_name != names.kernel:  # the naming layer kept the entry the OpType maps to
        raise PackageError(f"kernel entry {result.kernel_name} is not the snake case of {names.op_type}")
    problems = kernel_entry_problems(result.kernel, names.kernel)
    if problems:
        raise CodegenError("the generated kernel cannot be packaged: " + "; ".join(problems))
    sizes = size_map(result.size_names, result.inputs)
    refs = [CaseRef.of(c) for c in scheduled.cases]
    resources = resources_for(scheduled, refs)
    slots = {b.size: b.size for b in sizes.bindings}
    context = {
        "version": __version__,
        "graph": scheduled.graph.name,
        "op_type": names.op_type,
        "kernel": names.kernel,
        "inputs": [(io, _ge_dtype(io)) for io in result.inputs],
        "outputs": [(io, _ge_dtype(io)) for io in result.outputs],
        "size_names": list(result.size_names),
        "bindings": sizes.bindings,
        "checks": [(c, to_cpp(c.expr, slots)) for c in sizes.checks],
        "ranks": sizes.ranks,
        "resources": resources,
        "int_helpers": INT_HELPERS,
        "local_memory": _local_memory_cases(refs, result.size_names),
        "static": result.static,
        "static_fields": list(zip(result.struct_fields, result.static.values)) if result.static else [],
        "max_rank": MAX_RANK,  # the row stride of AutofuseInferShape's dims
    }
    kernel_dir = {
        f"{names.kernel}.cpp": result.kernel,
        "autofuse_tiling_data.h": result.tiling_data,
        "CMakeLists.txt": render("package/op_kernel_cmake.txt.j2", **context),
    }
    host_dir = {
        f"{names.kernel}_def.cpp": render("package/op_def.cpp.j2", **context),
        f"{names.kernel}_tiling.cpp": render("package/op_tiling.cpp.j2", **context),
        f"{names.kernel}_infershape.cpp": render("package/op_infershape.cpp.j2", **context),
        "autofuse_tiling.cpp": result.tiling,
        "autofuse_infer_shape.cpp": result.infer_shape,
        "CMakeLists.txt": render("package/op_host_cmake.txt.j2", **context),
    }
    launch_dir = {f"{names.kernel}_launch.cpp": render("package/launch.cpp.j2", **context)}
    top = {
        "README.md": render("package/README.md.j2", **context),
        "CMakeLists.txt": render("package/cmake.txt.j2", **context),
        "size_map.json": json.dumps(sizes.to_json(), indent=2, sort_keys=True) + "\n",
        "proto.json": result.proto,
    }
    files = {"": top, "op_kernel": kernel_dir, "op_host": host_dir, "launch": launch_dir}
    return OperatorPackage(names, sizes, resources, files)


def _local_memory_cases(refs: list[CaseRef], size_names: tuple[str, ...]) -> list[tuple[int, str, str]]:
    """Per tiling key: the C++ of its SIMT data cache bytes (over the tiling data ``t``) and its label."""
    out = []
    for ref in refs:
        k = ref.tiling_key
        local = {f.name: f"t->c{k}_{f.name}" for f in ref.spec.fields}
        local.update({n: f"t->{n}" for n in size_names})
        local.update({"ub_size": "ub_size", "core_num": "core_num"})
        dcache = sympy.sympify(ref.spec.resources.get("dcache_bytes", 0))
        out.append((k, to_cpp(dcache, local), ref.label))
    return out


def write_package(package: OperatorPackage, out: Path) -> list[str]:
    """Write ``package`` under ``out`` (each directory af's, with its manifest); the paths written."""
    from af_core.output_dir import write_owned_tree

    written: list[str] = []
    for sub in SUBDIRS:
        files = package.files.get(sub)
        if not files:
            continue
        target = out / sub if sub else out
        done = write_owned_tree(target, files)
        written += [f"{sub}/{name}" if sub else name for name in done.written]
    return written
