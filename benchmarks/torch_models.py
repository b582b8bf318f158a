"""The models suite through torch.compile: af's regions and first call beside Inductor's, a markdown row each.

    python benchmarks/torch_models.py               # fresh twin and Inductor caches
    python benchmarks/torch_models.py --warm-twin   # keep AF_TWIN_CACHE (kernels built before are reused)
    python benchmarks/torch_models.py --only bert,mixtral

The models are the libraries' own classes at small sizes
(``frontends/torch/tests/library_models.py``, shared with
``test_library_models.py``). Per model: the regions ``backend="af"`` fused
(and, for comparison, the regions ``torch.export`` + ``compile_exported``
fuses), the largest ``|af - eager|``, and the first call (``torch.compile``
+ one call, ``dynamic=True``) with ``backend="af"`` and with
``backend="inductor"``. Both start from empty caches, as a new model on a
new machine would: a scratch ``TORCHINDUCTOR_CACHE_DIR`` and, unless
``--warm-twin``, a scratch ``AF_TWIN_CACHE`` (af's first call then includes
the g++ builds of its kernels). Each backend compiles one small function
first, so a row times the model, not the backend's first load in the process.
Needs torch and transformers (deepctr-torch for the DIN rows).

    python benchmarks/torch_models.py --dlrm PATH   # adds facebookresearch/dlrm's DLRM_Net

``--dlrm`` names a checkout of facebookresearch/dlrm (its ``dlrm_s_pytorch.py``
is not on PyPI; it also imports scikit-learn and tensorboard): DLRM_Net
with three tables, bags of 0-4 ids given as 1-D ids with offsets, as its
data loaders give them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="inductor-")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from torch.utils import _pytree as pytree  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontends" / "torch" / "tests"))

import library_models as lm  # noqa: E402

HEADER = (
    "| model | fused regions | fused ops | max abs(af - eager) | first call af (s) | first call inductor (s) "
    "| regions via torch.export |\n"
    "|---|---|---|---|---|---|---|"
)


def first_call(module: torch.nn.Module, inputs: tuple, backend: str) -> tuple[Any, float]:
    """``torch.compile`` and one call from a reset dynamo: the output and the seconds both took."""
    torch._dynamo.reset()
    start = time.perf_counter()
    compiled = torch.compile(module, backend=backend, dynamic=True)
    with torch.no_grad():
        out = compiled(*inputs)
    return out, time.perf_counter() - start


def max_difference(got: Any, expected: Any) -> float:
    pairs = zip(pytree.tree_leaves(got), pytree.tree_leaves(expected), strict=True)
    return max(((a.float() - b.float()).abs().max().item() for a, b in pairs), default=0.0)


def warm_up() -> None:
    """One small gather through each backend: the backends' own first load is not charged to a model."""

    class Lookup(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.table = torch.nn.Parameter(torch.randn(50, 8))

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.table[ids] * 2.0)

    ids = torch.randint(0, 50, (4, 6))
    for backend in ("af", "inductor"):
        first_call(Lookup().eval(), (ids,), backend)


def export_regions(model: lm.LibraryModel, inputs: tuple) -> str:
    """How many regions the torch.export path fuses (or why it cannot), for the last column."""
    import af_torch
    from af_torch.compile import TorchFailure, export

    try:
        exported = export(model.module, inputs, dynamic_shapes=model.dynamic_shapes)
        return str(len(af_torch.compile_exported(exported, name=model.name).fused.partition.regions))
    except TorchFailure as exc:
        return f"torch fails ({exc.call}: {type(exc.__cause__).__name__})"
    except Exception as exc:  # noqa: BLE001 - reported in the row
        return short(exc)


def short(exc: BaseException) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"fails: {type(exc).__name__}: {first[:60]}".replace("|", "/")


def row(key: str, build: Callable[[], lm.LibraryModel]) -> str:
    """One table row; a model or backend that fails says how in its cells instead of stopping the table."""
    from af_torch import backend as af_backend

    try:
        model = build()
    except ImportError as exc:
        return f"| {key} | skipped: {exc} | | | | | |"
    inputs = model.inputs(lm.SIZES[0])
    with torch.no_grad():
        expected = model.module(*inputs)
    before = len(af_backend.compiled)
    try:
        got, af_seconds = first_call(model.module, inputs, "af")
        graphs = af_backend.compiled[before:]
        regions = [r.fused_ops for g in graphs for r in g.partition.regions]
        ops = "; ".join(" -> ".join(op.removeprefix("aten.") for op in r) for r in regions) or "none"
        af_cells = [str(len(regions)), ops, f"{max_difference(got, expected):.2e}", f"{af_seconds:.2f}"]
    except Exception as exc:  # noqa: BLE001 - reported in the row
        af_cells = [short(exc), "", "", ""]
    try:
        _out, inductor_seconds = first_call(model.module, inputs, "inductor")
        inductor_cell = f"{inductor_seconds:.2f}"
    except Exception as exc:  # noqa: BLE001 - reported in the row
        inductor_cell = short(exc)
    cells = [model.name, *af_cells, inductor_cell, export_regions(model, inputs)]
    return "| " + " | ".join(cells) + " |"


def dlrm_net(checkout: str) -> Callable[[], lm.LibraryModel]:
    """A builder of DLRM_Net from a dlrm checkout: three tables, bags of 0-4 ids as 1-D ids with offsets."""

    def build() -> lm.LibraryModel:
        import numpy as np

        sys.path.insert(0, checkout)
        argv, sys.argv = sys.argv, [sys.argv[0]]  # the module parses no flags at import, but keep it clean
        try:
            # its import prints which optional packages are missing: to stderr, not into the table
            with contextlib.redirect_stdout(sys.stderr):
                import dlrm_s_pytorch
        finally:
            sys.argv = argv
        rows = np.array([50, 40, 30])
        torch.manual_seed(0)
        module = dlrm_s_pytorch.DLRM_Net(
            m_spa=8,
            ln_emb=rows,
            ln_bot=np.array([4, 16, 8]),
            ln_top=np.array([14, 16, 1]),  # 8 dense + 6 pairwise dot products of 4 vectors
            arch_interaction_op="dot",
            sigmoid_bot=-1,
            sigmoid_top=1,
        ).eval()

        def make_inputs(size: int, seed: int) -> tuple:
            g = torch.Generator().manual_seed(seed)
            offsets, ids = [], []
            for n in rows:
                lengths = torch.randint(0, 5, (size,), generator=g)
                offsets.append(torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)[:-1]]))
                ids.append(torch.randint(0, int(n), (int(lengths.sum()),), generator=g))
            return torch.rand(size, 4, generator=g), offsets, ids

        return lm.LibraryModel("DLRM_Net (facebookresearch/dlrm)", module, make_inputs)

    return build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--warm-twin", action="store_true", help="keep AF_TWIN_CACHE instead of a scratch one"
    )
    parser.add_argument("--only", default="", help=f"comma-separated keys of {sorted(lm.SUITE)}")
    parser.add_argument("--dlrm", default="", help="a checkout of facebookresearch/dlrm: adds DLRM_Net")
    args = parser.parse_args(argv)
    if not args.warm_twin:
        os.environ["AF_TWIN_CACHE"] = tempfile.mkdtemp(prefix="af-twin-")
    keys = [k for k in args.only.split(",") if k] or list(lm.SUITE)
    unknown = sorted(set(keys) - set(lm.SUITE))
    if unknown:
        parser.error(f"unknown model keys {unknown}; known: {sorted(lm.SUITE)}")
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    warm_up()
    print(f"torch {torch.__version__}, twin cache {'kept' if args.warm_twin else 'scratch'}\n", flush=True)
    print(HEADER, flush=True)
    builders = {key: lm.SUITE[key] for key in keys}
    if args.dlrm:
        builders["dlrm"] = dlrm_net(args.dlrm)
    for key, build in builders.items():
        print(row(key, build), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
