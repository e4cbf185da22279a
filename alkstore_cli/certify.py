"""``alkstore certify NAME``: the contract suite on one engine, from an empty scratch directory.

It runs pytest in a child process from an empty scratch directory with an empty
pytest configuration of its own (so no conftest, ini file or pyproject of the
caller's project interferes), shows each row as it finishes, writes the JSON
report, and exits 0 only when the engine is certified.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

from alkstore_contract.report.build import load_report
from alkstore_contract.suite import UnknownEngine, load_adapter

EPILOG = """\
Options after -- go to pytest unchanged, e.g.
  alkstore certify sqlite -- -k claim -x
  alkstore certify postgres -- --alkstore-pg-dsn=postgresql://user@host/db
  alkstore certify sqlite -- --alkstore-tolerance=1.0
A run of only some rows (-k, -m) writes a report but certifies nothing.
Exit code: 0 certified, or (with --xfail-file) not certified only by the clauses the file lists, each
of which failed where it lists it; 1 not certified, or a row failed; 2 the engine cannot be loaded or
no report was written."""
PYTEST_INI = "pytest.ini"


def add_arguments(certify: argparse.ArgumentParser) -> None:
    """The ``certify`` subcommand's arguments: the engine, how the run goes, and what it yields."""
    certify.add_argument(
        "engine",
        help="an installed engine name (entry point alkstore.engines), package.module:attr, "
        "or the path of an engine's manifest (alkstore-engine.toml, an engine in any language)",
    )
    _how_the_run_goes(certify)
    _what_the_run_yields(certify)


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


def scratch_ini(scratch: Path) -> Path:
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


def report_name(engine: str) -> str:
    """The default report's name part: the engine's spec, or for a manifest its directory's name."""
    if engine.endswith(".toml"):
        return Path(engine).resolve().parent.name
    return engine.replace(":", "_")


def unloadable(engines: str) -> str | None:
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


def run(args: argparse.Namespace, passthrough: list[str]) -> int:
    """Run pytest in a child process from an empty scratch directory.

    A child keeps this process's imports out of pytest's way (pytest rewrites the
    asserts of plugin modules it imports itself), and the scratch directory with its
    own empty ini keeps any conftest or ini file of the caller's project out of the
    certification.
    """
    why = unloadable(args.engine)
    if why is not None:
        sys.stderr.write(f"alkstore certify: {why}\n")
        return 2
    report = Path(args.report or f"alkstore-report-{report_name(args.engine)}.json").resolve()
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
        ini = scratch_ini(Path(scratch))
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
