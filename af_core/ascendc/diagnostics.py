"""Read g++'s diagnostics of a type check: the errors, where each comes from.

Each error keeps its location and message, the line of the checked kernel
that led to it (the last "required from" in the kernel before the error, for
errors inside a header template) and its origin: ``official`` (inside the
asc-devkit tree, e.g. a ``static_assert`` of the dav_3510 implementation),
``stand-in`` (in our replacements of the closed CPU-debug files, or an
undeclared lower-case intrinsic called by the official headers: either means
the stand-ins are incomplete, not that the kernel is wrong), ``kernel``
(the checked text itself) or ``other`` (system headers).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import attrs

_LOCATED = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<rest>.*)$")
_ERROR = re.compile(r"^(?:fatal )?error:\s*(?P<message>.*)$")
_REQUIRED = re.compile(r"^\s*required (?:from|by) ")
# an undeclared lower-case name called inside the official headers is a compiler intrinsic
# that the stand-ins do not declare yet, not a fault of the kernel
_MISSING_INTRINSIC = re.compile(
    r"^(?:‘|')([a-z_][a-z0-9_]*)(?:’|') was not declared in this scope"
    r"|^there are no arguments to (?:‘|')([a-z_][a-z0-9_]*)(?:’|')"
)

ORIGINS = ("official", "stand-in", "kernel", "other")


@attrs.frozen
class Diagnostic:
    file: str
    line: int
    column: int
    message: str
    origin: str
    kernel_line: int | None = None

    def format(self, kernel_name: str = "kernel.cpp") -> str:
        where = kernel_name if self.origin == "kernel" else self.file
        text = f"{where}:{self.line}:{self.column}: error: {self.message} [{self.origin}]"
        if self.kernel_line is not None and self.origin != "kernel":
            text += f" (from {kernel_name}:{self.kernel_line})"
        return text


def parse_errors(log: str, classify: Callable[[str], str], kernel_file: str | Path) -> list[Diagnostic]:
    """Every error of ``log`` in order; ``classify(path)`` names a header's origin.

    ``kernel_file`` is the path exactly as it was given to g++ (g++ repeats it verbatim).
    """
    kernel = str(kernel_file)
    errors: list[Diagnostic] = []
    required_from: int | None = None
    for raw in log.splitlines():
        m = _LOCATED.match(raw.strip("\n"))
        if not m:
            continue
        file, rest = m["file"], m["rest"]
        is_kernel = file == kernel
        if _REQUIRED.match(rest) or rest.startswith("In instantiation") or rest.startswith("  required"):
            if is_kernel:
                required_from = int(m["line"])
            continue
        e = _ERROR.match(rest)
        if not e:
            continue
        if not is_kernel:
            file = os.path.normpath(file)  # the headers include each other through long ../ chains
        origin = "kernel" if is_kernel else classify(file)
        if origin == "official" and _MISSING_INTRINSIC.match(e["message"]):
            origin = "stand-in"
        errors.append(
            Diagnostic(
                file,
                int(m["line"]),
                int(m["col"] or 0),
                e["message"].strip(),
                origin,
                None if is_kernel else required_from,
            )
        )
        required_from = None
    return errors
