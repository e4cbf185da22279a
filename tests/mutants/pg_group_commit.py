"""Mutant: the Postgres engine answers each write inside a transaction a timer commits 5 ms later — breaks P3.

Every statement of a store runs on one connection, inside one open
transaction (each statement in a savepoint of its own, so a refused statement
spoils nothing else) that a timer commits ``GROUP_COMMIT_S`` after it began;
``close`` commits what is pending. Within the store nothing looks wrong (the
connection reads its own writes) and a clean close keeps everything. A kill -9
of the engine's process right after an answer rolls the open transaction back,
and so does a crash of the server: both the durability row's kill -9 at the
acknowledgement leg and its server-crash leg catch it, where a kill at a random
moment seldom lands inside 5 ms.
"""

from __future__ import annotations

import asyncio
from typing import Any

from alkstore_postgres import PgDriver

from tests.mutants.catalog import Mutant, postgres_mutant

GROUP_COMMIT_S = 0.005


class GroupCommitDriver(PgDriver):
    """A driver whose statements join one open transaction, committed by a timer ``GROUP_COMMIT_S`` after it began."""

    _conn: Any = None
    _group: Any = None
    _timer: asyncio.Task[None] | None = None
    _lock: asyncio.Lock | None = None

    def _gate(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def _fetch(self, sql: str, *args: object) -> list[Any]:
        async with self._gate():
            if self._conn is None:
                self._conn = await self._pool.acquire()
            if self._group is None:
                self._group = self._conn.transaction()
                await self._group.start()
                self._timer = asyncio.ensure_future(self._commit_later())
            async with self._conn.transaction():
                rows: list[Any] = await self._conn.fetch(sql, *args)
                return rows

    async def _commit_later(self) -> None:
        await asyncio.sleep(GROUP_COMMIT_S)
        async with self._gate():
            await self._commit()

    async def _commit(self) -> None:
        group, self._group, self._timer = self._group, None, None
        if group is not None:
            await group.commit()

    async def close(self) -> None:
        timer = self._timer
        async with self._gate():
            await self._commit()
            if self._conn is not None:
                await self._pool.release(self._conn)
                self._conn = None
        if timer is not None:
            timer.cancel()
        await super().close()


adapter = postgres_mutant("mut-pg-group-commit", driver=GroupCommitDriver)
MUTANT = Mutant(
    clause="P3",
    rows=("durability",),
    what="the Postgres engine answers every write inside a transaction a timer commits 5 ms later "
    "(a kill -9 of the engine or of its server loses it)",
)
