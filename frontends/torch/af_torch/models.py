"""Example models: the patterns the front end fuses, each also a test.

Every class has ``example_inputs(batch)``; the batch is the size that varies.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class DLRMBag(nn.Module):
    """DLRM-style: a sum-pooled EmbeddingBag per sparse feature, concatenated with dense features, an MLP."""

    def __init__(self, vocab: int = 200, dim: int = 16, bag: int = 4, dense: int = 8) -> None:
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, dim, mode="sum")
        self.mlp = nn.Sequential(nn.Linear(dim + dense, 32), nn.ReLU(), nn.Linear(32, 1))
        self.vocab, self.bag_len, self.dense = vocab, bag, dense

    def forward(self, ids: torch.Tensor, dense: torch.Tensor) -> torch.Tensor:
        return self.mlp(torch.cat([self.bag(ids), dense], dim=1))

    def example_inputs(self, batch: int, seed: int = 0):
        gen = torch.Generator().manual_seed(seed)
        return (
            torch.randint(0, self.vocab, (batch, self.bag_len), generator=gen),
            torch.randn(batch, self.dense, generator=gen),
        )


class TokenPositional(nn.Module):
    """Token embedding scaled by sqrt(d) plus a positional embedding."""

    def __init__(self, vocab: int = 300, dim: int = 32, max_len: int = 16) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.scale, self.vocab, self.max_len = math.sqrt(dim), vocab, max_len

    def forward(self, ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return self.tok(ids) * self.scale + self.pos(positions)

    def example_inputs(self, batch: int, seed: int = 0):
        gen = torch.Generator().manual_seed(seed)
        length = 8
        return (
            torch.randint(0, self.vocab, (batch, length), generator=gen),
            torch.arange(length).repeat(batch, 1),
        )


class VocabParallelShard(nn.Module):
    """One shard of a vocab-parallel embedding: rows [start, end) of the vocabulary.

    Ids outside the shard are masked to row 0 and their output rows zeroed.
    """

    def __init__(self, vocab: int = 400, start: int = 100, end: int = 228, dim: int = 16) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(end - start, dim))
        self.start, self.end, self.vocab = start, end, vocab

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        outside = (ids < self.start) | (ids >= self.end)
        local = torch.where(outside, 0, ids - self.start)
        out = nn.functional.embedding(local, self.weight)
        return out.masked_fill(outside.unsqueeze(-1), 0.0)

    def example_inputs(self, batch: int, seed: int = 0):
        gen = torch.Generator().manual_seed(seed)
        return (torch.randint(0, self.vocab, (batch, 6), generator=gen),)


class HistoryAttention(nn.Module):
    """DIN/SIM-style: gather a user's behaviour history, dot each item with the target item, sum."""

    def __init__(self, items: int = 500, dim: int = 16, history: int = 10) -> None:
        super().__init__()
        self.items = nn.Embedding(items, dim)
        self.n_items, self.history = items, history

    def forward(self, history: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        target_vec = self.items(target).unsqueeze(1)  # [B, 1, D]
        return (self.items(history) * target_vec).sum(-1)  # [B, L]

    def example_inputs(self, batch: int, seed: int = 0):
        gen = torch.Generator().manual_seed(seed)
        return (
            torch.randint(0, self.n_items, (batch, self.history), generator=gen),
            torch.randint(0, self.n_items, (batch,), generator=gen),
        )


class MoEPermute(nn.Module):
    """MoE token permute (index_select by expert-sorted order) and weighted un-permute."""

    def __init__(self, dim: int = 16, experts: int = 4) -> None:
        super().__init__()
        self.router = nn.Linear(dim, experts)
        self.expert = nn.Linear(dim, dim)
        self.dim = dim

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        logits = self.router(tokens)
        weight, expert = logits.softmax(-1).max(-1)
        order = torch.argsort(expert, stable=True)
        permuted = torch.index_select(tokens, 0, order)
        out = self.expert(permuted)
        inverse = torch.argsort(order)
        return torch.index_select(out, 0, inverse) * weight.unsqueeze(-1)

    def example_inputs(self, batch: int, seed: int = 0):
        gen = torch.Generator().manual_seed(seed)
        return (torch.randn(batch, self.dim, generator=gen),)


class TopKGather(nn.Module):
    """Top-k logits gather: ``torch.gather`` with the indices of ``topk``."""

    def __init__(self, vocab: int = 64, k: int = 4) -> None:
        super().__init__()
        self.vocab, self.k = vocab, k

    def forward(self, logits: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        idx = torch.topk(scores, self.k, dim=-1).indices
        return torch.gather(logits, 1, idx).sigmoid()

    def example_inputs(self, batch: int, seed: int = 0):
        gen = torch.Generator().manual_seed(seed)
        return (torch.randn(batch, self.vocab, generator=gen), torch.randn(batch, self.vocab, generator=gen))


class NoGather(nn.Module):
    """An MLP: nothing to fuse; it runs unchanged."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 8), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def example_inputs(self, batch: int, seed: int = 0):
        return (torch.randn(batch, 8, generator=torch.Generator().manual_seed(seed)),)


EXAMPLES = (DLRMBag, TokenPositional, VocabParallelShard, HistoryAttention, MoEPermute, TopKGather)
