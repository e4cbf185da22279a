"""Run the contract suite against ONE mutant, in a pytest process of its own.

One process per mutant is what lets a mutant patch code every engine shares
(see the catalog's docstring) and lets the catalog spread over xdist workers.
Each process is forked from a server that has imported pytest and the
libraries once (``tests/forkserver.py``), so it does not spend its
start importing them. The process is rooted in an empty temporary directory,
as a user's run would be, so the project's own pyproject and conftest do not
apply; its only engine is the mutant.

Two ways to run it:

- ``stop_at_first_failure=True`` (the test default): the mutant's own rows
  run first (``tests/mutants/row_order.py``) and ``-x`` stops at the first
  failing row, so a killed mutant usually costs one row. Nothing is
  deselected: a mutant that survives its rows meets every other row.
- ``stop_at_first_failure=False`` (the kill table): every row runs, so the
  report says every row that kills the mutant.
"""

from __future__ import annotations

import json
import os
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from tests.forkserver import ForkServer
from tests.mutants.catalog import CatalogEntry

REPO = Path(__file__).resolve().parents[2]
SEED = 20261129
"""One fixed seed, so every run of a mutant meets the same examples."""


INHERITED_NOT = ("ALKSTORE_REQUIRE", "PYTEST_XDIST_")
"""Environment the run does not inherit: the project's --alkstore-require, the xdist worker's identity."""
PLUGINS_OFF = ("no:cacheprovider", "no:asyncio", "no:xdist", "no:hypothesispytest")
"""Plugins a one-mutant run has no use for (rows run their own event loop; one process; no ``@given`` test):
less to start. Hypothesis's own plugin would import all of Hypothesis at the end of every run, a third of
the start-up of a run that stops before ``model_based``."""


class MutantRunError(RuntimeError):
    """The run wrote no report: the mutant did not load, or pytest could not start."""


def _environment() -> dict[str, str]:
    """The run's environment: this process's, but what it must not inherit, and the checkout on the path."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(INHERITED_NOT)}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    return env


@cache
def _server() -> ForkServer:
    """This process's fork server (``tests/forkserver.py``), started by its first mutant's run."""
    return ForkServer(_environment(), REPO)


def run_mutant(
    entry: CatalogEntry,
    report_path: Path,
    *,
    rows_first: tuple[str, ...] | None = None,
    stop_at_first_failure: bool = True,
) -> dict[str, Any]:
    """Run the suite on ``entry``'s mutant alone and return its JSON report.

    ``rows_first`` defaults to the rows the mutant names.
    """
    first = entry.mutant.rows if rows_first is None else rows_first
    env = _environment()
    command = [
        "-c",
        os.devnull,
        *(arg for plugin in PLUGINS_OFF for arg in ("-p", plugin)),
        "-p",
        "tests.mutants.row_order",
        "-q",
        f"--alkstore-rows-first={','.join(first)}",
        f"--alkstore-seed={SEED}",
        f"--alkstore-report={report_path}",
        f"--alkstore-engine={entry.spec}",
    ]
    if entry.mutant.clock is not None:
        command.append(f"--alkstore-clock={entry.mutant.clock}")
    if stop_at_first_failure:
        command.append("-x")
    report_path.unlink(missing_ok=True)
    output = report_path.with_suffix(".out")
    with tempfile.TemporaryDirectory(prefix=f"alkstore-{entry.module}-") as scratch:
        status = _server().run([*command, "--rootdir", scratch, scratch], env=env, cwd=Path(scratch), output=output)
    if not report_path.exists():
        tail = "\n".join(output.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-30:])
        raise MutantRunError(f"mutant {entry.module}: pytest exited {status} without a report:\n{tail}")
    data: dict[str, Any] = json.loads(report_path.read_text(encoding="utf-8"))
    return data


def mutant_engine(report: dict[str, Any]) -> dict[str, Any]:
    """The report's one engine entry (the mutant's)."""
    engines: list[dict[str, Any]] = report["engines"]
    if len(engines) != 1:
        raise ValueError(f"a mutant run reports exactly one engine, not {[e.get('name') for e in engines]}")
    return engines[0]


def failed_rows(report: dict[str, Any]) -> dict[str, str]:
    """Rows that failed on the report's mutant, with the first line of each failure."""
    return {row["row"]: row["reason"] or "" for row in mutant_engine(report)["rows"] if row["outcome"] == "failed"}
