"""Hash every generated file of the corpus workloads and the samples, to show a change leaves them alone.

A change meant to touch only some kernels (a new register form for an op the corpus never uses, a
refactoring) claims that every other generated file is byte for byte the same. This tool makes that claim
checkable: ``hash`` compiles each corpus workload and each installed sample with the default template
choice and with SIMD and SK-like forced, and writes one SHA-256 per generated file (or the error a forced
template gives) to a JSON file; ``compare`` prints the files whose hashes differ between two such files and
exits 1 when any does. Run ``hash`` before and after the change (the same installed plugins both times).

Usage:
    python tools/artifact_hashes.py hash OUT.json [--only NAME ...]
    python tools/artifact_hashes.py compare BEFORE.json AFTER.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

#: the template choices each graph is compiled with (None: the default selection)
TEMPLATES = (None, "simd", "sklike")


def artifact_hashes(only: frozenset[str] = frozenset()) -> dict[str, str]:
    """``graph/template/file`` -> the SHA-256 of the generated file (``graph/template`` -> the error when a
    forced template refuses the graph), for the corpus workloads and the samples (those named ``only``
    when it is not empty)."""
    from af_core.autofuser import Autofuser, AutofuserOptions
    from af_core.errors import AfError
    from af_core.samples import installed_samples
    from af_core.workloads import load_workloads

    graphs = [(w.name, w.graph) for w in load_workloads()] + [
        (s.name, s.build()) for s in installed_samples()
    ]
    out: dict[str, str] = {}
    for name, graph in graphs:
        if only and name not in only:
            continue
        for template in TEMPLATES:
            fuser = Autofuser(AutofuserOptions(force_template=template) if template else AutofuserOptions())
            key = f"{name}/{template or 'default'}"
            try:
                files = fuser.generate(fuser.schedule(graph)).files()
            except AfError as exc:  # a forced template that does not take the graph
                out[key] = f"error {type(exc).__name__}"
                continue
            for file_name, text in sorted(files.items()):
                data = text.encode() if isinstance(text, str) else bytes(text)
                out[f"{key}/{file_name}"] = hashlib.sha256(data).hexdigest()
    return out


def differences(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The keys whose hash differs, or that only one side has, sorted."""
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("hash", help="hash the generated files into a JSON file")
    make.add_argument("out", type=Path)
    make.add_argument("--only", nargs="*", default=[], help="graph names (default: all)")
    cmp_ = sub.add_parser("compare", help="list the files whose hashes differ")
    cmp_.add_argument("before", type=Path)
    cmp_.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "hash":
        hashes = artifact_hashes(frozenset(args.only))
        _write_atomically(args.out, json.dumps(hashes, indent=0, sort_keys=True) + "\n")
        print(f"{len(hashes)} files hashed into {args.out}")
        return 0
    before = json.loads(args.before.read_text())
    after = json.loads(args.after.read_text())
    changed = differences(before, after)
    for key in changed:
        print(key)
    print(f"{len(changed)} of {len(set(before) | set(after))} differ")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
