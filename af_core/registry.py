"""Registries of ops, ApiCalls, API sources, templates and selection policies, filled by plugins.

One :class:`Registry` is built per plugin manager. Registration goes through
the hooks of :mod:`af_core.hookspecs`; each value remembers the distribution
that registered it, and a second registration of a name is a load
error of the second distribution naming both (its registrations of that kind
are dropped, the others keep working); with ``AF_STRICT_PLUGINS`` it raises
:class:`DuplicateRegistrationError`.

Which registry a compilation uses is chosen at the API edge: ``Autofuser(registry=...)``,
``TwinSession(registry=...)``, the CLI (the process's). The schedule and the code generator read the
one their caller hands them (a :class:`~af_core.schedule.scheduler.ScheduleResult` carries it), and
run a template's and an ApiCall's code inside :func:`use_registry`, so the role lookups the plugin
contract offers (``api_call_for(role)``, which takes no registry) answer from the same one.
:func:`get_registry` is the registry in force: the innermost :func:`use_registry` of this thread or
task, else the process's own, built lazily (and rebuilt by :func:`reset_registry`, after changing
``AF_DISABLE_PLUGINS`` in a test, say).

Core code reads registrations through the typed tables (:attr:`Registry.ops`, :attr:`Registry.api_calls`,
...); :meth:`Registry.get` by a kind's name stays for tools and tests.
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import attrs

from af_core.errors import DuplicateRegistrationError, PluginError
from af_core.plugin_manager import AfPluginManager, LoadError

if TYPE_CHECKING:
    from af_core.ops.opdef import OpDef
    from af_core.policy import SelectionPolicy


class Kind(enum.StrEnum):
    """What a registration is: each kind has its hook, its shape check and its typed table."""

    OP = "op"
    API_CALL = "api_call"
    API_SOURCE = "api_source"
    TEMPLATE = "template"
    SAMPLE = "sample"
    SELECTION_POLICY = "selection_policy"


# The values of higher layers (ApiCall classes, templates, samples, API sources) are typed here by the shape
# this layer checks (the ``_check_*`` functions below): what the layers above may rely on without this one
# importing them. The schedule layer reads an ApiCall class as ``af_core.backend.RoleCall``.
class RegisteredApiCall(Protocol):
    """A registered ApiCall class, as :func:`_check_api_call` checks it: a text name and ``generate``."""

    name: str
    generate: Callable[..., str]


class RegisteredApiSource(Protocol):
    """A registered API source (``af_core.codegen.api_source.ApiSource``), as :func:`_check_api_source`
    checks it."""

    name: str
    text: str
    requires: tuple[str, ...] | list[str]


class RegisteredTemplate(Protocol):
    """A registered template, as :func:`_check_template` checks it: a text name and ``propose``."""

    name: str
    propose: Callable[..., Any]


class RegisteredSample(Protocol):
    """A registered sample (``af_core.samples.Sample``), as :func:`_check_sample` checks it."""

    name: str
    build: Callable[[], Any]
    shapes: tuple[Any, ...]


#: Held while a deferred entry is built (re-entrant: building one may look up another).
_resolving = threading.RLock()


@attrs.frozen
class Deferred:
    """A registration whose value is built on first use: ``register(deferred("simd", make_template))``.

    A plugin registers its templates, ApiCalls and samples this way so that
    loading it imports none of the core's heavy layers (sympy, jinja2, numpy):
    ``afc plugins`` lists names, and a template's module is imported when the
    scheduler first asks for the template. ``load`` takes no arguments and
    returns what the plugin would have registered directly; it runs once,
    the value is checked like a direct registration and must carry ``name``.
    A ``load`` that fails raises :class:`PluginError` naming the plugin, at
    that first use (``afc plugins --load`` resolves every entry up front).

    ``roles``, for an ApiCall, declares the roles its class fills (its
    ``roles``): a lookup by role (``af_core.backend.api_call_for``) then builds
    only the entries that may fill it, and a compile that needs no register
    chain imports no chain code. The built class must fill exactly those
    roles, or building it is a :class:`PluginError`. None (the default) means
    undeclared: such an entry is built by every lookup by role.
    """

    name: str
    load: Callable[[], Any]
    roles: frozenset[Any] | None = None


def deferred(name: str, load: Callable[[], Any], *, roles: Iterable[Any] | None = None) -> Deferred:
    """A :class:`Deferred` registration of ``name``, built by ``load()`` on first use (an ApiCall may declare
    the ``roles`` its class fills)."""
    return Deferred(name, load, None if roles is None else frozenset(roles))


@attrs.define
class Entry:
    """A registered value and who registered it; a :class:`Deferred` one is built on first ``value``."""

    name: str
    _value: Any
    plugin: str
    distribution: str
    kind: str = ""
    _check: Callable[[Any, str], Any] | None = attrs.field(default=None, repr=False)

    @property
    def value(self) -> Any:
        if isinstance(self._value, Deferred):
            with _resolving:
                if isinstance(self._value, Deferred):
                    self._value = self._resolve(self._value)
        return self._value

    @property
    def resolved(self) -> bool:
        return not isinstance(self._value, Deferred)

    @property
    def declared_roles(self) -> frozenset[Any] | None:
        """The roles of an ApiCall entry known without building it: its class's once built, else what its
        :class:`Deferred` declared (None: undeclared, so only building it tells)."""
        if isinstance(self._value, Deferred):
            return self._value.roles
        return frozenset(getattr(self._value, "roles", ()))

    def _resolve(self, pending: Deferred) -> Any:
        where = f"{self.kind} '{self.name}' of plugin '{self.plugin}' ({self.distribution})"
        try:
            value = pending.load()
        except Exception as exc:  # noqa: BLE001 - a plugin's failure, re-raised naming the plugin
            raise PluginError(f"{where} failed to load: {type(exc).__name__}: {exc}") from exc
        if self._check is not None:
            try:
                value = self._check(value, self.distribution)
            except PluginError as exc:
                raise PluginError(f"{where} is malformed: {exc}") from exc
        if getattr(value, "name", None) != self.name:
            raise PluginError(
                f"{where} loaded a value named {getattr(value, 'name', None)!r}, not {self.name!r}"
            )
        built_roles = frozenset(getattr(value, "roles", ()))
        if pending.roles is not None and built_roles != pending.roles:
            raise PluginError(
                f"{where} was registered as filling roles {sorted(map(str, pending.roles))} but its class "
                f"fills {sorted(map(str, built_roles))}; declare the class's roles in deferred(..., roles=)"
            )
        return value


_T = TypeVar("_T", covariant=True)


class Table(Generic[_T]):
    """The registrations of one kind, read-only and typed by what the kind's check guarantees.

    Names are unique within a kind (a second registration is a load error). ``entries`` / ``names`` /
    ``values`` are ordered by name, so nothing downstream depends on plugin load order;
    ``in_order`` keeps registration order for the listings that show it. A deferred entry is built
    when its value is first read (``get`` or ``values``)."""

    def __init__(self, kind: Kind, entries: Mapping[str, Entry]) -> None:
        self.kind = kind
        self._entries = entries

    def get(self, name: str) -> _T | None:
        """The value registered as ``name``, or None."""
        entry = self._entries.get(name)
        return None if entry is None else entry.value

    def lookup(self, name: str) -> _T | None:
        """:meth:`get` under the name the IR's op table protocol (``af_core.ops.table.OpTable``) asks."""
        return self.get(name)

    def entry(self, name: str) -> Entry | None:
        """The entry (value, plugin, distribution) registered as ``name``, or None."""
        return self._entries.get(name)

    def entries(self) -> list[Entry]:
        return [self._entries[n] for n in sorted(self._entries)]

    def in_order(self) -> list[Entry]:
        """Entries in registration order (plugin load order, then each plugin's own order)."""
        return list(self._entries.values())

    def names(self) -> list[str]:
        return sorted(self._entries)

    def values(self) -> list[_T]:
        return [e.value for e in self.entries()]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Table({self.kind.value}: {', '.join(self.names())})"


class Registry:
    """Everything plugins registered, by kind and name."""

    KINDS = tuple(Kind)

    def __init__(self, manager: AfPluginManager) -> None:
        self.manager = manager
        self._entries: dict[Kind, dict[str, Entry]] = {k: {} for k in Kind}
        self.hook_errors: list[LoadError] = []
        self._collect("af_register_ops", Kind.OP, _stamp_op)
        self._collect("af_register_api_calls", Kind.API_CALL, _check_api_call)
        self._collect("af_register_api_sources", Kind.API_SOURCE, _check_api_source)
        self._collect("af_register_templates", Kind.TEMPLATE, _check_template)
        self._collect("af_register_samples", Kind.SAMPLE, _check_sample)
        self._collect("af_register_selection_policies", Kind.SELECTION_POLICY, _check_policy)

    # -- the typed tables the core reads ----------------------------------------------------------------
    @property
    def ops(self) -> Table[OpDef]:
        """Ops; also the op table (``lookup``) the IR and the graph builders are handed."""
        return Table(Kind.OP, self._entries[Kind.OP])

    @property
    def api_calls(self) -> Table[type[RegisteredApiCall]]:
        return Table(Kind.API_CALL, self._entries[Kind.API_CALL])

    @property
    def api_sources(self) -> Table[RegisteredApiSource]:
        return Table(Kind.API_SOURCE, self._entries[Kind.API_SOURCE])

    @property
    def templates(self) -> Table[RegisteredTemplate]:
        return Table(Kind.TEMPLATE, self._entries[Kind.TEMPLATE])

    @property
    def samples(self) -> Table[RegisteredSample]:
        return Table(Kind.SAMPLE, self._entries[Kind.SAMPLE])

    @property
    def policies(self) -> Table[SelectionPolicy]:
        return Table(Kind.SELECTION_POLICY, self._entries[Kind.SELECTION_POLICY])

    def policy(self, name: str) -> SelectionPolicy:
        """The selection policy called ``name``; an unknown name is a ``PolicyError`` listing the installed
        ones."""
        from af_core.policy import PolicyError

        policy = self.policies.get(name) if isinstance(name, str) else None
        if policy is None:
            installed = ", ".join(self.policies.names()) or "none"
            raise PolicyError(f"unknown selection policy {name!r} (installed: {installed})")
        return policy

    def _collect(self, hook: str, kind: Kind, check: Callable[[Any, str], Any]) -> None:
        """Run ``hook`` plugin by plugin; a plugin whose hook fails registers nothing of this kind.

        Failures (the hook raising, a malformed value, a name another
        distribution registered first) are load errors of that plugin; with
        ``AF_STRICT_PLUGINS`` they are fatal.
        """
        table = self._entries[kind]
        for plugin, dist, impl in self.manager.each(hook):
            staged: list[Entry] = []

            def register(
                value: Any, _plugin: str = plugin, _dist: str = dist, _staged: list[Entry] = staged
            ) -> None:
                if not isinstance(value, Deferred):
                    value = check(value, _dist)
                name = value.name
                if not isinstance(name, str) or not name:
                    raise PluginError(f"{kind} registered by '{_dist}' has no name: {value!r}")
                previous = table.get(name) or next((e for e in _staged if e.name == name), None)
                if previous is not None:
                    raise DuplicateRegistrationError(kind, name, previous.distribution, _dist)
                _staged.append(Entry(name, value, _plugin, _dist, kind, check))

            try:
                self.manager.call_one(hook, impl, register=register)
            except (Exception, SystemExit) as exc:
                error = (
                    str(exc)
                    if isinstance(exc, DuplicateRegistrationError)
                    else f"{type(exc).__name__}: {exc}"
                )
                self.hook_errors.append(LoadError(plugin, dist, f"{hook}: {error}"))
                if self.manager.strict:
                    if isinstance(exc, DuplicateRegistrationError):
                        raise
                    raise PluginError(f"plugin '{plugin}' failed in {hook}: {error}") from exc
                continue
            for entry in staged:
                table[entry.name] = entry

    # -- lookups by a kind's name (tools and tests; the core reads the typed tables) ---------------------
    def of_kind(self, kind: str) -> Table[Any]:
        """The table of the kind named ``kind`` (a :class:`Kind` value); another name is a ``ValueError``
        listing the kinds."""
        try:
            return Table(Kind(kind), self._entries[Kind(kind)])
        except ValueError:
            raise ValueError(f"no registration kind {kind!r} (kinds: {', '.join(Kind)})") from None

    def get(self, kind: str, name: str) -> Any | None:
        return self.of_kind(kind).get(name)

    def entry(self, kind: str, name: str) -> Entry | None:
        return self.of_kind(kind).entry(name)

    def entries(self, kind: str) -> list[Entry]:
        return self.of_kind(kind).entries()

    def names(self, kind: str) -> list[str]:
        return self.of_kind(kind).names()

    @property
    def load_errors(self) -> list[LoadError]:
        return list(self.manager.load_errors) + list(self.hook_errors)

    def build_deferred(self) -> list[LoadError]:
        """Build every deferred registration now; one load error per entry whose build fails."""
        failed = []
        for kind in self.KINDS:
            for entry in self.of_kind(kind).in_order():
                try:
                    entry.value  # noqa: B018 - building it is the point
                except PluginError as exc:
                    failed.append(LoadError(entry.plugin, entry.distribution, str(exc)))
        return failed

    @property
    def load_warnings(self) -> list[LoadError]:
        """Plugins loaded one contract version behind (af_core.contract's compatibility window)."""
        return list(self.manager.load_warnings)


def _stamp_op(value: Any, dist: str) -> Any:
    from af_core.ops.opdef import OpDef  # here: loading the registry module stays light (numpy, sympy)

    if not isinstance(value, OpDef):
        raise PluginError(f"op registered by '{dist}' is not an OpDef: {value!r}")
    return value.with_distribution(dist)


# ApiCalls and API sources are types of the code generator, a higher layer than this registry, so they are
# checked for the shape the code generator relies on (docs/architecture.md, "Layers").
def _check_api_call(value: Any, dist: str) -> Any:
    if not (
        isinstance(value, type)
        and isinstance(getattr(value, "name", None), str)
        and callable(getattr(value, "generate", None))
    ):
        raise PluginError(
            f"ApiCall registered by '{dist}' is not an ApiCall subclass (a class with a text "
            f"'name' and a 'generate' method): {value!r}"
        )
    return value


def _check_api_source(value: Any, dist: str) -> Any:
    requires = getattr(value, "requires", None)
    if not (
        isinstance(getattr(value, "name", None), str)
        and isinstance(getattr(value, "text", None), str)
        and isinstance(requires, (tuple, list))
        and all(isinstance(r, str) for r in requires)
    ):
        raise PluginError(
            f"API source registered by '{dist}' is not an ApiSource with text fields: {value!r}"
        )
    return value


def _check_template(value: Any, dist: str) -> Any:
    if not callable(getattr(value, "propose", None)) or not isinstance(getattr(value, "name", None), str):
        raise PluginError(
            f"template registered by '{dist}' lacks a text 'name' or a 'propose' method: "
            f"{type(value).__name__}"
        )
    return value


def _check_sample(value: Any, dist: str) -> Any:
    # checked by shape (af_core.samples.Sample sits in a higher layer than the registry)
    if not (
        isinstance(getattr(value, "name", None), str)
        and callable(getattr(value, "build", None))
        and isinstance(getattr(value, "shapes", None), tuple)
    ):
        raise PluginError(
            f"sample registered by '{dist}' is not a Sample (a text name, a build function and "
            f"a tuple of shapes): {value!r}"
        )
    return value


def _check_policy(value: Any, dist: str) -> Any:
    from af_core.policy import SelectionPolicy  # same layer as the registry: checked by its type

    if not isinstance(value, SelectionPolicy):
        raise PluginError(f"selection policy registered by '{dist}' is not a SelectionPolicy: {value!r}")
    return value


_lock = threading.Lock()
_registry: Registry | None = None
#: The registry :func:`use_registry` put in force for this thread or task (None: the process's).
_in_force: contextvars.ContextVar[Registry | None] = contextvars.ContextVar("af_registry", default=None)


def get_registry() -> Registry:
    """The registry in force: the innermost :func:`use_registry` of this thread or task, else the
    process-wide one (built on first use)."""
    scoped = _in_force.get()
    if scoped is not None:
        return scoped
    global _registry
    with _lock:
        if _registry is None:
            _registry = Registry(AfPluginManager())
        return _registry


@contextlib.contextmanager
def use_registry(registry: Registry) -> Iterator[Registry]:
    """Put ``registry`` in force for the code run inside (this thread or task only): what the schedule and
    the code generator wrap around the plugin code they call, so a lookup that takes no registry answers
    from the one their caller chose. Nests; the previous one is back on exit, whatever happened inside."""
    token = _in_force.set(registry)
    try:
        yield registry
    finally:
        _in_force.reset(token)


def reset_registry(registry: Registry | None = None) -> Registry | None:
    """Drop (or replace) the process-wide registry; returns the previous one."""
    global _registry
    with _lock:
        previous, _registry = _registry, registry
        return previous


def lookup_op(name: str) -> OpDef | None:
    """The OpDef registered under ``name`` in the registry in force, or None."""
    return get_registry().ops.get(name)


class RegistryOps:
    """The op table of the registry in force (:class:`af_core.ops.table.OpTable`), asked on each lookup,
    so a graph built before :func:`reset_registry` sees the registry in force when it adds a node. A graph
    built for one registry is handed that registry's :attr:`Registry.ops` instead."""

    def lookup(self, op_type: str) -> OpDef | None:
        return lookup_op(op_type)

    def names(self) -> list[str]:
        return get_registry().ops.names()

    def __repr__(self) -> str:
        return "registry_ops()"


_REGISTRY_OPS = RegistryOps()


def registry_ops() -> RegistryOps:
    """The registry's op table: what the graph-building edges hand the IR."""
    return _REGISTRY_OPS


def lookup_policy(name: str) -> SelectionPolicy:
    """The selection policy called ``name`` in the registry in force (:meth:`Registry.policy`)."""
    return get_registry().policy(name)


def op_with_role(role: str) -> OpDef:
    """The installed op filling ``role`` (one of :data:`af_core.ops.opdef.OP_ROLES`).

    Raises :class:`af_core.errors.UnknownOpError` naming the role when no
    installed plugin registers such an op; the first registered one wins when
    several do (ordered by name, so the choice does not depend on load order).
    """
    from af_core.errors import UnknownOpError

    for entry in get_registry().ops.entries():
        if role in entry.value.roles:
            return entry.value
    raise UnknownOpError(
        "op-role", f"no installed plugin registers an op with the role '{role}'", values={"role": role}
    )
