"""Replace each fusible region of an aten FX graph by a call of its twin kernel.

``fuse_graph_module`` rewrites a GraphModule in place; ``compile_exported``
does it for a ``torch.export`` program after decomposing it to core aten ops.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Sequence
from typing import Any

import attrs
import torch
import torch.fx as fx

from af_core.errors import AfError
from af_torch.aten_ops import ANCHORS
from af_torch.regions import Partition, partition
from af_torch.runtime import RegionKernel

log = logging.getLogger("af_torch")


class TorchFailure(AfError):
    """Torch itself failed on the model (export, or its aten decompositions) before af saw a graph.

    The message names the torch call, so that a user looks for the cause in
    the model or in torch: the same call fails without af installed.
    """

    def __init__(
        self, call: str, model: str, cause: BaseException, without_af: str = "the same call fails without af"
    ) -> None:
        self.call = call
        self.model = model
        self.model_line = model_line(cause)
        first = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
        at = f" (model line: {self.model_line})" if self.model_line else ""
        super().__init__(
            f"{call} failed on {model} inside torch, before af saw a graph ({without_af}): "
            f"{type(cause).__name__}: {first}{at}"
        )


def model_line(cause: BaseException) -> str | None:
    """The innermost ``file:line`` of the model code torch names in its error ("Original traceback"), if any."""
    text = str(cause)
    if "Original traceback" in text:
        text = text[text.index("Original traceback") :]
    found = re.findall(r'File "([^"]+)", line (\d+)', text)
    return f"{found[-1][0]}:{found[-1][1]}" if found else None


@attrs.define
class FusedGraph:
    """What ``fuse_graph_module`` did: the partition and one kernel callable per region."""

    partition: Partition
    kernels: list[RegionKernel]


def fuse_graph_module(gm: fx.GraphModule, name: str = "torch") -> FusedGraph:
    """Rewrite ``gm`` in place: each region becomes one call; everything else is left as it was."""
    graph = gm.graph
    found = partition(graph, name)
    for node in graph.nodes:  # a gather af could not fuse is never dropped silently
        if node.op == "call_function" and node.target in ANCHORS and node.name in found.left:
            log.warning(
                "%s: %s (%s) is not fused and runs in torch: %s",
                name,
                node.name,
                found.left_ops.get(node.name, "?"),
                found.left[node.name],
            )
    kernels = []
    for region in found.regions:
        kernel = RegionKernel(region)
        args = tuple(region.call_sources)
        with graph.inserting_before(region.output):
            call = graph.call_function(kernel, args)
        call.meta.update({k: v for k, v in region.output.meta.items() if k in ("val", "tensor_meta")})
        region.output.replace_all_uses_with(call)
        for node in reversed(region.nodes):
            if not node.users:
                graph.erase_node(node)
        kernels.append(kernel)
    graph.lint()
    gm.recompile()
    if not kernels:
        log.info("%s: no fusible region; the graph runs unchanged in torch", name)
    else:
        log.info(
            "%s: %d fused region(s): %s",
            name,
            len(kernels),
            "; ".join(" -> ".join(r.fused_ops) for r in found.regions),
        )
    return FusedGraph(found, kernels)


class CompiledProgram:
    """A ``torch.export`` program with its regions fused: call it like the module it came from.

    A call goes through the exported program's own input checks before any
    kernel runs: the inputs must have the tree structure (tuples, lists, dicts
    of tensors), the ranks and the sizes the program was exported for (a static
    size is a guard; a dynamic one must stay inside its range). Torch checks
    no dtype, and a region kernel built for float32 would read float64 bytes
    as float32, so the call also refuses a tensor whose dtype is not the
    exported one. Each refusal is torch's RuntimeError naming the input path.
    """

    def __init__(self, exported: torch.export.ExportedProgram, name: str = "torch") -> None:
        from torch.export.graph_signature import InputKind, OutputKind

        try:
            with (
                warnings.catch_warnings()
            ):  # torch's own deprecation inside run_decompositions, not the user's
                warnings.filterwarnings("ignore", r".*isinstance\(treespec, LeafSpec\)", FutureWarning)
                program = exported.run_decompositions()
        except Exception as exc:  # noqa: BLE001 - torch's own failure, re-raised naming torch as its source
            raise TorchFailure("ExportedProgram.run_decompositions", "the exported program", exc) from exc
        self.program = program
        self.graph_module = program.graph_module
        # the exported dtype of each user input, read before fusion rewrites the graph
        placeholders = [n for n in self.graph_module.graph.nodes if n.op == "placeholder"]
        self._user_dtypes: list[torch.dtype | None] = []
        for node, spec in zip(placeholders, program.graph_signature.input_specs, strict=True):
            if spec.kind == InputKind.USER_INPUT:
                val = node.meta.get("val")
                self._user_dtypes.append(val.dtype if isinstance(val, torch.Tensor) else None)
            elif spec.kind not in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
                raise NotImplementedError(f"exported programs with {spec.kind} inputs are not supported")
        outputs = program.graph_signature.output_specs
        if any(o.kind != OutputKind.USER_OUTPUT for o in outputs):
            raise NotImplementedError("exported programs that mutate buffers are not supported")
        self.fused = fuse_graph_module(self.graph_module, name)

    @property
    def kernels(self) -> list[RegionKernel]:
        return self.fused.kernels

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from torch.utils import _pytree as pytree

        # the exported program's checks: tree structure, input count, rank, static sizes, ranges
        flat = self.program._graph_module_flat_inputs(args, kwargs)
        user = flat[len(flat) - len(self._user_dtypes) :]
        for position, (arg, dtype) in enumerate(zip(user, self._user_dtypes, strict=True)):
            if dtype is not None and isinstance(arg, torch.Tensor) and arg.dtype != dtype:
                raise RuntimeError(
                    f"Expected input {position} (in flattened order) to have dtype {dtype}, but got "
                    f"{arg.dtype}: the program was exported, and its kernels built, for {dtype}"
                )
        with torch.no_grad():
            out = self.graph_module(*flat)
        return pytree.tree_unflatten(list(out), self.program.call_spec.out_spec)


def compile_exported(exported: torch.export.ExportedProgram, name: str = "torch") -> CompiledProgram:
    """Fuse the regions of an exported program; the result runs them on the CPU twin.

    Sizes marked dynamic at export (``torch.export.Dim``) stay symbols: one
    kernel serves every value.
    """
    return CompiledProgram(exported, name)


def export(
    model: torch.nn.Module, inputs: Sequence[Any], dynamic_batch: bool = True, dynamic_shapes: Any = None
):
    """``torch.export`` with dimension 0 of every input tensor left to torch to keep dynamic (when ``dynamic_batch``).

    ``inputs`` are the model's positional arguments; each may be a tensor or
    a list, tuple or dict of tensors (as DLRM and torchrec models take them).
    ``Dim.AUTO``: torch keeps the dimension a symbol unless the model makes
    it a constant (``take_along_dim`` does), in which case that region's
    kernel is specialised to the traced value. ``dynamic_shapes`` (torch.export's
    own argument) replaces that default when given.
    """
    from torch.utils import _pytree as pytree

    shapes = dynamic_shapes
    if shapes is None and dynamic_batch:
        shapes = tuple(
            pytree.tree_map(
                lambda t: {0: torch.export.Dim.AUTO} if isinstance(t, torch.Tensor) and t.dim() > 0 else None,
                arg,
            )
            for arg in inputs
        )
    try:
        with torch.no_grad():
            return torch.export.export(model, tuple(inputs), dynamic_shapes=shapes)
    except Exception as exc:  # noqa: BLE001 - torch's own failure, re-raised naming torch as its source
        raise TorchFailure("torch.export.export", type(model).__name__, exc) from exc
