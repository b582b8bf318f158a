"""The dynamo backend ``af``: ``torch.compile(model, backend="af")``.

Registered through the ``torch_dynamo_backends`` entry point. Dynamo's graph
goes through AOTAutograd with the core aten decompositions; the forward
graph's regions are fused (:func:`af_torch.compile.fuse_graph_module`) and
the rest runs as torch ops. With ``dynamic=True`` (or after dynamo marks a
size dynamic) sizes are symbols and one kernel serves every batch size.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

#: the fused graphs of every compile, newest last (explain and tests read them)
compiled: list = []


def af_backend(gm: torch.fx.GraphModule, example_inputs: Sequence[torch.Tensor]):
    from torch._decomp import core_aten_decompositions
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import make_boxed_func

    from af_torch.compile import fuse_graph_module

    def forward(fw: torch.fx.GraphModule, inputs):
        compiled.append(fuse_graph_module(fw, "torch"))
        return make_boxed_func(fw.forward)

    return aot_autograd(fw_compiler=forward, decompositions=core_aten_decompositions())(gm, example_inputs)
