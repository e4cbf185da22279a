"""A reproduction of procrastinate's fencing difference without the suite: only procrastinate's API and Postgres.

``python -m alkstore_procrastinate.reproduce [DSN]`` (DSN defaults to ``$ALKSTORE_PG_DSN``) makes a schema of
its own, runs the scenario, prints what procrastinate did, and drops the schema. Exit code 0 when it showed
the behaviour docs/ecosystem.md describes, 1 when it did not (a procrastinate upgrade changed it).

``stale worker completes``: worker A fetches a job and stops beating; after 1 s the job shows as stalled
(``get_stalled_jobs(seconds_since_heartbeat=1)``) and is handed back with ``retry_job``, the library's own
recovery; worker B fetches it; A then finishes it with ``finish_job_by_id_async(…, succeeded,
delete_job=True)``, which deletes by id and status: B's job is gone while B runs it (H5, H1).
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid

STALE_S = 1


async def _scenario(dsn: str) -> tuple[bool, str]:
    import asyncpg
    from procrastinate import App, PsycopgConnector
    from procrastinate.jobs import Job, Status

    schema = f"alk_proc_repro_{uuid.uuid4().hex[:8]}"
    conn = await asyncpg.connect(dsn)
    await conn.execute(f'CREATE SCHEMA "{schema}"')
    app = App(connector=PsycopgConnector(conninfo=dsn, kwargs={"options": f"-c search_path={schema}"}))
    try:
        await app.open_async()
        await app.schema_manager.apply_schema_async()
        manager = app.job_manager
        (job,) = await manager.batch_defer_jobs_async(
            [Job(id=None, queue="repro", lock=None, queueing_lock=None, task_name="repro")]
        )
        a = await manager.register_worker()
        held_by_a = await manager.fetch_job(["repro"], a)
        await asyncio.sleep(STALE_S + 0.5)
        for stalled in await manager.get_stalled_jobs(queue="repro", seconds_since_heartbeat=STALE_S):
            await manager.retry_job(stalled)
        b = await manager.register_worker()
        held_by_b = await manager.fetch_job(["repro"], b)
        if held_by_a is None or job.id is None:
            return False, "worker A fetched nothing"
        await manager.finish_job_by_id_async(job_id=job.id, status=Status.SUCCEEDED, delete_job=True)
        left = list(await manager.list_jobs_async(id=job.id))
        shown = held_by_b is not None and held_by_b.id == job.id and not left
        return shown, (
            f"B fetched job {job.id} again: {held_by_b is not None}; after A's finish_job(succeeded) the job is "
            f"{'gone while B runs it' if not left else 'still there'}"
        )
    finally:
        await app.close_async()
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await conn.close()


def main(argv: list[str]) -> int:
    dsn = argv[0] if argv else os.environ.get("ALKSTORE_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
    shown, what = asyncio.run(_scenario(dsn))
    sys.stdout.write(f"{'REPRODUCED' if shown else 'NOT REPRODUCED'}: stale worker completes: {what}\n")
    return 0 if shown else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
