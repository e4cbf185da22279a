"""The database stopped mid-drain for less than a lease: the worker settles what the outage interrupted, no job twice.

Real ``alkstore worker`` processes (two, five slots each) drain jobs from a
throwaway Postgres cluster (``alkstore_postgres.provision``: its own
``initdb``, never the configured server), which is crashed (SIGKILL of the
whole server, as ``pg_ctl stop -m immediate``) mid-drain and started again
``ALKSTORE_OUTAGE_S`` seconds later (default 2). The jobs' lease
(``tests.worker_app.OUTAGE_LEASE_S``, 15 s) outlasts the outage, so every ack
the outage interrupted is repeated through its claim (contract N6) once the
server is back, and no handler completes a job twice. Skipped without
Postgres's server binaries (failed under CI).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from pathlib import Path

import pytest
from alkstore_postgres.provision import ThrowawayCluster, server_bindir

from tests import worker_app
from tests.worker_processes import handler_log, wait_until, workers

JOBS = 150
OUTAGE_S = float(os.environ.get("ALKSTORE_OUTAGE_S", "2"))
SCHEMA = "outage"


async def _enqueue(spec: str) -> list[object]:
    worker_app.app.source = worker_app.source_from(spec)
    try:
        return [await worker_app.outage_job.defer({"seconds": 0.05, "n": n}) for n in range(JOBS)]
    finally:
        await worker_app.app.close()


async def _stored(dsn: str) -> int:
    import asyncpg

    connection = await asyncpg.connect(dsn, timeout=5)
    try:
        return int(await connection.fetchval(f"SELECT count(*) FROM {SCHEMA}.jobs"))
    finally:
        await connection.close()


def test_a_database_outage_shorter_than_the_lease_completes_no_job_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert OUTAGE_S < worker_app.OUTAGE_LEASE_S
    try:
        server_bindir()
    except RuntimeError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(exc))
    cluster = asyncio.run(ThrowawayCluster.create())
    try:
        monkeypatch.setenv("ALKSTORE_PG_DSN", cluster.dsn)
        spec = f"postgres:{SCHEMA}"
        log = tmp_path / "handlers.jsonl"
        ids = asyncio.run(_enqueue(spec))

        def finished() -> Counter[object]:
            return Counter(line["job"] for line in handler_log(log) if line["event"] == "finished")

        with workers(spec, log, "--concurrency", "5", "--sweep-interval", "0", count=2) as started:
            started[0].until(lambda: len(finished()) >= 20, "20 jobs finished before the outage")
            asyncio.run(cluster.kill())
            time.sleep(OUTAGE_S)
            asyncio.run(cluster.start())
            started[0].until(lambda: set(finished()) == set(ids), "every job finished after the outage")
            wait_until(lambda: asyncio.run(_stored(cluster.dsn)) == 0, "every job acked")
            retried = [e for worker in started for e in worker.events() if e["event"] == "settle_retry"]
        twice = {job: count for job, count in finished().items() if count > 1}
        assert twice == {}, f"jobs completed more than once across a {OUTAGE_S:g} s outage: {twice}"
        assert retried, "no settle met the outage: the test did not test what it says"
    finally:
        asyncio.run(cluster.destroy())
