"""A small typed facade over pluggy (the shape of tox's plugin manager).

It loads the ``af_core`` entry points one at a time so that a broken plugin
(one that raises or calls ``sys.exit`` at import, implements a hook no
specification declares, or uses an entry-point name another distribution
already uses) is recorded as a load error and skipped instead of taking the
host down, honours
``AF_DISABLE_PLUGINS`` / ``AF_STRICT_PLUGINS`` / ``AF_TRACE_HOOKS``, and
calls registration hooks plugin by plugin so that every registered value is
attributed to the distribution that provided it.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs
import pluggy

from af_core import contract, hookspecs
from af_core.collector import paused
from af_core.entry_points import entry_points
from af_core.errors import PluginError
from af_core.naming import terminal

ENTRY_POINT_GROUP = "af_core"
CORE_PLUGIN = "af_core"
CORE_DIST = "af-core"


@attrs.frozen
class LoadError:
    """A plugin that failed to import or register."""

    plugin: str
    distribution: str
    error: str
    trace: str = ""


@attrs.frozen
class PluginInfo:
    """What ``afc plugins`` shows for one loaded plugin."""

    name: str
    distribution: str
    version: str
    hooks: tuple[str, ...]


def _env_flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _check_contract(plugin: str, dist: str, module: types.ModuleType) -> str | None:
    """Refuse a plugin module written against a contract version that does not fit (see af_core.contract).

    Returns the warning for a plugin loaded inside the compatibility window, else None.
    """
    verdict = contract.check(getattr(module, "AF_CONTRACT_VERSION", None), hookspecs.CONTRACT_VERSION, module)
    changed = f". {verdict.changed}" if verdict.changed else ""
    if verdict.error is None:
        return (
            None if verdict.warning is None else f"plugin '{plugin}' from '{dist}' {verdict.warning}{changed}"
        )
    raise PluginError(
        f"plugin '{plugin}' from '{dist}' {verdict.error}; af-core {_core_version()} provides hook contract "
        f"version {hookspecs.CONTRACT_VERSION} (install a release of '{dist}' built for it){changed}"
    )


def _core_version() -> str:
    """The version of the af_core that runs (the distribution's one version source)."""
    from af_core import __version__

    return __version__


class AfPluginManager:
    """Owns the pluggy manager and the provenance of every plugin."""

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        load_entry_points: bool = True,
        extra_plugins: tuple[tuple[str, object, str], ...] = (),
    ) -> None:
        self.env = dict(os.environ if env is None else env)
        self.pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
        self.pm.add_hookspecs(hookspecs)
        self.load_errors: list[LoadError] = []
        self.load_warnings: list[LoadError] = []  # plugins loaded inside the contract's compatibility window
        self.disabled: list[str] = []
        self._dist: dict[str, tuple[str, str]] = {}
        self.strict = _env_flag(self.env, "AF_STRICT_PLUGINS")
        if _env_flag(self.env, "AF_TRACE_HOOKS"):
            self._enable_tracing()

        from af_core import builtin_plugin

        self._register(CORE_PLUGIN, builtin_plugin, CORE_DIST, _core_version())
        for name, module, dist in extra_plugins:
            self._register(name, module, dist, "0")
        if load_entry_points:
            with paused():  # af_core.collector: importing the plugins makes many young objects
                self._load_entry_points()

    # -- loading -----------------------------------------------------------
    def _disabled_names(self) -> set[str]:
        raw = self.env.get("AF_DISABLE_PLUGINS", "")
        return {part.strip() for part in raw.split(",") if part.strip()}

    def _load_entry_points(self) -> None:
        disabled = self._disabled_names()
        eps = sorted(entry_points(ENTRY_POINT_GROUP), key=lambda ep: (ep.name, ep.distribution, ep.value))
        owner: dict[str, str] = {}
        for ep in eps:
            dist_name, version = ep.distribution, ep.version
            if ep.name in owner:
                if owner[ep.name] != dist_name:
                    self._fail(
                        ep.name,
                        dist_name,
                        f"entry point name '{ep.name}' is also used by "
                        f"'{owner[ep.name]}', which was loaded instead; rename one of them",
                    )
                # else: the same distribution visible twice on sys.path: keep the first
                continue
            owner[ep.name] = dist_name
            if ep.name in disabled or dist_name in disabled:
                self.disabled.append(ep.name)
                continue
            try:
                module = ep.load()
                warning = _check_contract(ep.name, dist_name, module)
                if warning is not None:
                    self.load_warnings.append(LoadError(ep.name, dist_name, warning))
                self._register(ep.name, module, dist_name, version)
            except (Exception, SystemExit) as exc:  # a broken plugin must not take the host down
                import traceback  # only for a plugin that fails (difflib below too): ~1 ms of every start-up

                self._fail(ep.name, dist_name, f"{type(exc).__name__}: {exc}", traceback.format_exc(), exc)
                continue
            unknown = self._unknown_hooks(ep.name) + self._refused_options(ep.name)
            if unknown:
                self.pm.unregister(name=ep.name)
                self._dist.pop(ep.name, None)
                self._fail(ep.name, dist_name, "; ".join(unknown))
        self.pm.check_pending()  # every remaining hook implementation has a specification

    def _unknown_hooks(self, name: str) -> list[str]:
        """One message per hook ``name`` implements that no specification declares (a misspelt hook)."""
        plugin = self.pm.get_plugin(name)
        known = sorted(n for n in dir(hookspecs) if n.startswith("af_"))
        messages = []
        for caller in self.pm.get_hookcallers(plugin) or []:
            if caller.spec is None:
                import difflib

                close = difflib.get_close_matches(caller.name, known, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                messages.append(f"implements unknown hook '{caller.name}'{hint}")
        return sorted(messages)

    def _refused_options(self, name: str) -> list[str]:
        """One message per hook ``name`` implements with an option the core's per-plugin calls would ignore."""
        plugin = self.pm.get_plugin(name)
        messages = []
        for caller in self.pm.get_hookcallers(plugin) or []:
            for impl in caller.get_hookimpls():
                if impl.plugin_name != name:
                    continue
                used = [
                    opt
                    for opt in ("tryfirst", "trylast", "wrapper", "hookwrapper")
                    if getattr(impl, opt, False)
                ]
                if used:
                    messages.append(
                        f"implements hook '{caller.name}' with {', '.join(used)}=True, which af_core "
                        "does not honour (it calls every plugin's implementation in load order); "
                        "remove the option"
                    )
        return sorted(messages)

    def _fail(
        self, plugin: str, dist: str, error: str, trace: str = "", cause: BaseException | None = None
    ) -> None:
        """Record a load error; with ``AF_STRICT_PLUGINS`` it is fatal."""
        self.load_errors.append(LoadError(plugin, dist, error, trace))
        if self.strict:
            raise PluginError(
                f"plugin '{plugin}' from '{dist}' failed to load: {error} (AF_STRICT_PLUGINS is set)"
            ) from cause

    def _register(self, name: str, module: object, dist: str, version: str) -> None:
        self.pm.register(module, name=name)
        self._dist[name] = (dist, version)

    def _enable_tracing(self) -> None:
        def before(hook_name: str, hook_impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
            plugins = ", ".join(impl.plugin_name for impl in hook_impls)
            print(terminal(f"[af hook] {hook_name} -> {plugins}"), file=sys.stderr)

        def after(
            outcome: pluggy.Result[Any],
            hook_name: str,
            hook_impls: Sequence[pluggy.HookImpl],
            kwargs: Mapping[str, Any],
        ) -> None:
            print(f"[af hook] {hook_name} done", file=sys.stderr)

        self.pm.add_hookcall_monitoring(before, after)

    # -- queries -----------------------------------------------------------
    def distribution_of(self, plugin_name: str) -> str:
        return self._dist.get(plugin_name, ("unknown", "0"))[0]

    def plugins(self) -> list[PluginInfo]:
        infos = []
        for name, plugin in self.pm.list_name_plugin():
            if plugin is None:
                continue
            hooks = sorted(
                caller.name
                for caller in self.pm.get_hookcallers(plugin) or []
                if caller.name.startswith("af_")
            )
            dist, version = self._dist.get(name, ("unknown", "0"))
            infos.append(PluginInfo(name, dist, version, tuple(hooks)))
        infos.sort(key=lambda p: (p.name != CORE_PLUGIN, p.name))
        return infos

    # -- calling -----------------------------------------------------------
    def each(self, hook_name: str) -> Iterator[tuple[str, str, Any]]:
        """Yield ``(plugin_name, distribution, hookimpl)`` per implementation, in load order.

        Run one with :meth:`call_one`; callers decide how to isolate its failure.
        """
        caller = getattr(self.pm.hook, hook_name)
        order = {name: i for i, (name, _p) in enumerate(self.pm.list_name_plugin())}
        impls = sorted(caller.get_hookimpls(), key=lambda impl: order.get(impl.plugin_name, 1 << 30))
        for impl in impls:
            yield impl.plugin_name, self.distribution_of(impl.plugin_name), impl

    def call_one(self, hook_name: str, impl: Any, **kwargs: Any) -> Any:
        """Call a single hook implementation with the arguments it declares."""
        if _env_flag(self.env, "AF_TRACE_HOOKS"):
            print(terminal(f"[af hook] {hook_name} @ {impl.plugin_name}"), file=sys.stderr)
        return impl.function(**{k: kwargs[k] for k in impl.argnames if k in kwargs})

    def twin_include_dirs(self, platform: Any) -> list[str]:
        """Every plugin's twin header directories, plugin by plugin; a failing plugin is named."""
        dirs: list[str] = []
        for plugin, dist, impl in self.each("af_twin_include_dirs"):
            try:
                result = self.call_one("af_twin_include_dirs", impl, platform=platform)
            except (Exception, SystemExit) as exc:
                raise PluginError(
                    f"plugin '{plugin}' ({dist}) failed in af_twin_include_dirs: {type(exc).__name__}: {exc}"
                ) from exc
            if result is None:
                continue
            if isinstance(result, (str, bytes, os.PathLike)) or not isinstance(result, (list, tuple)):
                raise PluginError(
                    f"plugin '{plugin}' ({dist}) returned {type(result).__name__} from "
                    "af_twin_include_dirs; expected a list of directories"
                )
            for d in result:
                if not isinstance(d, (str, os.PathLike)) or not os.path.isdir(d):
                    raise PluginError(
                        f"plugin '{plugin}' ({dist}) returned {d!r} from af_twin_include_dirs, "
                        "which is not an existing directory"
                    )
                dirs.append(str(d))
        return dirs
