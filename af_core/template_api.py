"""The template API: the one core module a plugin imports, besides ``af_core.hookspecs``.

A template, an ApiCall or an op plugin needs a few dozen names spread over
the graph IR, the schedule, the tiling spec and the code generator. Importing
them from where they are defined ties every plugin to the core's module
layout, so moving a helper between two core modules would break plugins that
never used anything it changed. This facade declares what plugins may rely
on: each name below is re-exported from the module that defines it (the
single source; nothing is redefined here), and a plugin imports it from
here::

    from af_core import deferred, hookimpl               # the plugin contract
    from af_core.template_api import Case, TilingSpec, Unsupported

``tools/check_layers.py`` holds the built-in plugins and examples to this
(``[tool.af.plugin-api]`` in pyproject.toml), and no core module imports this
one: it sits above every layer of the core.

The names resolve on first use, as in the top-level ``af_core`` package:
``afc plugins`` imports every plugin module, and a plugin module importing
``ApiSource`` from here must load the code generator's source table, not
sympy with the schedule layer. Each name loads only its defining module.
"""

from __future__ import annotations

from af_core.lazy import lazy_attributes

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing at start-up

# public name -> the module that defines it; a name whose module is af_core.<name> is that module itself
_LAZY = {
    # graph IR and sizes: the graph a template is given, its nodes, dtypes and size expressions
    "HintGraph": "af_core.ir.graph",
    "Node": "af_core.ir.graph",
    "dtypes": "af_core.dtypes",
    "Expr": "af_core.ir.sizes",
    "contiguous_strides": "af_core.ir.sizes",
    "product": "af_core.ir.sizes",
    # ops: what an op plugin registers (af_register_ops) and the core ops' shared rules
    "OpDef": "af_core.ops.opdef",
    "ComputeType": "af_core.ops.opdef",
    "AttrSpec": "af_core.ops.opdef",
    "InferContext": "af_core.ops.opdef",
    "OutSpec": "af_core.ops.opdef",
    "RefContext": "af_core.ops.opdef",
    "CAST": "af_core.ops.opdef",
    "broadcast_sizes": "af_core.ops.opdef",
    "require_dtype_in": "af_core.ops.opdef",
    "require_same_dtype": "af_core.ops.opdef",
    "loop_axes": "af_core.ops.core_ops",
    # errors: a template's rejection, an ApiCall's or an op's bad input, and no case proposed for a graph
    "Unsupported": "af_core.errors",
    "CodegenError": "af_core.errors",
    "DTypeError": "af_core.errors",
    "ScheduleError": "af_core.errors",
    # schedule: the template contract, cases and the fusion analysis
    "ScheduleContext": "af_core.schedule.template",
    "Rejected": "af_core.schedule.template",
    "Case": "af_core.schedule.case",
    "FusionAnalysis": "af_core.schedule.analysis",
    # schedule: the ImplGraph a case carries
    "ImplGraph": "af_core.schedule.impl_graph",
    "ImplNode": "af_core.schedule.impl_graph",
    "Storage": "af_core.schedule.impl_graph",
    "ChainStep": "af_core.schedule.chain_attrs",
    "ChainReduce": "af_core.schedule.chain_attrs",
    "ImplAxis": "af_core.schedule.impl_graph",
    "ImplTensor": "af_core.schedule.impl_graph",
    "Stage": "af_core.schedule.impl_graph",
    "VECIN_VECOUT": "af_core.schedule.impl_graph",
    # schedule: graph rewrites and the seed's measures
    "hoist_input_chain": "af_core.schedule.rewrite",
    "sink_unary_ops": "af_core.schedule.rewrite",
    "main_input": "af_core.schedule.measures",
    # schedule: the row-tile machinery and tile plans (UB tiles, views, reduces, releases)
    "TileBuilder": "af_core.schedule.rowtiles",
    "add_reduce": "af_core.schedule.rowtiles",
    "dense": "af_core.schedule.rowtiles",
    "fold_view": "af_core.schedule.rowtiles",
    "reduce_calls_per_group": "af_core.schedule.rowtiles",
    "view_head": "af_core.schedule.rowtiles",
    "view_of": "af_core.schedule.rowtiles",
    "workspace_view": "af_core.schedule.rowtiles",
    "RowTiles": "af_core.schedule.tiles",
    "TilePlan": "af_core.schedule.tiles",
    "assign_releases": "af_core.schedule.tiles",
    "pitch_for": "af_core.schedule.tiles",
    # schedule: the gather stage of the tile-gathering templates
    "add_gather": "af_core.schedule.gather_stage",
    "gather_span_limit": "af_core.schedule.gather_stage",
    "index_layout": "af_core.schedule.gather_stage",
    "settle_pattern_flag": "af_core.schedule.gather_stage",
    # tiling spec: the fields, constraints and integer helpers a case's tiling is written in
    "TilingSpec": "af_core.tiling.spec",
    "field": "af_core.tiling.spec",
    "CORE_NUM": "af_core.tiling.spec",
    "UB_SIZE": "af_core.tiling.spec",
    "Max": "af_core.tiling.spec",
    "Min": "af_core.tiling.spec",
    "Le": "af_core.tiling.conditions",
    "Lt": "af_core.tiling.conditions",
    "Ge": "af_core.tiling.conditions",
    "Gt": "af_core.tiling.conditions",
    "Select": "af_core.tiling.conditions",
    "AlignUp": "af_core.ir.evaluate",
    "CeilDiv": "af_core.ir.evaluate",
    "FloorDiv": "af_core.ir.evaluate",
    # cost: the modelled GM traffic of a case and the twin's counters it is checked against
    "modelled_cost": "af_core.schedule.cost",
    "gather_read_bytes": "af_core.schedule.cost",
    "storage_bytes": "af_core.schedule.cost",
    "CounterModel": "af_core.schedule.cost",
    "LINE_BYTES": "af_core.schedule.cost",
    "run_line_bytes": "af_core.schedule.cost",
    # reuse: distinct lines and data-cache fills of a gather under the declared index distribution
    "GatherReuse": "af_core.schedule.reuse",
    "gather_reuse": "af_core.schedule.reuse",
    "expected_distinct": "af_core.schedule.reuse",
    "distinct_rows": "af_core.schedule.reuse",
    "IndexDistribution": "af_core.index_distribution",
    # codegen: ApiCalls, the kernel context they generate in, scalar code and C++ sources
    "ApiCall": "af_core.codegen.api_call",
    "ApiSource": "af_core.codegen.api_source",
    "KernelContext": "af_core.codegen.context",
    "ScalarEmitter": "af_core.codegen.scalar",
    "Mask": "af_core.codegen.scalar",
    "LaneLoads": "af_core.codegen.scalar",
    "offset_axes": "af_core.codegen.scalar",
    "literal": "af_core.codegen.scalar",
    "value_type": "af_core.codegen.scalar",
    # backend roles: the parts of a kernel an ApiCall fills, and the installed ApiCall of a role
    "Role": "af_core.backend",
    "GatherMode": "af_core.backend",
    "api_call_for": "af_core.backend",
    "RoleCall": "af_core.backend",
    "OpCall": "af_core.backend",
    "GatherCall": "af_core.backend",
    "VectorChainCall": "af_core.backend",
    # the typed attributes of the row roles' nodes, as a back end reads them
    "LoadRowsAttrs": "af_core.schedule.node_attrs",
    "VectorOpAttrs": "af_core.schedule.node_attrs",
    "ReduceAttrs": "af_core.schedule.node_attrs",
    "StoreRowsAttrs": "af_core.schedule.node_attrs",
    # samples: the graphs a plugin registers (af_register_samples) and the builders they are written with
    "Sample": "af_core.samples",
    "GraphBuilder": "af_core.builders",
    "embedding": "af_core.builders",
    "gather": "af_core.builders",
    # selection: what af_register_selection_policies and af_case_contributions take (docs/hooks.md)
    "SelectionPolicy": "af_core.policy",
    "ScoreTerm": "af_core.schedule.contributions",
    "ResourceFormula": "af_core.schedule.contributions",
    # twin and testing helpers a plugin ships for its own tests: runs, inputs, the Python tiling, counters
    "TwinSession": "af_core.twin",
    "GraphRun": "af_core.twin",
    "GraphInputs": "af_core.inputs",
    "AutofuserOptions": "af_core.options",
    "CaseRef": "af_core.tiling.solve",
    "evaluate_case": "af_core.tiling.solve",
    "solve": "af_core.tiling.solve",
    "solve_scheduled": "af_core.tiling.solve",
    "twin_counters": "af_core.schedule.cost",
}

__all__ = [
    "AlignUp",
    "ApiCall",
    "ApiSource",
    "AttrSpec",
    "AutofuserOptions",
    "CAST",
    "CORE_NUM",
    "Case",
    "CaseRef",
    "CeilDiv",
    "ChainReduce",
    "ChainStep",
    "CodegenError",
    "ComputeType",
    "CounterModel",
    "DTypeError",
    "Expr",
    "FloorDiv",
    "FusionAnalysis",
    "GatherCall",
    "GatherMode",
    "GatherReuse",
    "Ge",
    "GraphBuilder",
    "GraphInputs",
    "GraphRun",
    "Gt",
    "HintGraph",
    "ImplAxis",
    "ImplGraph",
    "ImplNode",
    "ImplTensor",
    "IndexDistribution",
    "InferContext",
    "KernelContext",
    "LINE_BYTES",
    "LaneLoads",
    "Le",
    "LoadRowsAttrs",
    "Lt",
    "Mask",
    "Max",
    "Min",
    "Node",
    "OpCall",
    "OpDef",
    "OutSpec",
    "ReduceAttrs",
    "RefContext",
    "Rejected",
    "ResourceFormula",
    "Role",
    "RoleCall",
    "RowTiles",
    "Sample",
    "ScalarEmitter",
    "ScheduleContext",
    "ScheduleError",
    "ScoreTerm",
    "Select",
    "SelectionPolicy",
    "Stage",
    "Storage",
    "StoreRowsAttrs",
    "TileBuilder",
    "TilePlan",
    "TilingSpec",
    "TwinSession",
    "UB_SIZE",
    "Unsupported",
    "VECIN_VECOUT",
    "VectorChainCall",
    "VectorOpAttrs",
    "add_gather",
    "add_reduce",
    "api_call_for",
    "assign_releases",
    "broadcast_sizes",
    "contiguous_strides",
    "dense",
    "distinct_rows",
    "dtypes",
    "embedding",
    "evaluate_case",
    "expected_distinct",
    "field",
    "fold_view",
    "gather",
    "gather_read_bytes",
    "gather_reuse",
    "gather_span_limit",
    "hoist_input_chain",
    "index_layout",
    "literal",
    "loop_axes",
    "main_input",
    "modelled_cost",
    "offset_axes",
    "pitch_for",
    "product",
    "reduce_calls_per_group",
    "require_dtype_in",
    "require_same_dtype",
    "run_line_bytes",
    "settle_pattern_flag",
    "sink_unary_ops",
    "solve",
    "solve_scheduled",
    "storage_bytes",
    "twin_counters",
    "value_type",
    "view_head",
    "view_of",
    "workspace_view",
]

if TYPE_CHECKING:  # what type checkers and IDEs see
    from af_core import dtypes
    from af_core.backend import GatherCall, GatherMode, OpCall, Role, RoleCall, VectorChainCall, api_call_for
    from af_core.builders import GraphBuilder, embedding, gather
    from af_core.codegen.api_call import ApiCall
    from af_core.codegen.api_source import ApiSource
    from af_core.codegen.context import KernelContext
    from af_core.codegen.scalar import (
        LaneLoads,
        Mask,
        ScalarEmitter,
        literal,
        offset_axes,
        value_type,
    )
    from af_core.errors import CodegenError, DTypeError, ScheduleError, Unsupported
    from af_core.index_distribution import IndexDistribution
    from af_core.inputs import GraphInputs
    from af_core.ir.evaluate import AlignUp, CeilDiv, FloorDiv
    from af_core.ir.graph import HintGraph, Node
    from af_core.ir.sizes import Expr, contiguous_strides, product
    from af_core.ops.core_ops import loop_axes
    from af_core.ops.opdef import (
        CAST,
        AttrSpec,
        ComputeType,
        InferContext,
        OpDef,
        OutSpec,
        RefContext,
        broadcast_sizes,
        require_dtype_in,
        require_same_dtype,
    )
    from af_core.options import AutofuserOptions
    from af_core.policy import SelectionPolicy
    from af_core.samples import Sample
    from af_core.schedule.analysis import FusionAnalysis
    from af_core.schedule.case import Case
    from af_core.schedule.chain_attrs import ChainReduce, ChainStep
    from af_core.schedule.contributions import ResourceFormula, ScoreTerm
    from af_core.schedule.cost import (
        LINE_BYTES,
        CounterModel,
        gather_read_bytes,
        modelled_cost,
        run_line_bytes,
        storage_bytes,
        twin_counters,
    )
    from af_core.schedule.gather_stage import add_gather, gather_span_limit, index_layout, settle_pattern_flag
    from af_core.schedule.impl_graph import (
        VECIN_VECOUT,
        ImplAxis,
        ImplGraph,
        ImplNode,
        ImplTensor,
        Stage,
        Storage,
    )
    from af_core.schedule.measures import main_input
    from af_core.schedule.node_attrs import LoadRowsAttrs, ReduceAttrs, StoreRowsAttrs, VectorOpAttrs
    from af_core.schedule.reuse import GatherReuse, distinct_rows, expected_distinct, gather_reuse
    from af_core.schedule.rewrite import hoist_input_chain, sink_unary_ops
    from af_core.schedule.rowtiles import (
        TileBuilder,
        add_reduce,
        dense,
        fold_view,
        reduce_calls_per_group,
        view_head,
        view_of,
        workspace_view,
    )
    from af_core.schedule.template import Rejected, ScheduleContext
    from af_core.schedule.tiles import RowTiles, TilePlan, assign_releases, pitch_for
    from af_core.tiling.conditions import Ge, Gt, Le, Lt, Select
    from af_core.tiling.solve import CaseRef, evaluate_case, solve, solve_scheduled
    from af_core.tiling.spec import CORE_NUM, UB_SIZE, Max, Min, TilingSpec, field
    from af_core.twin import GraphRun, TwinSession


#: Each declared name is imported from its defining module on first use and kept, so the next lookup is direct;
#: ``dir()`` lists every declared name, resolved or not.
__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals(), __all__)
