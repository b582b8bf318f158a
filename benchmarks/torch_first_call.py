"""torch.compile's first call of each sample graph on CPU (Inductor), for ``run_benchmarks.py --only first``.

Needs only torch and numpy (it is run by whichever interpreter has torch, see
``AF_BENCH_TORCH_PYTHON``). The functions are the sample graphs of
``af_core.samples`` written in torch, at each sample's first shape. Inductor's
caches start empty (a scratch ``TORCHINDUCTOR_CACHE_DIR``); one other function
is compiled first, so each figure is a new function in a warm process.
Prints ``<sample> <seconds>`` lines and ``_first_in_process <seconds>``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="inductor-")

import torch  # noqa: E402


def seed_minimal(x, index):
    return torch.gather(x, 2, index)


def embedding_post(weight, ids):
    return torch.sigmoid(torch.nn.functional.embedding(ids, weight) * 45.25)


def index_select_sum(x, idx):
    wrapped = torch.where(idx < 0, idx + x.shape[0], idx)  # negative indices allowed
    return torch.index_select(x, 0, wrapped).sum(dim=1, keepdim=True)


def gather_rows(x, idx):
    inside = (idx >= 0) & (idx < x.shape[1])  # bound-checked: out-of-range reads give 0
    picked = torch.gather(x, 1, idx.clamp(0, x.shape[1] - 1))
    return torch.relu(torch.where(inside, picked, torch.zeros((), dtype=x.dtype)))


def inputs(rng: torch.Generator) -> dict:
    r = torch.randint
    return {
        "seed_minimal": (
            torch.randn(2, 3, 10, 8, generator=rng).half(),
            r(0, 10, (2, 3, 6, 8), generator=rng, dtype=torch.int32).long(),
        ),
        "embedding_post": (
            torch.randn(1000, 64, generator=rng).bfloat16(),
            r(0, 1000, (300,), generator=rng, dtype=torch.int32),
        ),
        "index_select_sum": (torch.randn(500, 96, generator=rng), r(-500, 500, (200,), generator=rng)),
        "gather_rows": (
            torch.randn(96, 40, 16, generator=rng).half(),
            r(0, 40, (96, 8, 16), generator=rng, dtype=torch.int32).long(),
        ),
    }


def first_call(fn, args) -> float:
    start = time.perf_counter()
    compiled = torch.compile(fn)
    compiled(*args)
    return time.perf_counter() - start


def main() -> int:
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    rng = torch.Generator().manual_seed(0)
    warm = torch.randn(64, 32, generator=rng)
    print("_first_in_process", f"{first_call(lambda t: torch.exp(t) + 1.0, (warm,)):.3f}", flush=True)
    data = inputs(rng)
    for name, fn in (
        ("seed_minimal", seed_minimal),
        ("embedding_post", embedding_post),
        ("index_select_sum", index_select_sum),
        ("gather_rows", gather_rows),
    ):
        print(name, f"{first_call(fn, data[name]):.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
