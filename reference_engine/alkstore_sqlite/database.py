"""One store's connection to its file, with the clock and random source every op reads.

Every SQL statement a store runs goes through ``SqliteDatabase``: ``fetch`` and
``write`` run ONE statement in autocommit mode — one aiosqlite call, so one
thread hop — and ``transaction`` runs several between ``BEGIN IMMEDIATE`` and
``COMMIT``. ``StatementGate`` (see gate.py) keeps a transaction of one task from
interleaving with statements of another on the shared connection.

Every entry point re-checks ``closed`` once it holds the gate, so an op that was
waiting while the store closed raises ``StoreClosed`` instead of touching a
closed connection (S3).
"""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Self

import aiosqlite

from alkstore_contract.clock import Clock
from alkstore_contract.handles import raise_if_closed
from alkstore_sqlite.gate import StatementGate
from alkstore_sqlite.schema import BUSY_TIMEOUT_MS, prepare_connection

Params = Mapping[str, object]


@dataclass(frozen=True, slots=True)
class Written:
    """What a write statement reports: rows changed, and the rowid of an ``INSERT``."""

    rowcount: int
    lastrowid: int | None


class Transaction:
    """The statements of one ``BEGIN IMMEDIATE`` … ``COMMIT``; only valid inside ``SqliteDatabase.transaction``."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params) -> int:
        """Run one statement of the transaction (one thread hop); the number of rows it changed."""
        cursor = await self._conn.execute(sql, params)
        return cursor.rowcount


class SqliteDatabase:
    """A store's aiosqlite connection, its statement gate, its clock and its random source."""

    def __init__(self, conn: aiosqlite.Connection, *, location: str, clock: Clock, rng: random.Random) -> None:
        self._conn = conn
        self._location = location
        self._clock = clock
        self._rng = rng
        self._gate = StatementGate()
        self._closed = False
        self._closing: asyncio.Future[None] | None = None

    @classmethod
    async def connect(cls, path: str | os.PathLike[str], *, clock: Clock, rng: random.Random) -> Self:
        """Open ``path`` (created if missing), set the PRAGMAs, and lay out the schema if needed."""
        location = os.fspath(path)
        # isolation_level=None: the sqlite3 module never opens a transaction on its own, so a
        # single statement commits by itself and BEGIN IMMEDIATE is issued only where we mean it.
        conn = await aiosqlite.connect(location, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            conn.row_factory = sqlite3.Row
            await prepare_connection(conn)
        except BaseException:
            await conn.close()
            raise
        return cls(conn, location=location, clock=clock, rng=rng)

    @property
    def location(self) -> str:
        return self._location

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def rng(self) -> random.Random:
        """The store's own random source (backoff jitter), seeded by ``open_store(seed=…)``."""
        return self._rng

    def check_open(self, op: str) -> None:
        raise_if_closed(self._closed, op)

    def now(self) -> datetime:
        """The op's one clock read (T1, T2); call it once per op and pass the value along."""
        return self._clock.now()

    async def fetch(self, op: str, sql: str, params: Params) -> list[sqlite3.Row]:
        """Run one statement that returns rows (a ``SELECT`` or a write with ``RETURNING``): one hop.

        Fetching inside the same call matters for ``RETURNING``: the write is
        finished, and its implicit transaction committed, only once every row
        has been stepped out.
        """
        async with self._gate.shared():
            self.check_open(op)
            return list(await self._conn.execute_fetchall(sql, params))

    async def write(self, op: str, sql: str, params: Params) -> Written:
        """Run one write statement without ``RETURNING``: one hop.

        The sqlite3 cursor records ``rowcount`` and ``lastrowid`` on the
        connection's thread as the statement finishes, so reading them costs no
        further hop and cannot see another statement's counts.
        """
        async with self._gate.shared():
            self.check_open(op)
            cursor = await self._conn.execute(sql, params)
            return Written(rowcount=cursor.rowcount, lastrowid=cursor.lastrowid)

    @asynccontextmanager
    async def transaction(self, op: str) -> AsyncIterator[Transaction]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on any error or cancellation).

        IMMEDIATE takes the file's write lock up front, waiting up to the busy
        timeout: a deferred transaction that read first and wrote later would
        get ``SQLITE_BUSY`` at the write without waiting at all. Costs two hops
        more than the statements inside it.
        """
        async with self._gate.exclusive():
            self.check_open(op)
            await self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield Transaction(self._conn)
                await self._conn.execute("COMMIT")
            except BaseException:
                # Queued behind whatever this task already submitted, and before anything another
                # task can submit (the gate is still held), even if this await is itself cancelled.
                await self._conn.rollback()
                raise

    async def close(self) -> None:
        """Refuse new ops at once, let ops already running finish, then close the connection.

        Idempotent, and safe to cancel: the shutdown runs to the end in its own task.
        """
        if self._closing is None:
            self._closed = True
            self._closing = asyncio.ensure_future(self._shutdown())
        await asyncio.shield(self._closing)

    async def _shutdown(self) -> None:
        async with self._gate.exclusive():
            await self._conn.close()
