"""Mutant: the Postgres ``enqueue_in`` reads the server's ``now()``, the caller's transaction start — breaks W3.

contract W3: after the caller commits, the job is stored exactly as
``enqueue`` would have stored it at the op's clock read. A store without a
clock reads the server's, and the engine's statements read it with
``statement_timestamp()``. Inside the caller's transaction ``now()`` (an
alias of ``transaction_timestamp()``) is when the caller's transaction
began, which may be long before the enqueue: this ``enqueue_in`` stamps
``enqueued_at``, ``run_at`` and ``expires_at`` from it, so a job enqueued
with a delay is due early. A store with the suite's manual clock hands the
instant in and never meets it, so the mutant runs on the system clock; the
``transactional_enqueue`` row's leg "committed" lets time pass in the
caller's transaction before the enqueue and catches it.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, cast

import asyncpg
from alkstore_postgres import PgDriver
from alkstore_postgres.driver import _insert_args

from alkstore_contract.kit import NewJobs
from alkstore_contract.types import JobId
from tests.mutants.catalog import Mutant, mutated, postgres_mutant


class TransactionClockDriver(PgDriver):
    INSERT_IN_SQL: ClassVar[str] = mutated(PgDriver.INSERT_SQL, "statement_timestamp()", "now()")

    async def insert_in(self, transaction: object, queue: str, jobs: NewJobs, now: datetime | None) -> list[JobId]:
        connection = cast(asyncpg.Connection, transaction)
        rows = await connection.fetch(self.sql(self.INSERT_IN_SQL), now, *_insert_args(queue, jobs), jobs.payloads)
        return sorted(int(row["id"]) for row in rows)


adapter = postgres_mutant("mut-pg-enqueue-in-transaction-clock", driver=TransactionClockDriver)
MUTANT = Mutant(
    clause="W3",
    rows=("transactional_enqueue",),
    what="the Postgres enqueue_in stamps the job from now(), when the caller's transaction began, not the op's time",
    clock="system",
)
