"""8-bit Mul and Muls in register vector functions.

The register Mul / Muls take no 8-bit type; the memory path computes them in int16 (Cast up, the op,
``Ands`` 255, Cast down to uint8). A vector function does the same in registers: the bytes loaded unpacked
into the even byte lanes (``LoadAlign`` ``DIST_UNPACK_B8``), cast up (int8 -> int16, uint8 -> uint16 read
as int16), multiplied in int16, the product's low byte cast back (uint16 -> uint8, ``NO_SAT``) and stored
from the even byte lanes (``StoreAlign`` ``DIST_PACK_B16``). Each graph runs on the twin against the same
graph with the op kept a memory-based call: the same bits at every pair of 8-bit edge values (so every
wrap-around), and the reference on random data; the twin's register counters are the cost model's.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from af_v35_regbase.testing import memory_session, run_every_case

from af_core.autofuser import AutofuserOptions
from af_core.builders import GraphBuilder, gather
from af_core.testing import same_bits
from af_core.twin import TwinSession

pytestmark = pytest.mark.twin

EDGES = {
    "int8": [-128, -127, -65, -64, -17, -2, -1, 0, 1, 2, 3, 15, 16, 63, 64, 100, 126, 127],
    "uint8": [0, 1, 2, 3, 15, 16, 17, 100, 127, 128, 129, 200, 254, 255],
}


def mul_graph(dtype: str, scalar: float | None):
    """gather(x) * w (``scalar`` None; w an input of the output's shape, loaded by the post chain) or
    gather(x) * scalar."""
    g = GraphBuilder(f"reg_mul8_{dtype}")
    index = g.data("index", ["b0", "b1"], "int32")
    x = gather(g.data("x", ["a0", "a1"], dtype), 0, index)
    if scalar is None:
        y = g.op("Mul", x, g.data("w", ["b0", "b1"], dtype), name="probe")
    else:
        y = g.op("Muls", x, value=scalar, name="probe")
    g.output(y, "y")
    return g.build()


def edge_arrays(dtype: str, binary: bool) -> tuple[dict[str, int], dict[str, np.ndarray]]:
    """Every pair of edge values (x, w) side by side in one row; a scalar op gets every edge value."""
    values = EDGES[dtype]
    pairs = list(itertools.product(values, values)) if binary else [(v, 0) for v in values]
    x = np.array([p[0] for p in pairs], dtype=dtype).reshape(1, -1)
    arrays = {"x": x, "index": np.zeros((2, x.size), dtype=np.int32)}
    if binary:
        arrays["w"] = np.repeat(np.array([p[1] for p in pairs], dtype=dtype).reshape(1, -1), 2, axis=0)
    return {"a0": 1, "a1": x.size, "b0": 2, "b1": x.size}, arrays


@pytest.mark.parametrize("template", ["simd", "sklike"])
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("scalar", [None, 3.0, -7.0, 200.0, 127.0])
def test_8_bit_mul_in_registers_has_the_memory_paths_bits(template, dtype, scalar):
    graph = mul_graph(dtype, scalar)
    session = TwinSession(graph, AutofuserOptions(force_template=template))
    op = "Mul" if scalar is None else "Muls"
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert f"1 op(s) {op} ('probe') in one VfChainRegApiCall" in notes, notes
    kernel = session.result.kernel
    cast_up = "Cast<int16_t, int8_t," if dtype == "int8" else "Cast<uint16_t, uint8_t,"
    for line in (cast_up, "Cast<uint8_t, uint16_t,", f"AscendC::Reg::{op}("):
        assert line in kernel, line
    assert "LoadDist::DIST_UNPACK_B8>" in kernel and "StoreDist::DIST_PACK_B16>" in kernel
    memory = memory_session(graph, template, {op})
    assert "Cast<uint8_t, uint16_t," not in memory.result.kernel
    sizes, arrays = edge_arrays(dtype, scalar is None)
    inputs = session.inputs(sizes, arrays=arrays)
    got, kept = session.run(inputs).outputs["y"], memory.run(inputs).outputs["y"]
    assert same_bits(got, kept), (got, kept)
    # the wrap-around product's low byte, e.g. int8 127 * 3 = 381 -> 125, uint8 200 * 200 = 40000 -> 64
    x = arrays["x"].astype(np.int64)
    w = arrays["w"].astype(np.int64) if scalar is None else np.int64(int(scalar))
    w = w[:1] if scalar is None else w
    np.testing.assert_array_equal(got[0], (x * w).astype(dtype)[0])
    run = session.check({"a0": 3, "a1": 300, "b0": 5, "b1": 300}, seed=6, core_num=3)
    assert run.ok, run.describe()


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_the_register_counters_are_predicted(dtype):
    """The register instructions and cycles each case predicts are the twin's (two Casts up, the Mul, the
    Cast down, the unpacked loads and the packed store per 128 elements)."""
    session = TwinSession(mul_graph(dtype, None), AutofuserOptions(force_template="simd"))
    run_every_case(session, session.inputs({"a0": 4, "a1": 333, "b0": 6, "b1": 333}, seed=2), 3)


def test_a_byte_op_next_to_the_mul_starts_its_own_run():
    """The Mul's bytes sit unpacked next to its int16 lanes; an op computed on full byte registers (Abs)
    cannot share its vector step, so each is a run of its own -- both in registers, and ``afc explain``
    says why they are apart."""
    g = GraphBuilder("mul8_abs")
    index = g.data("index", ["b0", "b1"], "int32")
    x = gather(g.data("x", ["a0", "a1"], "int8"), 0, index)
    g.output(g.op("Abs", g.op("Muls", x, value=5.0, name="probe"), name="abs"), "y")
    session = TwinSession(g.build(), AutofuserOptions(force_template="simd"))
    notes = session.scheduled.cases[0].impl.meta["vector_chains"]
    assert "1 op(s) Muls ('probe') in one VfChainRegApiCall" in notes, notes
    assert "1 op(s) Abs ('abs') in one VfChainRegApiCall" in notes, notes
    assert any(
        n.startswith("Abs ('abs') starts a new run: Abs on 1-byte data next to 2-byte values") for n in notes
    )
    run = session.check({"a0": 3, "a1": 140, "b0": 4, "b1": 140}, seed=1, core_num=2)
    assert run.ok, run.describe()
