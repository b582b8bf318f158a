"""A template that builds a wrong ImplGraph gets an error naming what is wrong, before any compiler runs.

Each case here takes the fake back end's working cases and breaks one fact
codegen relies on (a loop, a split, a kernel argument, a buffer, a tiling
field, the order of a tile's producer and consumer); the scheduler's own
checks of what a template returns are exercised the same way.
"""

from __future__ import annotations

import attrs
import fake_backend
import pytest
import sympy
from fake_backend import FakeLanesTemplate
from fake_backend.graphs import offset_chain

from af_core.autofuser import Autofuser
from af_core.errors import CodegenError, ScheduleError
from af_core.tiling.spec import TilingField


class BrokenTemplate(FakeLanesTemplate):
    """The fake template with ``breaks`` applied to each case it proposes."""

    def __init__(self, breaks, variant: str) -> None:
        super().__init__(variants=(variant,))
        self.breaks = breaks

    def propose(self, graph, node, ctx):
        cases = super().propose(graph, node, ctx)
        for case in cases:
            self.breaks(case)
        return cases


def _generate(breaks, variant: str):
    with fake_backend.installed(templates=[BrokenTemplate(breaks, variant)]):
        fuser = Autofuser()
        return fuser.generate(fuser.schedule(offset_chain()))


def _stray_loop(case):
    case.impl.stages[0].nodes[0].loop_axis = "nowhere"


def _no_block_split(case):
    stage = case.impl.stages[0]
    stage.axes = [a for a in stage.axes if a.type != "BLOCK_IN"]


def _unknown_argument(case):
    name = next(n for n, t in case.impl.tensors.items() if t.gm_arg == "y")
    case.impl.tensors[name] = attrs.evolve(case.impl.tensors[name], gm_arg="ghost")


def _store_before_gather(case):
    case.impl.stages[0].nodes.reverse()


def _missing_buffer(case):
    case.impl.stages[0].buffers = []


def _unknown_field(case):
    case.impl.stages[0].used_cores = "ghost_cores"


def _unknown_symbol(case):
    case.impl.stages[0].nodes[0].attrs["start"] = sympy.Symbol("nowhere_start")


@pytest.mark.parametrize(
    ("breaks", "variant", "message"),
    [
        (
            _stray_loop,
            "flat",
            r"nodes \['indirect_load'\] of stage 'flat' sit in loops the stage does not have",
        ),
        (_no_block_split, "flat", r"stage 'flat' of fake_lanes/flat has no merged axis with a block split"),
        (_unknown_argument, "flat", r"tensor 'y' names no kernel argument \('ghost'\)"),
        (
            _store_before_gather,
            "tiled",
            r"UB tensor 'gathered' is read before any node of stage 'tiled' produced it",
        ),
        (_missing_buffer, "tiled", r"UB tensor 'gathered' uses buffer 'tiles_q', which stage 'tiled' lacks"),
        (_unknown_field, "flat", r"case fake_lanes/flat has no tiling field 'ghost_cores'"),
        (
            _unknown_symbol,
            "flat",
            r"symbol 'nowhere_start' is neither a size, a tiling field nor a loop variable",
        ),
    ],
    ids=lambda v: getattr(v, "__name__", None) if callable(v) else None,
)
def test_wrong_impl_graph_is_a_codegen_error_naming_it(breaks, variant, message):
    with pytest.raises(CodegenError, match=message):
        _generate(breaks, variant)


def _foreign_template(case):
    case.template = "someone_else"


def _field_named_like_a_size(case):
    case.tiling.fields.append(TilingField("a0", sympy.Integer(1)))


@pytest.mark.parametrize(
    ("breaks", "message"),
    [
        (
            _foreign_template,
            "fake_lanes .* rejected at schedule: template returned a Case of template 'someone_else'",
        ),
        (
            _field_named_like_a_size,
            "fake_lanes .* rejected at tiling: tiling field\\(s\\) a0 have the symbol name of a graph size",
        ),
    ],
    ids=["foreign_template", "field_named_like_a_size"],
)
def test_malformed_case_is_rejected_by_the_scheduler(breaks, message):
    with pytest.raises(ScheduleError, match=message):
        _generate(breaks, "flat")
