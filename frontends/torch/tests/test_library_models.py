"""The models suite: the libraries' own model code (transformers, deepctr-torch) fused by af.

Hand-written copies of a model only show that af handles what its author
thought of; these run the library classes themselves, small and with
random weights (``library_models.py`` builds them from config objects, no
download). Per model: the result equals eager, at the export size and at
another size, and the regions are exactly the ones af fuses today, so a
change that fuses less (or nothing) fails here. Where a gather stays in
torch, it must say why. Where torch itself fails on a model, af must say
that it is torch's failure.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # set before transformers is imported: configs only, no Hub

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import af_torch  # noqa: E402
import library_models as lm  # noqa: E402
from af_torch import backend, runtime  # noqa: E402
from af_torch.aten_ops import ANCHORS  # noqa: E402
from af_torch.compile import CompiledProgram, TorchFailure, export  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.twin]

FIRST, OTHER = lm.SIZES

EMBEDDINGS = [["aten.embedding", "aten.add", "aten.add"], ["aten.embedding"], ["aten.embedding"]]


def compiled(model: lm.LibraryModel) -> CompiledProgram:
    """The model through torch.export (dynamic dims as the builder says) and af, at the first size."""
    exported = export(model.module, model.inputs(FIRST), dynamic_shapes=model.dynamic_shapes)
    return af_torch.compile_exported(exported, name=model.name)


def fused_ops(program: CompiledProgram) -> list[list[str]]:
    return [region.fused_ops for region in program.fused.partition.regions]


def assert_equals_eager(program: CompiledProgram, model: lm.LibraryModel) -> None:
    """Both sizes: the kernels were built at the first, a dynamic size must serve the other too."""
    for size in (FIRST, OTHER):
        inputs = model.inputs(size, seed=size)
        with torch.no_grad():
            torch.testing.assert_close(program(*inputs), model.module(*inputs))
    assert all(kernel.calls == 2 for kernel in program.kernels)


def gathers_left(program: CompiledProgram) -> dict[str, str]:
    """Each gather still in the graph after fusion, with the reason af gives for leaving it to torch."""
    left = program.fused.partition.left
    return {
        node.name: left.get(node.name, "")
        for node in program.graph_module.graph.nodes
        if node.op == "call_function" and node.target in ANCHORS
    }


@pytest.mark.parametrize("token_types", [True, False], ids=["ids-and-token-types", "ids-only"])
def test_bert_embeddings_fuse_each_lookup_and_the_sum(token_types):
    """Word + token type + position: the word lookup takes both adds; the other two are regions of their own.

    Without token_type_ids BERT gathers its zero buffer by the positions (``torch.gather``): one more region.
    """
    model = lm.bert_embeddings(token_types)
    program = compiled(model)
    assert fused_ops(program) == ([] if token_types else [["aten.gather"]]) + EMBEDDINGS
    assert gathers_left(program) == {}
    assert_equals_eager(program, model)


def test_gpt2_fuses_token_and_position_embeddings_and_says_why_the_mask_indexing_stays():
    """wte + wpe fuse; the causal mask's four ``x[batch_idx, pos_idx]`` (two index tensors each) stay in
    torch, each with the rule that keeps it there."""
    model = lm.gpt2()
    program = compiled(model)
    assert fused_ops(program) == [["aten.embedding", "aten.add"], ["aten.embedding"]]
    left = gathers_left(program)
    assert len(left) == 4
    assert set(left.values()) == {"x[idx] with more than one index tensor"}
    assert_equals_eager(program, model)


def test_gpt2_with_sdpa_is_refused_as_torchs_failure_and_still_runs_eagerly():
    """transformers' default sdpa attention: torch's decomposition views a transposed tensor it cannot view.

    It fails the same without af (torch.export, then run_decompositions), so
    af must name torch, not itself.
    """
    model = lm.gpt2("sdpa")
    with pytest.raises(TorchFailure) as err:
        compiled(model)
    message = str(err.value)
    assert "ExportedProgram.run_decompositions failed on" in message and "inside torch" in message
    assert "Cannot view a tensor" in message
    with torch.no_grad():
        assert model.module(*model.inputs(FIRST)).shape == (FIRST, 8, 32)


@pytest.mark.parametrize(
    "decoder, expected",
    [
        (
            False,
            ["aten._to_copy", "aten.mul", "aten.add", "aten.lt", "aten.minimum", "aten.where", "aten.add"],
        ),
        (True, ["aten.lt", "aten.minimum", "aten.where", "aten.add"]),
    ],
    ids=["encoder", "decoder"],
)
def test_t5_relative_bias_fuses_the_bucket_arithmetic_into_the_table_lookup(decoder, expected):
    """The bucket's integer tail joins the lookup: the encoder's offset (``(rel > 0).to(long) * 16``),
    the exact-or-log choice (``lt``, ``where``) and the clamp to the last bucket (``minimum``); ``abs`` /
    ``log`` and the permute after stay in torch. Both lengths are size symbols: one kernel for every pair."""
    model = lm.t5_relative_bias(decoder)
    program = compiled(model)
    assert fused_ops(program) == [expected + ["aten.embedding"]]
    assert_equals_eager(program, model)
    queries, keys = model.inputs(24)  # offsets up to 95, past max_distance 64: the clamp to the last bucket
    with torch.no_grad():
        assert torch.equal(program(queries, keys), model.module(queries, keys))


def test_mixtral_moe_under_torch_compile_fuses_both_expert_weight_gathers_for_every_sequence_length():
    """batched_mm gathers ``gate_up_proj[expert_ids]`` and ``down_proj[expert_ids]``: two regions, built once.

    The row count is 2 * batch * sequence, a product of size symbols:
    another sequence length must reuse both kernels, not recompile.
    """
    model = lm.mixtral_moe()
    fused = torch.compile(model.module, backend="af", dynamic=True)
    before = len(backend.compiled)
    builds = None
    with torch.no_grad():
        for seq in (8, 5, 11):
            (x,) = model.inputs(seq, seed=seq)
            torch.testing.assert_close(fused(x), model.module(x))
            if builds is None:
                builds = runtime.builds
    [graph] = backend.compiled[before:]  # one graph: no recompile for the other lengths
    assert [r.fused_ops for r in graph.partition.regions] == [["aten.index"], ["aten.index"]]
    assert [k.calls for k in graph.kernels] == [3, 3]
    assert runtime.builds == builds


def test_mixtral_moe_eager_experts_loop_is_refused_by_torch_export_as_torchs_failure():
    """Without an experts implementation the block loops over ``nonzero()`` experts: torch.export cannot."""
    model = lm.mixtral_moe(experts_implementation=None)
    with pytest.raises(
        TorchFailure, match="torch.export.export failed on MixtralSparseMoeBlock inside torch"
    ) as err:
        compiled(model)
    assert "data-dependent" in str(err.value)


def test_llama_rotary_has_no_gather_and_runs_unchanged():
    """Llama computes cos / sin from ``positions * inv_freq``: no table is indexed, nothing to fuse."""
    model = lm.llama_rotary()
    program = compiled(model)
    assert fused_ops(program) == [] and program.kernels == []
    assert gathers_left(program) == {}
    assert_equals_eager(program, model)


def test_gptj_attention_fuses_the_sin_cos_table_gather():
    """``embed_positions[position_ids]`` is one region; its result is split into sin and cos, so it ends
    there."""
    model = lm.gptj_attention()
    program = compiled(model)
    assert fused_ops(program) == [["aten.index"]]
    [region] = program.fused.partition.regions
    [note] = region.notes  # why the rotate math stays in torch, as explain shows it
    assert "'index' feeds 2 ops" in note and "split_with_sizes" in note and "a region has one output" in note
    assert gathers_left(program) == {}
    assert_equals_eager(program, model)


def deepctr_available() -> None:
    lm.import_deepctr_quietly()
    pytest.importorskip("deepctr_torch")


def test_din_fuses_every_feature_lookup_with_its_id_cast():
    """DIN reads ids from its float input matrix (``.long()``); each cast + lookup is a region: the DNN's 4
    feature lookups, the 2 history lookups and the 2 query lookups (the unused first pass is dead code)."""
    deepctr_available()
    model = lm.din("sigmoid")
    program = compiled(model)
    assert fused_ops(program) == [["aten._to_copy", "aten.embedding"]] * 8
    assert gathers_left(program) == {}
    assert_equals_eager(program, model)


@pytest.mark.filterwarnings("ignore:.*LeafSpec.*:FutureWarning")  # torch's own, in run_decompositions
def test_din_with_dice_fails_inside_torchs_decomposed_graph_as_it_does_without_af():
    """DIN's default attention activation, Dice, transposes; torch's decomposition of the attention MLP's
    linear then views a non-contiguous clone and fails at run time, with or without af. The eager model
    runs."""
    deepctr_available()
    model = lm.din("Dice")
    inputs = model.inputs(FIRST)
    exported = export(model.module, inputs)
    plain = exported.run_decompositions().module()
    message = "view size is not compatible with input tensor's size and stride"
    with pytest.raises(RuntimeError, match=message), torch.no_grad():
        plain(*inputs)  # torch alone
    program = af_torch.compile_exported(exported, name=model.name)
    assert len(program.fused.partition.regions) == 8
    with pytest.raises(Exception, match=message):  # torch's error, whatever af may wrap it in
        program(*inputs)
    with torch.no_grad():
        assert model.module(*inputs).shape == (FIRST, 1)


@pytest.mark.parametrize("key, expected", [("bert", EMBEDDINGS), ("gptj", [["aten.index"]])])
def test_torch_compile_fuses_what_export_fuses(key, expected):
    """The dynamo path finds the regions torch.export finds: dynamo's restart signals (a retrace) pass
    through the backend instead of being taken for torch failures."""
    model = lm.SUITE[key]()
    torch._dynamo.reset()
    before = len(backend.compiled)
    fused = torch.compile(model.module, backend="af", dynamic=True)
    inputs = model.inputs(FIRST)
    with torch.no_grad():
        torch.testing.assert_close(fused(*inputs), model.module(*inputs))
    assert [[r.fused_ops for r in g.partition.regions] for g in backend.compiled[before:]] == [expected]
