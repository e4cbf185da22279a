"""The suite on one engine in a pytest process of its own, for tests that judge a whole certificate.

A run inside the test's own process would share its event loop, its plugins and
its ``-k``; a subprocess in a scratch directory (its own ``pytest.ini``) sees
only the suite and the engine named.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SUITE_REPORT = "ALKSTORE_SUITE_MANUAL_REPORT"
"""The report of ci/test.sh's manual-clock run of the suite, which certifies the test engines beside the engines."""


def run_suite(scratch: Path, engine: str, *options: str) -> tuple[dict[str, Any], str]:
    """The engine's entry of the report of a suite run on ``engine`` (``options`` go to pytest), and its output.

    The run gets this environment with the repository put in front of
    ``PYTHONPATH``, never in its place: a plugin that ``PYTEST_ADDOPTS`` or
    ``PYTEST_PLUGINS`` names (a profiler a whole run is wrapped in) is found on
    the rest, and without it pytest stops before the suite runs and writes no
    report. A run that wrote none fails here with its exit status and output.
    """
    report = scratch / "report.json"
    (scratch / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    env.pop("ALKSTORE_REQUIRE", None)
    done = run_pytest(scratch, env, "-q", f"--alkstore-engine={engine}", f"--alkstore-report={report}", *options)
    assert report.exists(), (
        f"the suite run on {engine} wrote no report (exit status {done.returncode}):\n"
        f"{done.stdout[-6000:]}\n--- stderr ---\n{done.stderr[-4000:]}"
    )
    return json.loads(report.read_text(encoding="utf-8"))["engines"][0], done.stdout[-4000:]


PYTHON_M_PYTEST = (sys.executable, "-m", "pytest")
"""This interpreter's pytest, the default launcher of ``run_pytest``."""


def run_pytest(
    scratch: Path,
    env: Mapping[str, str],
    *args: str,
    launcher: Sequence[str] = PYTHON_M_PYTEST,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """``launcher *args`` (a pytest) run in ``scratch`` with ``env``, its output captured; the caller judges it.

    The cache plugin is off so that a run leaves nothing behind in the scratch
    directory or the repository.
    """
    return subprocess.run(
        [*launcher, "-p", "no:cacheprovider", *args],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def recorded_or_run(scratch: Path, engine: str, name: str) -> tuple[dict[str, Any], str]:
    """The entry of engine ``name`` (spec ``engine``) in ci/test.sh's report, else in a run of its own, and its output.

    ``ci/test.sh`` runs the test engines in its manual-clock run of the suite and
    names that report in ``$ALKSTORE_SUITE_MANUAL_REPORT``: then the entry is read
    from it, and a report without the engine fails the test. Otherwise the suite
    runs here, in a pytest process of its own.
    """
    recorded = os.environ.get(SUITE_REPORT)
    if recorded:
        engines = json.loads(Path(recorded).read_text(encoding="utf-8"))["engines"]
        found = [entry for entry in engines if entry["name"] == name]
        assert found, f"${SUITE_REPORT} names {recorded}, whose run did not include {engine}"
        return found[0], f"see the suite's output for {name} in {recorded}"
    return run_suite(scratch, engine)
