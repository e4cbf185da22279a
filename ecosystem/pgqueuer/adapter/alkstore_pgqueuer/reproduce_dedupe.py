"""pgqueuer 1.6.0's ``dedupe_key`` as its docs describe it: one key across every entrypoint of its table.

``python ecosystem/pgqueuer/adapter/alkstore_pgqueuer/reproduce_dedupe.py [DSN]`` (DSN defaults to
``$ALKSTORE_PG_DSN``). It needs pgqueuer and asyncpg only (nothing of alkstore): its tables get a prefix of their own
(``PGQUEUER_PREFIX``, pgqueuer's documented namespacing), installed with ``Queries.install()`` and removed
with ``Queries.uninstall()``.

- ``one key across entrypoints``: ``Queries.enqueue("reports", …, dedupe_key="report-42")`` stores a job; the
  same key enqueued on another entrypoint, ``"invoices"``, with ``on_conflict="skip"`` is skipped (``None``)
  while the first job is queued: pgqueuer's unique index is over ``dedupe_key`` alone, so a key is not per
  entrypoint (the matrix's K1, where a contract queue is an entrypoint).
- ``held while picked``: the first job is dequeued (picked); the same key on its own entrypoint is skipped
  still, and once the job is logged successful the key is free again (what K1 and K2 ask, which pgqueuer keeps).

Prints one ``SAW:`` line per observation and ``REPRODUCED``/``NOT REPRODUCED`` per scenario; exits 0 when both
showed what docs/ecosystem.md says, 1 otherwise.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from datetime import timedelta
from typing import Any

KEY = "report-42"


def _say(line: str) -> None:
    """One line of what the run saw, on stdout at once (ci/ecosystem.sh reads it)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def _rows(conn: Any, table: str) -> list[tuple[str, str]]:
    found = await conn.fetch(f"SELECT entrypoint, status::text FROM {table} WHERE dedupe_key = $1 ORDER BY id", KEY)
    return [(row["entrypoint"], row["status"]) for row in found]


async def _across(queries: Any, conn: Any, table: str) -> bool:
    first = await queries.enqueue("reports", b"first", dedupe_key=KEY)
    other = await queries.enqueue(["invoices"], [b"other"], [0], dedupe_key=[KEY], on_conflict="skip")
    rows = await _rows(conn, table)
    _say(f"SAW: enqueue on 'reports' gave {first}; the same key on 'invoices' gave {other}; rows with it: {rows}")
    return other == [None] and rows == [("reports", "queued")]


async def _picked(queries: Any, conn: Any, table: str) -> bool:
    from pgqueuer.queries import EntrypointExecutionParameter

    picked = await queries.dequeue(
        batch_size=1,
        entrypoints={"reports": EntrypointExecutionParameter(concurrency_limit=0)},
        queue_manager_id=uuid.uuid4(),
        global_concurrency_limit=None,
        heartbeat_timeout=timedelta(seconds=30),
    )
    again = await queries.enqueue(["reports"], [b"again"], [0], dedupe_key=[KEY], on_conflict="skip")
    _say(f"SAW: picked {[job.id for job in picked]}; the key enqueued again while picked gave {again}")
    await queries.log_jobs([(job, "successful", None) for job in picked])
    after = await queries.enqueue(["reports"], [b"after"], [0], dedupe_key=[KEY], on_conflict="skip")
    _say(f"SAW: once it was logged successful, the key enqueued again gave {after}")
    return len(picked) == 1 and again == [None] and after[0] is not None


async def scenarios(dsn: str) -> list[tuple[str, bool]]:
    import asyncpg
    from pgqueuer.db import AsyncpgDriver
    from pgqueuer.queries import Queries

    conn = await asyncpg.connect(dsn)
    queries = Queries(AsyncpgDriver(conn))
    table = f"{os.environ['PGQUEUER_PREFIX']}pgqueuer"
    await queries.install()
    try:
        return [
            ("one key across entrypoints", await _across(queries, conn, table)),
            ("held while picked", await _picked(queries, conn, table)),
        ]
    finally:
        await queries.uninstall()
        await conn.close()


def main(argv: list[str]) -> int:
    dsn = argv[0] if argv else os.environ.get("ALKSTORE_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
    os.environ["PGQUEUER_PREFIX"] = f"repro{uuid.uuid4().hex[:8]}_"
    results = asyncio.run(scenarios(dsn))
    for name, shown in results:
        _say(f"{'REPRODUCED' if shown else 'NOT REPRODUCED'}: {name}")
    return 0 if results and all(shown for _, shown in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
