"""Small models built from the libraries' own code (transformers, deepctr-torch), with random weights.

The suite's point is that af meets model code it was not written against:
each builder instantiates the library's module class from a config object
(no download, no network) at a size that compiles in seconds, and says
which inputs it takes at a given size. ``tests/test_library_models.py``
checks what af makes of each; ``benchmarks/torch_models.py`` times them.

transformers and deepctr-torch are imported only inside the builders, so a
caller decides how to skip when one is missing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from unittest import mock

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # configs only: nothing may be fetched from the Hub

#: one size for the export / first call and another one a dynamic size must also serve
SIZES = (3, 5)


@dataclass(frozen=True)
class LibraryModel:
    """One model of the suite: the module in eval mode and the inputs it takes at a size."""

    name: str
    module: torch.nn.Module
    make_inputs: Callable[[int, int], tuple[torch.Tensor, ...]]  # (size, seed) -> positional inputs
    dynamic_shapes: Any = None  # torch.export's argument; None: af's default, dim 0 of every input dynamic

    def inputs(self, size: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
        return self.make_inputs(size, seed)


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _randomised(module: torch.nn.Module, seed: int, std: float = 0.2) -> torch.nn.Module:
    """Every floating parameter drawn from N(0, std): some library classes leave weights uninitialised
    (``torch.empty``) when built outside ``from_pretrained``, and a result of garbage is no comparison."""
    g = _gen(seed)
    with torch.no_grad():
        for p in module.parameters():
            if p.is_floating_point():
                p.copy_(torch.randn(p.shape, generator=g) * std)
    return module.eval()


# -- transformers --------------------------------------------------------------------------------------


def bert_embeddings(token_types: bool) -> LibraryModel:
    """BertEmbeddings: word + token type + position embeddings, then LayerNorm.

    Without ``token_type_ids`` BERT gathers its all-zero buffer by the
    position ids (``torch.gather``), a gather of its own.
    """
    from transformers import BertConfig
    from transformers.models.bert.modeling_bert import BertEmbeddings

    config = BertConfig(vocab_size=100, hidden_size=32, max_position_embeddings=64, type_vocab_size=2)
    module = _randomised(BertEmbeddings(config), seed=1)

    def make(size: int, seed: int) -> tuple[torch.Tensor, ...]:
        g = _gen(seed)
        ids = torch.randint(0, 100, (size, 8), generator=g)
        return (ids, torch.randint(0, 2, (size, 8), generator=g)) if token_types else (ids,)

    return LibraryModel("BertEmbeddings" + ("(ids, token types)" if token_types else "(ids)"), module, make)


class LastHidden(torch.nn.Module):
    """A transformers model answering its last hidden state: torch.export wants tensors, not a ModelOutput."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, use_cache=False).last_hidden_state


def gpt2(attn_implementation: str = "eager") -> LibraryModel:
    """GPT2Model with one layer: token and position embeddings (``wte``, ``wpe``), attention, MLP."""
    from transformers import GPT2Config, GPT2Model

    config = GPT2Config(
        n_layer=1,
        n_embd=32,
        n_head=2,
        vocab_size=100,
        n_positions=64,
        bos_token_id=0,  # the default 50256 lies outside a vocabulary of 100
        eos_token_id=0,
        attn_implementation=attn_implementation,
    )
    module = LastHidden(_randomised(GPT2Model(config), seed=2)).eval()

    def make(size: int, seed: int) -> tuple[torch.Tensor, ...]:
        return (torch.randint(0, 100, (size, 8), generator=_gen(seed)),)

    return LibraryModel(f"GPT2Model({attn_implementation})", module, make)


class RelativeBias(torch.nn.Module):
    """T5's ``compute_bias(query_length, key_length)`` as a module: the lengths are the inputs' lengths.

    torch.export traces tensors, not ints; a length read off an input's
    shape becomes a size symbol, so one export serves every length pair.
    """

    def __init__(self, attention: torch.nn.Module) -> None:
        super().__init__()
        self.attention = attention

    def forward(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return self.attention.compute_bias(queries.shape[0], keys.shape[0])


def t5_relative_bias(decoder: bool) -> LibraryModel:
    """T5Attention's relative position bias: bucket the (query, key) offsets, gather the bias table.

    The encoder buckets both directions, the decoder only the past; the
    bucket arithmetic differs (``abs`` against ``-min(., 0)``).
    """
    from transformers import T5Config
    from transformers.models.t5.modeling_t5 import T5Attention

    config = T5Config(
        d_model=32,
        d_kv=8,
        num_heads=4,
        relative_attention_num_buckets=32,
        relative_attention_max_distance=64,
        is_decoder=decoder,
    )
    attention = T5Attention(config, has_relative_attention_bias=True, layer_idx=0)
    module = RelativeBias(_randomised(attention, seed=3)).eval()

    def make(size: int, seed: int) -> tuple[torch.Tensor, ...]:
        del seed  # only the lengths matter
        return torch.zeros(4 * size), torch.zeros(3 * size + 1)

    return LibraryModel(f"T5 relative bias ({'decoder' if decoder else 'encoder'})", module, make)


def mixtral_moe(experts_implementation: str | None = "batched_mm") -> LibraryModel:
    """MixtralSparseMoeBlock: router top-2 of 4 experts, the experts' weights gathered by expert id.

    ``batched_mm`` (transformers' own experts implementation, picked through
    the config) indexes ``gate_up_proj[expert_ids]`` and ``down_proj[expert_ids]``;
    the default (None: the eager loop over the experts hit) has data-dependent
    shapes, which torch.export refuses.
    """
    from transformers import MixtralConfig
    from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock

    config = MixtralConfig(
        hidden_size=32,
        intermediate_size=64,
        num_local_experts=4,
        num_experts_per_tok=2,
        experts_implementation=experts_implementation,
    )
    module = _randomised(MixtralSparseMoeBlock(config), seed=4)

    def make(size: int, seed: int) -> tuple[torch.Tensor, ...]:
        return (torch.randn(2, size, 32, generator=_gen(seed)),)  # size is the sequence length

    auto = torch.export.Dim.AUTO
    return LibraryModel(
        f"MixtralSparseMoeBlock({experts_implementation or 'eager loop'})",
        module,
        make,
        dynamic_shapes=({0: auto, 1: auto},),  # batch and sequence: the router sees batch * sequence tokens
    )


class LlamaRotary(torch.nn.Module):
    """LlamaRotaryEmbedding's cos / sin for the positions, applied to q and k by ``apply_rotary_pos_emb``."""

    def __init__(self, config: Any) -> None:
        super().__init__()
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

        self.rotary = LlamaRotaryEmbedding(config)

    def forward(
        self, q: torch.Tensor, k: torch.Tensor, position_ids: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

        cos, sin = self.rotary(q, position_ids)
        return apply_rotary_pos_emb(q, k, cos, sin)


def llama_rotary() -> LibraryModel:
    """Llama's rotary embedding: cos / sin computed from the positions (``positions * inv_freq``)."""
    from transformers import LlamaConfig

    config = LlamaConfig(hidden_size=32, num_attention_heads=2, max_position_embeddings=64)
    module = LlamaRotary(config).eval()

    def make(size: int, seed: int) -> tuple[torch.Tensor, ...]:
        g = _gen(seed)
        q, k = torch.randn(size, 2, 8, 16, generator=g), torch.randn(size, 2, 8, 16, generator=g)
        start = torch.randint(0, 56, (size, 1), generator=g)  # positions after a cached prefix
        return q, k, start + torch.arange(8)

    return LibraryModel("Llama rotary", module, make)


class GPTJRotaryAttention(torch.nn.Module):
    """GPT-J self-attention fed the model's own sin / cos: ``embed_positions[position_ids]`` split in two."""

    def __init__(self, config: Any) -> None:
        super().__init__()
        from transformers.models.gptj.modeling_gptj import GPTJAttention, GPTJRotaryEmbedding

        self.rotary = GPTJRotaryEmbedding(config)
        self.attention = GPTJAttention(config, layer_idx=0)

    def forward(self, hidden_states: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        sin, cos = self.rotary(hidden_states, position_ids)
        return self.attention(hidden_states, (sin, cos))[0]


def gptj_attention() -> LibraryModel:
    """GPTJAttention with rotary on the first 8 of 16 head dims, positions gathered from the sin-cos table."""
    from transformers import GPTJConfig

    config = GPTJConfig(
        n_embd=32,
        n_head=2,
        rotary_dim=8,
        n_positions=64,
        vocab_size=100,
        n_layer=1,
        bos_token_id=0,
        eos_token_id=0,
        attn_implementation="eager",
    )
    module = _randomised(GPTJRotaryAttention(config), seed=6)

    def make(size: int, seed: int) -> tuple[torch.Tensor, ...]:
        g = _gen(seed)
        return torch.randn(size, 8, 32, generator=g), torch.randint(0, 64, (size, 8), generator=g)

    return LibraryModel("GPTJAttention", module, make)


# -- deepctr-torch -------------------------------------------------------------------------------------


def import_deepctr_quietly() -> None:
    """Import deepctr_torch without its version check, which asks pypi.python.org from a thread on import.

    The check is created through ``threading.Thread`` bound in
    ``deepctr_torch.utils``; it is replaced for the import only and restored
    after, so nothing else of the library changes. An ImportError is left to
    the caller's ``pytest.importorskip``.
    """
    try:
        with mock.patch("threading.Thread"):
            import deepctr_torch.utils
    except ImportError:
        return
    deepctr_torch.utils.Thread = threading.Thread


def din(att_activation: str = "sigmoid") -> LibraryModel:
    """deepctr-torch's DIN as its documentation builds it: user / item / category features, a history of 4.

    The input is deepctr's single float matrix, one column per feature
    (``model.feature_index``); ids are read back with ``.long()``.
    ``att_activation`` is the attention unit's activation; DIN's default is
    ``Dice``, which transposes inside the attention MLP.
    """
    import_deepctr_quietly()
    from deepctr_torch.inputs import DenseFeat, SparseFeat, VarLenSparseFeat
    from deepctr_torch.models import DIN

    columns = [
        SparseFeat("user", 3, embedding_dim=8),
        SparseFeat("gender", 2, embedding_dim=8),
        SparseFeat("item_id", 4, embedding_dim=8),
        SparseFeat("cate_id", 3, embedding_dim=8),
        DenseFeat("pay_score", 1),
        VarLenSparseFeat(
            SparseFeat("hist_item_id", 4, embedding_dim=8, embedding_name="item_id"),
            maxlen=4,
            length_name="seq_length",
        ),
        VarLenSparseFeat(
            SparseFeat("hist_cate_id", 3, embedding_dim=8, embedding_name="cate_id"),
            maxlen=4,
            length_name="seq_length",
        ),
    ]
    model = DIN(
        columns,
        ["item_id", "cate_id"],
        device="cpu",
        att_weight_normalization=True,
        att_activation=att_activation,
        seed=7,
    )
    module = _randomised(model, seed=7)
    index = dict(model.feature_index)
    width = max(end for _start, end in index.values())

    def make(size: int, seed: int) -> tuple[torch.Tensor, ...]:
        g = _gen(seed)
        x = torch.zeros(size, width)
        for column in columns:
            start, end = index[column.name]
            if isinstance(column, DenseFeat):
                x[:, start:end] = torch.rand(size, end - start, generator=g)
            else:
                x[:, start:end] = torch.randint(
                    0, column.vocabulary_size, (size, end - start), generator=g
                ).float()
        start, end = index["seq_length"]
        x[:, start:end] = torch.randint(1, 5, (size, 1), generator=g).float()
        return (x,)

    return LibraryModel(f"DIN({att_activation})", module, make)


#: every model of the suite, by a short key (the benchmark's rows)
SUITE: dict[str, Callable[[], LibraryModel]] = {
    "bert": lambda: bert_embeddings(token_types=True),
    "bert_ids_only": lambda: bert_embeddings(token_types=False),
    "gpt2": gpt2,
    "t5_encoder_bias": lambda: t5_relative_bias(decoder=False),
    "t5_decoder_bias": lambda: t5_relative_bias(decoder=True),
    "mixtral": mixtral_moe,
    "llama_rotary": llama_rotary,
    "gptj": gptj_attention,
    "din": din,
    "din_dice": lambda: din("Dice"),
}
