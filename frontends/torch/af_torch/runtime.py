"""Run a region's kernel on the CPU twin with torch tensors in and out.

A region's HintGraph is compiled once (schedule, codegen, g++ through
:class:`af_core.twin.TwinSession`) and kept in a process-wide cache keyed by
the graph's JSON, so every shape - and every FX graph torch re-traces with
the same region - reuses the kernel; the generated host tiling picks the
template for each real shape.
"""

from __future__ import annotations

import threading

import attrs
import numpy as np
import torch

from af_core.inputs import GraphInputs, pack_inputs, view
from af_core.ir.evaluate import eval_shape
from af_core.ir.serialize import to_json
from af_core.twin import TwinSession
from af_torch.regions import Region

_lock = threading.Lock()
_sessions: dict[str, TwinSession] = {}
#: how many kernels this process compiled (one per distinct region graph); tests read it
builds = 0


def session_for(region: Region) -> TwinSession:
    """The compiled kernel of ``region``'s graph (built on first use, then shared)."""
    global builds
    key = to_json(region.graph)
    with _lock:
        session = _sessions.get(key)
        if session is None:
            session = TwinSession(region.graph)
            _sessions[key] = session
            builds += 1
        return session


def _to_numpy(tensor: torch.Tensor) -> np.ndarray:
    t = tensor.detach().contiguous()
    if t.dtype == torch.bfloat16:
        t = t.float()  # exact: the reference holds bfloat16 values as float32
    return t.cpu().numpy()


def _from_numpy(array: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(array)).to(dtype)


#: What :class:`LastRun` names as the template of a call whose output is empty (a batch of 0): the twin
#: launches no kernel for it, as a framework skips empty tensors (its tiling key is -1, ``af_core.twin.runner.NO_LAUNCH``).
NO_LAUNCH_LABEL = "none (empty output, no launch)"


@attrs.define
class LastRun:
    """What the most recent call of a region did (for explain)."""

    sizes: dict[str, int]
    template: str
    tiling_key: int
    block_dim: int
    measured_bytes: int
    minimum_bytes: int


class RegionKernel:
    """The callable an FX graph calls in place of a region: ``kernel(*tensors) -> tensor``."""

    __name__ = "af_region"

    def __init__(self, region: Region) -> None:
        self.region = region
        self.last: LastRun | None = None
        self.last_inputs: GraphInputs | None = None  # the inputs of the most recent call (for explain)
        self.calls = 0

    def tensors(self, args: tuple) -> list[torch.Tensor]:
        """The region's tensor inputs in order (``Region.inputs`` with a source) from a call's arguments.

        A region with a layout (ragged bags) takes the layout's sources after
        its direct inputs and lays them out first.
        """
        region = self.region
        if region.layout is None:
            return list(args)
        direct = sum(1 for i in region.inputs if i.source is not None and not i.prepared)
        sources = list(args[direct:])
        laid = region.layout.prepare(sources[0], sources[1], sources[2] if region.layout.weighted else None)
        given = iter(args[:direct])
        return [laid[i.data] if i.prepared else next(given) for i in region.inputs if i.source is not None]

    def sizes(self, args: tuple | list) -> dict[str, int]:
        sizes: dict[str, int] = {}
        for position, dim, symbol in self.region.bindings:
            value = int(args[position].shape[dim])
            if sizes.setdefault(symbol, value) != value:
                raise ValueError(
                    f"size {symbol} is {sizes[symbol]} and {value} in one call of region "
                    f"'{self.region.graph.name}'"
                )
        for derived in self.region.derived:
            value = int(args[derived.position].shape[derived.dim])
            solved = derived.solve(value, sizes)
            if solved is None or sizes.setdefault(derived.symbol, solved) != solved:
                raise ValueError(
                    f"dimension {derived.dim} of input {derived.position} of region '{self.region.graph.name}' "
                    f"is {value}, which is not {derived.scale}*{derived.symbol} + {derived.offset} for one "
                    f"positive {derived.symbol}"
                )
        return sizes

    def __call__(self, *args: torch.Tensor) -> torch.Tensor:
        from af_core.traffic import measured_bytes, minimum_bytes

        region = self.region
        session = session_for(region)
        args = tuple(self.tensors(args))
        sizes = self.sizes(args)
        env = region.graph.size_env(sizes)
        info = session.scheduled.info
        arrays = {}
        tensors = iter(args)
        for spec in region.inputs:
            if spec.source is None:
                flat = np.array([spec.constant])
                if spec.torch_dtype == torch.bfloat16:
                    flat = flat.astype(np.float32)
            else:
                flat = _to_numpy(next(tensors)).reshape(-1)
            shape = eval_shape(info[spec.data].sizes, env)
            strides = eval_shape(info[spec.data].strides, env)
            arrays[spec.data] = view(flat, tuple(shape), tuple(strides))
        inputs = pack_inputs(region.graph, arrays, sizes, info=info)
        run = session.run(inputs)
        out = run.outputs["y"]
        if region.squeeze:
            out = out.reshape([n for i, n in enumerate(out.shape) if i not in region.squeeze])
        self.calls += 1
        self.last_inputs = inputs
        self.last = LastRun(
            dict(sorted(sizes.items())),
            session.scheduled.case(run.tiling_key).label if run.launched else NO_LAUNCH_LABEL,
            run.tiling_key,
            run.block_dim,
            measured_bytes(run.counters) if run.launched else 0,
            minimum_bytes(region.graph, inputs, run.outputs, info)[0],
        )
        return _from_numpy(out, region.out_dtype)
