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

from alkstore_sqlite.database import Params, SqliteDatabase, Transaction, Written
from alkstore_sqlite.rows import Row

from tests.mutants.catalog import Mutant, sqlite_mutant

GROUP_COMMIT_S = 0.05


class GroupCommitDatabase(SqliteDatabase):
    """A database whose writes return inside a transaction that commits up to 50 ms later."""

    _timer: asyncio.Task[None] | None = None

    async def _join(self, op: str) -> None:
        async with self._gate.shared():
            self.check_open(op)
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

    async def write(self, op: str, sql: str, params: Params, *, bulk: bool = False) -> Written:
        await self._join(op)
        return await super().write(op, sql, params, bulk=bulk)

    async def fetch(self, op: str, sql: str, params: Params, *, bulk: bool = False) -> list[Row]:
        if not sql.lstrip().upper().startswith("SELECT"):
            await self._join(op)
        return await super().fetch(op, sql, params, bulk=bulk)

    @asynccontextmanager
    async def transaction(self, op: str) -> AsyncIterator[Transaction]:
        """A multi-statement op joins the group too, instead of committing on its own."""
        async with self._gate.exclusive():
            self.check_open(op)
            await self._begin_group()
            yield Transaction(self._conn)

    async def close(self) -> None:
        if not self.closed:
            timer = self._timer
            async with self._gate.exclusive():
                await self._commit()
            if timer is not None:
                timer.cancel()
        await super().close()


adapter = sqlite_mutant("mut-sqlite-group-commit", database=GroupCommitDatabase)
MUTANT = Mutant(
    clause="P3",
    rows=("durability",),
    what="every write returns inside an open transaction that a timer commits 50 ms later (kill -9 loses it)",
)
