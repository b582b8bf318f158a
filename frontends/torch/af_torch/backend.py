"""The dynamo backend ``af``: ``torch.compile(model, backend="af")``.

Registered through the ``torch_dynamo_backends`` entry point. Dynamo's graph
goes through AOTAutograd with the core aten decompositions; the forward
graph's regions are fused (:func:`af_torch.compile.fuse_graph_module`) and
the rest runs as torch ops. With ``dynamic=True`` (or after dynamo marks a
size dynamic) sizes are symbols and one kernel serves every batch size.

When torch itself fails on the graph (AOTAutograd or a decomposition,
before af sees an aten graph: the same graph fails with
``backend="aot_eager"``), the failure is logged as torch's, naming the call
and the model line torch reports, and the graph runs unfused as dynamo
captured it. ``options={"strict": True}`` raises
:class:`~af_torch.compile.TorchFailure` instead. A failure inside af is
never passed off as torch's: it propagates; so do dynamo's own signals
(``RestartAnalysis`` when dynamo retraces a graph, ``SkipFrame``), which
dynamo handles as it does for every backend.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import torch

#: the fused graphs of every compile, newest last (explain and tests read them)
compiled: list = []

#: ``torch.compile(..., options=...)`` keys the backend takes, with their meaning
OPTIONS = {"strict": "raise TorchFailure when torch fails on the graph instead of running it unfused"}

log = logging.getLogger("af_torch")


class _AfFailed(Exception):
    """Carries an exception raised by af's own compiler through AOTAutograd, so it is not taken for torch's."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def af_backend(
    gm: torch.fx.GraphModule, example_inputs: Sequence[torch.Tensor], options: Mapping[str, Any] | None = None
):
    from torch._decomp import core_aten_decompositions
    from torch._dynamo.backends.common import aot_autograd
    from torch._dynamo.exc import TorchDynamoException
    from torch._functorch.aot_autograd import make_boxed_func

    from af_torch.compile import TorchFailure, fuse_graph_module

    unknown = sorted(set(options or {}) - set(OPTIONS))
    if unknown:
        raise ValueError(f"backend 'af' takes the options {sorted(OPTIONS)}, not {unknown}")
    strict = bool((options or {}).get("strict", False))

    def forward(fw: torch.fx.GraphModule, inputs):
        try:
            compiled.append(fuse_graph_module(fw, "torch"))
        except Exception as exc:  # noqa: BLE001 - re-raised below as itself
            raise _AfFailed(exc) from exc
        return make_boxed_func(fw.forward)

    try:
        return aot_autograd(fw_compiler=forward, decompositions=core_aten_decompositions())(
            gm, example_inputs
        )
    except _AfFailed as ours:
        raise ours.error from None
    except TorchDynamoException:
        raise  # dynamo's own signals (restart the analysis, skip the frame): dynamo acts on them, as for any backend
    except Exception as exc:  # noqa: BLE001 - torch's own failure: reported as torch's, then the fallback
        failure = TorchFailure(
            "AOTAutograd with the core aten decompositions",
            "the graph dynamo captured",
            exc,
            "the same graph fails with backend='aot_eager'",
        )
        if strict:
            raise failure from exc
        log.warning("%s; the graph runs unfused in torch (options={'strict': True} raises instead)", failure)
        return gm.forward
