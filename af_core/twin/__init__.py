"""The CPU twin from Python: compile a graph once, run it on many shapes, compare.

    session = TwinSession(graph)                 # schedule + codegen + g++ (cached)
    check = session.check({"s0": 8, ...}, seed=1)  # random inputs, twin vs reference
    assert check.ok, check.describe()

``run_graph`` does the same for one run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np

from af_core import dtypes as dt
from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.codegen.codegen import CodegenResult
from af_core.inputs import GraphInputs, make_inputs, pack_inputs
from af_core.ir.graph import HintGraph
from af_core.reference.interpreter import evaluate
from af_core.twin.runner import TwinBuild, TwinRun, TwinRunner, TwinSanitizerError, TwinTilingError

__all__ = [
    "Comparison",
    "GraphRun",
    "TwinRun",
    "TwinRunner",
    "TwinSanitizerError",
    "TwinSession",
    "TwinTilingError",
    "compare",
    "run_graph",
]

#: (rtol, atol) per dtype once float math happened; pure data movement must be bitwise.
TOLERANCE = {
    "float32": (1e-4, 1e-5),
    "float16": (4e-3, 2e-3),
    "bfloat16": (3.2e-2, 1.6e-2),
}


def has_math(graph: HintGraph) -> bool:
    return any(n.op.compute_type in ("elementwise", "reduce") for n in graph.nodes())


@attrs.frozen
class Comparison:
    name: str
    ok: bool
    exact: bool
    max_abs_error: float
    mismatches: int
    total: int
    first_bad: tuple[int, ...] | None
    got: object = None
    expected: object = None

    def describe(self) -> str:
        if self.ok:
            return f"{self.name}: {'bitwise equal' if self.exact else 'within tolerance'} ({self.total} elements)"
        return (
            f"{self.name}: {self.mismatches}/{self.total} elements differ, max |err| "
            f"{self.max_abs_error:g}, first at {self.first_bad}: got {self.got}, expected {self.expected}"
        )


def compare(name: str, got: np.ndarray, expected: np.ndarray, dtype: dt.DType, exact: bool) -> Comparison:
    got = np.asarray(got)
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        return Comparison(
            name,
            False,
            exact,
            float("inf"),
            got.size,
            expected.size,
            None,
            f"shape {got.shape}",
            f"shape {expected.shape}",
        )
    if dtype.is_float:
        g = got.astype(np.float64)
        e = expected.astype(np.float64)
        if exact:
            bad = ~((g == e) | (np.isnan(g) & np.isnan(e)))
        else:
            rtol, atol = TOLERANCE[dtype.name]
            bad = ~np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
        diff = np.abs(np.where(np.isnan(g) | np.isnan(e), 0, g - e))
        max_err = float(diff.max()) if diff.size else 0.0
    else:
        bad = got != expected
        max_err = float(np.abs(got.astype(np.int64) - expected.astype(np.int64)).max()) if got.size else 0.0
    count = int(bad.sum())
    first = tuple(int(i) for i in np.argwhere(bad)[0]) if count else None
    return Comparison(
        name,
        count == 0,
        exact,
        max_err,
        count,
        int(got.size),
        first,
        got[first] if first else None,
        expected[first] if first else None,
    )


@attrs.frozen
class GraphRun:
    """One twin run of a graph with its reference and the comparison."""

    twin: TwinRun
    reference: dict[str, np.ndarray]
    comparisons: tuple[Comparison, ...]
    template: str
    inputs: GraphInputs

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.comparisons)

    def describe(self) -> str:
        head = f"tiling key {self.twin.tiling_key} ({self.template}) on {self.twin.block_dim} cores"
        return head + "\n" + "\n".join("  " + c.describe() for c in self.comparisons)


class TwinSession:
    """A graph compiled once for the twin; run it with any sizes."""

    def __init__(
        self,
        graph: HintGraph,
        options: AutofuserOptions | None = None,
        *,
        sanitize: bool = False,
        runner: TwinRunner | None = None,
        kernel: str | None = None,
    ) -> None:
        """``kernel`` replaces the generated kernel.cpp text (a hand-edited kernel for the same graph: the
        host tiling, tiling data and infer_shape stay the generated ones)."""
        self.graph = graph
        self.fuser = Autofuser(options or AutofuserOptions())
        self.scheduled = self.fuser.schedule(graph)
        self.result: CodegenResult = self.fuser.generate(self.scheduled)
        if kernel is not None:
            self.result = attrs.evolve(self.result, kernel=kernel)
        self.runner = runner or TwinRunner(self.fuser.platform, sanitize=sanitize)
        self.build: TwinBuild = self.runner.build(self.result)
        self.exact = not has_math(graph)

    def inputs(
        self,
        sizes: Mapping[str, int] | None = None,
        *,
        seed: int = 0,
        arrays: Mapping[str, np.ndarray] | None = None,
        **kw: Any,
    ) -> GraphInputs:
        if arrays is not None:
            return pack_inputs(self.graph, arrays, sizes, info=self.scheduled.info)
        return make_inputs(self.graph, sizes or {}, seed=seed, info=self.scheduled.info, **kw)

    def run(
        self,
        inputs: GraphInputs,
        *,
        core_num: int | None = None,
        ub_size: int | None = None,
        tiling_key: int | None = None,
    ) -> TwinRun:
        """Run on the twin; ``tiling_key`` runs that case (its tiling data computed in Python)."""
        struct = None
        if tiling_key is not None:
            from af_core.tiling.solve import solve_scheduled

            struct = solve_scheduled(
                self.scheduled, inputs.sizes, core_num, ub_size, tiling_key=tiling_key
            ).struct
        return self.runner.run(self.build, inputs, core_num=core_num, ub_size=ub_size, struct=struct)

    def check(
        self,
        sizes: Mapping[str, int] | None = None,
        *,
        seed: int = 0,
        core_num: int | None = None,
        inputs: GraphInputs | None = None,
        tiling_key: int | None = None,
        **kw: Any,
    ) -> GraphRun:
        """Run at ``sizes`` on random inputs (or on ``inputs``) and compare with the reference.

        The reference runs first: inputs it refuses (an index out of range where the graph does not
        check bounds) raise its :class:`af_core.errors.AscirError` before the twin runs them.
        """
        inputs = inputs or self.inputs(sizes, seed=seed, **kw)
        reference = evaluate(self.graph, inputs.logical, inputs.sizes, info=self.scheduled.info)
        twin = self.run(inputs, core_num=core_num, tiling_key=tiling_key)
        comparisons = []
        for name, expected in reference.items():
            dtype = self.scheduled.info[name].dtype
            comparisons.append(compare(name, twin.outputs[name], expected, dtype, self.exact))
        label = self.scheduled.case(twin.tiling_key).label
        return GraphRun(twin, reference, tuple(comparisons), label, inputs)


def run_graph(
    graph: HintGraph,
    sizes: Mapping[str, int] | None = None,
    *,
    options: AutofuserOptions | None = None,
    seed: int = 0,
    core_num: int | None = None,
    sanitize: bool = False,
    **kw: Any,
) -> GraphRun:
    """Compile ``graph`` for the twin, run it on random inputs and compare with the reference."""
    return TwinSession(graph, options, sanitize=sanitize).check(sizes, seed=seed, core_num=core_num, **kw)
