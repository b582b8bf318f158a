"""The back-end contract: roles the core and templates ask the installed ApiCalls to fill.

The core schedules loads, vector ops, reduces, stores and gathers, but it
does not own the code that implements them: a back-end plugin (today the
v35 RegBase set) registers ApiCall classes that declare which roles they
fill. Schedulers ask for a role (:func:`api_call_for`), never for a class
name, so a second back end can replace or sit beside the first. This module
sits below the schedulers and code generation, both of which use it.

A role fixes the contract of the ImplNodes a scheduler emits for it (their
inputs, outputs and attrs); docs/writing-templates.md lists each role's
contract. Capabilities that depend on ops or dtypes are asked of the class
through :class:`af_core.codegen.api_call.ApiCall`'s classmethods
(``supports``, ``rejection``, ``scratch_dtypes``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Protocol, TypeVar, cast, overload

from af_core.errors import PluginError, Unsupported
from af_core.registry import get_registry

if TYPE_CHECKING:
    from af_core.dtypes import DType
    from af_core.schedule.impl_graph import ImplGraph, ImplNode


class Role(enum.StrEnum):
    """A job an ApiCall does for the schedulers."""

    #: Copy ``rows`` rows of a GM view (strided, possibly broadcast) into a UB tile. A row that is one
    #: unit-stride block moves on MTE2 (its tile's VECIN queue orders it for the vector pipe); any other row
    #: is read element by element by the scalar unit, and the call orders those writes itself: after the
    #: vector reads of what the tile held (V_S) and before any later vector call (S_V). Such a row at every
    #: shape (``rowtiles.never_dense``) gets a VECCALC tile, and its S_V covers the scalar writes before it.
    LOAD_ROWS = "load_rows"
    #: One elementwise op (or a cast) over a UB tile; capabilities per op and dtypes.
    VECTOR_OP = "vector_op"
    #: Reduce a run of axes inside each tile row (sum / mean / max / min / prod).
    REDUCE = "reduce"
    #: Copy rows of a UB tile to GM.
    STORE_ROWS = "store_rows"
    #: The IndirectLoad itself, in one of the gather modes the class lists.
    GATHER = "gather"
    #: A run of elementwise ops over one UB tile computed in one pass (e.g. one register vector function):
    #: ``rejection`` says per op and dtypes whether it may join a run; the node's ``attrs["steps"]`` lists
    #: the ops in order (:class:`af_core.schedule.chain_attrs.ChainStep`), its inputs are the tiles read from outside the run, its outputs the tiles read after;
    #: values of the dtypes ``run_local_dtypes`` names cross a run's edge only where ``edge_rejection`` lets
    #: the run store or load them. A chain whose
    #: ``reduce_rejection`` accepts it also computes the :attr:`REDUCE` that reads the run's last value
    #: (``attrs["reduce"]``: a :class:`af_core.schedule.chain_attrs.ChainReduce`).
    VECTOR_CHAIN = "vector_chain"


class GatherMode(enum.StrEnum):
    """How a case's IndirectLoad moves data; a gather ApiCall lists the modes it generates."""

    #: A UB tile holds the input slice; offsets from the index tile; one vector Gather per tile.
    TILE = "tile"
    #: SIMT lanes each read their index and the input element from GM.
    LANES = "lanes"


#: The tiles the core can give a tile gather (an ApiCall's ``gather_scratch`` picks). ``offsets``: the int32
#: offsets tile, the gather node's second output (a gather that computes the offsets and moves the data in
#: one function keeps them in registers). For a full index tile, by their key in the gather node's ``extra``
#: attr: ``conv`` an int32 copy of an int64 index tile, ``tmp`` an int32 tile for the negative-index wrap,
#: ``mask`` / ``mask2`` a bit per position (e.g. the bound check's two halves). For a compact index,
#: ``select``: an int32 tile of one row's positions, filled once by the gather's pattern phase (its second
#: output) and read by every tile (the node's ``select`` attr), e.g. the element of the compact index row
#: each position reads.
GATHER_SCRATCH = ("offsets", "conv", "tmp", "mask", "mask2", "select")

#: Per role, the capability questions whose answer is a memory-safety claim. A class filling the role
#: answers each itself (one method of each group, in its own class or a base of its plugin): the
#: ApiCall base's answer, "nothing is read past a tile", would be a claim made by omission, and a
#: scheduler pads every tile by the answer. :func:`api_call_for` refuses a class that inherits it.
ROLE_DECLARATIONS: dict[Role, tuple[tuple[str, ...], ...]] = {
    Role.GATHER: (("read_past_tile", "read_past_tiles"),),
    Role.VECTOR_CHAIN: (("read_past_tile", "read_past_tiles"),),
}

_F = TypeVar("_F", bound=Callable[..., Any])

#: ``(op_type, input dtypes, output dtype)``: one op as the capability questions name it
OpSignature = tuple[str, Sequence["DType"], "DType"]


class RoleCall(Protocol):
    """What the schedulers ask of the class filling any role, before any node exists: who it is, and the
    cost model's questions (the counters one call predicts, the bytes it reads past its tiles).

    :func:`api_call_for` returns such a class, typed by the role's own protocol (:data:`ROLE_PROTOCOLS`).
    ``af_core.codegen.api_call.ApiCall`` (the base every back-end class derives from) satisfies all of
    them and documents each answer; these protocols are how the schedule layer names the contract
    without depending on the code generator, which sits above it. Which answers a role's class must
    give itself: :data:`ROLE_DECLARATIONS`.
    """

    name: ClassVar[str]
    roles: ClassVar[frozenset[Role]]
    gather_modes: ClassVar[frozenset[GatherMode]]
    priority: ClassVar[int]

    @classmethod
    def predicted_counters(cls, node: ImplNode, impl: ImplGraph) -> dict[str, Any]: ...
    @classmethod
    def read_past_tiles(cls, node: ImplNode, impl: ImplGraph) -> int: ...
    @classmethod
    def read_past_tile(cls, node: ImplNode, impl: ImplGraph, tensor: str) -> int: ...


class OpCall(RoleCall, Protocol):
    """:attr:`Role.VECTOR_OP` and :attr:`Role.REDUCE`: one op over a tile, asked per op type and dtypes."""

    @classmethod
    def supports(cls, op_type: str) -> bool: ...
    @classmethod
    def rejection(cls, op_type: str, in_dtypes: Sequence[DType], out_dtype: DType) -> str | None: ...
    @classmethod
    def form_note(cls, op_type: str, in_dtypes: Sequence[DType], out_dtype: DType) -> str | None: ...
    @classmethod
    def scratch_dtypes(
        cls, op_type: str, in_dtypes: Sequence[DType], out_dtype: DType
    ) -> tuple[DType, ...]: ...


class GatherCall(RoleCall, Protocol):
    """:attr:`Role.GATHER`: the scratch tiles it needs and a note on its form; what it reads past a tile
    it must answer itself (:data:`ROLE_DECLARATIONS`)."""

    @classmethod
    def gather_scratch(
        cls, *, data: DType, index: DType, neg: bool, bound: bool, full_index: bool
    ) -> frozenset[str]: ...
    @classmethod
    def form_note(cls, op_type: str, in_dtypes: Sequence[DType], out_dtype: DType) -> str | None: ...


class VectorChainCall(OpCall, Protocol):
    """:attr:`Role.VECTOR_CHAIN`: which ops may share a run, which values cross its edge, which reduce may
    end it; what it reads past a tile it must answer itself (:data:`ROLE_DECLARATIONS`)."""

    @classmethod
    def run_rejection(cls, ops: Sequence[OpSignature]) -> str | None: ...
    @classmethod
    def run_local_dtypes(cls) -> frozenset[str]: ...
    @classmethod
    def edge_rejection(
        cls, ops: Sequence[OpSignature], dtype: DType, *, stores: bool, reduces: bool
    ) -> str | None: ...
    @classmethod
    def reduce_rejection(
        cls, kind: str, dtype: DType, view: tuple[object, object, object], ops: Sequence[OpSignature]
    ) -> str | None: ...


#: The protocol of each role: what :func:`api_call_for` checks the chosen class against (and types its
#: result by); a role missing here asks only :class:`RoleCall`'s questions.
ROLE_PROTOCOLS: dict[Role, type] = {
    Role.VECTOR_OP: OpCall,
    Role.REDUCE: OpCall,
    Role.GATHER: GatherCall,
    Role.VECTOR_CHAIN: VectorChainCall,
}


def core_default(fn: _F) -> _F:
    """Marks an answer of the ApiCall base that a class filling a role of :data:`ROLE_DECLARATIONS`
    may not inherit (put it under ``@classmethod``)."""
    fn.__af_core_default__ = True  # type: ignore[attr-defined]
    return fn


def undeclared(cls: type, role: Role) -> list[str]:
    """The declarations ``role`` needs that ``cls`` leaves to the base, as ``a or b`` texts (empty: none)."""
    return [
        " or ".join(group)
        for group in ROLE_DECLARATIONS.get(role, ())
        if all(getattr(getattr(cls, name, None), "__af_core_default__", False) for name in group)
    ]


def role_calls() -> list[type[RoleCall]]:
    """The ApiCall classes of the registry in force, by name, read as :class:`RoleCall` (the registry checks
    their shape, :func:`api_call_for` the declarations of the role it hands one out for)."""
    return [cast("type[RoleCall]", cls) for cls in get_registry().api_calls.values()]


def role_call(name: str) -> type[RoleCall] | None:
    """The ApiCall class registered as ``name`` in the registry in force, read as :class:`RoleCall`, or
    None."""
    return cast("type[RoleCall] | None", get_registry().api_calls.get(name))


def _filling(role: Role) -> list[type[RoleCall]]:
    """The ApiCall classes of the registry in force that fill ``role``, by name. An entry whose roles are
    known without building it (declared with its deferred registration, or built already) and leave
    ``role`` out is not built."""
    classes = []
    for entry in get_registry().api_calls.entries():
        declared = entry.declared_roles
        if declared is not None and role not in declared:
            continue
        cls = cast("type[RoleCall]", entry.value)
        if role in cls.roles:
            classes.append(cls)
    return classes


def installed(role: Role) -> bool:
    """Whether some installed plugin fills ``role`` (for optional roles such as :attr:`Role.VECTOR_CHAIN`).

    A deferred ApiCall that declared ``role`` answers without being built (building it checks the
    declaration); an undeclared one is built to ask its class."""
    for entry in get_registry().api_calls.entries():
        declared = entry.declared_roles
        if declared is None:
            declared = frozenset(cast("type[RoleCall]", entry.value).roles)
        if role in declared:
            return True
    return False


@overload
def api_call_for(role: Literal[Role.GATHER], gather_mode: GatherMode | None = None) -> type[GatherCall]: ...
@overload
def api_call_for(
    role: Literal[Role.VECTOR_CHAIN], gather_mode: GatherMode | None = None
) -> type[VectorChainCall]: ...
@overload
def api_call_for(
    role: Literal[Role.VECTOR_OP, Role.REDUCE], gather_mode: GatherMode | None = None
) -> type[OpCall]: ...
@overload
def api_call_for(role: Role, gather_mode: GatherMode | None = None) -> type[RoleCall]: ...
def api_call_for(role: Role, gather_mode: GatherMode | None = None) -> type[RoleCall]:
    """The installed ApiCall class filling ``role`` (and, for gathers, ``gather_mode``).

    Raises :class:`Unsupported` naming the role when no plugin fills it, so a
    template asking for it is rejected with that reason rather than failing later.
    """
    found = [cls for cls in _filling(role) if gather_mode is None or gather_mode in cls.gather_modes]
    if not found:
        what = f"role '{role.value}'" + (f" in gather mode '{gather_mode.value}'" if gather_mode else "")
        raise Unsupported(f"no installed plugin registers an ApiCall for the {what}")
    chosen = min(found, key=lambda cls: (-cls.priority, cls.name))
    entry = get_registry().api_calls.entry(chosen.name)
    who = f" of plugin '{entry.plugin}' ({entry.distribution})" if entry is not None else ""
    protocol = ROLE_PROTOCOLS.get(role, RoleCall)
    absent = sorted(m for m in _members(protocol) if not hasattr(chosen, m))
    if absent:
        raise PluginError(
            f"ApiCall '{chosen.name}'{who} fills the role '{role.value}' but has no "
            + ", ".join(absent)
            + f" ({protocol.__name__}, the questions the schedulers ask of that role)"
        )
    missing = undeclared(chosen, role)
    if missing:
        raise PluginError(
            f"ApiCall '{chosen.name}'{who} fills the role '{role.value}' but does not answer "
            + ", ".join(missing)
            + " itself: the base's answer (nothing is read past a tile) is a memory-safety claim a class "
            "filling this role must make explicitly"
        )
    return chosen


def _members(protocol: type) -> frozenset[str]:
    """The attributes and methods a protocol class names (its own and its bases')."""
    names: set[str] = set()
    for klass in protocol.__mro__:
        if klass not in (object, Protocol, Generic):
            names |= {n for n in vars(klass) if not n.startswith("_")}
            names |= set(vars(klass).get("__annotations__", {}))
    return frozenset(names)
