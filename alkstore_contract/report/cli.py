"""The ``alkstore`` command: certify an engine, or render reports into a conformance matrix.

Part of the report.

``alkstore certify NAME`` runs the suite on one engine from an empty scratch
directory with an empty pytest configuration of its own (so no conftest, ini
file or pyproject of the caller's project interferes), shows each row as it
finishes, writes the JSON report, and exits 0 only when the engine is
certified. ``alkstore report A.json B.json --html out.html --markdown out.md``
renders the matrix; a file it cannot read or that is not a report ends it with
exit code 2 and one line saying which file and what is wrong.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from alkstore_contract._moved import REMOVED_IN
from alkstore_contract.report.build import load_report
from alkstore_contract.report.read import ReportFileError, read_report
from alkstore_contract.report.render import render_html, render_markdown
from alkstore_contract.suite import UnknownEngine, load_adapter
from alkstore_faults import cli as faults_cli

DESCRIPTION = "Certify an alkstore engine against the contract, or render reports into a conformance matrix."
CERTIFY_EPILOG = """\
Options after -- go to pytest unchanged, e.g.
  alkstore certify sqlite -- -k claim -x
  alkstore certify postgres -- --alkstore-pg-dsn=postgresql://user@host/db
  alkstore certify sqlite -- --alkstore-tolerance=1.0
A run of only some rows (-k, -m) writes a report but certifies nothing.
Exit code: 0 certified, or (with --xfail-file) not certified only by the clauses the file lists, each
of which failed where it lists it; 1 not certified, or a row failed; 2 the engine cannot be loaded or
no report was written."""
PYTEST_INI = "pytest.ini"
MATRIX_TOOL = "python -m tools.ecosystem_page"
"""What rebuilds the ecosystem pages now, from a checkout of the repository (``alkstore matrix`` is deprecated)."""


def _scratch_ini(scratch: Path) -> Path:
    """An empty pytest configuration in the scratch directory, so pytest reads no ini file of the caller's.

    pytest looks for a configuration upwards from where it starts; naming this one with
    ``-c`` ends that search, and makes the scratch directory pytest's rootdir. When
    pytest-asyncio is installed its loop scope is set, which silences the deprecation
    warning it prints in a run with no configuration (the suite has no asyncio fixtures).
    """
    lines = ["# alkstore certify: no pytest configuration of the caller's project applies.", "[pytest]"]
    if importlib.util.find_spec("pytest_asyncio") is not None:
        lines.append("asyncio_default_fixture_loop_scope = function")
    ini = scratch / PYTEST_INI
    ini.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ini


def _report_name(engine: str) -> str:
    """The default report's name part: the engine's spec, or for a manifest its directory's name."""
    if engine.endswith(".toml"):
        return Path(engine).resolve().parent.name
    return engine.replace(":", "_")


def _unloadable(engines: str) -> str | None:
    """Why an engine of ``engines`` (comma-separated, as ``--alkstore-engine``) cannot be loaded, or ``None``.

    Loaded here first, so an adapter that cannot be is told in one line and exit code 2, not in
    a pytest usage error and a missing report after it. The child still imports it afresh.
    """
    for spec in filter(None, (name.strip() for name in engines.split(","))):
        try:
            load_adapter(spec)
        except UnknownEngine as exc:
            return str(exc)
    return None


def _certify(args: argparse.Namespace, passthrough: list[str]) -> int:
    """Run pytest in a child process from an empty scratch directory.

    A child keeps this process's imports out of pytest's way (pytest rewrites the
    asserts of plugin modules it imports itself), and the scratch directory with its
    own empty ini keeps any conftest or ini file of the caller's project out of the
    certification.
    """
    unloadable = _unloadable(args.engine)
    if unloadable is not None:
        sys.stderr.write(f"alkstore certify: {unloadable}\n")
        return 2
    report = Path(args.report or f"alkstore-report-{_report_name(args.engine)}.json").resolve()
    if report.exists():
        report.unlink()
    options = [f"--alkstore-engine={args.engine}", f"--alkstore-report={report}"]
    if args.clock:
        options.append(f"--alkstore-clock={args.clock}")
    if args.require:
        options.append("--alkstore-require")
    if args.xfail_file:
        options.append(f"--alkstore-xfail-file={Path(args.xfail_file).resolve()}")
    if args.examples is not None:
        options.append(f"--alkstore-examples={args.examples}")
    if args.seed is not None:
        options.append(f"--alkstore-seed={args.seed}")
    with tempfile.TemporaryDirectory(prefix="alkstore-certify-") as scratch:
        ini = _scratch_ini(Path(scratch))
        command = [sys.executable, "-m", "pytest", "-c", str(ini), "-p", "no:cacheprovider", "-v"]
        command += [*options, *passthrough]
        code = subprocess.call(command, cwd=scratch)
    if not report.exists():
        sys.stderr.write(f"alkstore certify: no report was written (pytest exit code {int(code)})\n")
        return 2
    engines = load_report(report)["engines"]
    certified = bool(engines) and all(engine["certified"] for engine in engines)
    # A row that failed (an unlisted failure, or a strict entry that did not fail) fails the run, whatever the
    # clause verdicts say: a library whose known difference went away has changed as surely as one with a new one.
    known = (
        bool(args.xfail_file)
        and code == 0
        and bool(engines)
        and all(engine["certified"] or engine.get("known_differences_only", False) for engine in engines)
    )
    if known and not certified:
        sys.stdout.write(
            "alkstore certify: not certified, and every clause in the way failed as the expected-failures file lists "
            "(the known differences above); exit code 0\n"
        )
    return 0 if certified or known else 1


def _fail(message: str, command: str = "report") -> int:
    """One line on stderr and exit code 2: what a user can act on, not a traceback."""
    sys.stderr.write(f"alkstore {command}: {message}\n")
    return 2


def _report(args: argparse.Namespace) -> int:
    try:
        reports = [read_report(Path(path)) for path in args.reports]
    except ReportFileError as exc:
        return _fail(str(exc))
    if not (args.html or args.markdown):
        sys.stdout.write(render_markdown(reports))
    for path, render in ((args.html, render_html), (args.markdown, render_markdown)):
        if path:
            try:
                Path(path).write_text(render(reports), encoding="utf-8")
            except OSError as exc:
                return _fail(f"{path}: cannot be written ({exc.strerror or exc})")
    return 0


def _matrix(argv: list[str]) -> int:
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
        return _fail(
            f"the ecosystem page builder is a tool of alkstore's repository, not of the installed package: "
            f"run {MATRIX_TOOL} from the root of a checkout",
            "matrix",
        )
    status: int = page.main(argv)
    return status


def _how_the_run_goes(certify: argparse.ArgumentParser) -> None:
    """The options that shape a certify run without changing what certifies: its clock, its examples, its seed."""
    certify.add_argument(
        "--clock",
        choices=("manual", "system"),
        help="manual: an injected clock the rows move without sleeping (default where the engine can take one); "
        "system: the engine's own clock, rows sleep",
    )
    certify.add_argument(
        "--examples", type=int, metavar="N", help="Hypothesis examples of the model_based row (default 60)"
    )
    certify.add_argument("--seed", type=int, metavar="N", help="seed of every random choice, to replay a run")


def _what_the_run_yields(certify: argparse.ArgumentParser) -> None:
    """The options that decide a certify run's outcome: where its report goes, and what fails it."""
    certify.add_argument(
        "--report", metavar="PATH", help="where to write the JSON report (default alkstore-report-NAME.json)"
    )
    certify.add_argument(
        "--require", action="store_true", help="an engine that cannot run here fails instead of skipping"
    )
    certify.add_argument(
        "--xfail-file",
        metavar="PATH",
        help="clauses expected to fail: one 'row[engine] CLAUSE reason' a line, # starts a comment; strict (an "
        "expected failure that does not happen fails the run)",
    )


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="alkstore", description=DESCRIPTION)
    commands = top.add_subparsers(dest="command", required=True, metavar="{certify,report,matrix,worker,jobs,faults}")
    certify = commands.add_parser(
        "certify",
        help="run the contract suite on an engine and write its report",
        description="Run the contract suite on one engine from an empty scratch directory, show each row as\n"
        "it finishes, write the JSON report, and exit 0 only when the engine is certified.",
        epilog=CERTIFY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    certify.add_argument(
        "engine",
        help="an installed engine name (entry point alkstore.engines), package.module:attr, "
        "or the path of an engine's manifest (alkstore-engine.toml, an engine in any language)",
    )
    _how_the_run_goes(certify)
    _what_the_run_yields(certify)
    report = commands.add_parser(
        "report",
        help="render JSON reports as a conformance matrix",
        description="Render one or more JSON reports (from alkstore certify or pytest --alkstore-report) as a "
        "conformance matrix: Markdown on stdout, or the files named. A file that cannot be read or is not a "
        "report: exit code 2 and one line saying which and why.",
    )
    report.add_argument("reports", nargs="+", metavar="REPORT.json", help="reports to put side by side")
    report.add_argument("--html", metavar="PATH", help="write a self-contained HTML page")
    report.add_argument("--markdown", metavar="PATH", help="write a Markdown table")
    commands.add_parser("matrix", help=f"deprecated: run {MATRIX_TOOL} from the repository's root instead")
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
    if argv[:1] in (["worker"], ["jobs"]):  # the worker runtime's commands live in its own package
        from alkstore_worker.cli import main as worker_main

        return worker_main(argv)
    if argv[:1] == ["matrix"]:  # the page builder's own options, parsed where it lives
        return _matrix(argv[1:])
    args = parser().parse_args(argv)
    if args.command == "certify":
        return _certify(args, passthrough)
    if args.command == "faults":
        return faults_cli.run(args)
    return _report(args)


if __name__ == "__main__":
    sys.exit(main())
