"""Mutant: ``enqueue_in`` shadows the caller's transaction and commits when it ends, however it ended — breaks W2.

The INSERT runs on a connection of the store's own, in a transaction the
store holds open beside the caller's, so the job is invisible to every claim
and ``get_job`` until then (W1 holds). The store commits its transaction once
the caller's has ended, at its next statement, and it knows only that the
caller's transaction ended, not how: a hook on a transaction's end rather than
on its commit (SQLAlchemy's ``after_transaction_end`` where ``after_commit``
was meant). So a commit stores the job as ``enqueue`` would (W3), and a
rollback stores it too. The ``transactional_enqueue`` row's leg "rolled back"
catches it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, cast

import asyncpg
from alkstore_postgres import PgDriver
from alkstore_postgres.driver import _insert_args

from alkstore_contract.kit import NewJobs
from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, postgres_mutant


class Shadow:
    """The store's own transaction holding one ``enqueue_in``'s job, and the caller's connection it follows."""

    def __init__(self, caller: asyncpg.Connection, own: Any, transaction: Any) -> None:
        self.caller, self.own, self.transaction = caller, own, transaction

    @property
    def caller_ended(self) -> bool:
        return bool(self.caller.is_closed() or not self.caller.is_in_transaction())


class ShadowingDriver(PgDriver):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shadows: list[Shadow] = []

    async def insert_in(self, transaction: object, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        own = await self._pool.acquire()
        shadow = Shadow(cast(asyncpg.Connection, transaction), own, own.transaction())
        await shadow.transaction.start()
        self._shadows.append(shadow)
        rows = await own.fetch(self.sql(self.INSERT_SQL), now, *_insert_args(queue, jobs), jobs.payloads)
        return sorted(int(row["id"]) for row in rows)

    async def fetch(self, op: str, template: str, *args: object) -> list[Any]:
        await self._commit_shadows(lambda shadow: shadow.caller_ended)
        return await super().fetch(op, template, *args)

    async def _commit_shadows(self, due: Callable[[Shadow], bool]) -> None:
        """Commit the shadow transactions whose caller's transaction ended (committed or rolled back alike)."""
        for shadow in [shadow for shadow in self._shadows if due(shadow)]:
            self._shadows.remove(shadow)
            await shadow.transaction.commit()
            await self._pool.release(shadow.own)

    async def close(self) -> None:
        await self._commit_shadows(lambda shadow: True)
        await super().close()


adapter = postgres_mutant("mut-pg-enqueue-in-commits-at-end", driver=ShadowingDriver)
MUTANT = Mutant(
    clause="W2",
    rows=("transactional_enqueue",),
    what="the Postgres enqueue_in inserts in a transaction of the store's own, committed once the caller's ends, "
    "committed or rolled back",
)
