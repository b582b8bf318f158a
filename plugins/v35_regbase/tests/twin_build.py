"""Compile C++ programs against the CPU twin headers and run them.

Every program is built in a fresh directory, with the flags of
:mod:`af_core.toolchain` (the twin's, plus the warning set the headers must
pass); only the twin headers are precompiled, once per header version and
flag set, in the twin cache (a program that includes ``kernel_operator.h``
first uses them; one built with extra flags never does). A build failure
(including any warning, since warnings are errors here) raises
:class:`TwinBuildError` carrying the compiler's output.

The control functions at the end build the small kernel around one register API
form and assert what the twin and the official headers (``checker`` fixture)
make of it; :func:`twin_abort` reads the error a run stopped on.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import af_v35_regbase
import pytest

from af_core import toolchain
from af_core.twin.cache import default_cache_dir

if TYPE_CHECKING:
    from af_core.ascendc import AscendcChecker

INCLUDE_DIR = Path(af_v35_regbase.__file__).parent / "twin" / "include"

# The flags the project builds kernels with, plus the warning set the headers must pass.
BASE_FLAGS = tuple(toolchain.TWIN.args())
WARNING_FLAGS = toolchain.STRICT_WARNINGS
SANITIZE_FLAGS = toolchain.SANITIZE_FLAGS
#: ``main`` of a multi-case test program: runs the ``kCases`` entry named by argv[1] (exit 2 if unknown)
CASE_MAIN = r"""
int main(int argc, char** argv) {
    const std::string name = argc > 1 ? argv[1] : "";
    for (const Case& c : kCases) {
        if (name == c.name) {
            c.fn();
            return 0;
        }
    }
    std::fprintf(stderr, "unknown case '%s'\n", name.c_str());
    return 2;
}
"""
SANITIZE_ENV = {
    "ASAN_OPTIONS": "abort_on_error=0:detect_leaks=0",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
}


#: The end of a harness program whose ``Run()`` sits in an anonymous namespace: closes it, ``main`` runs it.
RUN_MAIN = """}  // namespace

int main() {
    Run();
    return 0;
}
"""


def api_header(name: str) -> str:
    """The text of the af-v35-regbase API header ``name`` (e.g. ``af_gather.h``), for a harness to include
    before the functions it tests."""
    return (INCLUDE_DIR.parent.parent / "api" / name).read_text()


def report_and_rows(out: str, *tags: str) -> tuple[dict, dict[str, list[int]]]:
    """A harness run's stdout ``out``: the twin's JSON report (the line starting with ``{``) and, per tag,
    the integers printed on the line that starts with it (``"reg 1 2 3"``)."""
    lines = out.splitlines()
    report = json.loads(next(line for line in lines if line.startswith("{")))
    rows = {
        tag: [int(v) for v in next(line for line in lines if line.startswith(tag)).split()[1:]]
        for tag in tags
    }
    return report, rows


class TwinBuildError(RuntimeError):
    """g++ rejected a twin program."""


def compiler() -> str | None:
    """Path of the C++ compiler ($CXX or g++), or None when there is none."""
    return toolchain.compiler_path()


def precompiled_headers(flags: toolchain.Flags) -> Path:
    """The directory holding ``kernel_operator.h.gch`` for ``flags`` (built on first use)."""
    key = toolchain.tree_digest([INCLUDE_DIR]) + flags.digest()
    directory = default_cache_dir() / f"pch-{toolchain.digest(key)[:24]}"
    toolchain.precompile(
        "kernel_operator.h", directory, flags, includes=[INCLUDE_DIR], what="the twin headers (precompiled)"
    )
    return directory


def build(source: str, workdir: Path, *, sanitize: bool = False, extra_flags: Sequence[str] = ()) -> Path:
    """Compile `source` in `workdir`; return the executable's path."""
    if compiler() is None:
        raise TwinBuildError("no C++ compiler found (set CXX or install g++)")
    workdir.mkdir(parents=True, exist_ok=True)
    src = workdir / "prog.cpp"
    exe = workdir / "prog"
    src.write_text(source)
    flags = toolchain.TWIN_STRICT.replace(sanitize=sanitize, extra=tuple(extra_flags))
    includes = [INCLUDE_DIR] if extra_flags else [precompiled_headers(flags), INCLUDE_DIR]
    try:
        toolchain.build_program([src], exe, flags, includes=includes, what="twin test program")
    except toolchain.CompileError as exc:
        raise TwinBuildError(f"{' '.join(exc.command)}\n{exc.log}") from None
    return exe


def syntax_check(
    source: str, workdir: Path, *, strict: bool = True, extra_flags: Sequence[str] = ()
) -> subprocess.CompletedProcess:
    """``g++ -fsyntax-only`` over `source` against the twin (``strict``: warnings are errors)."""
    cxx = compiler()
    if cxx is None:
        raise TwinBuildError("no C++ compiler found (set CXX or install g++)")
    workdir.mkdir(parents=True, exist_ok=True)
    src = workdir / "unit.cpp"
    src.write_text(source)
    base = toolchain.TWIN_STRICT if strict else toolchain.TWIN
    flags = base.replace(extra=tuple(extra_flags))
    includes = [INCLUDE_DIR] if extra_flags else [precompiled_headers(flags), INCLUDE_DIR]
    command = [cxx, *flags.args(), *(f"-I{d}" for d in includes), "-fsyntax-only", str(src)]
    return toolchain.run(command, what="twin syntax check", check=False, timeout=600)


def syntax_errors(source: str, workdir: Path, *, strict: bool = True, extra_flags: Sequence[str] = ()) -> str:
    """The compiler's output of :func:`syntax_check` ('' when `source` compiles)."""
    done = syntax_check(source, workdir, strict=strict, extra_flags=extra_flags)
    return "" if done.returncode == 0 else done.stderr


#: the environment variable that turns the twin's race check off (af_twin/hb.h) or makes PIPE_V strict
RACE_ENV = "AF_TWIN_RACE"


def run(
    exe: Path,
    args: Sequence[str] = (),
    *,
    stdin: str | None = None,
    sanitize: bool = False,
    timeout: float = 60.0,
    race: str = "off",
) -> tuple[int, str, str]:
    """Run a built program; return (returncode, stdout, stderr).

    ``race`` is the twin's race-check mode: the API programs of these tests call one API after another with
    no synchronisation, to pin each API's semantics in program order, so they run with the check ``"off"``;
    the synchronisation tests (test_twin_sync.py) run it ``"on"`` or ``"strict"`` (PIPE_V unordered too).
    """
    env = dict(os.environ)
    if race == "on":
        env.pop(RACE_ENV, None)
    else:
        env[RACE_ENV] = race
    if sanitize:
        env.update(SANITIZE_ENV)
    done = subprocess.run(
        [str(exe), *map(str, args)], input=stdin, capture_output=True, text=True, timeout=timeout, env=env
    )
    return done.returncode, done.stdout, done.stderr


def build_and_run(
    source: str,
    args: Sequence[str] = (),
    *,
    stdin: str | None = None,
    sanitize: bool = False,
    extra_flags: Sequence[str] = (),
    timeout: float = 60.0,
) -> tuple[int, str, str]:
    """Compile `source` in a temporary directory, run it once, return (returncode, stdout, stderr)."""
    with tempfile.TemporaryDirectory(prefix="af-twin-") as tmp:
        exe = build(source, Path(tmp), sanitize=sanitize, extra_flags=extra_flags)
        return run(exe, args, stdin=stdin, sanitize=sanitize, timeout=timeout)


# Controls: one vector function, built on the twin and type-checked against the official headers.
#
# A register API form is pinned from both sides: the official AscendC headers must reject an illegal form
# (so the twin is not stricter by mistake) and the twin must reject it too, at compile time (so a generated
# kernel the hardware compiler refuses never passes the twin); a legal form must pass both. The functions below
# make the kernel around the one form and state those outcomes once.

#: the first lines of every kernel source, for the twin and the official headers alike
KERNEL_HEAD = '#include "kernel_operator.h"\nusing namespace AscendC;\n'
#: appended to a kernel-only source to link it as a twin program (the kernel itself is never run)
EMPTY_MAIN = "int main() { return 0; }\n"

#: the first statements of a control's body: ``mask`` over 64 float lanes and register ``a`` loaded from
#: ``src`` (``float`` kernels), the operands most register forms under test take
FLOAT_OPERANDS = (
    "uint32_t n = 64;\n"
    "Reg::MaskReg mask = Reg::UpdateMask<float>(n);\n"
    "Reg::RegTensor<float> a;\n"
    "Reg::LoadAlign(a, src);\n"
)


def _indented(statements: str) -> str:
    return textwrap.indent(textwrap.dedent(statements).strip("\n"), "    ")


def kernel_source(
    functions: str, launches: str, *, ub_bytes: int = 1024, name: str = "control_kernel"
) -> str:
    """A kernel source: `functions` (vector functions), then a kernel `name` that gives a ``TPipe pipe`` one
    ``TBuf`` ``buf`` of `ub_bytes` in UB and runs the statements `launches` (indentation free), which take
    their UB operands from ``buf``."""
    return (
        KERNEL_HEAD
        + functions
        + f"""
extern "C" __global__ __aicore__ void {name}(GM_ADDR)
{{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, {ub_bytes});
{_indented(launches)}
}}
"""
    )


def vf_kernel(body: str, ctype: str = "float") -> str:
    """A kernel source launching one vector function ``Control(__ubuf__ ctype* src)`` whose body is `body`.

    The kernel gives it a 1024-byte UB buffer as ``src``; `body` is C++ statements (indentation free), so a
    test writes only the form it checks and the lines it needs around it (masks, loads).
    """
    function = f"""
__simd_vf__ inline void Control(__ubuf__ {ctype}* src)
{{
{_indented(body)}
}}
"""
    return kernel_source(
        function, f"asc_vf_call<Control>((__ubuf__ {ctype}*)buf.Get<{ctype}>().GetPhyAddr());"
    )


def is_static_assertion(text: str) -> bool:
    """Whether compiler output `text` reports a failed ``static_assert`` (compilers and their versions word
    it differently)."""
    return "static assertion failed" in text or "static_assert" in text


#: the ``twin_compile`` fixture: builds a program, returns its runner
Compile = Callable[..., Callable[..., tuple[int, str, str]]]


def twin_acceptance(compile_: Compile, source: str) -> None:
    """Build the kernel `source` as a twin program with `compile_` (the ``twin_compile`` fixture); a
    rejection fails the test with the compiler's output."""
    compile_(source + EMPTY_MAIN)


def twin_rejection(compile_: Compile, source: str) -> str:
    """Assert the twin refuses to build the kernel `source` (``compile_``: the ``twin_compile`` fixture);
    return the compiler's output, for the test to check it names the rule."""
    with pytest.raises(TwinBuildError) as info:
        compile_(source + EMPTY_MAIN)
    return str(info.value)


def official_acceptance(checker: AscendcChecker, source: str) -> None:
    """Assert the official headers (the ``checker`` fixture) accept the kernel `source`."""
    result = checker.check(source)
    assert result.ok, result.describe()


def official_rejection(checker: AscendcChecker, source: str, *, in_file: str | None = "reg_compute") -> str:
    """Assert the official headers reject the kernel `source` with their own first error -- not the
    kernel's, nor a stand-in's -- raised in a header whose path contains `in_file` (None: any header);
    return the checker's description, for the test to check the reason."""
    result = checker.check(source)
    assert not result.ok, "the official headers accept it"
    first = result.first_error
    assert first.origin == "official", result.describe()
    if in_file is not None:
        assert in_file in first.file, first.file
    return result.describe()


#: the line the twin writes to stderr when it stops a run on misuse (af_twin/runtime.h)
ERROR_LINE = re.compile(r"AF_TWIN_ERROR kind=(?P<kind>[a-z-]+) core=(?P<core>-?\d+): (?P<message>.*)")
#: the exit status of such a run
ABORT_STATUS = 86


def twin_errors(err: str) -> list[re.Match[str]]:
    """The twin's error lines in a run's stderr `err` (none: the run broke no rule the twin checks)."""
    return [m for m in map(ERROR_LINE.fullmatch, err.splitlines()) if m]


def twin_abort(rc: int, err: str) -> re.Match[str]:
    """Assert a run (exit status `rc`, stderr `err`) was stopped by the twin with exactly one error line;
    return it, for the test to check its ``kind`` and ``message``."""
    errors = twin_errors(err)
    assert rc == ABORT_STATUS, err
    assert len(errors) == 1, err
    return errors[0]


def assert_misuse_aborts(
    program: Callable[..., tuple[int, str, str]], case: str, kind: str, text: str
) -> None:
    """Run the harness ``program`` on its misuse ``case``: the twin must stop it with one error of ``kind``
    whose message holds ``text``."""
    rc, _out, err = program(case)
    error = twin_abort(rc, err)
    assert error["kind"] == kind, err
    assert text in error["message"], err
