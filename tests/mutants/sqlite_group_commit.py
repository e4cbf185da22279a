"""Mutant: writes are acknowledged before they are committed (a lazy group commit) — breaks P3.

Every write joins one open transaction that a timer commits ``GROUP_COMMIT_S``
after it began (and ``close`` commits what is pending). Within one process
nothing looks wrong: the store reads its own uncommitted writes, and a clean
close persists them. A kill -9 loses every op of the last window although each
had already returned to its caller: acked jobs come back, enqueued ones vanish.
The ``durability`` row's kill -9 leg catches it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from alkstore_sqlite import SqliteDriver
from alkstore_sqlite.columns import Row
from alkstore_sqlite.database import Params, SqliteDatabase, Transaction, Written

from tests.mutants.catalog import Mutant, sqlite_mutant

GROUP_COMMIT_S = 0.005


class GroupCommitDatabase(SqliteDatabase):
    """A database whose writes return inside a transaction that commits up to 5 ms later."""

    _timer: asyncio.Task[None] | None = None

    async def _join(self) -> None:
        async with self._gate.shared():
            await self._begin_group()

    async def _begin_group(self) -> None:
        """Open the group's transaction unless one is open; the timer commits it later."""
        if self._timer is None:
            self._timer = asyncio.ensure_future(self._commit_later())
            await self._conn.execute("BEGIN IMMEDIATE")

    async def _commit_later(self) -> None:
        await asyncio.sleep(GROUP_COMMIT_S)
        async with self._gate.exclusive():
            await self._commit()

    async def _commit(self) -> None:
        """Commit the open group (the gate is held exclusively)."""
        if self._timer is not None:
            self._timer = None
            await self._conn.execute("COMMIT")

    async def write(self, sql: str, params: Params, *, bulk: bool = False) -> Written:
        await self._join()
        return await super().write(sql, params, bulk=bulk)

    async def fetch(self, sql: str, params: Params, *, bulk: bool = False) -> list[Row]:
        if not sql.lstrip().upper().startswith("SELECT"):
            await self._join()
        return await super().fetch(sql, params, bulk=bulk)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        """A multi-statement op joins the group too, instead of committing on its own."""
        async with self._gate.exclusive():
            await self._begin_group()
            yield Transaction(self._conn)

    async def close(self) -> None:
        if self._closing is None:
            timer = self._timer
            async with self._gate.exclusive():
                await self._commit()
            if timer is not None:
                timer.cancel()
        await super().close()


class GroupCommitDriver(SqliteDriver):
    database_class = GroupCommitDatabase


adapter = sqlite_mutant("mut-sqlite-group-commit", driver=GroupCommitDriver)
MUTANT = Mutant(
    clause="P3",
    rows=("durability",),
    what="every write returns inside an open transaction that a timer commits 5 ms later (kill -9 loses it)",
)
