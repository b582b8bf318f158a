"""EmbeddingBag over 1-D ids with offsets: the ragged bags laid out as the regular ones a region takes.

torch's canonical bag (DLRM, torchrec) takes a flat id tensor and an offsets
tensor: bag ``b`` is ``ids[offsets[b] : offsets[b + 1]]`` (the last bag runs
to the end unless ``include_last_offset``). The fused kernels reduce a
``(bags, bag length)`` id matrix along its second axis, so each call lays the
bags out as one: row ``b`` holds bag ``b``'s ids, and the slots past its end
(and its ``padding_idx`` entries) hold a *filler*, an id past every table
row. The gather is bound-checked (``need_check_bound``): an id outside the
table gives a zero row and selects no table row, so a free slot adds an
index element to the kernel's input, not a row of the table to gather.

What each mode needs from the layout:

* ``sum``: fillers add zero; ``per_sample_weights`` become a weight matrix of the same layout.
* ``mean``: a weight matrix of ``1 / n`` for a bag of ``n`` non-padding entries, summed (an empty or
  all-padding bag sums to zero, as torch gives).
* ``max``: a filler would add a zero to the max, so a bag's free slots repeat its first non-padding id
  instead (a max is unchanged by a repeat); only a bag with no such id keeps fillers, and its max of zero
  rows is the zero torch gives.

The layout runs in torch on the index tensors only (``bags x longest bag``
elements); its one host read is the longest bag's length, which sizes the
matrix. It checks what torch's own kernel checks (first offset 0, offsets
non-decreasing and inside the ids, ids inside the table) and raises torch's
kind of error, so an id the filler trick would turn into a zero is refused
instead.
"""

from __future__ import annotations

import enum

import attrs
import torch


class BagMode(enum.Enum):
    """torch's ``mode`` of an embedding bag (its integer code in ``aten._embedding_bag``)."""

    SUM = 0
    MEAN = 1
    MAX = 2

    @property
    def reduce_kind(self) -> str:
        """The af reduce a region runs over the laid-out bag: a mean is a weighted sum."""
        return "Max" if self is BagMode.MAX else "Sum"


@attrs.frozen
class RaggedBags:
    """How one region lays out its ragged bags on every call (see the module docstring).

    ``ids_data`` / ``weights_data`` name the region's Data inputs the layout
    fills; ``weights_data`` is None when the mode needs no weights (an
    unweighted sum, a max).
    """

    mode: BagMode
    include_last_offset: bool
    padding_idx: int | None
    weighted: bool  # per_sample_weights are a call argument
    rows: int  # the table's rows: ids must lie in [0, rows)
    ids_data: str
    weights_data: str | None
    weights_dtype: torch.dtype  # the table's: weights multiply its rows

    @staticmethod
    def needs_weights(mode: BagMode, weighted: bool) -> bool:
        return mode is BagMode.MEAN or weighted

    def prepare(
        self, ids: torch.Tensor, offsets: torch.Tensor, weights: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor]:
        """The (bags, longest bag) id matrix and, when the mode needs one, the weight matrix."""
        if ids.dim() != 1 or offsets.dim() != 1:
            raise RuntimeError(
                f"embedding_bag: ids and offsets must be 1-D, got ranks {ids.dim()} and {offsets.dim()}"
            )
        n = ids.numel()
        offsets = offsets.to(torch.int64)
        if self.include_last_offset:
            if offsets.numel() == 0:
                raise RuntimeError("embedding_bag: include_last_offset needs at least one offset")
            starts, ends = offsets[:-1], offsets[1:]
        else:
            starts = offsets
            ends = torch.cat([offsets[1:], torch.tensor([n], dtype=torch.int64)])
        if offsets.numel() and int(offsets[0]) != 0:
            raise RuntimeError(f"embedding_bag: offsets[0] has to be 0, got {int(offsets[0])}")
        if bool((ends < starts).any()) or (ends.numel() and int(ends.max()) > n):
            raise RuntimeError(
                f"embedding_bag: offsets must be non-decreasing and at most {n}, the ids' length"
            )
        if n and (int(ids.min()) < 0 or int(ids.max()) >= self.rows):
            bad = ids[(ids < 0) | (ids >= self.rows)][0]
            raise RuntimeError(f"embedding_bag: id {int(bad)} is not in the valid range [0, {self.rows})")
        lengths = ends - starts
        longest = max(int(lengths.max()) if lengths.numel() else 0, 1)
        slot = torch.arange(longest, dtype=torch.int64)
        inside = slot[None, :] < lengths[:, None]
        where = (starts[:, None] + slot[None, :]).clamp(max=max(n - 1, 0))
        picked = ids[where] if n else torch.zeros(where.shape, dtype=ids.dtype)
        kept = inside if self.padding_idx is None else inside & (picked != self.padding_idx)
        filler = torch.full_like(picked, torch.iinfo(ids.dtype).max)
        if self.mode is BagMode.MAX:
            first = picked.gather(1, kept.to(torch.int8).argmax(dim=1, keepdim=True))
            filler = torch.where(kept.any(dim=1, keepdim=True), first, filler)
        out = {self.ids_data: torch.where(kept, picked, filler)}
        if self.weights_data is not None:
            if self.mode is BagMode.MEAN:
                count = kept.sum(dim=1, keepdim=True).clamp(min=1)
                values = (1.0 / count.to(torch.float64)).expand(kept.shape)
            else:
                assert weights is not None
                values = (
                    weights.to(torch.float64)[where] if n else torch.zeros(kept.shape, dtype=torch.float64)
                )
            out[self.weights_data] = torch.where(kept, values, 0.0).to(self.weights_dtype)
        return out
