"""The ``alkstore`` command's parser and dispatch: each subcommand is run by the part it belongs to.

``certify`` (``alkstore_cli.certify``) runs the suite; ``report`` (``alkstore_cli.render``) renders reports;
``faults`` hands its arguments to ``alkstore_faults.cli``; ``worker`` and ``jobs`` to ``alkstore_worker.cli``.
This package sits on top of every other part, so the command may import any of them while none of them
imports the command (tests/test_boundaries.py).
"""

from __future__ import annotations

import argparse
import sys

from alkstore_cli import certify, render
from alkstore_faults import cli as faults_cli
from alkstore_worker.cli import OneLineParser

DESCRIPTION = "Certify an alkstore engine against the contract, or render reports into a conformance matrix."


def parser() -> argparse.ArgumentParser:
    """The parser of every subcommand but ``worker``/``jobs`` (their own) and ``matrix`` (the page builder's)."""
    top = OneLineParser(prog="alkstore", description=DESCRIPTION)
    commands = top.add_subparsers(dest="command", required=True, metavar="{certify,report,matrix,worker,jobs,faults}")
    certify.add_arguments(
        commands.add_parser(
            "certify",
            help="run the contract suite on an engine and write its report",
            description="Run the contract suite on one engine from an empty scratch directory, show each row as\n"
            "it finishes, write the JSON report, and exit 0 only when the engine is certified.",
            epilog=certify.EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    )
    render.add_arguments(
        commands.add_parser(
            "report",
            help="render JSON reports as a conformance matrix",
            description="Render one or more JSON reports (from alkstore certify or pytest --alkstore-report) as a "
            "conformance matrix: Markdown on stdout, or the files named. A file that cannot be read or is not a "
            "report: exit code 2 and one line saying which and why.",
        )
    )
    commands.add_parser("matrix", help=f"deprecated: run {render.MATRIX_TOOL} from the repository's root instead")
    commands.add_parser("worker", help="run an app's tasks (alkstore worker MODULE:APP --help; docs/worker.md)")
    commands.add_parser("jobs", help="look at an app's dead letters (alkstore jobs --help; docs/worker.md)")
    faults = commands.add_parser(
        "faults", help="judge a queue library through its own workers under real faults (docs/runtime-faults.md)"
    )
    faults_cli.add_arguments(faults)
    return top


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``alkstore`` console script; pytest options go after ``--``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1 :]
    if argv[:1] in (["worker"], ["jobs"]):  # the worker runtime's commands, parsed where they live
        from alkstore_worker.cli import main as worker_main

        return worker_main(argv)
    if argv[:1] == ["matrix"]:  # the page builder's own options, parsed where it lives
        return render.matrix(argv[1:])
    args = parser().parse_args(argv)
    if args.command == "certify":
        return certify.run(args, passthrough)
    if args.command == "faults":
        return faults_cli.run(args)
    return render.run(args)
