"""Inventory: every elementwise op and dtype in a SIMD post chain is a register instruction or has a listed reason.

For every op the elementwise plugin registers, on every dtype its dtype rule accepts (and every Cast target),
one graph puts the op (the node ``probe``) in the post chain of a gather; 64-bit data comes from a Cast of the
gathered int32 values, comparisons and logical ops feed a Where (a bool value has no tile of its own in a
register run). Where the SIMD template accepts the graph, the kernel is generated and the op must be in a
``VfChainRegApiCall`` vector function, or stay a memory-based call for a reason that one of
:data:`~af_v35_regbase.api_calls.vf_chain.MEMORY_CALL_REASONS` names -- and the ``gap`` kinds (forms the 3510
register API has that vector functions do not generate) hold exactly the ops pinned below.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict

import pytest
from af_v35_regbase.api_calls.vf_chain import MEMORY_CALL_REASONS, memory_call_reason

from af_core import dtypes as dt
from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.builders import GraphBuilder, gather
from af_core.errors import AfError, AscirError
from af_core.registry import get_registry

COMPARE = {"Gt", "Ge", "Lt", "Le", "Eq", "Ne"}
COMPARE_SCALAR = {f"{op}s" for op in COMPARE}
LOGICAL = {"LogicalAnd", "LogicalOr", "LogicalXor", "LogicalNot"}
DTYPES = [d.name for d in dt.ALL if not d.is_bool]
IN_RUN = re.compile(r"\d+ op\(s\) (?P<ops>.*?)(?: and the \w+ \('\w+'\))? in one VfChainRegApiCall")
MEMBER = re.compile(r"(\w+) \('(\w+)'\)")
STAYS = re.compile(r"(\w+) \('(\w+)'\) stays a single vector call: (.*)")


def probe_graph(op: str, dtype: str, target: str | None):
    """The op (node ``probe``) on gathered ``dtype`` values, its result the output (through a Where for bools)."""
    g = GraphBuilder(f"inventory_{op}_{dtype}_{target or ''}")
    wide = dt.get(dtype).itemsize == 8
    x = g.data("x", ["a0", "a1"], "int32" if wide else dtype)
    y = gather(x, 0, g.data("index", ["b0", "b1"], "int32"))
    if wide:
        y = g.op("Cast", y, dtype=dtype, name="to64")

    def side(name: str):
        return g.data(name, ["b0", "b1"], dtype)

    if op in COMPARE:
        out = g.op("Where", g.op(op, y, side("s1"), name="probe"), y, side("s2"))
    elif op in COMPARE_SCALAR:
        out = g.op("Where", g.op(op, y, value=1.0, name="probe"), y, side("s2"))
    elif op in LOGICAL:
        a, b = g.op("Gts", y, value=1.0), g.op("Lts", y, value=3.0)
        mask = g.op(op, a, name="probe") if op == "LogicalNot" else g.op(op, a, b, name="probe")
        out = g.op("Where", mask, y, side("s2"))
    elif op == "Where":
        out = g.op("Where", g.op("Gts", y, value=1.0), y, side("s2"), name="probe")
    elif op == "Cast":
        out = g.op("Cast", y, dtype=target, name="probe")
    else:
        opdef = get_registry().get("op", op)
        attrs = {a.name: 3.0 for a in opdef.attrs}
        operands = (y,) if len(opdef.inputs) == 1 else (y, side("s1"))
        out = g.op(op, *operands, name="probe", **attrs)
    g.output(out, "y")
    return g.build()


def cases():
    ops = sorted(e.name for e in get_registry().entries("op") if e.value.compute_type == "elementwise")
    for op in ops:
        for dtype in DTYPES:
            for target in [d for d in DTYPES if d != dtype] if op == "Cast" else [None]:
                yield op, dtype, target


@functools.cache
def inventory() -> dict[tuple[str, str, str | None], str]:
    """(op, dtype, Cast target) -> "register", a MEMORY_CALL_REASONS kind, or "unlisted: <reason>", for the
    cases the dtype rules and the SIMD template accept."""
    fuser = Autofuser(AutofuserOptions(force_template="simd"))
    found = {}
    for op, dtype, target in cases():
        try:
            graph = probe_graph(op, dtype, target)
        except AscirError:
            continue  # the op's dtype rule rejects the dtype
        try:
            scheduled = fuser.schedule(graph)
        except AfError:
            continue  # no legal vector form: the SIMD template rejects the graph (SIMT computes it)
        kernel = fuser.generate(scheduled).kernel
        outcomes = set()
        for case in scheduled.cases:
            for note in case.impl.meta.get("vector_chains", ()):
                run = IN_RUN.fullmatch(note)
                if run and ("probe" in dict((n, o) for o, n in MEMBER.findall(run["ops"]))):
                    outcomes.add("register")
                    assert "asc_vf_call<AfChainVf_" in kernel
                stays = STAYS.fullmatch(note)
                if stays and stays[2] == "probe":
                    outcomes.add(memory_call_reason(stays[3]) or f"unlisted: {stays[3]}")
        assert len(outcomes) == 1, (op, dtype, target, outcomes)
        found[op, dtype, target] = outcomes.pop()
    return found


#: The gaps today: MEMORY_CALL_REASONS gap kind -> the ops ("op:dtype", "Cast:src->dst") kept for it.
GAPS = {
    # every 64-bit op but the Casts to and from 64 bits (counted below) is a register pair sequence now
    "gap: 64-bit op": set(),
    # 64-bit comparisons and Where are register pair sequences too, so no logical op reads a bool made
    # outside its run here
    "gap: bool across a run edge": set(),
}


def _label(op: str, dtype: str, target: str | None) -> str:
    return f"Cast:{dtype}->{target}" if target else f"{op}:{dtype}"


def test_every_op_is_in_a_vector_function_or_kept_for_a_listed_reason():
    found = inventory()
    assert len(found) > 300  # the matrix is the plugin's whole op x dtype table, not a handful
    unlisted = sorted(f"{_label(*k)}: {v}" for k, v in found.items() if v.startswith("unlisted"))
    assert not unlisted, "\n".join(unlisted)
    assert sum(v == "register" for v in found.values()) > 200


def test_the_gaps_are_the_pinned_ones():
    """A gap kind holds exactly the ops pinned in GAPS (a new register form must shrink it here); 64-bit
    data comes through a Cast; the Casts of the cast-route and 64-bit gaps are counted, not listed."""
    by_kind: dict[str, set[str]] = defaultdict(set)
    for key, kind in inventory().items():
        by_kind[kind].add(_label(*key))
    for kind, want in GAPS.items():
        got = {label for label in by_kind.get(kind, set()) if not label.startswith("Cast:")}
        assert got == want, (kind, sorted(got ^ want))
    pinned = set(GAPS) | {"register", "gap: cast route"}
    assert set(by_kind) <= pinned, sorted(set(by_kind) - pinned)
    casts = by_kind["gap: cast route"]
    assert all(label.startswith("Cast:") for label in casts)
    wide = {label for label in by_kind["gap: 64-bit op"] if label.startswith("Cast:")}
    assert all("int64" in label for label in wide)
    # every Cast between 1- and 4-byte types is in registers: the bytes widened from every fourth byte lane
    # (DIST_UNPACK4_B8), a 4-byte integer's low byte stored by DIST_PACK4_B32
    # int64 <-> uint64 is a register view in a 64-bit run; int64 -> int32 the low words of a dual load, and the
    # integer and float Casts to 64 bits words computed in a run of 4-byte values and stored by a dual store;
    # int64 -> float32 (and on to float16 / bfloat16) the register Cast of a RegTraitNumTwo register
    assert (len(casts), len(wide)) == (0, 0), (sorted(casts), sorted(wide))
    assert {"Cast:int64->float32", "Cast:int64->float16", "Cast:int64->bfloat16"} <= by_kind["register"]


def test_each_listed_reason_is_documented_and_no_form_kinds_say_why():
    for kind, (pattern, why) in MEMORY_CALL_REASONS.items():
        assert kind.startswith(("gap: ", "no-form: ")) and re.compile(pattern) and len(why) > 20


@pytest.mark.parametrize(
    ("reason", "kind"),
    [
        (
            "Cast on 64-bit data: the 3510 register Cast has no int32 form generated here",
            "gap: 64-bit op",
        ),
        ("Muls on uint8 takes the 'widen' memory form (not one instruction in its dtype)", None),
        (
            "its bool result is read outside the run (by 'where', 'where_1') and a mask of 8-byte elements has no "
            "store of one bit per element (StoreUnAlign takes b16 / b32 masks)",
            "gap: bool across a run edge",
        ),
        (
            "it reads the bool value 'gt_mask', made outside the run, and a reduce's vector function loads no "
            "bit-mask tile (its group rows need not start on a byte)",
            "gap: bool across a run edge",
        ),
        ("its bool result is read outside the run (by 'where') and it cannot leave registers", None),
        ("an unknown reason", None),
    ],
)
def test_reasons_are_matched_in_full(reason, kind):
    assert memory_call_reason(reason) == kind
