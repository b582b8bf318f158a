"""Replace each fusible region of an aten FX graph by a call of its twin kernel.

``fuse_graph_module`` rewrites a GraphModule in place; ``compile_exported``
does it for a ``torch.export`` program after decomposing it to core aten ops.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import attrs
import torch
import torch.fx as fx

from af_torch.regions import Partition, partition
from af_torch.runtime import RegionKernel

log = logging.getLogger("af_torch")


@attrs.define
class FusedGraph:
    """What ``fuse_graph_module`` did: the partition and one kernel callable per region."""

    partition: Partition
    kernels: list[RegionKernel]


def fuse_graph_module(gm: fx.GraphModule, name: str = "torch") -> FusedGraph:
    """Rewrite ``gm`` in place: each region becomes one call; everything else is left as it was."""
    graph = gm.graph
    found = partition(graph, name)
    kernels = []
    for region in found.regions:
        kernel = RegionKernel(region)
        args = tuple(spec.source for spec in region.inputs if spec.source is not None)
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
    """A ``torch.export`` program with its regions fused: call it like the module it came from."""

    def __init__(self, exported: torch.export.ExportedProgram, name: str = "torch") -> None:
        from torch.export.graph_signature import InputKind, OutputKind

        program = exported.run_decompositions()
        self.program = program
        self.graph_module = program.graph_module
        self.fused = fuse_graph_module(self.graph_module, name)
        state = {**program.state_dict, **program.constants}
        self._lifted: list[torch.Tensor | None] = []
        for spec in program.graph_signature.input_specs:
            if spec.kind == InputKind.USER_INPUT:
                self._lifted.append(None)
            elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
                self._lifted.append(state[spec.target])
            else:
                raise NotImplementedError(f"exported programs with {spec.kind} inputs are not supported")
        outputs = program.graph_signature.output_specs
        if any(o.kind != OutputKind.USER_OUTPUT for o in outputs):
            raise NotImplementedError("exported programs that mutate buffers are not supported")

    @property
    def kernels(self) -> list[RegionKernel]:
        return self.fused.kernels

    def __call__(self, *args: torch.Tensor):
        user = iter(args)
        flat = [next(user) if t is None else t for t in self._lifted]
        rest = list(user)
        if rest:
            raise TypeError(f"{len(rest)} more arguments than the exported program takes")
        with torch.no_grad():
            out = self.graph_module(*flat)
        out = tuple(out) if isinstance(out, (list, tuple)) else (out,)
        return out[0] if len(out) == 1 else out


def compile_exported(exported: torch.export.ExportedProgram, name: str = "torch") -> CompiledProgram:
    """Fuse the regions of an exported program; the result runs them on the CPU twin.

    Sizes marked dynamic at export (``torch.export.Dim``) stay symbols: one
    kernel serves every value.
    """
    return CompiledProgram(exported, name)


def export(model: torch.nn.Module, inputs: Sequence[torch.Tensor], dynamic_batch: bool = True):
    """``torch.export`` with dimension 0 of every input left to torch to keep dynamic (when ``dynamic_batch``).

    ``Dim.AUTO``: torch keeps the dimension a symbol unless the model makes
    it a constant (``take_along_dim`` does), in which case that region's
    kernel is specialised to the traced value.
    """
    shapes = None
    if dynamic_batch:
        shapes = tuple(
            {0: torch.export.Dim.AUTO} if isinstance(t, torch.Tensor) and t.dim() > 0 else None
            for t in inputs
        )
    with torch.no_grad():
        return torch.export.export(model, tuple(inputs), dynamic_shapes=shapes)
