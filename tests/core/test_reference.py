"""The numpy reference implements IndirectLoad as specified, checked independently."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from af_core.builders import GraphBuilder, embedding, gather, index_select
from af_core.errors import AscirError
from af_core.inputs import make_inputs, pack_inputs
from af_core.reference.bfloat16 import bits_to_f32, f32_to_bits, round_to_bf16
from af_core.reference.interpreter import evaluate


def gather_graph(shape, index_shape, dim, dtype="float32", idx="int32", **flags):
    g = GraphBuilder("g")
    x = g.data("x", shape, dtype)
    i = g.data("i", index_shape, idx)
    g.output(gather(x, dim, i, **flags), "y")
    return g.build()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_gather_matches_take_along_axis(data):
    rank = data.draw(st.integers(1, 5))
    shape = data.draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank))
    dim = data.draw(st.integers(-rank, rank - 1))
    index_shape = [data.draw(st.integers(1, n + 2 if d == dim % rank else n)) for d, n in enumerate(shape)]
    graph = gather_graph(shape, index_shape, dim)
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    x = rng.standard_normal(shape).astype(np.float32)
    idx = rng.integers(0, shape[dim], index_shape).astype(np.int32)
    out = evaluate(graph, {"x": x, "i": idx})["y"]
    region = tuple(slice(0, index_shape[a]) if a != dim % rank else slice(None) for a in range(rank))
    expected = np.take_along_axis(x[region], idx.astype(np.int64), axis=dim)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, expected)


def test_negative_indices_need_the_flag():
    graph = gather_graph([3, 5], [3, 2], 1)
    idx = np.array([[-1, 0], [2, -5], [4, 1]], dtype=np.int32)
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    with pytest.raises(AscirError, match="index-in-range"):
        evaluate(graph, {"x": x, "i": idx})
    graph = gather_graph([3, 5], [3, 2], 1, need_check_negative=True)
    out = evaluate(graph, {"x": x, "i": idx})["y"]
    np.testing.assert_array_equal(out, [[4, 0], [7, 5], [14, 11]])


def test_an_index_out_of_range_is_named_by_the_value_given():
    x = np.arange(32, dtype=np.float32).reshape(2, 16)
    idx = np.array([[3, -17, -16, 2], [16, 0, 1, -1]], dtype=np.int64)
    negative = gather_graph([2, 16], [2, 4], 1, need_check_negative=True)
    with pytest.raises(AscirError, match=re.escape("index values [-17, 16] fall outside [-16, 16)")):
        evaluate(negative, {"x": x, "i": idx})
    plain = gather_graph([2, 16], [2, 4], 1)
    with pytest.raises(AscirError, match=re.escape("index values [-17, -16, 16, -1] fall outside [0, 16)")):
        evaluate(plain, {"x": x, "i": idx})


def test_bound_check_zeroes_without_reading():
    graph = gather_graph([2, 4], [2, 3], 1, need_check_bound=True)
    x = np.arange(8, dtype=np.float32).reshape(2, 4) + 1
    idx = np.array([[4, -1, 3], [0, 100, 2]], dtype=np.int64)
    out = evaluate(graph, {"x": x, "i": idx})["y"]
    np.testing.assert_array_equal(out, [[0, 0, 4], [5, 0, 7]])


def test_both_flags():
    graph = gather_graph([1, 4], [1, 4], 1, need_check_negative=True, need_check_bound=True)
    x = np.array([[10, 20, 30, 40]], dtype=np.float32)
    idx = np.array([[-1, -4, -5, 4]], dtype=np.int32)
    out = evaluate(graph, {"x": x, "i": idx})["y"]
    np.testing.assert_array_equal(out, [[40, 10, 0, 0]])


def test_bfloat16_rounding_is_nearest_even():
    values = np.array([1.0, 1.00390625, 1.01171875, -2.5, np.inf], dtype=np.float32)
    bits = f32_to_bits(values)
    assert bits.tolist() == [0x3F80, 0x3F80, 0x3F82, 0xC020, 0x7F80]
    np.testing.assert_array_equal(bits_to_f32(bits), round_to_bf16(values))
    assert np.isnan(round_to_bf16(np.array([np.nan], dtype=np.float32)))[0]


def test_reduce_reference_keeps_dims():
    g = GraphBuilder("r")
    x = g.data("x", [2, 3, 4], "float16")
    g.output(g.reduce("Sum", x, [1]), "y")
    graph = g.build()
    data = np.arange(24, dtype=np.float16).reshape(2, 3, 4)
    out = evaluate(graph, {"x": data})["y"]
    assert out.shape == (2, 1, 4) and out.dtype == np.float16
    np.testing.assert_array_equal(out, data.astype(np.float32).sum(1, keepdims=True).astype(np.float16))


def torch_index_select(x, dim, index):
    return np.take(x, index, axis=dim)


def torch_embedding(weight, indices):
    return weight[indices]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_index_select_builder_matches_torch_semantics(data):
    rank = data.draw(st.integers(1, 4))
    shape = data.draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    dim = data.draw(st.integers(-rank, rank - 1))
    n = data.draw(st.integers(1, 7))
    g = GraphBuilder("is")
    x = g.data("x", shape, "float32")
    i = g.data("i", [n], "int64")
    g.output(index_select(x, dim, i), "y")
    graph = g.build()
    rng = np.random.default_rng(n)
    xv = rng.standard_normal(shape).astype(np.float32)
    iv = rng.integers(0, shape[dim], n)
    inputs = pack_inputs(
        graph,
        {
            "x": xv,
            "i": np.broadcast_to(
                np.expand_dims(iv, [a for a in range(rank) if a != dim % rank]),
                [n if a == dim % rank else s for a, s in enumerate(shape)],
            ),
        },
    )
    assert inputs.storage["i"].shape == (n,)
    out = evaluate(graph, inputs.logical)["y"]
    np.testing.assert_array_equal(out, torch_index_select(xv, dim, iv))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_embedding_builder_matches_torch_semantics(data):
    k = data.draw(st.integers(1, 3))
    ind_shape = data.draw(st.lists(st.integers(1, 4), min_size=k, max_size=k))
    vocab, width = data.draw(st.integers(1, 9)), data.draw(st.integers(1, 6))
    g = GraphBuilder("emb")
    w = g.data("w", [vocab, width], "float32")
    ids = g.data("ids", ind_shape, "int32")
    g.output(embedding(w, ids), "y")
    graph = g.build()
    inputs = make_inputs(graph, {}, seed=k)
    weight = inputs.storage["w"].reshape(vocab, width)
    indices = inputs.storage["ids"].reshape(ind_shape)
    out = evaluate(graph, inputs.logical)["y"]
    assert out.shape == (*ind_shape, width)
    np.testing.assert_array_equal(out, torch_embedding(weight, indices))


@pytest.mark.torch
def test_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    for dim in (0, 1, 2, -1):
        x = rng.standard_normal((4, 5, 6)).astype(np.float32)
        d = dim % 3
        idx_shape = [3, 4, 5]
        idx = rng.integers(0, x.shape[d], idx_shape)
        graph = gather_graph(list(x.shape), idx_shape, dim, idx="int64")
        out = evaluate(graph, {"x": x, "i": idx})["y"]
        expected = torch.gather(torch.from_numpy(x), dim, torch.from_numpy(idx)).numpy()
        np.testing.assert_array_equal(out, expected)
        g = GraphBuilder("is")
        xs = g.data("x", list(x.shape), "float32")
        i = g.data("i", [7], "int64")
        g.output(index_select(xs, dim, i), "y")
        graph = g.build()
        iv = rng.integers(0, x.shape[d], 7)
        inputs = pack_inputs(
            graph,
            {
                "x": x,
                "i": np.broadcast_to(
                    np.expand_dims(iv, [a for a in range(3) if a != d]),
                    [7 if a == d else s for a, s in enumerate(x.shape)],
                ),
            },
        )
        got = evaluate(graph, inputs.logical)["y"]
        want = torch.index_select(torch.from_numpy(x), dim, torch.from_numpy(iv)).numpy()
        np.testing.assert_array_equal(got, want)
    weight = rng.standard_normal((11, 4)).astype(np.float32)
    ids = rng.integers(0, 11, (2, 3))
    g = GraphBuilder("emb")
    w = g.data("w", [11, 4], "float32")
    i = g.data("ids", [2, 3], "int64")
    g.output(embedding(w, i), "y")
    graph = g.build()
    inputs = pack_inputs(
        graph, {"w": np.broadcast_to(weight, (2, 11, 4)), "ids": np.broadcast_to(ids[..., None], (2, 3, 4))}
    )
    got = evaluate(graph, inputs.logical)["y"]
    want = torch.nn.functional.embedding(torch.from_numpy(ids), torch.from_numpy(weight)).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.torch
@settings(max_examples=80, deadline=None)
@given(st.data())
def test_gather_matches_torch_on_random_graphs(data):
    """torch.gather over random ranks, dims (negative too), dtypes and index dtypes, negative indices wrapped."""
    torch = pytest.importorskip("torch")
    rank = data.draw(st.integers(1, 5))
    shape = data.draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank))
    dim = data.draw(st.integers(-rank, rank - 1))
    index_shape = [data.draw(st.integers(1, n + 2 if d == dim % rank else n)) for d, n in enumerate(shape)]
    dtype = data.draw(st.sampled_from(["float32", "float16", "int32", "int64"]))
    idx_dtype = data.draw(st.sampled_from(["int32", "int64"]))
    negative = data.draw(st.booleans())
    graph = gather_graph(shape, index_shape, dim, dtype=dtype, idx=idx_dtype, need_check_negative=negative)
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    x = (rng.standard_normal(shape) * 50).astype(dtype)
    low = -shape[dim] if negative else 0
    idx = rng.integers(low, shape[dim], index_shape).astype(idx_dtype)
    out = evaluate(graph, {"x": x, "i": idx})["y"]
    wrapped = np.where(idx < 0, idx + shape[dim], idx).astype(np.int64)
    expected = torch.gather(torch.from_numpy(x), dim, torch.from_numpy(wrapped)).numpy()
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)
