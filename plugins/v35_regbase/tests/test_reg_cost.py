"""The register instruction mix and cycles the cost model takes from af_v35_regbase.reg_cost.

The throughput table is the asc-devkit one; the CPU twin has its own copy (``RegRate`` in
``af_twin/reg.h``), and the first test compares the two entry by entry through a compiled probe. The
others pin the counting rule on hand-counted cases, and check that the instructions a chain node's
vector function records are the ones it writes (code generation and the cost formula build the same
function). Whole kernels against the twin's counters: tests/integration/test_register_cycles.py.
"""

from __future__ import annotations

import math
import re

import pytest
import sympy
from af_v35_regbase import reg_cost
from af_v35_regbase.api_calls.indirect_load import register_gather_rejection
from af_v35_regbase.api_calls.vf_chain import REG_REDUCE, VfChainRegApiCall, _build, _Source, chain_mix
from af_v35_regbase.api_calls.vf_chain.reduce_text import horizontal_text, reduce_parts, reduce_text
from af_v35_regbase.api_dtypes import REG_ROWS
from af_v35_regbase.reg_cost import COMPUTE, LOAD, MASK, STORE, RegInstr, RegMix

from af_core import dtypes as dt
from af_core.errors import CodegenError
from af_core.schedule.chain_attrs import ChainReduce, ChainStep
from af_core.schedule.impl_graph import ImplGraph, ImplNode, ImplTensor
from af_core.tiling.spec import CeilDiv

#: Register instructions whose accepted types have tables of their own: Reduce (vf_chain.REG_REDUCE, the
#: same-type forms generated) and Gather (the data types of indirect_load.register_gather_rejection).
_OWN_TABLES = {
    "Reduce": sorted(set().union(*REG_REDUCE.values())),
    "Gather": sorted(t for t in reg_cost.RATES["Gather"] if register_gather_rejection(dt.get(t)) is None),
}


def _twin_cases() -> list[tuple[str, str, str]]:
    """(api, dtype, kind) for every register instruction of the table and every type the 3510 register
    implementation accepts for it (api_dtypes.REG_ROWS, and the generated forms of Reduce and Gather)."""
    out = []
    for row in REG_ROWS:
        if row.api not in reg_cost.RATES and row.api not in ("LoadAlign", "StoreAlign"):
            continue
        kind = {"LoadAlign": LOAD, "StoreAlign": STORE}.get(row.api, COMPUTE)
        out += [(row.api, t, kind) for t in row.types if t != "bool"]
    for api, types in sorted(_OWN_TABLES.items()):
        out += [(api, t, LOAD if api == "Gather" else COMPUTE) for t in types]
    return out


def test_every_table_row_has_an_instruction_the_register_path_accepts():
    accepted = {row.api for row in REG_ROWS} | set(_OWN_TABLES)
    assert set(reg_cost.RATES) <= accepted
    assert all(_OWN_TABLES.values())


@pytest.mark.twin
def test_the_table_agrees_with_the_twins_reg_rate(twin_run):
    cases = _twin_cases()
    assert len(cases) > 100
    lines = [
        f'std::printf("%u\\n", AfTwin::RegRate("{api}", {dt.get(t).itemsize}, {str(dt.get(t).is_float).lower()}));'
        for api, t, _kind in cases
    ]
    source = (
        '#include "kernel_operator.h"\n#include <cstdio>\nint main() {\n'
        + "\n".join(lines)
        + "\nreturn 0;\n}\n"
    )
    rc, out, err = twin_run(source)
    assert rc == 0, err
    rates = [int(v) for v in out.split()]
    assert len(rates) == len(cases)
    for (api, t, kind), twin_rate in zip(cases, rates):
        lanes = reg_cost.lanes(t)
        twin_cycles = 1 if twin_rate == 0 else math.ceil(lanes / twin_rate)
        assert reg_cost.cycles(RegInstr(api, t, kind)) == twin_cycles, (api, t, twin_rate)


@pytest.mark.twin
def test_the_unaligned_load_rows_agree_with_the_twins_reg_rate(twin_run):
    """Table 1's 连续非对齐搬入 row: LoadUnAlign over one vector and LoadUnAlignPre over one 32-byte block, per
    element size, in the cost table and in the twin's RegRate alike."""
    cases = [
        (api, t) for api in reg_cost.UNALIGNED_MOVE_RATES for t in ("int8", "float16", "float32", "int32")
    ]
    lines = [
        f'std::printf("%u\\n", AfTwin::RegRate("{api}", {dt.get(t).itemsize}, {str(dt.get(t).is_float).lower()}));'
        for api, t in cases
    ]
    rc, out, err = twin_run(
        '#include "kernel_operator.h"\n#include <cstdio>\nint main() {\n' + "\n".join(lines) + "\n}\n"
    )
    assert rc == 0, err
    for (api, t), twin_rate in zip(cases, map(int, out.split())):
        size = dt.get(t).itemsize
        assert reg_cost.UNALIGNED_MOVE_RATES[api][size] == twin_rate, (api, t)
        elements = 32 // size if api == "LoadUnAlignPre" else None
        assert (
            reg_cost.cycles(RegInstr(api, t, LOAD, elements=elements))
            == 1
            == math.ceil((elements or reg_cost.lanes(t)) / twin_rate)
        )


@pytest.mark.parametrize(
    ("instr", "expected"),
    [
        (RegInstr("Add", "float32"), 1),  # table 6: 64 / cycle, 64 lanes
        (RegInstr("Add", "int32"), 2),  # 32 / cycle
        (RegInstr("Add", "int8"), 2),  # 128 / cycle, 256 lanes
        (RegInstr("Exp", "float32"), 4),  # 16 / cycle
        (RegInstr("Exp", "float16"), 8),  # 16 / cycle, 128 lanes
        (RegInstr("Div", "float32"), 4),
        (RegInstr("Div", "int32"), 1),  # not in the table: one per vector
        (RegInstr("Truncate", "float32"), 2),  # table 10: 32 / cycle
        (RegInstr("Truncate", "bfloat16"), 2),  # 64 / cycle, 128 lanes
        (RegInstr("Cast", "float32", src="float16"), 1),  # 64 / cycle over the 64 float lanes
        (RegInstr("Cast", "int32", src="float32"), 2),  # 32 / cycle
        (RegInstr("Cast", "int16", src="float32"), 2),  # 32 / cycle over the 64 float lanes
        (RegInstr("Cast", "float32", src="int16"), 2),  # 32 / cycle
        (RegInstr("Cast", "int16", src="float16"), 2),  # 64 / cycle, 128 lanes
        (RegInstr("Cast", "float16", src="int16"), 2),
        (RegInstr("Cast", "int32", src="int16"), 1),  # no row: one per vector
        (RegInstr("Cast", "bfloat16", src="float16"), 1),  # no row: one per vector
        (RegInstr("Compare", "float16"), 1),
        (RegInstr("LoadAlign", "float16", LOAD), 1),
        (RegInstr("LoadAlign", "float16", LOAD, elements=64), 1),  # DIST_UNPACK_B16: half a vector
        (RegInstr("LoadAlign", "float32", LOAD, block=True), 2),  # DATA_BLOCK_COPY: 32 / cycle
        (RegInstr("LoadAlign", "int8", LOAD, block=True), 2),  # 128 / cycle, 256 lanes
        (RegInstr("Gather", "float32", LOAD), 2),  # table 1, 离散搬入 b32: 32 / cycle
        (RegInstr("Gather", "bfloat16", LOAD), 2),  # b16: 64 / cycle, 128 lanes
        (RegInstr("Reduce", "float16", COMPUTE), 1),  # table 11: one vector per cycle
        (RegInstr("Xor", "int16", COMPUTE), 1),  # table 7: one vector per cycle
        (RegInstr("StoreAlign", "float32", STORE, elements=1), 1),  # DIST_FIRST_ELEMENT_B32
        (RegInstr("StoreAlign", "int64", STORE), 1),  # no 64-bit row: one per vector
        (RegInstr("UpdateMask", "float32", MASK), 0),  # no figure for mask instructions
        (RegInstr("LoadUnAlign", "float32", LOAD), 1),  # table 1, 连续非对齐搬入: 64 / cycle
        (RegInstr("LoadUnAlign", "int8", LOAD), 1),  # 256 / cycle
        (RegInstr("LoadUnAlignPre", "float32", LOAD, elements=8), 1),  # 8 / cycle, one 32-byte block
        (RegInstr("LoadUnAlignPre", "float16", LOAD, elements=16), 1),  # 16 / cycle
        (RegInstr("MaskLoadAlign", "uint8", LOAD, elements=32), 1),  # table 3: a mask LoadAlign 1 cycle
        (RegInstr("MaskGenWithRegTensor", "uint32", MASK), 4),  # table 3: 4 cycles
        (RegInstr("MaskStoreAlign", "uint8", STORE, elements=16), 1),  # table 4: 1 cycle
        (RegInstr("MaskStoreUnAlign", "uint32", STORE), 1),  # table 4: 1 cycle
        (RegInstr("MaskStoreUnAlignPost", "uint32", STORE), 1),  # table 2: one 32-byte block a cycle
        (RegInstr("UnPack", "uint32", MASK), 1),  # table 5: 1 cycle
    ],
)
def test_cycles_follow_the_documented_rates(instr, expected):
    assert reg_cost.cycles(instr) == expected


def test_64bit_max_and_maxs_issue_the_register_pair_sequence():
    assert reg_cost.issue(RegInstr("Max", "int64")) == RegMix(compute=7, masks=1, cycles=8)
    assert reg_cost.issue(RegInstr("Mins", "int64")) == RegMix(compute=8, masks=1, cycles=9)
    assert reg_cost.issue(RegInstr("Maxs", "int32")) == RegMix(compute=1, cycles=1)


@pytest.mark.parametrize(
    ("api", "dtype", "calls"),
    [
        # two B64TraitOneToTraitTwo, the op on the pair, B64TraitTwoToTraitOne; plus the MaskPack
        ("Add", "int64", 2 + 2 + 1),  # Add (carry out) + AddC
        ("Sub", "uint64", 2 + 2 + 1),  # Sub (borrow out) + SubC
        ("Mul", "uint64", 2 + 3 + 1),  # Mull + two vmula
        ("Xor", "int64", 2 + 2 + 1),  # Xor of each half
        ("Not", "uint64", 1 + 2 + 1),  # one source: one conversion in
        ("Neg", "int64", 1 + 3 + 1),  # Duplicate 0, the pair Sub (2)
        ("Abs", "int64", 1 + 6 + 1),  # vbr, vcmp_lt, Sub, SubC, two vsel
        ("Relu", "int64", 1 + 5 + 1),  # the pair Maxs by 0: Duplicate, Compare, Select, Duplicate, Select
        ("Adds", "uint64", 1 + 2 + 2 + 1),  # Duplicate, then the Add sequence
        ("Muls", "int64", 1 + 2 + 3 + 1),  # Duplicate, then the Mul sequence
    ],
)
def test_64bit_ops_issue_the_3510_register_pair_sequences(api, dtype, calls):
    """One computing instruction of one cycle per call of the sequence (no 64-bit row in the table), and the
    MaskPack one cycle (table 5's Pack)."""
    assert reg_cost.issue(RegInstr(api, dtype)) == RegMix(compute=calls, masks=1, cycles=calls + 1)


def test_64bit_compares_and_select_issue_the_3510_register_pair_sequences():
    """CompareImpl on 64 bits: MaskPack, two conversions, the vcmp of CompareB64Impl (two for EQ / NE, three
    for the ordered modes), its por (NE) / psel (ordered; one cycle each, as mask logic), MaskUnPack; Compares
    a Duplicate before it; Select: MaskPack, two conversions, two vsel, one conversion back."""
    assert reg_cost.issue(RegInstr("Compare", "int64", mode="EQ")) == RegMix(compute=4, masks=2, cycles=6)
    assert reg_cost.issue(RegInstr("Compare", "uint64", mode="NE")) == RegMix(compute=4, masks=3, cycles=7)
    for mode in ("GT", "GE", "LT", "LE"):
        assert reg_cost.issue(RegInstr("Compare", "int64", mode=mode)) == RegMix(compute=5, masks=3, cycles=8)
    assert reg_cost.issue(RegInstr("Compares", "uint64", mode="LT")) == RegMix(compute=6, masks=3, cycles=9)
    assert reg_cost.issue(RegInstr("Select", "int64")) == RegMix(compute=5, masks=1, cycles=6)
    assert reg_cost.issue(RegInstr("Compare", "int32", mode="GT")) == RegMix(compute=1, cycles=1)


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind 'vector'"):
        RegInstr("Add", "float32", "vector")


def _chain(steps: list[tuple[str, list[str], str, dict]], dtypes: dict[str, str], ins, outs, count):
    impl = ImplGraph("g", "t")
    for name, d in dtypes.items():
        impl.add_tensor(ImplTensor(name, dt.get(d), "UB", buffer=name))
    node = ImplNode(
        "chain",
        "VectorChain",
        VfChainRegApiCall.name,
        tuple(ins),
        tuple(outs),
        loop_axis="OT",
        attrs={
            "count": count,
            "steps": [
                ChainStep(name=f"s{i}", op=op, inputs=i_, output=o, **extra)
                for i, (op, i_, o, extra) in enumerate(steps)
            ],
        },
    )
    return node, impl


def test_a_float_chain_counts_its_loads_ops_store_and_mask_per_step():
    # y = Relu(Exp(x) + s): 2 loads, Exp (4 cycles), Add, Relu, 1 store, 1 UpdateMask; 64 lanes a step
    actual = sympy.Symbol("OT_actual")
    node, impl = _chain(
        [("Exp", ["x"], "e", {}), ("Add", ["e", "s"], "a", {}), ("Relu", ["a"], "y", {})],
        {"x": "float32", "s": "float32", "e": "float32", "a": "float32", "y": "float32"},
        ["x", "s"],
        ["y"],
        actual * 40,
    )
    per_step, lanes = chain_mix(node, impl)
    assert lanes == 64
    assert per_step == RegMix(loads=2, stores=1, compute=3, masks=1, cycles=2 + 1 + 4 + 1 + 1)
    counters = VfChainRegApiCall.predicted_counters(node, impl)
    steps = CeilDiv(actual * 40, 64)
    assert sympy.simplify(counters["reg_instructions"] - 7 * steps) == 0
    assert sympy.simplify(counters["reg_cycles"] - 9 * steps) == 0


def test_a_mixed_run_loads_2byte_values_into_float_lanes():
    # float16 x -> Cast float32 -> Exp -> Cast float16: 64 lanes a step, an unpacking load, a packing store
    node, impl = _chain(
        [("Cast", ["x"], "f", {}), ("Exp", ["f"], "e", {}), ("Cast", ["e"], "y", {})],
        {"x": "float16", "f": "float32", "e": "float32", "y": "float16"},
        ["x"],
        ["y"],
        100,
    )
    per_step, lanes = chain_mix(node, impl)
    assert lanes == 64
    # load 1 + Cast 1 + Exp 4 + Cast 1 + store 1
    assert per_step == RegMix(loads=1, stores=1, compute=3, masks=1, cycles=8)


def test_the_recorded_instructions_are_the_written_ones():
    node, impl = _chain(
        [("Sigmoid", ["x"], "g", {}), ("Abs", ["g"], "y", {})],
        {"x": "bfloat16", "g": "bfloat16", "y": "bfloat16"},
        ["x"],
        ["y"],
        300,
    )
    defined: dict[str, str] = {}
    fn = _build(_Source(node, impl, defined.__setitem__), node.attrs["steps"])
    text = fn.text()
    written = re.findall(
        r"AscendC::Reg::(\w+)[<(]", "\n".join(line for line in text.splitlines() if "Reg::" in line)
    )
    recorded = [i.api for i in fn.instrs]
    assert sorted(w for w in written if w not in ("RegTensor", "MaskReg")) == sorted(recorded)
    assert any(name.startswith("AfChainVf_-") for name in defined)  # the Cast traits went to the kernel


def test_a_body_call_that_was_not_recorded_is_refused():
    node, impl = _chain([("Abs", ["x"], "y", {})], {"x": "float32", "y": "float32"}, ["x"], ["y"], 64)
    fn = _build(_Source(node, impl, lambda *_: None), node.attrs["steps"])
    fn.body.append("AscendC::Reg::Adds(r1, r1, 1.0f, mask);")
    with pytest.raises(CodegenError, match="writes 4 register calls but records 3"):
        fn.text()


def _reduce_chain(inner: int, group: int):
    """Abs then a float32 Sum over 3 tiles of 2 groups (``group`` rows of ``inner``, or ``group`` lanes)."""
    node, impl = _chain(
        [("Abs", ["x"], "a", {})], {"x": "float32", "a": "float32", "y": "float32"}, ["x"], ["y"], 0
    )
    reduce = ChainReduce(
        kind="Sum",
        tiles=3,
        rows=2,
        group=group,
        inner=inner,
        src_pitch=1024,
        dst_pitch=128,
        name="sum",
        input="a",
        output="y",
    )
    node.attrs["reduce"] = reduce
    return node, impl, reduce


@pytest.mark.parametrize(
    ("inner", "group", "instructions", "cycles"),
    [
        # 6 groups x 2 vectors of the kept width x 5 rows: 60 Abs, 30 contiguous loads (1 cycle) and 30
        # block-masked ones (2), 12 Adds starting and 48 Adds folding, per vector 12 UpdateMask and 12 stores
        (72, 5, 204, 222),
        # 6 groups of 2 vectors: 1 CreateMask; per group UpdateMask, Reduce, first-element store; per vector
        # UpdateMask and Abs; 6 + 6 loads (the tail block-masked), 6 Adds starting, 6 Add + Select folding
        (1, 72, 73, 60),
        # kept width 20 (not whole blocks): per group row and vector (6 x 1 x 5 = 30) a LoadUnAlignPre and a
        # LoadUnAlign (1 cycle each) instead of the block-masked load (2); 30 Abs, 6 + 24 Adds, 6 UpdateMask
        # and 6 stores
        (20, 5, 132, 126),
        # groups of 70 (two per tile row: group 1 starts unaligned): per group one LoadUnAlignPre, per vector
        # a LoadUnAlign (12, 1 cycle each) -- 6 more loads than the aligned groups of 72, the same cycles (their
        # block-masked tails take 2)
        (1, 70, 79, 60),
    ],
)
def test_a_reduce_function_counts_each_call_times_its_loop(inner, group, instructions, cycles):
    node, impl, reduce = _reduce_chain(inner, group)
    assert VfChainRegApiCall.predicted_counters(node, impl) == {
        "reg_instructions": instructions,
        "reg_cycles": cycles,
    }


@pytest.mark.parametrize("inner", [72, 1])
def test_a_reduce_functions_recorded_instructions_are_the_written_ones(inner):
    node, impl, reduce = _reduce_chain(inner, 72)
    fn = _build(_Source(node, impl, lambda *_: None), node.attrs["steps"], reduce)
    text = reduce_text(fn, reduce) if inner > 1 else horizontal_text(fn, reduce)
    written = re.findall(r"AscendC::Reg::(\w+)(?:<[^;()]*>)?\(", text)
    recorded = [instr.api for _loop, instrs in reduce_parts(fn) for instr in instrs]
    assert sorted(written) == sorted(recorded) and "StoreAlign" in recorded
    fn = _build(_Source(node, impl, lambda *_: None), node.attrs["steps"], reduce)
    fn.body.append("AscendC::Reg::Adds(r1, r1, 1.0f, mask);")
    with pytest.raises(CodegenError, match="reduce function writes"):
        reduce_text(fn, reduce) if inner > 1 else horizontal_text(fn, reduce)


#: every register Cast pair the twin emulates: (source, destination)
TWIN_CAST_PAIRS = [
    ("float32", "float16"),
    ("float32", "bfloat16"),
    ("float16", "float32"),
    ("bfloat16", "float32"),
    ("float32", "int32"),
    ("int32", "float32"),
    ("int16", "float32"),
    ("float32", "int16"),
    ("int16", "int32"),
    ("uint16", "uint32"),
    ("int32", "int16"),
    ("int32", "uint16"),
    ("uint32", "int16"),
    ("uint32", "uint16"),
    ("int16", "float16"),
    ("float16", "int16"),
    ("float16", "bfloat16"),
    ("bfloat16", "float16"),
    ("int8", "int16"),
    ("uint8", "uint16"),
    ("int8", "float16"),
    ("uint8", "float16"),
    ("float16", "int8"),
    ("float16", "uint8"),
    ("int16", "uint8"),
    ("uint16", "uint8"),
]


@pytest.mark.twin
def test_the_cast_rows_agree_with_the_twins_cast_rate(twin_run):
    """Table 10 in the cost table (CAST_RATES; a pair with no row counts one cycle) and the twin's
    RegCastRate agree on every Cast pair the twin emulates, and so do the cycles of one Cast."""
    lines = [
        f'std::printf("%u\\n", AscendC::Reg::RegCastRate<{dt.get(d).cpp}, {dt.get(s).cpp}>());'
        for s, d in TWIN_CAST_PAIRS
    ]
    rc, out, err = twin_run(
        '#include "kernel_operator.h"\n#include <cstdio>\nint main() {\n' + "\n".join(lines) + "\n}\n"
    )
    assert rc == 0, err
    for (s, d), twin_rate in zip(TWIN_CAST_PAIRS, map(int, out.split())):
        assert reg_cost.CAST_RATES.get((s, d), 0) == twin_rate, (s, d)
        wide = max(dt.get(s).itemsize, dt.get(d).itemsize)
        want = 1 if twin_rate == 0 else math.ceil(256 // wide / twin_rate)
        assert reg_cost.cycles(RegInstr("Cast", d, src=s)) == want, (s, d)
