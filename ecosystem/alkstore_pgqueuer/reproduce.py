"""Reproductions of pgqueuer's safety differences without the suite: only pgqueuer's API and a Postgres server.

``python -m alkstore_pgqueuer.reproduce [DSN]`` (DSN defaults to ``$ALKSTORE_PG_DSN``) makes a schema of its
own, runs each scenario, prints what pgqueuer did, and drops the schema. Exit code 0 when every scenario
showed the behaviour docs/ecosystem.md describes, 1 when one did not (a pgqueuer upgrade changed it).

- ``stale holder completes``: worker A picks a job with a 1 s heartbeat timeout and stops beating; worker B
  re-picks it (a lapsed lease is reclaimable, C1, as the contract wants); A then completes it with
  ``log_jobs(…, "successful")``, which deletes by id: B's job is gone while B holds it (H5, H1).
- ``re-pick counts no attempt``: the same re-pick leaves ``attempts`` where it was, so a job whose worker
  dies each time is handed out without end (C3, C7).
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from datetime import timedelta
from typing import Any

STALE_S = 1.0


async def _scenarios(dsn: str) -> list[tuple[str, bool, str]]:
    import asyncpg
    from pgqueuer.adapters.persistence import qb
    from pgqueuer.db import AsyncpgDriver
    from pgqueuer.domain.settings import DBSettings
    from pgqueuer.domain.types import QueueEntrypoint, QueueManagerId
    from pgqueuer.queries import EntrypointExecutionParameter, Queries

    schema = f"alk_pgq_repro_{uuid.uuid4().hex[:8]}"
    conn = await asyncpg.connect(dsn)
    await conn.execute(f'CREATE SCHEMA "{schema}"')
    await conn.execute(f'SET search_path TO "{schema}"')
    settings = DBSettings(db_schema=schema)
    queries = Queries(
        AsyncpgDriver(conn),
        qbe=qb.QueryBuilderEnvironment(settings=settings),
        qbq=qb.QueryQueueBuilder(settings=settings),
        qbs=qb.QuerySchedulerBuilder(settings=settings),
    )
    found: list[tuple[str, bool, str]] = []
    try:
        await queries.install()
        entry = {QueueEntrypoint("repro"): EntrypointExecutionParameter(concurrency_limit=0)}

        async def pick(worker: uuid.UUID) -> Any:
            jobs = await queries.dequeue(1, entry, QueueManagerId(worker), None, timedelta(seconds=STALE_S))
            return jobs[0] if jobs else None

        (job_id,) = await queries.enqueue("repro", b"{}", 0)
        a, b = uuid.uuid4(), uuid.uuid4()
        held_by_a = await pick(a)
        await asyncio.sleep(STALE_S + 0.5)
        held_by_b = await pick(b)
        attempts_after_repick = None if held_by_b is None else held_by_b.attempts
        await queries.log_jobs([(held_by_a, "successful", None)])
        left = await queries.queue_job_by_id(job_id)
        found.append(
            (
                "stale holder completes",
                held_by_b is not None and left is None,
                f"B re-picked job {job_id}: {held_by_b is not None}; after A's log_jobs(successful) the row is "
                f"{'gone while B holds it' if left is None else 'still there'}",
            )
        )
        found.append(
            (
                "re-pick counts no attempt",
                held_by_a is not None and attempts_after_repick == held_by_a.attempts,
                f"attempts at A's pick: {held_by_a.attempts if held_by_a else None}, at B's re-pick: "
                f"{attempts_after_repick}",
            )
        )
    finally:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await conn.close()
    return found


def main(argv: list[str]) -> int:
    dsn = argv[0] if argv else os.environ.get("ALKSTORE_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
    results = asyncio.run(_scenarios(dsn))
    for name, shown, what in results:
        sys.stdout.write(f"{'REPRODUCED' if shown else 'NOT REPRODUCED'}: {name}: {what}\n")
    return 0 if all(shown for _, shown, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
