"""Exception families of af_core.

Every error a user can cause with a bad graph is an :class:`AscirError`: it
names the node, the port (when one is involved), the rule that was broken and
the offending values, so the message alone is enough to fix the graph.
Failures of the machinery around the graph (plugins, scheduling, tiling, the
CPU twin) have their own families so callers can tell "your graph is wrong"
from "no template can run it" from "the emulator caught a bug".
"""

from __future__ import annotations

from typing import Any


class AfError(Exception):
    """Root of every error raised on purpose by af_core and its plugins."""


class AscirError(AfError, ValueError):
    """A graph breaks a rule of ASCIR.

    ``node`` and ``port`` locate the problem, ``rule`` is a short stable
    identifier (tests and tools match on it), ``detail`` says what was found.
    """

    def __init__(
        self,
        rule: str,
        detail: str,
        *,
        node: str | None = None,
        port: str | None = None,
        values: dict[str, Any] | None = None,
    ) -> None:
        self.rule = rule
        self.detail = detail
        self.node = node
        self.port = port
        self.values = dict(values or {})
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.node is not None:
            where.append(f"node '{self.node}'")
        if self.port is not None:
            where.append(f"port '{self.port}'")
        location = " ".join(where) if where else "graph"
        text = f"{location}: rule '{self.rule}': {self.detail}"
        if self.values:
            shown = ", ".join(f"{k}={v}" for k, v in self.values.items())
            text += f" ({shown})"
        return text


class UnknownOpError(AscirError, AttributeError):
    """An op type that no installed plugin registered."""


class AttrError(AscirError):
    """An IR attribute that the op does not declare, or a value of the wrong kind."""


class GraphStructureError(AscirError):
    """Unconnected ports, cycles, missing Data/Output nodes."""


class GraphFormatError(GraphStructureError):
    """A value of a JSON graph file that breaks the file format (docs/graph-format.md).

    Besides the rule it says where the value is: in a node (``node``), else in
    ``owner`` (``"size 's0'"``, ``"axis 'z1'"``, ``"graph"`` for the top-level
    fields), and the ``field`` inside it (``"y.size"``, ``"max"``,
    ``"sizes[3].name"``; empty for the object itself), as in
    ``node 'gather' field 'y.size': rule 'json-type': expects ...``.
    """

    def __init__(
        self, rule: str, detail: str, *, field: str, node: str | None = None, owner: str = "graph"
    ) -> None:
        self.field = field
        self.owner = owner
        super().__init__(rule, detail, node=node)

    def _format(self) -> str:
        location = f"node '{self.node}'" if self.node is not None else self.owner
        if self.field:
            location += f" field '{self.field}'"
        return f"{location}: rule '{self.rule}': {self.detail}"


class ShapeError(AscirError):
    """Rank, size, stride and axis rules."""


class DTypeError(AscirError):
    """Dtype rules of an op or of a port."""


class OverflowRiskError(AscirError):
    """A byte offset that can overflow int64 for declared size bounds."""


class PluginError(AfError):
    """A plugin could not be loaded, or registered something twice."""


class DuplicateRegistrationError(PluginError):
    """Two distributions registered the same op, ApiCall, API source or template."""

    def __init__(self, kind: str, name: str, first: str, second: str) -> None:
        self.kind = kind
        self.name = name
        self.first = first
        self.second = second
        super().__init__(
            f"{kind} '{name}' is registered by both '{first}' and '{second}'; "
            f"uninstall one of them or disable it with AF_DISABLE_PLUGINS"
        )


class PluginCommandError(PluginError):
    """An ``afc`` command a plugin added failed: it raised (anything but an :class:`AfError`, which keeps
    its meaning, and Ctrl-C), exited with a code that is not an int from 0 to 3, returned something that
    is neither None nor such an int, or its ``configure`` failed. ``afc`` prints one line naming the
    plugin, its distribution and the command, and exits 3 (internal error)."""

    def __init__(self, plugin: str, distribution: str, command: str, what: str) -> None:
        self.plugin = plugin
        self.distribution = distribution
        self.command = command
        super().__init__(f"plugin '{plugin}' ({distribution}) failed in command '{command}': {what}")


class ScheduleError(AfError):
    """No template produced a case for a graph; carries every rejection."""

    def __init__(self, message: str, rejections: list[Any] | None = None) -> None:
        self.rejections = list(rejections or [])
        super().__init__(message)


class Unsupported(ScheduleError):
    """A template (or a core helper it calls) cannot handle this graph: the reason becomes a rejection.

    The one "cannot handle" error of the template contract: the scheduler turns
    it into a :class:`af_core.schedule.template.Rejected` naming the template, so
    templates raise it from anywhere in ``propose`` instead of catching errors.
    Any other exception from a template is reported as a template bug.
    """


class TilingError(AfError):
    """No candidate fits the concrete shape and platform."""


class CodegenError(AfError):
    """Template metadata and schedule results disagree, or an ApiCall is missing."""


class TwinError(AfError):
    """The CPU twin failed to build or its sanitizer stopped a kernel."""

    def __init__(self, message: str, *, log: str = "") -> None:
        self.log = log
        super().__init__(message)


class GraphFileError(AfError, ValueError):
    """A graph file that cannot be read as a graph: wrong kind of file, unreadable, malformed, too deep."""


class OutputError(AfError):
    """Artifacts could not be written where the user asked (an existing file, no permission, a full disk)."""


class InputArrayError(AfError, ValueError):
    """A user-given input array that does not fit its Data node without changing values."""


class ToolchainError(TwinError):
    """The machine lacks what the CPU twin needs (a usable C++ compiler, twin headers)."""


class UsageError(AfError, ValueError):
    """A command-line argument that cannot be used (``afc`` prints it as one line, exit 2)."""


class SizeError(UsageError):
    """A size value a graph cannot run with: the message names the size, its value and the rule it breaks.

    Raised before anything is allocated for a run (``afc run``, :class:`af_core.twin.TwinSession`):
    a size outside 0 .. 2^63-1 or above the graph's declared maximum, a tensor whose bytes would not fit
    an int64 offset, a shape relation the graph needs (an index no larger than its input), or a size of
    0 that leaves an output non-empty.
    """


class MemoryBudgetError(UsageError):
    """A run whose estimated host memory exceeds the limit (``--max-memory``, ``AF_MAX_MEMORY``, or a
    share of the memory available); raised before any array of the run is allocated.

    ``estimate`` and ``limit`` are the bytes compared (``estimate`` > ``limit``).
    """

    def __init__(self, message: str, *, estimate: int, limit: int) -> None:
        self.estimate = estimate
        self.limit = limit
        super().__init__(message)
