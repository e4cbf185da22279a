"""The pgqueuer runner (docs/runtime-faults.md): ``describe``, ``enqueue JOBS_FILE``, ``worker``.

The worker is pgqueuer's ``PgQueuer.run`` with a 5 s ``heartbeat_timeout``, after which a picked job whose
heartbeat stopped is picked again by another worker, one job at a time. Its CLI (``pgq run``) is the documented
way, but pgqueuer 1.6.0's ``--log-level`` option hands a string where it wants an enum under the typer this
venv resolves (``AttributeError: 'str' object has no attribute 'name'``), so the runner makes the call the CLI
makes. The client installs pgqueuer's schema on the throwaway cluster before it enqueues.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from importlib.metadata import version

from alkstore_faults.runner_cli import Job, serve

DOCS = "https://pgqueuer.readthedocs.io/en/latest/"
HEARTBEAT_TIMEOUT_S = 5
DESCRIPTION = {
    "library": "pgqueuer",
    "version": version("pgqueuer"),
    "settings": [
        {"name": "PgQueuer.run(heartbeat_timeout=...)", "value": HEARTBEAT_TIMEOUT_S, "doc": DOCS + "cli.html"},
        {"name": "PgQueuer.run(max_concurrent_tasks=..., batch_size=...)", "value": "2, 1", "doc": DOCS + "cli.html"},
        {"name": "entrypoint(concurrency_limit=...)", "value": 1, "doc": DOCS + "pgqueuer.html"},
    ],
    "lease_s": float(HEARTBEAT_TIMEOUT_S),
    "recovery_window_s": 20.0,
    "faults": ["kill9", "pause", "broker_restart", "net_cut", "slow_handler"],
    "promises": [
        {
            "outcome": "lost",
            "faults": ["kill9"],
            "max": 0,
            "quote": "Seconds without a heartbeat before a job is re-picked by another worker.",
            "doc": DOCS + "cli.html",
        }
    ],
    "caveats": [],
}


async def enqueue(jobs: list[Job]) -> None:
    import asyncpg
    from pgqueuer import AsyncpgDriver
    from pgqueuer.queries import Queries

    connection = await asyncpg.connect(os.environ["ALKSTORE_FAULTS_BROKER"])
    try:
        queries = Queries(AsyncpgDriver(connection))
        await queries.install()
        await queries.enqueue(["run_job"] * len(jobs), [json.dumps(job).encode() for job in jobs], [0] * len(jobs))
    finally:
        await connection.close()


async def work() -> None:
    from datetime import timedelta

    from tasks import create_pgqueuer

    pgq = await create_pgqueuer()
    await pgq.run(heartbeat_timeout=timedelta(seconds=HEARTBEAT_TIMEOUT_S), max_concurrent_tasks=2, batch_size=1)


def worker() -> None:
    asyncio.run(work())


if __name__ == "__main__":
    sys.exit(serve(DESCRIPTION, enqueue, worker))
