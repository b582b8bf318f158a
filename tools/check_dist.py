"""Build every af-* distribution and check what a user would download and install.

    python tools/check_dist.py ROOT OUTDIR [--template af-indirect-load-simt]

OUTDIR must hold no wheel or sdist yet (``tox -e dist`` passes its own temporary directory, which
tox empties before each run, and leaves the files there: ``.tox/dist/tmp/dist/``).

Run by ``tox -e dist`` (which provides ``build``, ``twine`` and ``check-wheel-contents``):

1. builds a wheel and an sdist of each directory in :data:`DISTRIBUTIONS` (``python -m build``:
   the sdist first, the wheel from it, so an incomplete sdist fails here);
2. ``twine check --strict`` on every file and ``check-wheel-contents`` on every wheel;
3. every wheel and sdist carries ``LICENSE`` and the SPDX license metadata;
4. a fresh virtual environment gets af-core, one template and the af-* distributions that template
   declares, from the built wheels only (no checkout on the path), and runs the README's example:
   ``afc plugins`` loads everything without a load error, and ``afc run`` on the README's builders
   snippet matches the reference with that template.

Every failure is collected and printed; the exit status is 1 when there was one.
"""

from __future__ import annotations

import argparse
import email.parser
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import venv
import zipfile
from pathlib import Path

#: One line per distribution: its directory under the repository root.
DISTRIBUTIONS = (
    ".",
    "plugins/elementwise",
    "plugins/v35_regbase",
    "plugins/indirect_load_simd",
    "plugins/indirect_load_simt",
    "plugins/indirect_load_sklike",
    "plugins/indirect_load_dedup",
    "examples/af-template-scalar",
    "examples/af-template-rowcopy",
    "frontends/torch",
)

LICENSE_EXPRESSION = "Apache-2.0"
LICENSE_FILE = "LICENSE"


def normalize(name: str) -> str:
    """A distribution name as wheel and sdist file names spell it (PEP 503 then PEP 427)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, text=True, **kwargs)


# -- artefacts ---------------------------------------------------------------------------------
def build_all(root: Path, outdir: Path, problems: list[str]) -> None:
    for directory in DISTRIBUTIONS:
        proc = run([sys.executable, "-m", "build", "--outdir", str(outdir), str(root / directory)])
        if proc.returncode != 0:
            problems.append(f"{directory}: python -m build failed")


def artefacts(outdir: Path) -> tuple[list[Path], list[Path]]:
    return sorted(outdir.glob("*.whl")), sorted(outdir.glob("*.tar.gz"))


def metadata_of_wheel(wheel: Path) -> tuple[email.message.Message, set[str]]:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = next(n for n in names if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
        return email.parser.Parser().parsestr(zf.read(meta).decode()), names


def metadata_of_sdist(sdist: Path) -> tuple[email.message.Message, set[str]]:
    with tarfile.open(sdist) as tf:
        names = {m.name for m in tf.getmembers()}
        info = next(n for n in names if n.count("/") == 1 and n.endswith("/PKG-INFO"))
        member = tf.extractfile(info)
        assert member is not None
        return email.parser.Parser().parsestr(member.read().decode()), names


def check_license(path: Path, problems: list[str]) -> None:
    """The file holds LICENSE and states the license expression and the license file (PEP 639)."""
    if path.suffix == ".whl":
        meta, names = metadata_of_wheel(path)
        info_dir = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        expected_file = f"{info_dir}/licenses/{LICENSE_FILE}"
    else:
        meta, names = metadata_of_sdist(path)
        expected_file = f"{path.name.removesuffix('.tar.gz')}/{LICENSE_FILE}"
    if expected_file not in names:
        problems.append(f"{path.name}: no {expected_file}")
    if meta.get("License-Expression") != LICENSE_EXPRESSION:
        problems.append(
            f"{path.name}: License-Expression is {meta.get('License-Expression')!r}, "
            f"expected {LICENSE_EXPRESSION!r}"
        )
    if LICENSE_FILE not in meta.get_all("License-File", []):
        problems.append(f"{path.name}: no 'License-File: {LICENSE_FILE}' in its metadata")


def check_artefacts(outdir: Path, problems: list[str]) -> list[Path]:
    wheels, sdists = artefacts(outdir)
    if len(wheels) != len(DISTRIBUTIONS) or len(sdists) != len(DISTRIBUTIONS):
        problems.append(
            f"expected one wheel and one sdist per distribution ({len(DISTRIBUTIONS)}), "
            f"found {len(wheels)} wheels and {len(sdists)} sdists"
        )
    if wheels or sdists:
        if (
            run([sys.executable, "-m", "twine", "check", "--strict", *map(str, wheels + sdists)]).returncode
            != 0
        ):
            problems.append("twine check --strict failed")
    if wheels and run([sys.executable, "-m", "check_wheel_contents", *map(str, wheels)]).returncode != 0:
        problems.append("check-wheel-contents failed")
    for path in wheels + sdists:
        check_license(path, problems)
    return wheels


# -- a user's install --------------------------------------------------------------------------
def requirement_name(requirement: str) -> str:
    return normalize(re.split(r"[\s;<>=!~\[(]", requirement.strip(), maxsplit=1)[0])


def af_closure(template: str, wheels: list[Path]) -> list[Path]:
    """The wheels of af-core, the template and every af-* distribution it declares (transitively)."""
    by_name = {normalize(metadata_of_wheel(w)[0]["Name"]): w for w in wheels}
    wanted: set[str] = set()
    todo = [normalize("af-core"), normalize(template)]
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        if name not in by_name:
            raise SystemExit(f"no wheel was built for '{name}' (built: {', '.join(sorted(by_name))})")
        wanted.add(name)
        for req in metadata_of_wheel(by_name[name])[0].get_all("Requires-Dist", []):
            if "extra ==" not in req and requirement_name(req).startswith("af_"):
                todo.append(requirement_name(req))
    return [by_name[n] for n in sorted(wanted)]


def readme_example(root: Path) -> tuple[str, list[str]]:
    """The README's builders snippet and the ``afc run emb.py ...`` arguments that go with it."""
    text = (root / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    snippet = next((b for b in blocks if "GraphBuilder(" in b and "graph = " in b), None)
    command = re.search(r"`afc run emb\.py ([^`]+)`", text)
    if snippet is None or command is None:
        raise SystemExit("README.md has no builders snippet or no `afc run emb.py ...` command")
    return snippet, command.group(1).split()


def check_fresh_install(root: Path, wheels: list[Path], template: str, problems: list[str]) -> None:
    chosen = af_closure(template, wheels)
    snippet, run_args = readme_example(root)
    with tempfile.TemporaryDirectory(prefix="af-fresh-") as tmp:
        home = Path(tmp)
        env_dir = home / "venv"
        venv.EnvBuilder(with_pip=True).create(env_dir)
        bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
        python = str(bindir / "python")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["COLUMNS"] = "200"  # rich wraps tables at 80 columns when not on a terminal
        if run([python, "-m", "pip", "install", "-q", *map(str, chosen)], env=env, cwd=home).returncode:
            problems.append(f"pip install of {', '.join(p.name for p in chosen)} failed")
            return
        probe = (
            "import importlib.metadata as md, sys, af_core\n"
            "from af_core.registry import get_registry\n"
            "print(af_core.__file__)\n"
            "print(*sorted(d.metadata['Name'] for d in md.distributions() if d.metadata['Name'].startswith('af-')))\n"
            "print(*[e.name for e in get_registry().entries('template') if e.distribution == sys.argv[1]])\n"
        )
        template_meta = metadata_of_wheel(
            next(w for w in chosen if normalize(metadata_of_wheel(w)[0]["Name"]) == normalize(template))
        )[0]
        installed = run([python, "-c", probe, template_meta["Name"]], env=env, cwd=home, capture_output=True)
        where, names, templates = (installed.stdout.splitlines() + ["", "", ""])[:3]
        expected = sorted(metadata_of_wheel(w)[0]["Name"] for w in chosen)
        if installed.returncode != 0 or names.split() != expected:
            problems.append(
                f"fresh venv holds af-* distributions {names.split()}, expected {expected} {installed.stderr}"
            )
        if not templates.split():
            problems.append(f"{template} registers no template in the fresh venv")
        if root in Path(where).resolve().parents:
            problems.append(f"the fresh venv imports af_core from the checkout ({where})")
        plugins = run([str(bindir / "afc"), "plugins"], env=env, cwd=home, capture_output=True)
        print(plugins.stdout, plugins.stderr, sep="")
        if plugins.returncode != 0 or "load errors: none" not in plugins.stdout:
            problems.append("afc plugins in the fresh venv did not load every plugin cleanly")
        (home / "emb.py").write_text(snippet, encoding="utf-8")
        result = run(
            [str(bindir / "afc"), "run", "emb.py", *run_args], env=env, cwd=home, capture_output=True
        )
        print(result.stdout, result.stderr, sep="")
        if result.returncode != 0 or not matched_with(result.stdout, set(templates.split())):
            problems.append(
                f"the README example did not match the reference with {template} "
                f"(templates {templates.split()})"
            )


def matched_with(table: str, templates: set[str]) -> bool:
    """``afc run`` printed a row whose result is ``match`` and whose template is one of ``templates``.

    The template column may name a variant after a slash (``simd/db``).
    """
    for line in table.splitlines():
        cells = {c.strip() for c in re.split(r"[\u2502|]", line)}
        if "match" in cells and templates & {c.split("/")[0] for c in cells}:
            return True
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="the repository root")
    parser.add_argument(
        "outdir", type=Path, help="where the wheels and sdists go (no wheel or sdist there yet)"
    )
    parser.add_argument(
        "--template",
        default="af-indirect-load-simt",
        help="the one template distribution of the fresh install (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    root, outdir = args.root.resolve(), args.outdir.resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    if any(outdir.glob("*.whl")) or any(outdir.glob("*.tar.gz")):
        parser.error(f"{outdir} already holds wheels or sdists; give an empty directory")
    problems: list[str] = []
    build_all(root, outdir, problems)
    wheels = check_artefacts(outdir, problems)
    if wheels:
        check_fresh_install(root, wheels, args.template, problems)
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    print("dist: ok" if not problems else f"dist: {len(problems)} problem(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
