"""``alkstore``: certify an engine, or render reports into a conformance matrix.

``alkstore certify NAME`` runs the suite on one engine from an empty scratch
directory (so no project conftest or ini file interferes), shows each row as
it finishes, writes the JSON report, and exits 0 only when the engine is
certified. ``alkstore report A.json B.json --html out.html --markdown out.md``
renders the matrix.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from alkstore_contract.render import render_html, render_markdown
from alkstore_contract.report import load_report
from alkstore_contract.run import ANCHOR


def _certify(args: argparse.Namespace, passthrough: list[str]) -> int:
    """Run pytest in a child process from an empty scratch directory.

    A child keeps this process's imports out of pytest's way (pytest rewrites the
    asserts of plugin modules it imports itself), and the scratch directory keeps
    any conftest or ini file of the caller's project out of the certification.
    """
    report = Path(args.report or f"alkstore-report-{args.engine.replace(':', '_')}.json").resolve()
    if report.exists():
        report.unlink()
    options = [f"--alkstore-engine={args.engine}", f"--alkstore-report={report}"]
    if args.clock:
        options.append(f"--alkstore-clock={args.clock}")
    if args.require:
        options.append("--alkstore-require")
    if args.xfail_file:
        options.append(f"--alkstore-xfail-file={Path(args.xfail_file).resolve()}")
    if args.examples:
        options.append(f"--alkstore-examples={args.examples}")
    if args.seed is not None:
        options.append(f"--alkstore-seed={args.seed}")
    with tempfile.TemporaryDirectory(prefix="alkstore-certify-") as scratch:
        command = [sys.executable, "-m", "pytest", "-c", os.devnull, "--rootdir", str(ANCHOR.parent)]
        command += ["-p", "no:cacheprovider", "-v", *options, *passthrough]
        code = subprocess.call(command, cwd=scratch)
    if not report.exists():
        sys.stderr.write(f"alkstore certify: no report was written (pytest exit code {int(code)})\n")
        return 2
    engines = load_report(report)["engines"]
    certified = bool(engines) and all(engine["certified"] for engine in engines)
    return 0 if certified else 1


def _report(args: argparse.Namespace) -> int:
    reports = [load_report(Path(path)) for path in args.reports]
    if not (args.html or args.markdown):
        sys.stdout.write(render_markdown(reports))
    if args.html:
        Path(args.html).write_text(render_html(reports), encoding="utf-8")
    if args.markdown:
        Path(args.markdown).write_text(render_markdown(reports), encoding="utf-8")
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="alkstore", description=__doc__.splitlines()[0] if __doc__ else None)
    commands = top.add_subparsers(dest="command", required=True)
    certify = commands.add_parser("certify", help="run the contract suite on an engine and write its report")
    certify.add_argument("engine", help="an installed engine name, or package.module:attribute")
    certify.add_argument("--report", help="where to write the JSON report (default alkstore-report-NAME.json)")
    certify.add_argument("--clock", choices=("manual", "system"))
    certify.add_argument("--require", action="store_true", help="an engine that cannot run here fails")
    certify.add_argument("--xfail-file")
    certify.add_argument("--examples", type=int)
    certify.add_argument("--seed", type=int)
    report = commands.add_parser("report", help="render JSON reports as a conformance matrix")
    report.add_argument("reports", nargs="+")
    report.add_argument("--html", help="write a self-contained HTML page")
    report.add_argument("--markdown", help="write a Markdown table")
    return top


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``alkstore`` console script; pytest options go after ``--``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1 :]
    args = parser().parse_args(argv)
    if args.command == "certify":
        return _certify(args, passthrough)
    return _report(args)


if __name__ == "__main__":
    sys.exit(main())
