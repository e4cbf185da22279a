"""Every benchmark starts, and the Postgres claim-plan probe runs end to end.

A benchmark is not run by the project's tests except in a ``--quick`` mode some
have (scale, many workers, soak). One whose imports broke, as
``pg_claim_plan.py``'s did when the Postgres engine became a kit driver, went
unnoticed; so each one here must at least load its modules and print its
``--help``, and ``pg_claim_plan.py --quick`` must explain a real claim of 100
jobs on the server. Nothing about speed is asserted.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_postgres_engine import dsn

__all__ = ["dsn"]

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
TIMEOUT_S = 120


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


@pytest.mark.parametrize("script", sorted(path.name for path in BENCHMARKS.glob("*.py")))
def test_the_benchmark_loads_and_prints_its_help(script: str) -> None:
    done = _run(str(BENCHMARKS / script), "--help")
    assert done.returncode == 0, f"{script} --help exited {done.returncode}:\n{(done.stdout + done.stderr)[-3000:]}"
    assert "usage:" in done.stdout, done.stdout


def test_the_claim_plan_probe_explains_a_claim_of_a_hundred(dsn: str) -> None:
    done = _run(str(BENCHMARKS / "pg_claim_plan.py"), "--quick", "--batch", "100", "--dsn", dsn)
    assert done.returncode == 0, f"pg_claim_plan.py --quick failed:\n{(done.stdout + done.stderr)[-3000:]}"
    assert "claims of 100" in done.stdout, done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith("| 1,000 |")]
    assert rows, done.stdout
