"""Mutant: the Postgres ``enqueue_in`` runs its INSERT on a connection of the store's own pool — breaks W1, W2.

The statement is the right one, but not inside the caller's transaction: it
commits by itself, so the job is claimable before the caller commits and
survives the caller's rollback — the very thing a transactional enqueue
exists to prevent (a job for an order that was never saved). The
``transactional_enqueue`` row catches it.
"""

from __future__ import annotations

from datetime import datetime

from alkstore_postgres import PgDriver

from alkstore_contract.kit import NewJobs
from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, postgres_mutant


class SelfCommittingDriver(PgDriver):
    async def insert_in(self, transaction: object, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        return await self.insert(queue, jobs, now)


adapter = postgres_mutant("mut-pg-enqueue-in-commits", driver=SelfCommittingDriver)
MUTANT = Mutant(
    clause="W1",
    rows=("transactional_enqueue",),
    what="the Postgres enqueue_in inserts on the store's own connection, which commits without the caller",
)
