"""On the corpus workloads and the samples, af_core.tiling.conditions builds exactly what sympy builds.

The helpers skip sympy's decisions: a relation whose sides do not differ by a number is kept open, Select
gives a condition the canonical form without deciding it, and substitute rebuilds formulas without
deciding their conditions again. Scheduling every corpus workload and sample with every installed plugin
records each of them, and checks:

- sympy's own evaluation leaves open every relation the helpers keep open;
- each condition Select settles is the one ``sympy.Piecewise`` gives;
- each substitution equals ``xreplace``.

So the generated files are the ones sympy's decisions would give (tools/artifact_hashes.py compares them
across a change).
"""

from __future__ import annotations

import sympy

from af_core.autofuser import Autofuser
from af_core.samples import installed_samples
from af_core.schedule import tiles as tiles_module
from af_core.tiling import conditions
from af_core.workloads import load_workloads

DECIDED = (sympy.true, sympy.false)


def test_the_helpers_build_what_sympy_builds_on_the_corpus(monkeypatch):
    relations: list[tuple[type, sympy.Basic, sympy.Basic, sympy.Basic]] = []
    settled: list[tuple[sympy.Basic, sympy.Basic | None]] = []
    substituted: list[tuple[sympy.Basic, dict, sympy.Basic]] = []
    relation, settle, substitute = (
        conditions._relation,
        conditions._settled_condition,
        tiles_module.substitute,
    )

    def recording_relation(kind, lhs, rhs):
        made = relation(kind, lhs, rhs)
        relations.append((kind, sympy.sympify(lhs), sympy.sympify(rhs), made))
        return made

    def recording_settle(cond):
        made = settle(cond)
        settled.append((cond, made))
        return made

    def recording_substitute(expr, mapping):
        made = substitute(expr, mapping)
        substituted.append((expr, dict(mapping), made))
        return made

    monkeypatch.setattr(conditions, "_relation", recording_relation)
    monkeypatch.setattr(conditions, "_settled_condition", recording_settle)
    monkeypatch.setattr(tiles_module, "substitute", recording_substitute)
    graphs = [w.graph for w in load_workloads()] + [s.build() for s in installed_samples()]
    fuser = Autofuser()
    for graph in graphs:
        fuser.schedule(graph)

    kept_open = [(kind, lhs, rhs) for kind, lhs, rhs, made in relations if made not in DECIDED]
    # the run exercises every path: relations decided and kept open, conditions settled, substitutions
    assert len(relations) - len(kept_open) > 50 and len(kept_open) > 50, (len(relations), len(kept_open))
    assert len(settled) > 50 and len(substituted) > 20, (len(settled), len(substituted))
    wrong = [
        f"{kind.__name__}({lhs}, {rhs}) -> {kind(lhs, rhs)}"
        for kind, lhs, rhs in kept_open
        if kind(lhs, rhs) in DECIDED
    ]
    assert wrong == [], "\n".join(wrong)

    x, y = sympy.symbols("x y")  # two branches no condition mentions, so sympy merges nothing
    for cond, made in settled:
        assert made is not None, f"Select left {cond} to sympy"
        theirs = sympy.Piecewise((x, cond), (y, True))
        assert made == (theirs.args[0].cond if isinstance(theirs, sympy.Piecewise) else theirs == x), (
            cond,
            made,
        )
    for expr, mapping, made in substituted:
        assert made == expr.xreplace(mapping), (expr, mapping)
