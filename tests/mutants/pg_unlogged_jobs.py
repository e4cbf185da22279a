"""Mutant: the jobs table is UNLOGGED, so the server keeps nothing of it across a crash — breaks P3.

contract P3 (``durable``): every committed write survives a crash. Postgres
writes an unlogged table to no WAL and empties it during crash recovery: the
table reads back intact after a clean restart or after any client dies, and
comes back empty after the *server* is killed -9 — exactly what a server that
keeps its data only in memory does (a Redis started with ``--save ''
--appendonly no``). This driver makes the jobs table unlogged when a store opens
(a speed-up a real engine might be tempted by). Only the durability row's
server-crash leg can see it: the close-and-reopen and kill -9 legs pass.
"""

from __future__ import annotations

from typing import Any, Self

from alkstore_postgres import PgDriver

from tests.mutants.catalog import Mutant, postgres_mutant

UNLOGGED_SQL = """
DO $$ BEGIN
    IF (SELECT relpersistence FROM pg_class WHERE oid = '{jobs}'::regclass) = 'p' THEN
        ALTER TABLE {jobs} SET UNLOGGED;
    END IF;
END $$
"""


class UnloggedDriver(PgDriver):
    @classmethod
    async def open(cls, dsn: str, **kwargs: Any) -> Self:
        driver = await super().open(dsn, **kwargs)
        async with driver._pool.acquire() as conn:
            await conn.execute(driver.sql(UNLOGGED_SQL))
        return driver


adapter = postgres_mutant("mut-pg-unlogged-jobs", driver=UnloggedDriver)
MUTANT = Mutant(
    clause="P3",
    rows=("durability",),
    what="the jobs table is UNLOGGED: intact after a client crash or a clean restart, emptied by a server crash",
)
