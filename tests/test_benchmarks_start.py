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


SERVER_CPU_PROBE = """
import asyncio, sys
import asyncpg
from bench import server_cpu

async def main(dsn: str) -> None:
    postmaster = await server_cpu.postmaster_of(dsn)
    if postmaster is None:
        print("not local")
        return
    before = server_cpu.cpu_ns(postmaster)
    conn = await asyncpg.connect(dsn)
    await conn.fetchval("SELECT count(*) FROM generate_series(1, 3000000)")
    after = server_cpu.cpu_ns(postmaster)  # before the backend exits, taking its time with it
    await conn.close()
    print(f"spent {server_cpu.spent_s(before, after):.6f}")

asyncio.run(main(sys.argv[1]))
"""


def test_the_profile_reads_the_servers_cpu_when_the_server_runs_here(dsn: str) -> None:
    """``bench.server_cpu`` (``throughput.py --profile``'s server CPU per job) sees a statement's work.

    Counting three million rows takes the server tens of milliseconds of CPU; the backend that did it
    started after the first reading, so it counts from zero. If this fails, check how ``postmaster_of``
    finds the server's processes (the checkpointer's parent) and that ``cpu_ns`` reads every child.
    """
    done = subprocess.run(
        [sys.executable, "-c", SERVER_CPU_PROBE, dsn],
        cwd=BENCHMARKS,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    if done.stdout.strip() == "not local":
        pytest.skip("the Postgres server's processes are not on this machine: no server CPU to read")
    spent = float(done.stdout.split()[-1])
    assert spent > 0.005, f"the server spent {spent} s counting three million rows, by bench.server_cpu"
