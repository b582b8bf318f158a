"""The one C++ build module: keys, precompiled headers, parallel compiles and the message of a failing compile.

These need g++ (or ``$CXX``) only, no plugin: the programs are small and self-contained.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from af_core import owned_dirs, toolchain
from af_core.errors import ToolchainError, TwinError

pytestmark = pytest.mark.skipif(toolchain.compiler_path() is None, reason="no C++ compiler")

HEADER = """#ifndef TOY_H
#define TOY_H
#include <cstdint>
#include <vector>
inline int64_t Toy(int64_t v) { std::vector<int64_t> x(4, v); return x[0] + x[3]; }
#endif
"""
UNIT = '#include "toy.h"\nint64_t Twice(int64_t v) { return Toy(v); }\n'
MAIN = (
    '#include <cstdio>\n#include <cstdint>\nint64_t Twice(int64_t);\nint main() { std::printf("%lld\\n", '
    "static_cast<long long>(Twice(21))); return 0; }\n"
)


def _tree(tmp_path: Path) -> Path:
    inc = tmp_path / "include"
    inc.mkdir()
    (inc / "toy.h").write_text(HEADER)
    return inc


def test_flags_have_one_order_and_the_twin_define():
    args = toolchain.TWIN.args()
    assert args[:2] == [toolchain.STANDARD, toolchain.OPTIMIZE] and "-DAF_CPU_TWIN=1" in args
    assert set(toolchain.SANITIZE_FLAGS) <= set(toolchain.TWIN.replace(sanitize=True).args())
    assert "-fPIC" in toolchain.HOST_TILING.args() and "-Werror" in toolchain.TWIN_STRICT.args()


def test_keys_change_with_the_flags_and_with_the_headers(tmp_path):
    base = toolchain.TWIN
    assert base.digest() == toolchain.TWIN.replace().digest()
    assert (
        len(
            {
                base.digest(),
                base.replace(optimize="-O0").digest(),
                base.replace(sanitize=True).digest(),
                base.replace(extra=("-DX=1",)).digest(),
            }
        )
        == 4
    )
    inc = _tree(tmp_path)
    before = toolchain.tree_digest([inc])
    assert toolchain.tree_digest([inc]) == before
    (inc / "toy.h").write_text(HEADER.replace("x[3]", "x[2]"))
    changed = toolchain.tree_digest([inc])
    assert changed != before
    (inc / "extra.h").write_text("// another header\n")
    assert toolchain.tree_digest([inc]) not in (before, changed)


def test_a_precompiled_header_is_built_once_and_used(tmp_path):
    inc = _tree(tmp_path)
    flags = toolchain.TWIN
    pch = tmp_path / "cache" / f"pch-{toolchain.digest(flags.digest(), toolchain.tree_digest([inc]))[:24]}"
    gch = toolchain.precompile("toy.h", pch, flags, includes=[inc])
    assert gch == pch / "toy.h.gch" and gch.is_file()
    stamp = (gch.stat().st_ino, gch.stat().st_mtime_ns)
    assert toolchain.precompile("toy.h", pch, flags, includes=[inc]) == gch
    assert (gch.stat().st_ino, gch.stat().st_mtime_ns) == stamp  # reused, not rebuilt
    assert sorted(p.name for p in pch.parent.iterdir()) == [pch.name]  # no scratch left
    work = tmp_path / "work"
    work.mkdir()
    (work / "unit.cpp").write_text(UNIT)
    unit = toolchain.Unit(("unit.cpp",), "unit", flags.replace(extra=("-H",)), (str(pch), str(inc)))
    used = toolchain.run(unit.command(toolchain.compiler()), what="unit", cwd=work)
    assert f"! {gch}" in used.stderr.splitlines()
    other = toolchain.Unit(
        ("unit.cpp",), "unit", flags.replace(optimize="-O0", extra=("-H",)), (str(pch), str(inc))
    )
    refused = toolchain.run(other.command(toolchain.compiler()), what="unit", cwd=work)
    assert f"! {gch}" not in refused.stderr.splitlines()  # other flags: g++ parses the header instead


def test_concurrent_builds_of_one_precompiled_header_agree(tmp_path):
    inc = _tree(tmp_path)
    pch = tmp_path / "cache" / "pch-shared"
    results, errors = [], []

    def build() -> None:
        try:
            results.append(toolchain.precompile("toy.h", pch, toolchain.TWIN, includes=[inc]))
        except Exception as exc:  # noqa: BLE001 - reported by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and results == [pch / "toy.h.gch"] * 3
    assert sorted(p.name for p in pch.parent.iterdir()) == ["pch-shared"]
    assert sorted(p.name for p in pch.iterdir()) == ["af-owner", "toy.h.gch"]  # the header and af's marker
    assert owned_dirs.owner(pch) is not None


def _units(inc: Path, work: Path) -> list[toolchain.Unit]:
    work.mkdir()
    (work / "unit.cpp").write_text(UNIT)
    (work / "main.cpp").write_text(MAIN)
    return [
        toolchain.Unit(("unit.cpp",), "unit", toolchain.TWIN, (str(inc),)),
        toolchain.Unit(("main.cpp",), "main", toolchain.TWIN, ()),
    ]


def test_parallel_compiles_give_the_objects_and_program_of_serial_ones(tmp_path):
    inc = _tree(tmp_path)
    built = {}
    for jobs in (1, 2):
        work = tmp_path / f"jobs{jobs}"
        timings: dict[str, float] = {}
        objects = toolchain.compile_units(_units(inc, work), work, jobs=jobs, timings=timings)
        assert objects == ["unit.o", "main.o"] and set(timings) == {"unit", "main"}
        exe = toolchain.link(objects, "prog", work, toolchain.TWIN, what="prog")
        built[jobs] = [(work / o).read_bytes() for o in objects]
        import subprocess

        assert subprocess.run([str(exe)], capture_output=True, text=True).stdout == "42\n"
    assert built[1] == built[2]


def test_a_failing_compile_says_where_and_what_on_its_first_line(tmp_path):
    inc = _tree(tmp_path)
    work = tmp_path / "work"
    units = _units(inc, work)
    (work / "unit.cpp").write_text(UNIT + "int64_t Broken() { return undeclared_name; }\n")
    with pytest.raises(toolchain.CompileError) as info:
        toolchain.compile_units(units, work, jobs=2)
    err = info.value
    assert isinstance(err, TwinError)
    first = str(err).splitlines()[0]
    assert first.startswith("unit does not compile (")
    assert first.split("): ", 1)[1].startswith("unit.cpp:3:")  # relative to the build directory
    assert "error:" in first and "undeclared_name" in first
    assert "undeclared_name" in err.log and err.diagnostics[0] == first.split("): ", 1)[1]


def test_many_errors_are_cut_and_long_lines_trimmed(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    long_name = "x" * 1000
    body = "".join(f"int f{i}() {{ return missing_{i}; }}\n" for i in range(20))
    (work / "many.cpp").write_text(body + f"int {long_name}() {{ return {long_name}_missing; }}\n")
    with pytest.raises(toolchain.CompileError) as info:
        toolchain.compile_units([toolchain.Unit(("many.cpp",), "many", toolchain.TWIN)], work)
    lines = str(info.value).splitlines()
    assert len(lines) == toolchain.SHOWN_DIAGNOSTICS + 1
    assert lines[-1] == f"... and {len(info.value.diagnostics) - toolchain.SHOWN_DIAGNOSTICS} more error(s)"
    assert len(info.value.diagnostics) == 21
    assert all(len(line) <= toolchain.SHOWN_WIDTH + 60 for line in lines)


def test_a_link_error_names_the_missing_symbol(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "main.cpp").write_text(MAIN)
    objects = toolchain.compile_units([toolchain.Unit(("main.cpp",), "main", toolchain.TWIN)], work)
    with pytest.raises(toolchain.CompileError) as info:
        toolchain.link(objects, "prog", work, toolchain.TWIN, what="prog")
    first = str(info.value).splitlines()[0]
    assert (
        first.startswith("prog does not compile (") and "undefined reference to" in first and "Twice" in first
    )


def test_a_missing_compiler_is_a_toolchain_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    assert toolchain.compiler() == str(tmp_path / "no-such-compiler")
    assert toolchain.compiler_path() is None
    with pytest.raises(ToolchainError, match="cannot be run"):
        toolchain.build_program(["x.cpp"], tmp_path / "x", toolchain.TWIN)
    with pytest.raises(ToolchainError, match="not usable"):
        toolchain.compiler_version(str(tmp_path / "no-such-compiler"))


def test_the_toolchain_is_a_leaf_module():
    """It imports the standard library, af_core.errors and af_core.owned_dirs only (that one the standard
    library alone), so every layer may use it."""
    import ast
    import sys

    def outside(module) -> set[str]:
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module)
        return {n for n in names if n.split(".")[0] not in sys.stdlib_module_names}

    assert outside(toolchain) == {"af_core.errors", "af_core.owned_dirs"}
    assert outside(owned_dirs) == set()
