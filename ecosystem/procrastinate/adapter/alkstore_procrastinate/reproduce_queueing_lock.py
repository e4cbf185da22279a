"""procrastinate 3.10.0's ``queueing_lock`` as its docs describe it: held while the job waits, not while it runs.

``python ecosystem/procrastinate/adapter/alkstore_procrastinate/reproduce_queueing_lock.py [DSN]`` (DSN defaults
to ``$ALKSTORE_PG_DSN``). It needs procrastinate only (nothing of alkstore): its tables go into a schema of their
own (the connector's ``search_path``), made with ``apply_schema_async`` and dropped at the end.

- ``freed when fetched``: ``configure_task("repro", queueing_lock="report-42").defer_async()`` stores a job; a
  second defer with the lock raises ``AlreadyEnqueued`` while the job waits (``todo``), as procrastinate's docs
  say (“No two jobs with the same queueing lock can be waiting in the queue.”); once a worker fetches the job
  (``doing``), a third defer with the lock stores a second job: the lock does not hold while a job runs (the
  matrix's K1, which holds a key until its job is finished).

Prints one ``SAW:`` line per observation and ``REPRODUCED``/``NOT REPRODUCED``; exits 0 when it showed what
docs/ecosystem.md says, 1 otherwise.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from typing import Any

LOCK = "report-42"


def _say(line: str) -> None:
    """One line of what the run saw, on stdout at once (ci/ecosystem.sh reads it)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _app(dsn: str, schema: str) -> Any:
    from procrastinate import App, PsycopgConnector

    return App(connector=PsycopgConnector(conninfo=dsn, kwargs={"options": f"-c search_path={schema}"}))


async def _freed_when_fetched(app: Any) -> bool:
    from procrastinate.exceptions import AlreadyEnqueued

    defer = app.configure_task("repro", queue="repro", queueing_lock=LOCK)
    first = await defer.defer_async()
    try:
        second = await defer.defer_async()
        _say(f"SAW: job {first} waits; a second defer with its queueing lock stored job {second}")
        return False
    except AlreadyEnqueued as exc:
        _say(f"SAW: job {first} waits; a second defer with its queueing lock raised AlreadyEnqueued: {exc}")
    worker = await app.job_manager.register_worker()
    fetched = await app.job_manager.fetch_job(["repro"], worker)
    third = await defer.defer_async()
    statuses = {job.id: job.status for job in await app.job_manager.list_jobs_async(queueing_lock=LOCK)}
    _say(f"SAW: a worker fetched job {fetched.id if fetched else None}; a third defer stored job {third}; {statuses}")
    return fetched is not None and fetched.id == first and third != first and statuses.get(first) == "doing"


async def scenarios(dsn: str, schema: str) -> list[tuple[str, bool]]:
    app = _app(dsn, schema)
    async with app.open_async():
        await app.connector.execute_query_async(f"CREATE SCHEMA {schema}")
        try:
            await app.schema_manager.apply_schema_async()
            return [("freed when fetched", await _freed_when_fetched(app))]
        finally:
            await app.connector.execute_query_async(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def main(argv: list[str]) -> int:
    dsn = argv[0] if argv else os.environ.get("ALKSTORE_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
    results = asyncio.run(scenarios(dsn, f"procrastinate_repro_{uuid.uuid4().hex[:8]}"))
    for name, shown in results:
        _say(f"{'REPRODUCED' if shown else 'NOT REPRODUCED'}: {name}")
    return 0 if results and all(shown for _, shown in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
