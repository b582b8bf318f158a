"""``afc``: the command line of af_core.

    afc --version                        the af-core version and each installed plugin distribution's
    afc plugins                          what is installed, versions, hooks, load errors
    afc cache info|clear                 where the twin build cache is, its size and bound; empty it
    afc compile GRAPH... [-j N] -o DIR       write kernel, tiling, tiling data, infer_shape, proto, report, pictures
    afc graph GRAPH --format mermaid|dot|svg draw the graph and each case's stages and workspaces
    afc explain GRAPH --shape k=v          why each candidate was chosen, dropped or rejected
    afc run GRAPH --shape k=v [--inputs DIR] [--max-memory SIZE]
                                         run on the CPU twin and compare with the reference
    afc check GRAPH... [--ascendc DIR]      type-check the kernels against the official AscendC headers
    afc demo                             compile the sample graphs and run them on the twin
    afc NAME ...                         a command an installed plugin adds (hook af_register_commands)

GRAPH is a ``.json`` graph (data, never evaluated) or a ``.py`` program
defining ``graph`` (or ``build()``), which is run as Python code.

Exit codes: 0 success; 1 the twin differs from the reference (or explain
finds no case that fits); 2 a user error (bad graph, arguments, files),
printed as one line on stderr; 3 an internal error (a bug), one line with a
hint to rerun with ``--debug`` (accepted before or after the subcommand),
which shows the traceback; 130 interrupted (Ctrl-C); 141 standard output
closed early (``afc compile ... | head``: the rest of the output is dropped
quietly). Plugins that failed to load are reported as one warning line each
on stderr by every command.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path
from typing import NoReturn

from af_core.errors import (
    AfError,
    CodegenError,
    PluginCommandError,
    ToolchainError,
    TwinError,
    UsageError,
)
from af_core.ops.opdef import ComputeType

EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_ERROR = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
#: Standard output was a pipe whose reader went away (``afc compile ... | head``): 128 + SIGPIPE, the status
#: a shell reports for tools the signal stops (``yes | head``); nothing is printed.
EXIT_BROKEN_PIPE = 141
#: Rich (tables, progress) is imported by the commands that print with it: ``afc --help`` and
#: ``afc --version`` load neither rich nor sympy, numpy, networkx or jinja2.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from typing import IO, Any, BinaryIO

    import numpy as np
    from _typeshed import SupportsWrite
    from rich.console import Console

    from af_core.autofuser import AutofuserOptions
    from af_core.commands import PluginCommand
    from af_core.ir.graph import HintGraph
    from af_core.twin import GraphRun
    from af_core.twin.budget import MemoryLimit

#: Largest size value ``--shape`` accepts (sizes are int64 on the device).
MAX_SIZE_VALUE = (1 << 63) - 1


# -- the output layer --------------------------------------------------------------------------------------
# Every character afc writes to the terminal goes through af_core.naming.terminal: rich output through
# the console's render (tables, titles, progress), plain lines through say(). Graph, node, size, file,
# template and plugin names are user or plugin text; none of their characters reaches the terminal raw.


class OutputClosed(Exception):
    """Standard output is a pipe whose reader has gone (``afc compile ... | head``)."""


class _Stdout:
    """``sys.stdout`` as it is at each call, with a closed pipe raised as :class:`OutputClosed`."""

    def write(self, text: str) -> int:
        try:
            return sys.stdout.write(text)
        except BrokenPipeError:
            raise OutputClosed from None

    def flush(self) -> None:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            raise OutputClosed from None

    def __getattr__(self, name: str) -> Any:
        return getattr(sys.stdout, name)


def _console() -> Console:
    """Rich on a terminal; plain, wide text when piped (CI logs, files). Every text segment it renders
    passes through :func:`af_core.naming.terminal` (cells and lines are escaped before too, with
    :func:`_t`, so tables keep their layout)."""
    from typing import cast

    from rich.console import Console
    from rich.segment import Segment

    from af_core.naming import terminal

    class TerminalConsole(Console):
        def render(self, renderable: Any, options: Any = None) -> Iterator[Segment]:
            for segment in super().render(renderable, options):
                if segment.control or segment.text.isprintable():
                    yield segment
                else:
                    yield Segment(terminal(segment.text, lines=True), segment.style, segment.control)

    file = cast("IO[str]", _Stdout())
    if sys.stdout.isatty():
        return TerminalConsole(file=file, highlight=False)
    return TerminalConsole(file=file, highlight=False, width=200, no_color=True, force_terminal=False)


def _t(value: object, *, lines: bool = False) -> str:
    """Text for rich: non-printable characters escaped (:func:`af_core.naming.terminal`) and markup
    escaped (graph, size, template and plugin names are not markup); ``lines`` keeps line breaks."""
    from rich.markup import escape

    from af_core.naming import terminal

    return escape(terminal(value, lines=lines))


def say(text: object = "", *, err: bool = False) -> None:
    """Print ``text`` and a newline on stdout (stderr with ``err``), every line through the terminal layer."""
    from af_core.naming import terminal

    line = terminal(text, lines=True) + "\n"
    if err:
        sys.stderr.write(line)
        sys.stderr.flush()
    else:
        _Stdout().write(line)


#: Longest error message afc prints (a message quoting a huge graph value is cut).
MAX_MESSAGE = 2000


def one_line(text: str) -> str:
    """``text`` on one line: control, format and separator characters shown as escapes (user text in
    messages cannot move the cursor, clear the terminal or reorder what is shown)."""
    from af_core.naming import terminal

    shown = terminal(text)
    return shown if len(shown) <= MAX_MESSAGE else shown[: MAX_MESSAGE - 3] + "..."


def _first_line(exc: BaseException) -> str:
    """The message of ``exc`` as one printable line.

    The twin's errors carry compiler or kernel output after their first line
    (``--debug`` shows it); every other message is kept whole, its line
    breaks escaped, since they can only come from user text.
    """
    message = str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc).strip()
    if isinstance(exc, TwinError):
        message = message.splitlines()[0] if message else ""
    return one_line(message) if message else type(exc).__name__


def classify(exc: BaseException) -> tuple[int, str]:
    """Exit code and one-line message for an exception that reached the command line.

    User errors (a bad graph, argument, file or environment) exit 2; the
    CPU twin failing to build or run a generated kernel, a codegen
    inconsistency and every unexpected exception are internal errors (3).
    """
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED, "afc: interrupted"
    if isinstance(exc, MemoryError):
        return EXIT_ERROR, (
            f"afc: error: out of host memory ({_first_line(exc)}); lower the sizes or the memory limit "
            "(--max-memory, AF_MAX_MEMORY)"
        )
    if isinstance(exc, ToolchainError):
        return EXIT_ERROR, f"afc: error: {_first_line(exc)}"
    if isinstance(exc, PluginCommandError):
        return EXIT_INTERNAL, (
            f"afc: internal error: {_first_line(exc)} (a bug of the plugin; rerun with --debug for the traceback)"
        )
    if isinstance(exc, (TwinError, CodegenError)) and not _is_tiling_refusal(exc):
        return EXIT_INTERNAL, (
            f"afc: internal error: {_first_line(exc)} (rerun with --debug for the details)"
        )
    if isinstance(exc, (AfError, OSError, ValueError, KeyError)):
        return EXIT_ERROR, f"afc: error: {_first_line(exc)}"
    return EXIT_INTERNAL, (
        f"afc: internal error: {type(exc).__name__}: {_first_line(exc)} "
        "(a bug; rerun with --debug for the traceback)"
    )


def _is_tiling_refusal(exc: BaseException) -> bool:
    from af_core.twin.runner import TwinTilingError

    return isinstance(exc, TwinTilingError)


def _int_at_least(low: int, what: str) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low`` (``what`` names the rule in the error)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low:
            raise argparse.ArgumentTypeError(f"must be a {what} integer, got '{text}'")
        return value

    return parse


_positive_int = _int_at_least(1, "positive")
_non_negative_int = _int_at_least(0, "non-negative")


def parse_shape(items: list[str] | None) -> dict[str, int]:
    """``--shape`` texts (``name=value``, repeatable, comma-separated) as sizes; values 0 .. 2^63-1."""
    sizes: dict[str, int] = {}
    for item in items or []:
        for part in item.split(","):
            if not part.strip():
                continue
            if "=" not in part:
                raise UsageError(f"--shape expects name=value, got '{part}'")
            name, value = (t.strip() for t in part.split("=", 1))
            if not name:
                raise UsageError(f"--shape expects name=value, got '{part}'")
            try:
                number = int(value)
            except ValueError:
                raise UsageError(f"--shape {name} must be an integer, got '{value}'") from None
            if number < 0 or number > MAX_SIZE_VALUE:
                raise UsageError(f"--shape {name} must be between 0 and 2^63-1, got {value}")
            if name in sizes and sizes[name] != number:
                raise UsageError(f"--shape gives {name} twice ({sizes[name]} and {number})")
            sizes[name] = number
    return sizes


def check_shape_names(graphs: list, sizes: dict[str, int]) -> None:
    """Refuse ``--shape`` names that are a size of none of ``graphs`` (a typo would be ignored silently)."""
    known = sorted({v.name for g in graphs for v in g.sizes()})
    unknown = sorted(set(sizes) - set(known))
    if unknown:
        raise UsageError(
            f"--shape names unknown size(s) {', '.join(unknown)}; the graph's sizes are "
            f"{', '.join(known) or 'none (static shapes)'}"
        )


SELECTION_HELP = (
    "host tiling selection policy: 'cost' (the lowest modelled cost, default), 'seed' (the seed's "
    "scores, then cost) or one a plugin registers (afc plugins lists them)"
)


def check_selection(name: str | None) -> str:
    """The ``--selection`` value if a policy of that name is installed, else a usage error listing them.

    Checked after parsing rather than by argparse choices: the installed policies come from the plugins,
    which ``afc --help`` must not load.
    """
    from af_core.policy import DEFAULT_POLICY, PolicyError
    from af_core.registry import lookup_policy

    try:
        return lookup_policy(name or DEFAULT_POLICY).name
    except PolicyError as exc:
        raise UsageError(f"--selection: {exc}") from None


def _options(args: argparse.Namespace) -> AutofuserOptions:
    from af_core.autofuser import AutofuserOptions
    from af_core.platform import Platform, current_platform

    selection = check_selection(getattr(args, "selection", None))
    plat = current_platform()
    if getattr(args, "cores", None):
        plat = Platform(plat.soc, args.cores, plat.ub_size)
    return AutofuserOptions(
        platform=plat,
        force_template=getattr(args, "force_template", None),
        selection=selection,
        index_distribution=getattr(args, "index_distribution", None),
    )


def _missing_sizes(graph: HintGraph, sizes: dict[str, int]) -> list[str]:
    return [v.name for v in graph.sizes() if v.name not in sizes]


def _load(path: str, sizes: dict[str, int] | None = None) -> HintGraph:
    """The graph in ``path``, with the ``--shape`` names checked against its sizes."""
    from af_core.graph_files import load_graph

    graph = load_graph(path)
    if sizes:
        check_shape_names([graph], sizes)
    return graph


# ---------------------------------------------------------------------------
def cmd_plugins(args: argparse.Namespace) -> int:
    from rich.table import Table

    from af_core.registry import get_registry

    registry = get_registry()
    console = _console()
    table = Table(title="af_core plugins")
    for col in ("plugin", "distribution", "version", "hooks", "templates", "ApiCalls"):
        table.add_column(col)
    for info in registry.manager.plugins():
        templates = [e.name for e in registry.templates.entries() if e.plugin == info.name]
        calls = [e.name for e in registry.api_calls.entries() if e.plugin == info.name]
        table.add_row(
            *(
                _t(c)
                for c in (
                    info.name,
                    info.distribution,
                    info.version,
                    ", ".join(h.removeprefix("af_") for h in info.hooks),
                    ", ".join(templates) or "-",
                    ", ".join(calls) or "-",
                )
            )
        )
    console.print(table)
    for entry in registry.policies.entries():
        console.print(
            _t(
                f"selection policy {entry.name} ({entry.distribution}): {entry.value.describe()} "
                f"- {entry.value.description}"
            )
        )
    if registry.manager.disabled:
        console.print(_t(f"disabled: {', '.join(registry.manager.disabled)}"))
    for w in registry.load_warnings:
        console.print(_t(f"load warning: {w.error}"))
    errors = registry.load_errors
    if getattr(args, "load", False):
        errors = errors + registry.build_deferred()
    if errors:
        console.print("[bold red]load errors:[/bold red]")
        for e in errors:
            console.print(_t(f"  {e.plugin} ({e.distribution}): {e.error}"))
    else:
        console.print("load errors: none")
    return 1 if errors and getattr(args, "load", False) else 0


def _compile_one(job: tuple[str, str, dict, str | None, int | None, str, bool]) -> dict:
    """Compile one graph file into ``out``; never raises (runs in worker processes for -j N).

    The outcome is plain data, so it crosses process boundaries whatever the
    exception was: ``ok`` with the counts, or the exit code and one-line
    message :func:`classify` gives, plus the traceback for ``--debug``.
    """
    from af_core.autofuser import Autofuser, AutofuserOptions
    from af_core.platform import Platform, current_platform
    from af_core.report import write_artifacts

    path, out, sizes, force, cores, selection, strict_sizes = job
    try:
        graph = _load(path, sizes if strict_sizes else None)
        names = [v.name for v in graph.sizes()]
        plat = current_platform()
        if cores:
            plat = Platform(plat.soc, cores, plat.ub_size)
        fuser = Autofuser(AutofuserOptions(platform=plat, force_template=force, selection=selection))
        scheduled = fuser.schedule(graph)
        result = fuser.generate(scheduled)
        own = {k: v for k, v in sizes.items() if k in names}
        written = write_artifacts(Path(out), scheduled, result, own or None)
        return {
            "ok": True,
            "path": path,
            "name": graph.name,
            "out": out,
            "cases": len(scheduled.cases),
            "rejections": len(scheduled.rejections),
            "written": written.written,
            "removed": written.removed,
            "sizes": names,
        }
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - every failure becomes a reported outcome
        code, message = classify(exc)
        return {"ok": False, "path": path, "code": code, "message": message, "trace": traceback.format_exc()}


def _init_worker() -> None:
    """Workers leave Ctrl-C to the parent, which stops them (no traceback per worker), and print
    warnings as afc does."""
    import signal
    import warnings

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warnings.showwarning = _show_warning


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """A Python warning as one afc line on stderr: its category and message, no source path or code."""
    say(one_line(f"afc: warning: {category.__name__}: {message}"), err=True)


def output_dirs(graphs: list[str], out: Path) -> list[Path]:
    """One sub-directory of ``out`` per graph file, named after the file; colliding names are refused."""
    from af_core.output_dir import safe_component

    dirs: list[Path] = []
    seen: dict[str, str] = {}
    for g in graphs:
        stem = Path(g).name
        for suffix in (".json", ".py"):
            if stem.lower().endswith(suffix):
                stem = stem[: -len(suffix)]
                break
        name = safe_component(stem or "graph")
        key = name.casefold()  # one directory on case-insensitive file systems
        if key in seen:
            raise UsageError(
                f"graphs '{seen[key]}' and '{g}' would both be written to '{out / name}'; "
                "rename one of the files or compile them separately"
            )
        seen[key] = g
        dirs.append(out / name)
    return dirs


def _run_jobs(jobs: list[tuple], workers: int, on_done: Callable[[dict], None]) -> None:
    """Run compile jobs in this process or in ``workers`` processes; Ctrl-C terminates the workers."""
    if workers <= 1 or len(jobs) <= 1:
        for job in jobs:
            on_done(_compile_one(job))
        return
    import multiprocessing

    pool = None
    try:
        pool = multiprocessing.get_context("spawn").Pool(min(workers, len(jobs)), initializer=_init_worker)
        for outcome in pool.imap(_compile_one, jobs):
            on_done(outcome)
        pool.close()
    except BaseException:
        if pool is not None:
            pool.terminate()
        raise
    finally:
        if pool is not None:
            pool.join()


def cmd_compile(args: argparse.Namespace) -> int:
    from rich.progress import Progress

    from af_core.output_dir import check_output_dir

    sizes = parse_shape(args.shape)
    selection = check_selection(args.selection)
    out = Path(args.output)
    check_output_dir(out)
    many = len(args.graph) > 1
    dirs = output_dirs(args.graph, out) if many else [out]
    jobs = [
        (g, str(d), sizes, args.force_template, args.cores, selection, not many)
        for g, d in zip(args.graph, dirs)
    ]
    console = _console()
    outcomes: list[dict] = []
    with Progress(console=console, disable=not console.is_terminal or not many) as progress:
        task = progress.add_task("compiling", total=len(jobs))

        def done(outcome: dict) -> None:
            outcomes.append(outcome)
            progress.advance(task)

        _run_jobs(jobs, args.jobs, done)
    code = EXIT_OK
    for o in outcomes:
        if o["ok"]:
            console.print(
                _t(
                    f"compiled '{o['name']}': {o['cases']} case(s), {o['rejections']} rejection(s) "
                    f"-> {o['out']}"
                )
            )
            if not many:
                for file in o["written"]:
                    console.print(_t(f"  {Path(o['out']) / file}"))
            for file in o["removed"]:
                console.print(
                    _t(f"  removed {Path(o['out']) / file} (an earlier compile's, not written again)")
                )
    for o in outcomes:
        if not o["ok"]:
            if getattr(args, "debug", False):
                say(o["trace"].rstrip("\n"), err=True)
            message = (
                o["message"] if not many else o["message"].replace(": ", f": {one_line(o['path'])}: ", 1)
            )
            say(message, err=True)
            code = max(code, o["code"])
    if many and sizes:
        known = {n for o in outcomes if o["ok"] for n in o["sizes"]}
        unknown = sorted(set(sizes) - known)
        if unknown and all(o["ok"] for o in outcomes):
            raise UsageError(f"--shape names unknown size(s) {', '.join(unknown)}; no graph has them")
    return code


def cmd_run(args: argparse.Namespace) -> int:
    """Sizes, files and the memory budget are checked before g++ builds anything or an array is made."""
    from af_core.twin import TwinSession
    from af_core.twin.budget import memory_limit
    from af_core.twin.cache import default_cache_dir, open_cache

    limit = memory_limit(args.max_memory)  # a bad AF_MAX_MEMORY is refused first
    open_cache(default_cache_dir(), create=False)  # a cache af may not use is refused before any other work
    sizes = parse_shape(args.shape)
    graph = _load(args.graph, sizes)
    missing = _missing_sizes(graph, sizes) if not args.inputs else []
    if missing:
        raise UsageError(f"--shape needs a value for {', '.join(missing)}")
    arrays = read_input_arrays(Path(args.inputs), graph, limit) if args.inputs else None
    kernel = read_kernel_file(Path(args.kernel)) if args.kernel else None
    session = TwinSession(
        graph, _options(args), sanitize=args.sanitize, kernel=kernel, max_memory=limit, defer_build=True
    )
    keys = [c.tiling_key for c in session.scheduled.cases]
    if args.tiling_key is not None and args.tiling_key not in keys:
        raise UsageError(
            f"--tiling-key {args.tiling_key} is not a case of this graph (cases: "
            + ", ".join(f"{c.tiling_key}={c.label}" for c in session.scheduled.cases)
            + ")"
        )
    if arrays is not None:
        inputs = session.inputs(sizes, arrays=arrays)
        run = session.check(inputs=inputs, core_num=args.cores, tiling_key=args.tiling_key)
    else:
        run = session.check(sizes, seed=args.seed, core_num=args.cores, tiling_key=args.tiling_key)
    _print_runs(_console(), [(graph.name, run.inputs.sizes, run)])
    return 0 if run.ok else EXIT_MISMATCH


def _max_memory(text: str) -> MemoryLimit:
    """``--max-memory``: a byte count such as 512M or 8G."""
    from af_core.twin.budget import MemoryLimit, parse_bytes

    try:
        return MemoryLimit(parse_bytes(text, "--max-memory"), "--max-memory")
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


#: the largest kernel file ``afc run --kernel`` reads
MAX_KERNEL_BYTES = 16 * 1024 * 1024


def open_regular(path: Path, what: str) -> tuple[BinaryIO, int]:
    """``path`` opened for reading, and its size, if it is a regular file (a link to one is followed);
    anything else (a FIFO, a device, a directory, a socket) is a :class:`UsageError` before it is
    opened, so reading never blocks on it. ``what`` names the file in messages (``--kernel 'k.cpp'``).
    """
    import os
    import stat

    try:
        info = path.stat()
    except OSError as exc:
        raise UsageError(f"{what} cannot be read: {_first_line(exc)}") from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{what} is not a regular file")
    try:
        # O_NONBLOCK: a FIFO put in its place meanwhile does not wait for a writer (and is refused below)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise UsageError(f"{what} cannot be read: {_first_line(exc)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"{what} is not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), info.st_size
    except BaseException:
        os.close(fd)
        raise


def read_kernel_file(path: Path) -> str:
    """The text of a hand-edited kernel.cpp for ``afc run --kernel``: a regular UTF-8 file of at most
    ``MAX_KERNEL_BYTES``."""
    what = f"--kernel '{path}'"
    handle, size = open_regular(path, what)
    with handle:
        if size > MAX_KERNEL_BYTES:
            raise UsageError(f"{what} holds {size} bytes; a kernel file may hold {MAX_KERNEL_BYTES}")
        try:
            return handle.read(MAX_KERNEL_BYTES + 1).decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{what} is not a readable UTF-8 text file: {_first_line(exc)}") from None


def read_input_arrays(
    directory: Path, graph: HintGraph, limit: MemoryLimit | None = None
) -> dict[str, np.ndarray]:
    """``<Data name>.npy`` files of ``directory`` (no pickles); a file naming no Data node is refused.

    Each file must be a regular file (a FIFO would block the read) holding every byte its header
    announces; the headers are read first, and together the arrays must fit ``limit`` before any
    array is read into memory.
    """
    import numpy as np

    from af_core.errors import MemoryBudgetError
    from af_core.twin.budget import format_bytes, memory_limit

    if not directory.is_dir():
        raise UsageError(f"--inputs '{directory}' is not a directory")
    data = {n.name for n in graph.nodes() if n.op.compute_type == ComputeType.DATA}
    opened: dict[str, Any] = {}
    try:
        total = 0
        for path in sorted(directory.glob("*.npy")):
            if path.stem not in data:
                raise UsageError(
                    f"--inputs file '{path.name}' names no Data node (Data nodes: {', '.join(sorted(data))})"
                )
            what = f"--inputs file '{path}'"
            handle, size = open_regular(path, what)
            opened[path.stem] = handle
            total += _npy_payload(handle, size, what)
        limit = memory_limit(limit)
        if total > limit.bytes:
            raise MemoryBudgetError(
                f"--inputs arrays hold {format_bytes(total)}, over the memory limit of "
                f"{format_bytes(limit.bytes)} ({limit.source}); raise it with --max-memory or AF_MAX_MEMORY",
                estimate=total,
                limit=limit.bytes,
            )
        arrays = {}
        for name, handle in opened.items():
            handle.seek(0)
            try:
                arrays[name] = np.load(handle, allow_pickle=False)
            except (OSError, ValueError, EOFError) as exc:
                raise UsageError(
                    f"--inputs file '{name}.npy' is not a readable .npy array: {_first_line(exc)}"
                ) from None
    finally:
        for handle in opened.values():
            handle.close()
    return arrays


def _npy_payload(handle: Any, size: int, what: str) -> int:
    """The bytes of the array a .npy file's header announces; the file must hold them all."""
    import numpy as np

    fmt = np.lib.format
    try:
        version = fmt.read_magic(handle)
        if version == (1, 0):
            shape, _fortran, dtype = fmt.read_array_header_1_0(handle)
        elif version in ((2, 0), (3, 0)):
            shape, _fortran, dtype = fmt.read_array_header_2_0(handle)
        else:
            raise ValueError(f"format version {version[0]}.{version[1]} is not one numpy reads")
    except (OSError, ValueError, EOFError) as exc:
        raise UsageError(f"{what} is not a readable .npy array: {_first_line(exc)}") from None
    if dtype.hasobject:
        raise UsageError(
            f"{what} is not a readable .npy array: it holds Python objects (pickles are refused)"
        )
    count = 1
    for n in shape:
        count *= int(n)
    payload = count * dtype.itemsize
    if handle.tell() + payload > size:
        raise UsageError(
            f"{what} is not a readable .npy array: its header announces {payload} bytes of data "
            f"and the file holds {max(size - handle.tell(), 0)}"
        )
    return payload


def cmd_explain(args: argparse.Namespace) -> int:
    from rich.table import Table

    from af_core.autofuser import Autofuser
    from af_core.explain import explain

    sizes = parse_shape(args.shape)
    graph = _load(args.graph, sizes)
    missing = _missing_sizes(graph, sizes)
    if missing:
        raise UsageError(f"--shape needs a value for {', '.join(missing)}")
    fuser = Autofuser(_options(args))
    scheduled = fuser.schedule(graph)
    report = explain(scheduled, sizes, args.cores, args.ub)
    console = _console()
    m = scheduled.measures
    from af_core.ir.evaluate import eval_int

    env = {**graph.size_env(sizes), "core_num": report.core_num}
    cont, outer = eval_int(m.continuous_bytes, env), eval_int(m.index_outer, env)
    console.print(
        _t(
            f"{graph.name} at {', '.join(f'{k}={v}' for k, v in sizes.items()) or '(static)'}: "
            f"{report.core_num} cores, UB {report.ub_size} B, selection policy {report.policy}"
        )
    )
    console.print(_t(f"policy order: {report.order}"))
    if report.other_picks:
        picks = "; ".join(f"{name} -> {label or 'no case fits'}" for name, label in report.other_picks)
        console.print(_t(f"other selection policies would pick: {picks}"))
    console.print(
        f"seed measures: continuous bytes {cont} (>= {m.thresholds.cacheline} x {m.thresholds.cache_thres}?), "
        f"index outer product {outer} (>= {report.core_num} x {m.thresholds.core_thres}?)"
    )
    table = Table(title="candidates")
    for col in (
        "key",
        "template",
        "plugin",
        "status",
        "score",
        "cost",
        "UB B",
        "workspace B",
        "DCache B",
        "cores",
        "why",
    ):
        table.add_column(col)
    for r in report.rows:
        table.add_row(*("-" if c is None else _t(c) for c in r.cells()))
    console.print(table)
    if report.counters:
        from af_core.explain import COUNTER_HEADERS

        table = Table(title="predicted counters and the estimated time they give (the modelled cost)")
        for col in COUNTER_HEADERS:
            table.add_column(col)
        for row in report.counters:
            table.add_row(*("-" if x is None else _t(x) for x in row.cells()))
        console.print(table)
    if report.contributions:
        table = Table(title="contributions")
        for col in ("key", "case", "kind", "name", "value", "formula", "plugin", "reason"):
            table.add_column(col)
        for c in report.contributions:
            cells = [c.tiling_key, c.case, c.kind, c.name, c.value, c.expr, c.plugin, c.reason]
            table.add_row(*("-" if x is None else _t(x) for x in cells))
        console.print(table)
    for line in report.diagnostics:
        console.print(_t(f"contribution dropped: {line}"))
    for key, template, note in report.vector_chains:
        console.print(_t(f"elementwise chain, key {key} ({template}): {note}"))
    for key, template, note in report.gather_forms:
        console.print(_t(f"gather form, key {key} ({template}): {note}"))
    if report.error:
        console.print(_t(f"no candidate fits: {report.error}"))
        return EXIT_MISMATCH
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from af_core.autofuser import Autofuser
    from af_core.output_dir import write_tree
    from af_core.pictures import case_dot, case_mermaid, graph_dot, to_mermaid, to_svg
    from af_core.report import case_picture_name

    graph = _load(args.graph, parse_shape(args.shape))
    parts: list[tuple[str, str]] = []
    if args.format == "mermaid":
        parts.append(("graph", to_mermaid(graph, title=graph.name)))
    else:
        parts.append(("graph", graph_dot(graph)))
    if not args.no_cases:
        scheduled = Autofuser(_options(args)).schedule(graph)
        for case in scheduled.cases:
            text = case_mermaid(case) if args.format == "mermaid" else case_dot(case)
            parts.append((case_picture_name(case), text))
    if args.format == "svg":
        parts = [(name, to_svg(text)) for name, text in parts]
    suffix = {"mermaid": ".mmd", "dot": ".dot", "svg": ".svg"}[args.format]
    if args.output:
        out = Path(args.output)
        write_tree(out, {f"{name}{suffix}": text for name, text in parts})
        for name, _text in parts:
            say(one_line(str(out / f"{name}{suffix}")))
    else:
        for name, text in parts:
            say(f"%% {name}" if args.format == "mermaid" else f"// {name}")
            say(text)
    return 0


def _count(counters: dict[str, int], *names: str) -> str:
    """The sum of twin counters, or "-" when the back end's twin does not count one of them."""
    if any(name not in counters for name in names):
        return "-"
    return str(sum(counters[name] for name in names))


def _print_runs(console: Console, rows: list[tuple[str, dict[str, int], GraphRun]]) -> None:
    from rich.table import Table

    from af_core.naming import demangle

    table = Table(title="CPU twin vs reference")
    for col in (
        "graph",
        "shape",
        "template",
        "key",
        "cores",
        "result",
        "GM read B",
        "GM write B",
        "scalar GM",
        "lines read",
        "UB peak",
    ):
        table.add_column(col)
    for name, sizes, run in rows:
        c = run.twin.counters
        result = "[green]match[/green]" if run.ok else "[red]MISMATCH[/red]"
        detail = " (bitwise)" if run.ok and all(x.exact for x in run.comparisons) else ""
        if not run.twin.launched:
            detail += " (empty, no launch)"
        shape = ",".join(f"{demangle(k)}={v}" for k, v in sizes.items())  # sizes are keyed by C++ names
        table.add_row(
            _t(name),
            _t(shape),
            _t(run.template),
            str(run.twin.tiling_key) if run.twin.launched else "-",
            str(run.twin.block_dim) if run.twin.launched else "-",
            result + detail,
            _count(c, "gm_read_bytes"),
            _count(c, "gm_write_bytes"),
            _count(c, "scalar_gm_reads", "scalar_gm_writes"),
            _count(c, "cachelines_read"),
            _count(c, "ub_high_water"),
        )
    console.print(table)
    for name, _sizes, run in rows:
        if not run.ok:
            console.print(f"[red]{_t(name)}[/red]: {_t(run.describe(), lines=True)}")


def cmd_demo(args: argparse.Namespace) -> int:
    from rich.progress import Progress

    from af_core.samples import installed_samples
    from af_core.twin import TwinSession

    console = _console()
    samples = installed_samples()
    rows = []
    ok = True
    notes = []
    with Progress(console=console, disable=not console.is_terminal) as progress:
        task = progress.add_task("compile + twin runs", total=sum(1 + len(s.shapes) for s in samples))
        for sample in samples:
            progress.update(task, description=f"building {sample.name}")
            session = TwinSession(sample.build(), _options(args))
            progress.advance(task)
            labels = ", ".join(f"{c.tiling_key}={c.label}" for c in session.scheduled.cases)
            notes.append(
                f"[bold]{_t(sample.name)}[/bold]: {_t(sample.description)}; cases {_t(labels)}; kernel "
                f"{len(session.result.kernel.splitlines())} lines, "
                f"{'cached build' if session.build.cached else 'built with g++'}"
            )
            for k, sizes in enumerate(sample.shapes):
                progress.update(task, description=f"running {sample.name}")
                run = session.check(sizes, seed=k, core_num=args.cores)
                ok = ok and run.ok
                rows.append((sample.name, sizes, run))
                progress.advance(task)
    for note in notes:
        console.print(note)
    _print_runs(console, rows)
    console.print("all outputs match the reference" if ok else "[red]some outputs differ[/red]")
    return 0 if ok else EXIT_MISMATCH


def cmd_check(args: argparse.Namespace) -> int:
    """Type-check each graph's kernel against the official AscendC headers (exit 1 if one fails)."""
    from af_core.ascendc import AscendcChecker, find_source
    from af_core.autofuser import Autofuser

    checker = AscendcChecker(find_source(args.ascendc))  # AscendcSourceError (an AfError) -> exit 2
    fuser = Autofuser(_options(args))
    generated = [fuser.generate(fuser.schedule(_load(path))) for path in args.graph]
    results = checker.check_many(
        [g.kernel for g in generated], jobs=args.jobs, headers=[g.kernel_headers() for g in generated]
    )
    for path, result in zip(args.graph, results):
        say(
            f"{'ok  ' if result.ok else 'FAIL'} {one_line(path)}"
            + ("" if result.ok else f"\n{result.describe(limit=args.errors)}")
        )
    return 0 if all(r.ok for r in results) else EXIT_MISMATCH


def cmd_package(args: argparse.Namespace) -> int:
    """Write a CANN custom-operator package for one graph (:mod:`af_core.package`)."""
    import attrs

    from af_core.autofuser import Autofuser
    from af_core.output_dir import check_output_dir
    from af_core.package import build_package, write_package
    from af_core.platform import Platform, current_platform

    out = Path(args.output)
    check_output_dir(out)
    options = _options(args)
    if args.ub:  # the UB the tiling is solved for (baked into a static kernel)
        plat = options.platform or current_platform()
        options = attrs.evolve(options, platform=Platform(plat.soc, plat.core_num, args.ub))
    fuser = Autofuser(options)
    # PackageError (an AfError) -> exit 2
    package = build_package(fuser.schedule(_load(args.graph)), static=args.static)
    written = write_package(package, out)
    console = _console()
    console.print(
        _t(
            f"packaged operator {package.names.op_type} (kernel {package.names.kernel}): "
            f"{len(written)} file(s) -> {out}"
        )
    )
    for binding in package.sizes.bindings:
        console.print(
            _t(
                f"  size {binding.size} = input {binding.input_index} ({binding.input_node}) dim {binding.dim}"
            )
        )
    return EXIT_OK


def cmd_cache(args: argparse.Namespace) -> int:
    """``afc cache info``: where the twin build cache is and how full; ``afc cache clear``: empty it."""
    from af_core.twin.cache import cache_info, clear_cache, default_cache_dir, open_cache

    directory = open_cache(default_cache_dir(), create=False)  # a file, another's or an open one: refused
    if args.action == "clear":
        cleared = clear_cache(directory)
        freed = sum(e.size for e in [*cleared.entries, *cleared.scratch])
        n = len(cleared.entries)
        scratch = f" and {len(cleared.scratch)} scratch dir(s) of killed builds" if cleared.scratch else ""
        say(
            one_line(
                f"removed {n} cache entr{'y' if n == 1 else 'ies'}{scratch} ({_mb(freed)}) from {directory}"
            )
        )
        info = cache_info(directory)
        if info.scratch:
            say(f"kept {info.scratch} scratch dir(s) of builds still running")
        if info.other:
            say(f"kept {info.other} item(s) that are not af's (never removed)")
        return 0
    info = cache_info(directory)
    say(one_line(f"location: {info.directory}" + ("" if directory.is_dir() else " (not created yet)")))
    say(f"entries:  {info.entries}")
    say(f"size:     {_mb(info.total_bytes)}")
    say(f"bound:    {_mb(info.max_bytes)} (AF_TWIN_CACHE_MAX_MB; least recently used entries are evicted)")
    if info.scratch:
        say(
            f"scratch:  {info.scratch} dir(s), {_mb(info.scratch_bytes)} of the size "
            "(builds running, or killed: removed by the next build or afc cache clear)"
        )
    if info.other:
        say(f"other:    {info.other} item(s) that are not af's (never removed)")
    return 0


def _mb(size: int) -> str:
    return f"{size / (1 << 20):.1f} MB"


#: ``af_core.plugin_manager.ENTRY_POINT_GROUP``, spelled here so that ``--version`` imports no pluggy.
VERSION_ENTRY_POINT_GROUP = "af_core"


def installed_versions() -> list[tuple[str, str]]:
    """af-core's version, then each distribution with an ``af_core`` entry point (sorted by name).

    Read from the installed metadata only: no plugin module is imported.
    """
    from af_core import __version__
    from af_core.entry_points import entry_points

    plugins = {
        ep.distribution: ep.version
        for ep in entry_points(VERSION_ENTRY_POINT_GROUP)
        if ep.distribution != "af-core"
    }
    return [("af-core", __version__), *sorted(plugins.items())]


class _VersionAction(argparse.Action):
    """``--version``: one ``name version`` line per distribution, then exit 0."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str = argparse.SUPPRESS,
        default: Any = argparse.SUPPRESS,
        help: str | None = None,
    ) -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        for name, version in installed_versions():
            say(one_line(f"{name} {version}"))
        parser.exit(EXIT_OK)


# ---------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line (exit 2), like every other afc error, and help through the
    terminal layer (a plugin command's help is plugin text)."""

    def format_help(self) -> str:
        from af_core.naming import terminal

        return terminal(super().format_help(), lines=True)

    def format_usage(self) -> str:
        from af_core.naming import terminal

        return terminal(super().format_usage(), lines=True)

    def print_help(self, file: SupportsWrite[str] | None = None) -> None:
        """To stdout through :class:`_Stdout` (a closed pipe ends afc quietly; argparse ignores it)."""
        (file or _Stdout()).write(self.format_help())

    def print_usage(self, file: SupportsWrite[str] | None = None) -> None:
        (file or _Stdout()).write(self.format_usage())

    def error(self, message: str) -> NoReturn:
        say(one_line(f"{self.prog}: error: {message} (see '{self.prog} --help')"), err=True)
        raise SystemExit(EXIT_ERROR)


def build_parser(plugin_commands: tuple = ()) -> argparse.ArgumentParser:
    """afc's parser; ``plugin_commands`` (:class:`af_core.commands.PluginCommand`) are added after the built-ins."""
    parser = _Parser(
        prog="afc",
        description="IndirectLoad autofusion: compile, explain, run.",
        epilog="Installed plugins may add more commands (hook af_register_commands); "
        "'afc NAME --help' describes one.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument(
        "--version",
        action=_VersionAction,
        help="print the af-core version and each installed plugin distribution's, and exit",
    )
    # every subcommand accepts --debug too; SUPPRESS keeps a --debug given before the subcommand
    common = _Parser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, parents=[common])

    p = add("plugins", "list plugins, versions, hooks and load errors")
    p.add_argument(
        "--load",
        action="store_true",
        help="also build every deferred registration (templates, ApiCalls, samples) and report those that "
        "fail (exit 1); by default they are built on first use",
    )
    p.set_defaults(func=cmd_plugins)

    def graph_args(p: argparse.ArgumentParser, shape_required: bool = False) -> None:
        p.add_argument("graph", help="a .json graph (data) or a .py program defining `graph` (code)")
        p.add_argument(
            "--shape",
            action="append",
            metavar="NAME=VALUE",
            required=shape_required,
            help="a size value (repeatable, or comma-separated)",
        )
        p.add_argument("--force-template", default=None, help="keep only this template's cases")
        p.add_argument(
            "--cores", type=_positive_int, default=None, help="core count (default: the platform's)"
        )
        p.add_argument("--selection", default=None, metavar="POLICY", help=SELECTION_HELP)
        p.add_argument(
            "--index-distribution",
            default=None,
            metavar="NAME",
            help="how the index values are drawn (uniform, zipf<alpha>, repeat<k>, unique, ...): the cases "
            "predict repeated rows from it when the sizes are given",
        )

    p = add("compile", "write the generated artifacts")
    p.add_argument("graph", nargs="+", help=".json graphs (data) or .py programs defining `graph` (code)")
    p.add_argument(
        "--shape", action="append", metavar="NAME=VALUE", help="sizes for the report's explain table"
    )
    p.add_argument("--force-template", default=None, help="keep only this template's cases")
    p.add_argument("--cores", type=_positive_int, default=None, help="core count (default: the platform's)")
    p.add_argument(
        "-o",
        "--output",
        default="afc-out",
        help="output directory (one sub-directory per graph file, named after it, when several are given)",
    )
    p.add_argument("-j", "--jobs", type=_positive_int, default=1, help="compile graphs in N processes")
    p.add_argument("--selection", default=None, metavar="POLICY", help=SELECTION_HELP)
    p.set_defaults(func=cmd_compile)

    p = add("package", "write a CANN custom-operator package (op_host, op_kernel, launch, build files)")
    p.add_argument("graph", help="a .json graph (data) or a .py program defining `graph` (code)")
    p.add_argument("-o", "--output", required=True, help="the package directory")
    p.add_argument(
        "--static",
        action="store_true",
        help="static shapes (a graph without size symbols): solve the tiling now for --cores and --ub "
        "and bake it into the kernel",
    )
    p.add_argument("--ub", type=_positive_int, default=None, help="usable UB bytes (default: the platform's)")
    p.add_argument("--force-template", default=None, help="keep only this template's cases")
    p.add_argument("--cores", type=_positive_int, default=None, help="core count (default: the platform's)")
    p.add_argument("--selection", default=None, metavar="POLICY", help=SELECTION_HELP)
    p.set_defaults(func=cmd_package)

    p = add("graph", "draw the graph and each case (stages, workspaces)")
    graph_args(p)
    p.add_argument("--format", choices=("mermaid", "dot", "svg"), default="mermaid")
    p.add_argument("-o", "--output", help="directory for one file per picture (default: stdout)")
    p.add_argument("--no-cases", action="store_true", help="only the graph, not each case")
    p.set_defaults(func=cmd_graph)

    p = add("explain", "why a template is chosen for a shape")
    graph_args(p, shape_required=False)
    p.add_argument("--ub", type=_positive_int, default=None, help="usable UB bytes (default: the platform's)")
    p.set_defaults(func=cmd_explain)

    p = add("run", "run on the CPU twin and compare with the reference")
    graph_args(p)
    p.add_argument("--inputs", help="directory of <Data name>.npy arrays (logical shapes)")
    p.add_argument("--seed", type=_non_negative_int, default=0)
    p.add_argument("--sanitize", action="store_true", help="build with ASan and UBSan")
    p.add_argument(
        "--kernel",
        metavar="FILE",
        help="run this kernel.cpp (a hand-edited kernel of the graph) instead of the generated one",
    )
    p.add_argument(
        "--tiling-key",
        type=_non_negative_int,
        default=None,
        help="run this case instead of the host tiling's pick",
    )
    p.add_argument(
        "--max-memory",
        type=_max_memory,
        default=None,
        metavar="SIZE",
        help="host memory the run may take, such as 512M or 8G (default: $AF_MAX_MEMORY, else half "
        "the memory available); a run estimated to need more is refused before it starts",
    )
    p.set_defaults(func=cmd_run)

    p = add("check", "type-check the kernels against the official AscendC headers")
    p.add_argument("graph", nargs="+", help=".json graphs or .py files defining `graph`")
    p.add_argument(
        "--ascendc",
        metavar="DIR",
        help="asc-devkit tree, directory with asc-devkit-*.tar.xz, or CANN "
        "install (default: $AF_ASCENDC_SRC)",
    )
    p.add_argument("--force-template", default=None, help="keep only this template's cases")
    p.add_argument("-j", "--jobs", type=_positive_int, default=2, help="g++ processes at once")
    p.add_argument("--errors", type=_positive_int, default=5, help="errors shown per failing kernel")
    p.set_defaults(func=cmd_check)

    p = add("cache", "show where the twin build cache is and its size (info), or empty it (clear)")
    p.add_argument("action", choices=("info", "clear"))
    p.set_defaults(func=cmd_cache)

    p = add("demo", "compile the sample graphs and run them on the twin")
    p.add_argument("--cores", type=_positive_int, default=None)
    p.set_defaults(func=cmd_demo)
    for command in plugin_commands:
        _add_plugin_command(sub, common, command)
    return parser


def _add_plugin_command(sub: Any, common: argparse.ArgumentParser, command: PluginCommand) -> None:
    """A plugin's command, run isolated (:func:`af_core.commands.run_command`); when its ``configure``
    fails, a command that takes any arguments and, run, fails naming the plugin (exit 3)."""
    from af_core.commands import configure_command, run_command
    from af_core.errors import PluginCommandError

    help = one_line(f"{command.help} (from {command.distribution})")
    try:
        own = _Parser(add_help=False)
        configure_command(command, own)
        try:
            p = sub.add_parser(command.name, help=help, parents=[common, own])
        except (Exception, SystemExit) as exc:  # its arguments clash with afc's (-h, --debug)
            raise command.failure(f"configure added arguments afc cannot use: {exc}") from exc
    except PluginCommandError as exc:
        failure = exc
        # no option prefix: every argument, options and -h included, is taken as is
        p = sub.add_parser(command.name, help=help, prefix_chars="\0", add_help=False)
        p.add_argument("rest", nargs="*", help=argparse.SUPPRESS)

        def broken(args: argparse.Namespace) -> int:
            raise failure

        p.set_defaults(func=broken)
        return

    def run(args: argparse.Namespace) -> int:
        try:
            return run_command(command, args)
        except PluginCommandError as exc:
            if isinstance(exc.__cause__, BrokenPipeError) and _stdout_gone():
                raise OutputClosed from None  # printed into `afc NAME | head`
            raise

    p.set_defaults(func=run)


def _stdout_gone() -> bool:
    """True when standard output is a pipe whose reader has closed it."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(event & select.POLLERR for _fd, event in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


#: afc's own commands; any other command word is looked up among the plugins' (af_register_commands)
BUILTIN_COMMANDS = ("plugins", "compile", "package", "graph", "explain", "run", "check", "cache", "demo")


def _command_word(argv: list[str]) -> str | None:
    """The first argument that is not an option (the subcommand), if any."""
    return next((a for a in argv if not a.startswith("-")), None)


def _plugin_parser(argv: list[str]) -> argparse.ArgumentParser:
    """The parser with plugin commands, loaded only for a command word afc does not know itself."""
    word = _command_word(argv)
    if word is None or word in BUILTIN_COMMANDS:
        return build_parser()
    from af_core.commands import plugin_commands

    commands, errors = plugin_commands(BUILTIN_COMMANDS)
    for error in errors:
        say(one_line(f"afc: warning: {error}"), err=True)
    return build_parser(tuple(commands))


def warn_load_errors() -> None:
    """One stderr line per plugin that failed to load or register (every command shows them)."""
    from af_core.registry import get_registry

    registry = get_registry()
    for e in registry.load_errors:
        say(
            one_line(
                f"afc: warning: plugin '{e.plugin}' ({e.distribution}) failed to load: "
                f"{e.error.strip() or 'unknown error'}"
            ),
            err=True,
        )
    for w in registry.load_warnings:
        say(one_line(f"afc: warning: {w.error}"), err=True)


def main(argv: list[str] | None = None) -> int:
    import warnings

    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            return _main(sys.argv[1:] if argv is None else list(argv))
        except OutputClosed:  # afc ... | head: the reader has what it wanted
            _drop_stdout()
            return EXIT_BROKEN_PIPE


def _main(argv: list[str]) -> int:
    parser = _plugin_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit:
        _Stdout().flush()  # --help and --version text reaches the reader, or ends quietly
        raise
    debug = bool(getattr(args, "debug", False))
    try:
        warn_load_errors()
        code = int(args.func(args))
        _Stdout().flush()
        return code
    except OutputClosed:
        raise
    except (Exception, KeyboardInterrupt, SystemExit) as exc:
        if debug:
            say(traceback.format_exc().rstrip("\n"), err=True)
        code, message = classify(exc)
        say(message, err=True)
        return code


def _drop_stdout() -> None:
    """Point standard output at the null device: what is still buffered for the closed pipe is dropped
    when Python flushes it at exit, instead of failing there with a second broken pipe."""
    import os

    try:
        fd = sys.stdout.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError, AttributeError):  # not a file (captured in a test): nothing to flush
        return
    try:
        os.dup2(null, fd)
    except OSError:
        pass
    finally:
        os.close(null)


if __name__ == "__main__":
    sys.exit(main())
