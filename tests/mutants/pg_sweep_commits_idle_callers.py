"""Mutant: the Postgres sweep ends the transactions left open on connections ``enqueue_in`` ran on — breaks W4.

A housekeeping step with a reason: a session idle in a transaction holds back
vacuum, so this store remembers every connection it ran a statement on and,
before each sweep, ends any transaction still open there with ``COMMIT``.
Among those connections are the callers' of ``enqueue_in``: the sweep commits
the caller's transaction, whose later rollback finds nothing to undo, and the
job outlives it. ``enqueue_in`` itself is right, so a rollback with no store op
in between (W2) still removes the job; the ``transactional_enqueue`` row's leg
"store ops between, then rolled back" catches it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

import asyncpg
from alkstore_postgres import PgDriver

from alkstore_contract.kit import NewJobs
from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, postgres_mutant


class IdleCallersCommittingDriver(PgDriver):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._touched: list[asyncpg.Connection] = []

    async def insert_in(self, transaction: object, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        ids = await super().insert_in(transaction, queue, jobs, now)
        self._touched.append(cast(asyncpg.Connection, transaction))
        return ids

    async def sweep(self, queue: str, now: datetime | None, expired_error: str, exhausted_error: str) -> int:
        for connection in self._touched:
            if not connection.is_closed() and connection.is_in_transaction():
                await connection.execute("COMMIT")  # no session left idle in a transaction, holding back vacuum
        return await super().sweep(queue, now, expired_error, exhausted_error)


adapter = postgres_mutant("mut-pg-sweep-commits-idle-callers", driver=IdleCallersCommittingDriver)
MUTANT = Mutant(
    clause="W4",
    rows=("transactional_enqueue",),
    what="the Postgres sweep sends COMMIT on every connection enqueue_in ran on that is still in a transaction",
)
