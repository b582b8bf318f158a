"""Registries of ops, ApiCalls, API sources, templates and selection policies, filled by plugins.

One :class:`Registry` is built per plugin manager. Registration goes through
the hooks of :mod:`af_core.hookspecs`; each value remembers the distribution
that registered it, and a second registration of a name is a load
error of the second distribution naming both (its registrations of that kind
are dropped, the others keep working); with ``AF_STRICT_PLUGINS`` it raises
:class:`DuplicateRegistrationError`.

The process-wide registry is built lazily by :func:`get_registry` and can be
rebuilt (after changing ``AF_DISABLE_PLUGINS`` in a test, say) with
:func:`reset_registry`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from af_core.errors import DuplicateRegistrationError, PluginError
from af_core.plugin_manager import AfPluginManager, LoadError

if TYPE_CHECKING:
    from af_core.ops.opdef import OpDef
    from af_core.policy import SelectionPolicy


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
    """

    name: str
    load: Callable[[], Any]


def deferred(name: str, load: Callable[[], Any]) -> Deferred:
    """A :class:`Deferred` registration of ``name``, built by ``load()`` on first use."""
    return Deferred(name, load)


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
        return value


class Registry:
    """Everything plugins registered, by kind and name."""

    KINDS = ("op", "api_call", "api_source", "template", "sample", "selection_policy")

    def __init__(self, manager: AfPluginManager) -> None:
        self.manager = manager
        self._entries: dict[str, dict[str, Entry]] = {k: {} for k in self.KINDS}
        self.hook_errors: list[LoadError] = []
        self._collect("af_register_ops", "op", _stamp_op)
        self._collect("af_register_api_calls", "api_call", _check_api_call)
        self._collect("af_register_api_sources", "api_source", _check_api_source)
        self._collect("af_register_templates", "template", _check_template)
        self._collect("af_register_samples", "sample", _check_sample)
        self._collect("af_register_selection_policies", "selection_policy", _check_policy)

    def _collect(self, hook: str, kind: str, check: Callable[[Any, str], Any]) -> None:
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

    # -- lookups -----------------------------------------------------------
    def get(self, kind: str, name: str) -> Any | None:
        entry = self._entries[kind].get(name)
        return None if entry is None else entry.value

    def entry(self, kind: str, name: str) -> Entry | None:
        return self._entries[kind].get(name)

    def entries(self, kind: str) -> list[Entry]:
        return [self._entries[kind][n] for n in sorted(self._entries[kind])]

    def entries_in_order(self, kind: str) -> list[Entry]:
        """Entries in registration order (plugin load order, then each plugin's own order)."""
        return list(self._entries[kind].values())

    def names(self, kind: str) -> list[str]:
        return sorted(self._entries[kind])

    def table(self, kind: str) -> Mapping[str, Any]:
        return {n: e.value for n, e in sorted(self._entries[kind].items())}

    @property
    def load_errors(self) -> list[LoadError]:
        return list(self.manager.load_errors) + list(self.hook_errors)

    def build_deferred(self) -> list[LoadError]:
        """Build every deferred registration now; one load error per entry whose build fails."""
        failed = []
        for kind in self.KINDS:
            for entry in self.entries_in_order(kind):
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


def get_registry() -> Registry:
    """The process-wide registry (built on first use)."""
    global _registry
    with _lock:
        if _registry is None:
            _registry = Registry(AfPluginManager())
        return _registry


def reset_registry(registry: Registry | None = None) -> Registry | None:
    """Drop (or replace) the process-wide registry; returns the previous one."""
    global _registry
    with _lock:
        previous, _registry = _registry, registry
        return previous


def lookup_op(name: str) -> OpDef | None:
    """The OpDef registered under ``name``, or None."""
    return get_registry().get("op", name)


class RegistryOps:
    """The op table of the process's registry (:class:`af_core.ops.table.OpTable`), asked on each lookup,
    so a graph built before :func:`reset_registry` sees the registry in force when it adds a node."""

    def lookup(self, op_type: str) -> OpDef | None:
        return lookup_op(op_type)

    def __repr__(self) -> str:
        return "registry_ops()"


_REGISTRY_OPS = RegistryOps()


def registry_ops() -> RegistryOps:
    """The registry's op table: what the graph-building edges hand the IR."""
    return _REGISTRY_OPS


def lookup_policy(name: str) -> SelectionPolicy:
    """The installed selection policy called ``name``; an unknown name is an error listing the installed ones."""
    from af_core.policy import PolicyError

    registry = get_registry()
    policy = registry.get("selection_policy", name) if isinstance(name, str) else None
    if policy is None:
        installed = ", ".join(registry.names("selection_policy")) or "none"
        raise PolicyError(f"unknown selection policy {name!r} (installed: {installed})")
    return policy


def op_with_role(role: str) -> OpDef:
    """The installed op filling ``role`` (one of :data:`af_core.ops.opdef.OP_ROLES`).

    Raises :class:`af_core.errors.UnknownOpError` naming the role when no
    installed plugin registers such an op; the first registered one wins when
    several do (ordered by name, so the choice does not depend on load order).
    """
    from af_core.errors import UnknownOpError

    for entry in get_registry().entries("op"):
        if role in entry.value.roles:
            return entry.value
    raise UnknownOpError(
        "op-role", f"no installed plugin registers an op with the role '{role}'", values={"role": role}
    )
