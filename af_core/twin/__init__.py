"""The CPU twin from Python: compile a graph once, run it on many shapes, compare.

    session = TwinSession(graph)                 # schedule + codegen + g++ (cached)
    check = session.check({"s0": 8, ...}, seed=1)  # random inputs, twin vs reference
    assert check.ok, check.describe()

``run_graph`` does the same for one run. Before a run allocates anything, its sizes are checked
against the size contract and its host memory against the limit (:mod:`af_core.twin.plan`):
:class:`af_core.errors.SizeError` and :class:`af_core.errors.MemoryBudgetError` refuse it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs
import numpy as np

from af_core import dtypes as dt
from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.codegen.codegen import CodegenResult
from af_core.errors import UsageError
from af_core.index_distribution import IndexDistribution
from af_core.inputs import GraphInputs, InputDraw, input_sizes, pack_inputs
from af_core.ir.graph import HintGraph
from af_core.ops.opdef import ComputeType
from af_core.reference.interpreter import evaluate
from af_core.registry import Registry
from af_core.twin.budget import MemoryEstimate, MemoryLimit
from af_core.twin.plan import RunPlan, plan_run
from af_core.twin.runner import (
    TwinBuild,
    TwinRun,
    TwinRunner,
    TwinSanitizerError,
    TwinTilingError,
    no_launch,
)

__all__ = [
    "Comparison",
    "GraphRun",
    "MemoryEstimate",
    "MemoryLimit",
    "RunPlan",
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
    return any(n.op.compute_type in (ComputeType.ELEMENTWISE, ComputeType.REDUCE) for n in graph.nodes())


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
        if not self.twin.launched:
            head = "no kernel launched: every output is empty"
        return head + "\n" + "\n".join("  " + c.describe() for c in self.comparisons)


def held_bytes(arrays: Iterable[object]) -> int:
    """Bytes of memory ``arrays`` hold: each view counts its base buffer once (a broadcast view of a
    small array holds only that array's bytes)."""
    bases: dict[int, int] = {}
    for item in arrays:
        array = np.asarray(item)
        while isinstance(array.base, np.ndarray):
            array = array.base
        bases[id(array)] = int(array.nbytes)
    return sum(bases.values())


class TwinSession:
    """A graph compiled once for the twin; run it with any sizes.

    Every run is checked first (:meth:`plan`): sizes against the size contract, host memory against
    ``max_memory`` (bytes, or a :class:`MemoryLimit`; default :func:`af_core.twin.budget.memory_limit`:
    ``AF_MAX_MEMORY``, else half the memory available).
    """

    def __init__(
        self,
        graph: HintGraph,
        options: AutofuserOptions | None = None,
        *,
        sanitize: bool = False,
        runner: TwinRunner | None = None,
        kernel: str | None = None,
        max_memory: int | MemoryLimit | None = None,
        defer_build: bool = False,
        registry: Registry | None = None,
    ) -> None:
        """``kernel`` replaces the generated kernel.cpp text (a hand-edited kernel for the same graph: the
        host tiling, tiling data and infer_shape stay the generated ones). ``defer_build`` leaves the g++
        build to the first run that launches a kernel (a refused or empty run builds nothing).
        ``registry``: the plugins to compile with (:class:`~af_core.autofuser.Autofuser`'s ``registry``);
        a runner made here includes that registry's twin headers."""
        self.graph = graph
        self.fuser = Autofuser(options or AutofuserOptions(), registry)
        self.scheduled = self.fuser.schedule(graph)
        self.result: CodegenResult = self.fuser.generate(self.scheduled)
        if kernel is not None:
            self.result = attrs.evolve(self.result, kernel=kernel)
        self.runner = runner or TwinRunner(
            self.fuser.platform, sanitize=sanitize, registry=self.fuser.registry
        )
        self.max_memory = max_memory
        self._build: TwinBuild | None = None
        if not defer_build:
            self._build = self.runner.build(self.result)
        self.exact = not has_math(graph)

    @property
    def build(self) -> TwinBuild:
        """The twin build of the kernel (built on first use when the session deferred it)."""
        if self._build is None:
            self._build = self.runner.build(self.result)
        return self._build

    def plan(
        self,
        sizes: Mapping[str, int] | None = None,
        *,
        core_num: int | None = None,
        ub_size: int | None = None,
        tiling_key: int | None = None,
        held: int = 0,
    ) -> RunPlan:
        """Check a run at ``sizes`` before anything is allocated (:func:`af_core.twin.plan.plan_run`).

        Raises :class:`af_core.errors.SizeError` for sizes the graph cannot run with,
        :class:`af_core.errors.TilingError` when no case fits, and
        :class:`af_core.errors.MemoryBudgetError` when the run's estimated host memory exceeds the limit;
        ``held`` bytes of input arrays already in memory count with the inputs.
        """
        return plan_run(
            self.scheduled,
            self.graph,
            sizes,
            core_num=core_num,
            ub_size=ub_size,
            tiling_key=tiling_key,
            limit=self.max_memory,
            held=held,
            sanitize=self.runner.sanitize,
        )

    def _draw(
        self,
        negative_indices: bool,
        out_of_range: float,
        positive: bool,
        distribution: str | IndexDistribution | None,
        drawing: bool,
    ) -> InputDraw:
        """The drawing options; an unnamed distribution is the declared one only when values are drawn
        (given inputs draw nothing, so only options named by the caller are refused with them)."""
        if distribution is None:
            declared = self.fuser.options.index_distribution
            distribution = declared if drawing and declared is not None else "uniform"
        return InputDraw(negative_indices, out_of_range, positive, distribution)

    def inputs(
        self,
        sizes: Mapping[str, int] | None = None,
        *,
        seed: int | None = None,
        arrays: Mapping[str, np.ndarray] | None = None,
        negative_indices: bool = False,
        out_of_range: float = 0.0,
        positive: bool = False,
        distribution: str | IndexDistribution | None = None,
    ) -> GraphInputs:
        """Random inputs at ``sizes``, or ``arrays`` packed into storage (sizes deduced from their
        shapes); the run is planned (:meth:`plan`) first.

        ``seed`` (default 0) and the drawing options are those of :func:`af_core.inputs.make_inputs`;
        with ``arrays`` nothing is drawn, and giving them is a ``UsageError`` naming them. Without a
        ``distribution``, index values follow the one the options declare (``index_distribution``,
        which the cases predicted with), else uniform.
        """
        draw = self._draw(negative_indices, out_of_range, positive, distribution, arrays is None)
        if arrays is not None:
            _refuse_draw_options("inputs(arrays=...)", seed, draw)
            env = input_sizes(self.graph, arrays, sizes, info=self.scheduled.info)
            self.plan(env, held=held_bytes(arrays.values()))
            return pack_inputs(self.graph, arrays, env, info=self.scheduled.info)
        plan = self.plan(sizes)
        return draw.make(self.graph, plan.sizes, seed or 0, self.scheduled.info)

    def run(
        self,
        inputs: GraphInputs,
        *,
        core_num: int | None = None,
        ub_size: int | None = None,
        tiling_key: int | None = None,
    ) -> TwinRun:
        """Run on the twin; ``tiling_key`` runs that case (its tiling data computed in Python).

        The run is planned (:meth:`plan`) first; a run whose every output is empty launches nothing.
        """
        plan = self.plan(inputs.sizes, core_num=core_num, ub_size=ub_size, tiling_key=tiling_key)
        if not plan.launch:
            return no_launch(self.result, plan.sizes)
        struct = plan.tiling.struct if tiling_key is not None and plan.tiling is not None else None
        return self.runner.run(self.build, inputs, core_num=core_num, ub_size=ub_size, struct=struct)

    def check(
        self,
        sizes: Mapping[str, int] | None = None,
        *,
        seed: int | None = None,
        core_num: int | None = None,
        inputs: GraphInputs | None = None,
        tiling_key: int | None = None,
        negative_indices: bool = False,
        out_of_range: float = 0.0,
        positive: bool = False,
        distribution: str | IndexDistribution | None = None,
    ) -> GraphRun:
        """Run at ``sizes`` on random inputs (or on ``inputs``) and compare with the reference.

        ``seed`` (default 0) and the drawing options are those of :meth:`inputs`. Given ``inputs``,
        nothing is drawn: a seed, a drawing option or ``sizes`` other than the inputs' own is a
        ``UsageError`` naming it (they were ignored silently before).

        The reference runs first: inputs it refuses (an index out of range where the graph does not
        check bounds) raise its :class:`af_core.errors.AscirError` before the twin runs them.
        """
        draw = self._draw(negative_indices, out_of_range, positive, distribution, inputs is None)
        if inputs is None:
            plan = self.plan(sizes, core_num=core_num, tiling_key=tiling_key)
            inputs = draw.make(self.graph, plan.sizes, seed or 0, self.scheduled.info)
        else:
            _refuse_draw_options("check(inputs=...)", seed, draw)
            _refuse_other_sizes(self.graph.size_env(sizes or {}), inputs)
            self.plan(inputs.sizes, core_num=core_num, tiling_key=tiling_key)
        reference = evaluate(self.graph, inputs.logical, inputs.sizes, info=self.scheduled.info)
        twin = self.run(inputs, core_num=core_num, tiling_key=tiling_key)
        comparisons = []
        for name, expected in reference.items():
            dtype = self.scheduled.info[name].dtype
            comparisons.append(compare(name, twin.outputs[name], expected, dtype, self.exact))
        label = self.scheduled.case(twin.tiling_key).label if twin.launched else "none"
        return GraphRun(twin, reference, tuple(comparisons), label, inputs)


def _refuse_draw_options(call: str, seed: int | None, draw: InputDraw) -> None:
    """A seed or drawing option given where nothing is drawn: the caller meant something else."""
    given = (["seed"] if seed is not None else []) + draw.changed()
    if given:
        raise UsageError(f"{call} draws no values, so {', '.join(given)} would be ignored; leave them out")


def _refuse_other_sizes(sizes: Mapping[str, int], inputs: GraphInputs) -> None:
    """Sizes (keyed by symbol name) given beside inputs must be the inputs' own."""
    other = sorted(k for k, v in sizes.items() if inputs.sizes.get(k) != v)
    if other:
        shown = ", ".join(f"{k}={sizes[k]} (inputs: {inputs.sizes.get(k)})" for k in other)
        raise UsageError(f"check(inputs=...) runs at the inputs' sizes; the sizes given differ: {shown}")


def run_graph(
    graph: HintGraph,
    sizes: Mapping[str, int] | None = None,
    *,
    options: AutofuserOptions | None = None,
    seed: int = 0,
    core_num: int | None = None,
    sanitize: bool = False,
    max_memory: int | MemoryLimit | None = None,
    negative_indices: bool = False,
    out_of_range: float = 0.0,
    positive: bool = False,
    distribution: str | IndexDistribution | None = None,
) -> GraphRun:
    """Compile ``graph`` for the twin, run it on random inputs and compare with the reference.

    The drawing options are those of :meth:`TwinSession.inputs`. The sizes and the run's host memory
    are checked before the build (:meth:`TwinSession.plan`).
    """
    session = TwinSession(graph, options, sanitize=sanitize, max_memory=max_memory, defer_build=True)
    return session.check(
        sizes,
        seed=seed,
        core_num=core_num,
        negative_indices=negative_indices,
        out_of_range=out_of_range,
        positive=positive,
        distribution=distribution,
    )
