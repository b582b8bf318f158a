"""Register Casts with a 2-byte integer, between float16 and bfloat16, between 1- and 2-byte types and from
1-byte to 4-byte types.

Each Cast pair the memory path routes through int16 <-> float32 / float16, 2-byte <-> 4-byte integers,
float16 <-> bfloat16 (``vf_chain.routes._two_byte_cast_trait``) or 1-byte <-> 2-byte steps (the 1-byte values in
the even byte lanes, ``vf_chain.routes._byte_cast_trait``; next to 4-byte values in every fourth byte lane,
``vf_chain.routes._widens_from_bytes``) is a register ``Cast`` in SIMD / SK-like vector
functions. Each runs on the twin
against the same graph compiled with the Cast kept a memory-based call: both must give the same bits at the
edges (NaN, infinities, -0, .5 ties, values out of the target's range, the integer extremes), and the
register kernel matches the reference on data in the numerics contract's range.
"""

from __future__ import annotations

import numpy as np
import pytest
from af_v35_regbase.testing import memory_session

from af_core.autofuser import AutofuserOptions
from af_core.builders import GraphBuilder, gather
from af_core.testing import same_bits
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin

#: (source, destination) -> the register Cast lines the kernel holds (``Cast<dst, src, trait>``)
PAIRS = {
    ("float32", "int16"): ["Cast<int16_t, float, kAfRegCast_ZERO_SAT_CAST_TRUNC>"],
    ("float16", "int16"): ["Cast<int16_t, half, kAfRegCast_UNKNOWN_SAT_CAST_TRUNC>"],
    ("bfloat16", "int16"): [
        "Cast<float, bfloat16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<int16_t, float, kAfRegCast_ZERO_SAT_CAST_TRUNC>",
    ],
    ("float16", "bfloat16"): ["Cast<bfloat16_t, half, kAfRegCast_UNKNOWN_UNKNOWN_CAST_RINT>"],
    ("bfloat16", "float16"): ["Cast<half, bfloat16_t, kAfRegCast_UNKNOWN_NO_SAT_CAST_RINT>"],
    ("int16", "float16"): ["Cast<half, int16_t, kAfRegCast_UNKNOWN_UNKNOWN_CAST_RINT>"],
    ("int16", "float32"): ["Cast<float, int16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>"],
    ("int16", "bfloat16"): [
        "Cast<float, int16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<bfloat16_t, float, kAfRegCast_ZERO_NO_SAT_CAST_RINT>",
    ],
    ("int16", "int32"): ["Cast<int32_t, int16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>"],
    ("int16", "uint32"): ["Cast<int32_t, int16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>"],
    ("uint16", "uint32"): ["Cast<uint32_t, uint16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>"],
    ("uint16", "int32"): ["Cast<uint32_t, uint16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>"],
    ("uint16", "float32"): [
        "Cast<uint32_t, uint16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<float, int32_t, kAfRegCast_UNKNOWN_UNKNOWN_CAST_RINT>",
    ],
    ("uint16", "float16"): [
        "Cast<uint32_t, uint16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<float, int32_t, kAfRegCast_UNKNOWN_UNKNOWN_CAST_RINT>",
        "Cast<half, float, kAfRegCast_ZERO_NO_SAT_CAST_RINT>",
    ],
    ("uint16", "bfloat16"): [
        "Cast<uint32_t, uint16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<float, int32_t, kAfRegCast_UNKNOWN_UNKNOWN_CAST_RINT>",
        "Cast<bfloat16_t, float, kAfRegCast_ZERO_NO_SAT_CAST_RINT>",
    ],
    ("int32", "int16"): ["Cast<int16_t, int32_t, kAfRegCast_ZERO_NO_SAT_UNKNOWN>"],
    ("int32", "uint16"): ["Cast<uint16_t, int32_t, kAfRegCast_ZERO_NO_SAT_UNKNOWN>"],
    ("uint32", "int16"): ["Cast<int16_t, uint32_t, kAfRegCast_ZERO_NO_SAT_UNKNOWN>"],
    ("uint32", "uint16"): ["Cast<uint16_t, uint32_t, kAfRegCast_ZERO_NO_SAT_UNKNOWN>"],
    # 1-byte values next to 2-byte ones: in the even byte lanes (DIST_UNPACK_B8 / DIST_PACK_B16)
    ("float16", "int8"): ["Cast<int8_t, half, kAfRegCast_ZERO_SAT_CAST_TRUNC>"],
    ("float16", "uint8"): ["Cast<uint8_t, half, kAfRegCast_ZERO_SAT_CAST_TRUNC>"],
    ("int8", "float16"): ["Cast<half, int8_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>"],
    ("int8", "bfloat16"): [
        "Cast<half, int8_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<bfloat16_t, half, kAfRegCast_UNKNOWN_UNKNOWN_CAST_RINT>",
    ],
    ("int8", "int16"): ["Cast<int16_t, int8_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>"],
    ("int8", "uint16"): ["Cast<int16_t, int8_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>"],
    ("uint8", "float16"): ["Cast<half, uint8_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>"],
    ("uint8", "bfloat16"): [
        "Cast<half, uint8_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<bfloat16_t, half, kAfRegCast_UNKNOWN_UNKNOWN_CAST_RINT>",
    ],
    ("uint8", "int16"): [
        "Cast<half, uint8_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<int16_t, half, kAfRegCast_UNKNOWN_SAT_CAST_TRUNC>",
    ],
    ("uint8", "uint16"): ["Cast<uint16_t, uint8_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>"],
    ("int16", "uint8"): ["Cast<uint8_t, int16_t, kAfRegCast_ZERO_NO_SAT_UNKNOWN>"],
    ("uint16", "uint8"): ["Cast<uint8_t, uint16_t, kAfRegCast_ZERO_NO_SAT_UNKNOWN>"],
    # 1-byte values next to 4-byte ones: in every fourth byte lane (DIST_UNPACK4_B8), widened in two steps
    ("int8", "int32"): [
        "Cast<int16_t, int8_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<int32_t, int16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
    ],
    ("int8", "uint32"): [
        "Cast<int16_t, int8_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<int32_t, int16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
    ],
    ("uint8", "uint32"): [
        "Cast<uint16_t, uint8_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<uint32_t, uint16_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
    ],
    ("int8", "float32"): [
        "Cast<half, int8_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<float, half, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
    ],
    ("uint8", "float32"): [
        "Cast<half, uint8_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<float, half, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
    ],
    ("uint8", "int32"): [
        "Cast<half, uint8_t, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<float, half, kAfRegCast_ZERO_UNKNOWN_UNKNOWN>",
        "Cast<int32_t, float, kAfRegCast_UNKNOWN_SAT_CAST_TRUNC>",
    ],
}
# a 4-byte integer's low byte: no instruction, the store keeps it (StoreAlign DIST_PACK4_B32)
PAIRS[("int32", "uint8")] = []
PAIRS[("uint32", "uint8")] = []
#: the pairs whose 1-byte source a 4-byte step loads into every fourth byte lane
QUARTERED = {pair for pair in PAIRS if pair[0] in ("int8", "uint8") and pair[1].endswith("32")}
#: the pairs whose byte result a 4-byte step stores from the low byte of each lane
PACKED4 = {("int32", "uint8"), ("uint32", "uint8")}

FLOAT_EDGES = [
    0.0,
    -0.0,
    0.5,
    -0.5,
    1.5,
    -1.5,
    2.5,
    -2.5,
    3.7,
    -3.7,
    2049.0,
    2051.0,
    32767.0,
    32767.5,
    32768.0,
    -32768.0,
    -32768.5,
    -32769.0,
    65504.0,
    65520.0,
    1e9,
    -1e9,
    3e38,
    1e-8,
    -1e-40,
    float("inf"),
    float("-inf"),
    float("nan"),
]


def edges(dtype: str) -> np.ndarray:
    """Values at the edges of the Casts from ``dtype``."""
    if dtype in ("float32", "float16", "bfloat16"):
        with np.errstate(over="ignore"):
            values = np.array(FLOAT_EDGES, dtype=np.float32)
            return values.astype(np.float16) if dtype == "float16" else values
    info = np.iinfo(dtype)
    picks = [info.min, info.min + 1, -1, 0, 1, 2049, 2051, 32767, 32768, 65535, 65536, 70000, 16777217]
    picks += [info.max - 1, info.max, -32768, -32769]
    return np.array(sorted({v for v in picks if info.min <= v <= info.max}), dtype=dtype)


def cast_graph(src: str, dst: str, post: tuple[str, ...] = ()):
    g = GraphBuilder(f"reg_cast_{src}_{dst}")
    x = g.data("x", ["a0", "a1"], src)
    y = g.op("Cast", gather(x, 0, g.data("index", ["b0", "b1"], "int32")), dtype=dst, name="probe")
    for op in post:
        y = g.op(op, y)
    g.output(y, "y")
    return g.build()


def edge_inputs(session: TwinSession, src: str):
    values = edges(src)
    sizes = {"a0": 1, "a1": values.size, "b0": 2, "b1": values.size}
    x = values.reshape(1, -1)
    if src == "bfloat16":  # the float32 values rounded to bfloat16 by the session's own conversion
        x = values.reshape(1, -1).astype(np.float32)
    arrays = {"x": x, "index": np.zeros((2, values.size), dtype=np.int32)}
    return sizes, session.inputs(sizes, arrays=arrays)


@pytest.mark.parametrize(("src", "dst"), sorted(PAIRS))
def test_the_cast_is_a_register_cast_with_the_memory_paths_bits(src, dst):
    graph = cast_graph(src, dst)
    session = TwinSession(graph, AutofuserOptions(force_template="simd"))
    kernel = session.result.kernel
    assert session.scheduled.cases[0].impl.meta["vector_chains"] == [
        "1 op(s) Cast ('probe') in one VfChainRegApiCall"
    ]
    assert "(VecElementwiseRegApiCall)" not in kernel
    for line in PAIRS[src, dst]:
        assert f"AscendC::Reg::{line}(" in kernel, line
    assert ("LoadDist::DIST_UNPACK4_B8>" in kernel) == ((src, dst) in QUARTERED)
    assert ("StoreDist::DIST_PACK4_B32>" in kernel) == ((src, dst) in PACKED4)
    memory = memory_session(graph, "simd", {"Cast"})
    assert "AscendC::Reg::Cast<" not in memory.result.kernel
    sizes, inputs = edge_inputs(session, src)
    got = session.run(inputs)
    kept = memory.run(inputs)
    assert same_bits(got.outputs["y"], kept.outputs["y"]), (got.outputs["y"], kept.outputs["y"])
    run = session.check(inputs=contract_inputs(session, src, dst), core_num=2)
    assert run.ok, run.describe()


def contract_inputs(session: TwinSession, src: str, dst: str):
    """Random data every Cast of the table keeps in range (the reference wraps where 3510 saturates)."""
    rng = np.random.default_rng(71)
    lo, hi = (0, 250) if dst.startswith("uint") else (-120, 120)
    if src in ("float32", "float16", "bfloat16"):
        x = rng.uniform(lo, hi, (3, 77)).astype(np.float16 if src == "float16" else np.float32)
    else:
        info = np.iinfo(src)
        x = rng.integers(max(lo, info.min), min(hi, info.max) + 1, (3, 77)).astype(src)
    arrays = {"x": x, "index": rng.integers(0, 3, (5, 77)).astype(np.int32)}
    return session.inputs({"a0": 3, "a1": 77, "b0": 5, "b1": 77}, arrays=arrays)


def test_saturation_and_wrap_at_the_edges():
    """The register Casts saturate where the memory Cast saturates (float -> int16, NaN -> 0) and keep the
    low 16 bits where it does (int32 -> int16)."""
    session = TwinSession(cast_graph("float32", "int16"), AutofuserOptions(force_template="simd"))
    _sizes, inputs = edge_inputs(session, "float32")
    got = session.run(inputs).outputs["y"][0]
    want = dict(zip(FLOAT_EDGES[:-1], got[:-1].tolist()))
    assert want[2.5] == 2 and want[-2.5] == -2 and want[32767.5] == 32767 and want[-32769.0] == -32768
    assert want[1e9] == 32767 and want[float("-inf")] == -32768 and got[-1] == 0
    session = TwinSession(cast_graph("int32", "int16"), AutofuserOptions(force_template="simd"))
    _sizes, inputs = edge_inputs(session, "int32")
    values = edges("int32")
    got = session.run(inputs).outputs["y"][0]
    assert np.array_equal(got, values.astype(np.int16))  # the low 16 bits: 65536 -> 0, 70000 -> 4464


@pytest.mark.parametrize("template", ["simd", "sklike"])
def test_casts_in_a_longer_chain(template):
    """int16 -> float32 and Abs in one vector function with unpacked int16 values; float16 -> int16 and Abs in
    full 2-byte registers; int8 -> float16 (the int8 values unpacked into the even byte lanes) and Abs --
    the memory path's bits and the reference."""
    chains = (("int16", "float32", ("Abs",)), ("float16", "int16", ("Abs",)), ("int8", "float16", ("Abs",)))
    for src, dst, post in chains:
        graph = cast_graph(src, dst, post)
        session = TwinSession(graph, AutofuserOptions(force_template=template))
        notes = session.scheduled.cases[0].impl.meta["vector_chains"]
        assert notes == ["2 op(s) Cast ('probe'), Abs ('abs') in one VfChainRegApiCall"], notes
        memory = memory_session(graph, template, {"Cast"})
        for seed, sizes in (
            (3, {"a0": 4, "a1": 300, "b0": 5, "b1": 300}),
            (4, {"a0": 2, "a1": 9, "b0": 3, "b1": 9}),
        ):
            run = session.check(sizes, seed=seed, core_num=2)
            assert run.ok, run.describe()
            kept = memory.check(sizes, inputs=run.inputs, core_num=2)
            assert same_bits(run.twin.outputs["y"], kept.twin.outputs["y"]), sizes


def test_a_run_of_4_byte_values_holds_bytes_only_for_widening_casts_or_a_stored_low_byte():
    """Bytes next to 4-byte values sit in every fourth byte lane (widened by Casts) or are a 4-byte
    register's low byte (only stored): one run takes either, not both, and no other op on bytes."""
    from af_v35_regbase.api_calls.vf_chain import VfChainRegApiCall

    widen = ("Cast", ("int8",), "float32")
    low_byte = ("Cast", ("int32",), "uint8")
    f32 = ("Exp", ("float32",), "float32")
    assert VfChainRegApiCall.run_rejection([widen, f32]) is None
    assert VfChainRegApiCall.run_rejection([f32, ("Cast", ("float32",), "int32"), low_byte]) is None
    assert VfChainRegApiCall.run_rejection([widen, low_byte]) == (
        "a byte made next to 4-byte values is the low byte of its 4-byte register, which only a store reads; "
        "the run also widens bytes"
    )
    assert VfChainRegApiCall.run_rejection([widen, ("Abs", ("int8",), "int8")]) == (
        "Abs int8 -> int8 next to 4-byte values: the 1-byte values sit in every fourth byte lane, which only "
        "a widening Cast reads"
    )
