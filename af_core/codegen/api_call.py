"""ApiCall: turns one ImplGraph node into AscendC code.

The generation chain is the one the Autofuse codegen uses:

    Init(node) -> ParseAttr() -> BuildApiParam() -> GenerateApiCallString() -> PostProcess()

Subclasses override the steps they need and set ``name`` (the registry key
ImplGraph nodes use) and ``sources`` (API sources to inline). Plugins
register classes with ``af_register_api_calls``; the kernel generator creates
them by name (:func:`create_api_call`).

A class that serves the core's schedulers also declares its ``roles``
(:class:`af_core.backend.Role`) and answers the capability questions
below; schedulers find it with :func:`af_core.backend.api_call_for`, so neither
the core nor a template needs to know which plugin provides a role.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

from af_core.backend import GATHER_SCRATCH, GatherMode, Role, core_default
from af_core.codegen.jinja import render_string
from af_core.errors import CodegenError

if TYPE_CHECKING:
    from af_core.codegen.context import KernelContext
    from af_core.dtypes import DType
    from af_core.schedule.impl_graph import ImplGraph, ImplNode, ImplTensor


class ApiCall:
    """Base class of every node code generator."""

    name: ClassVar[str] = ""
    sources: ClassVar[tuple[str, ...]] = ()
    template: ClassVar[str] = ""
    #: The roles this class fills for the schedulers (empty: only nodes that name it use it).
    roles: ClassVar[frozenset[Role]] = frozenset()
    #: For :attr:`Role.GATHER`: the gather modes it generates code for.
    gather_modes: ClassVar[frozenset[GatherMode]] = frozenset()
    #: Among several classes filling one role, the highest priority wins (then the lowest name).
    priority: ClassVar[int] = 0

    # -- capabilities (asked before scheduling; class-level, no node needed) --
    @classmethod
    def supports(cls, op_type: str) -> bool:
        """Whether this class has any form of ``op_type`` (a vector op, a reduce kind)."""
        return False

    @classmethod
    def rejection(cls, op_type: str, in_dtypes: Sequence[DType], out_dtype: DType) -> str | None:
        """Why ``op_type`` on these dtypes has no legal form here, or None when it has one."""
        return None if cls.supports(op_type) else f"{cls.name} has no form of {op_type}"

    @classmethod
    def run_rejection(cls, ops: Sequence[tuple[str, Sequence[DType], DType]]) -> str | None:
        """For :attr:`Role.VECTOR_CHAIN`: why these ops, each accepted alone, cannot form one run (None: they can).

        ``ops`` lists ``(op_type, in_dtypes, out_dtype)`` in run order.
        """
        return None

    @classmethod
    def run_local_dtypes(cls) -> frozenset[str]:
        """For :attr:`Role.VECTOR_CHAIN`: names of the dtypes whose values a run holds in a form of its own.

        A run may hold such a value other than as the vector ops hold it (e.g.
        a predicate kept in a mask register, where the vector ops keep a
        bit-mask tile): a node making one joins a run only when every node
        reading it is in the same run or :meth:`edge_rejection` lets the run
        store it, and a node reading one only when its maker is in the same
        run or :meth:`edge_rejection` lets the run load it. Empty by default:
        every value may cross.
        """
        return frozenset()

    @classmethod
    def edge_rejection(
        cls,
        ops: Sequence[tuple[str, Sequence[DType], DType]],
        dtype: DType,
        *,
        stores: bool,
        reduces: bool,
    ) -> str | None:
        """For :attr:`Role.VECTOR_CHAIN`: why a run of ``ops`` cannot move a value of ``dtype`` (one of
        :meth:`run_local_dtypes`) across its edge, or None when it can.

        ``stores``: the run makes the value and a node outside it reads it, so the run must write it to the
        tile the vector ops use for ``dtype`` (a bool: the bit-mask tile ``Compare`` writes and ``Select``
        reads); otherwise the run reads such a tile that a node outside it wrote. ``reduces``: a reduce ends
        the run. By default no value of these dtypes leaves or enters a run.
        """
        return "it cannot leave registers"

    @classmethod
    def form_note(cls, op_type: str, in_dtypes: Sequence[DType], out_dtype: DType) -> str | None:
        """Which form the class generates for ``op_type`` on these dtypes and why, for ``afc explain``.

        E.g. the gather role's note on which instruction moves a tile's data. None (the default): nothing
        to report.
        """
        return None

    @classmethod
    def reduce_rejection(
        cls,
        kind: str,
        dtype: DType,
        view: tuple[object, object, object],
        ops: Sequence[tuple[str, Sequence[DType], DType]],
    ) -> str | None:
        """For :attr:`Role.VECTOR_CHAIN`: why a reduce of ``kind`` over tiles of ``dtype`` viewed as
        ``view`` = ``(rows, group, inner)`` (formulas over sizes) cannot end a run of ``ops`` (empty: the
        reduce alone), or None when it can. By default a chain computes no reduce."""
        return f"{cls.name} computes no reduce"

    @classmethod
    @core_default
    def read_past_tiles(cls, node: ImplNode, impl: ImplGraph) -> int:
        """For :attr:`Role.VECTOR_CHAIN` and :attr:`Role.GATHER`: bytes past the end of each UB tile ``node``
        reads that its code may read (e.g. a register load of whole 32-byte blocks beyond a tile's last row;
        the tile gather's offset pattern); the scheduler makes each such tile's buffer that much longer.
        :meth:`read_past_tile` asks it tile by tile. The base answers 0 (nothing is read past a tile), a
        claim a class filling either role must make itself (:data:`af_core.backend.ROLE_DECLARATIONS`)."""
        return 0

    @classmethod
    @core_default
    def read_past_tile(cls, node: ImplNode, impl: ImplGraph, tensor: str) -> int:
        """Bytes past the end of the UB tile ``tensor`` (one of ``node``'s inputs, or for
        :attr:`Role.VECTOR_CHAIN` one of its inputs or outputs) its code may read (or write: a store that
        ignores its mask); the scheduler asks this for every such tile and pads each by its own answer. By default
        :meth:`read_past_tiles`, the same for every tile; override it when only some tiles are read past
        (e.g. the tile gather's offset pattern, and an index tile loaded in wider steps than it is sized)."""
        return cls.read_past_tiles(node, impl)

    @classmethod
    def gather_scratch(
        cls, *, data: DType, index: DType, neg: bool, bound: bool, full_index: bool
    ) -> frozenset[str]:
        """For :attr:`Role.GATHER` in :attr:`GatherMode.TILE`: the tiles a gather of ``data`` by an index
        tile of ``index`` dtype needs (with the negative-index wrap ``neg``, the bound check ``bound``; a full
        index tile, or a compact one), by their keys in :data:`GATHER_SCRATCH`; the core allocates only those
        (``conv`` only for an int64 full index, ``tmp`` only with ``neg``, ``select`` only for a compact
        index). By default the offsets tile and every full-index one (offsets computed in UB by memory-based
        calls need each) and, for a compact index, the offsets tile alone."""
        if not full_index:
            return frozenset({"offsets"})
        return frozenset(GATHER_SCRATCH) - {"select"}

    @classmethod
    def scratch_dtypes(cls, op_type: str, in_dtypes: Sequence[DType], out_dtype: DType) -> tuple[DType, ...]:
        """Scratch tiles (one per dtype listed, each the size of the node's tile) the call needs."""
        return ()

    @classmethod
    def predicted_counters(cls, node: ImplNode, impl: ImplGraph) -> dict[str, Any]:
        """Counters of the cost model's contract that one execution of ``node`` adds, as formulas of its
        attrs (e.g. its ``count``), keyed by counter name (:data:`af_core.schedule.cost.COUNTERS`).

        For the counters that depend on how the call is written rather than on what the schedule
        moves -- today the register instructions and cycles of a vector function, which only the back
        end knows. A scheduler sums them over its tiles
        (:meth:`af_core.schedule.rowtiles.TileBuilder.call_counters`). None by default.
        """
        return {}

    # set by init(), the first step of every generation: the steps after it may rely on them
    node: ImplNode
    ctx: KernelContext

    def __init__(self) -> None:
        self.inputs: list[ImplTensor] = []
        self.outputs: list[ImplTensor] = []
        self.param: dict[str, Any] = {}

    # -- the chain ---------------------------------------------------------
    def init(self, node: ImplNode, ctx: KernelContext) -> None:
        """Collect the node, its tensors and the sources it needs."""
        self.node = node
        self.ctx = ctx
        self.inputs = [ctx.impl.tensor(n) for n in node.inputs]
        self.outputs = [ctx.impl.tensor(n) for n in node.outputs]
        for source in self.sources:
            ctx.need_source(source)

    def parse_attr(self) -> None:
        """Read op attributes from ``self.node.attrs`` into ``self.param``."""

    def build_api_param(self) -> None:
        """Compute the API arguments (counts, offsets, strides) as C++ expressions."""

    def generate_api_call_string(self) -> str:
        """The C++ statements of the call; by default renders ``template`` with ``param``."""
        if not self.template:
            raise CodegenError(f"ApiCall {self.name} has neither a template nor a generator")
        return render_string(self.template, **self.param, node=self.node, ctx=self.ctx)

    def post_process(self, code: str) -> str:
        """Add synchronisation or bookkeeping around the call."""
        return code

    def generate(self, node: ImplNode, ctx: KernelContext) -> str:
        self.init(node, ctx)
        self.parse_attr()
        self.build_api_param()
        return self.post_process(self.generate_api_call_string())


def create_api_call(name: str) -> ApiCall:
    """Instantiate the ApiCall registered under ``name`` (the ApiCallFactory)."""
    from af_core.registry import get_registry

    table = get_registry().api_calls
    cls = table.get(name)
    if cls is None:
        raise CodegenError(
            f"no plugin registers the ApiCall '{name}' (installed: {', '.join(table.names()) or 'none'})"
        )
    return cast(ApiCall, cls())
