"""Hook implementations of af-torch: the ``afc torch FILE.py`` command.

This module is imported whenever af_core loads its plugins, so it imports
no torch; the command imports it when it runs.
"""

from __future__ import annotations

from af_core import hookimpl

# The af_core hook contract this plugin is written against (af_core.hookspecs.CONTRACT_VERSION).
AF_CONTRACT_VERSION = 1


def _configure(parser) -> None:
    parser.add_argument("file", help="a .py file defining `model` and `example_inputs` (run as Python code)")
    parser.add_argument(
        "--batch",
        type=int,
        action="append",
        default=[],
        metavar="N",
        help="also show the template the host tiling picks for batch size N (repeatable)",
    )


def _run(args) -> int:
    from pathlib import Path

    from af_core.errors import UsageError

    path = Path(args.file)
    if path.suffix != ".py" or not path.is_file():
        raise UsageError(f"'{args.file}' is not a .py file")
    from af_torch.region_table import explain_file

    try:
        if any(b < 1 for b in args.batch):
            raise UsageError("--batch takes positive integers")
        explanation = explain_file(str(path), batches=args.batch)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(explanation.table())
    return 0 if explanation.matches_eager else 1


@hookimpl
def af_register_commands(register):
    register(
        "torch",
        "fuse a PyTorch model's gathers, run them on the twin and print the region table",
        _configure,
        _run,
    )
