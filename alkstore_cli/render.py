"""``alkstore report A.json B.json --html out.html --markdown out.md``: reports rendered as a matrix.

A file it cannot read or that is not a report ends it with exit code 2 and one
line saying which file and what is wrong. Also ``alkstore matrix``, deprecated.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from pathlib import Path

from alkstore_contract._moved import REMOVED_IN
from alkstore_contract.report.read import ReportFileError, read_report
from alkstore_contract.report.render import render_html, render_markdown

MATRIX_TOOL = "python -m tools.ecosystem_page"
"""What rebuilds the ecosystem pages now, from a checkout of the repository (``alkstore matrix`` is deprecated)."""


def add_arguments(report: argparse.ArgumentParser) -> None:
    """The ``report`` subcommand's arguments: the reports, and the files to write."""
    report.add_argument("reports", nargs="+", metavar="REPORT.json", help="reports to put side by side")
    report.add_argument("--html", metavar="PATH", help="write a self-contained HTML page")
    report.add_argument("--markdown", metavar="PATH", help="write a Markdown table")


def fail(message: str, command: str = "report") -> int:
    """One line on stderr and exit code 2: what a user can act on, not a traceback."""
    sys.stderr.write(f"alkstore {command}: {message}\n")
    return 2


def run(args: argparse.Namespace) -> int:
    """Render the reports ``args.reports`` as Markdown on stdout, or into the files ``--html``/``--markdown`` name."""
    try:
        reports = [read_report(Path(path)) for path in args.reports]
    except ReportFileError as exc:
        return fail(str(exc))
    if not (args.html or args.markdown):
        sys.stdout.write(render_markdown(reports))
    for path, render in ((args.html, render_html), (args.markdown, render_markdown)):
        if path:
            try:
                Path(path).write_text(render(reports), encoding="utf-8")
            except OSError as exc:
                return fail(f"{path}: cannot be written ({exc.strerror or exc})")
    return 0


def matrix(argv: list[str]) -> int:
    """``alkstore matrix``, deprecated: the ecosystem pages are the project's, rebuilt by a tool of its checkout.

    The page builder left the wheel for ``tools/ecosystem_page.py``; for one release this command still runs
    it, with a ``DeprecationWarning``, when run from the repository's root (where ``tools`` imports), and
    otherwise says where the builder is instead of failing on an import.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("default", DeprecationWarning)  # a command's user sees it, not only a test run
        warnings.warn(
            f"alkstore matrix is deprecated and goes in alkstore {REMOVED_IN}: run {MATRIX_TOOL} from the "
            "repository's root instead (same options)",
            DeprecationWarning,
            stacklevel=2,
        )
    root = str(Path.cwd())
    if root not in sys.path and (Path(root) / "tools" / "ecosystem_page.py").is_file():
        sys.path.insert(0, root)
    try:
        page = importlib.import_module("tools.ecosystem_page")
    except ModuleNotFoundError:
        return fail(
            f"the ecosystem page builder is a tool of alkstore's repository, not of the installed package: "
            f"run {MATRIX_TOOL} from the root of a checkout",
            "matrix",
        )
    status: int = page.main(argv)
    return status
