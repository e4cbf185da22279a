"""procrastinate 3.10.0's ``queueing_lock`` as its docs describe it: held while the job waits, not while it runs.

``python ecosystem/procrastinate/adapter/alkstore_procrastinate/reproduce_queueing_lock.py [DSN]`` (DSN defaults
to ``$ALKSTORE_PG_DSN``). It needs procrastinate only (nothing of alkstore; ``../procrastinate_repro.py``, which it
imports, holds what procrastinate's reproductions share): its tables go into a schema of their own (the connector's
``search_path``), made with ``apply_schema_async`` and dropped at the end.

- ``freed when fetched``: ``configure_task("repro", queueing_lock="report-42").defer_async()`` stores a job; a
  second defer with the lock raises ``AlreadyEnqueued`` while the job waits (``todo``), as procrastinate's docs
  say (“No two jobs with the same queueing lock can be waiting in the queue.”); once a worker fetches the job
  (``doing``), a third defer with the lock stores a second job: the lock does not hold while a job runs (the
  matrix's K1, which holds a key until its job is finished).

Prints one ``SAW:`` line per observation and ``REPRODUCED``/``NOT REPRODUCED``; exits 0 when it showed what
docs/ecosystem.md says, 1 otherwise.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the adapter's folder: procrastinate_repro.py
from procrastinate_repro import main, opened, say

LOCK = "report-42"


async def _freed_when_fetched(app: Any) -> bool:
    from procrastinate.exceptions import AlreadyEnqueued

    defer = app.configure_task("repro", queue="repro", queueing_lock=LOCK)
    first = await defer.defer_async()
    try:
        second = await defer.defer_async()
        say(f"SAW: job {first} waits; a second defer with its queueing lock stored job {second}")
        return False
    except AlreadyEnqueued as exc:
        say(f"SAW: job {first} waits; a second defer with its queueing lock raised AlreadyEnqueued: {exc}")
    worker = await app.job_manager.register_worker()
    fetched = await app.job_manager.fetch_job(["repro"], worker)
    third = await defer.defer_async()
    statuses = {job.id: job.status for job in await app.job_manager.list_jobs_async(queueing_lock=LOCK)}
    say(f"SAW: a worker fetched job {fetched.id if fetched else None}; a third defer stored job {third}; {statuses}")
    return fetched is not None and fetched.id == first and third != first and statuses.get(first) == "doing"


async def scenarios(dsn: str, schema: str, _log: Path) -> list[tuple[str, bool]]:
    """The one scenario, run in this process: no worker process writes to the log."""
    async with opened(dsn, schema) as app:
        return [("freed when fetched", await _freed_when_fetched(app))]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], "procrastinate_queueing_lock", scenarios))
