"""One store's connection to its file: how the driver's statements reach SQLite, and in how many thread hops.

Every SQL statement a store runs goes through ``SqliteDatabase``: ``fetch`` and
``write`` run ONE statement, atomic by itself — at most one aiosqlite call, so
one thread hop, which it shares with the other single statements submitted in
the same event-loop turn (see coalesce.py) — and ``transaction`` runs several
between ``BEGIN IMMEDIATE`` and ``COMMIT``.

A ``bulk`` statement (``enqueue_many``, a claim of more than one job,
``ack_batch`` of more than one id) takes a hop of its own instead: its own work
(a hundred rows) outweighs the hop, and sharing would cost more than it saves —
a shared hop answers its statements only after the group's ``COMMIT``, so the
loop could not decode one worker's hundred rows while the thread runs the next
worker's statement. Measured with ``benchmarks/throughput.py`` (4 workers,
batches of 100): claim_batch + ack_batch 0.71× the bare aiosqlite driver when
shared, 0.85–0.93× alone. The thread runs calls in submission order either
way, so a bulk statement whose caller was cancelled still runs before any
later transaction's ``BEGIN``. ``StatementGate`` (see gate.py)
keeps a transaction of one task from interleaving with statements of another
on the shared connection.

Nothing here checks whether the store is closed: the kit refuses every op of
a closed store (S3) before it calls the driver, and nothing awaits between that
check and the op's place in the gate's line. ``close`` takes the gate
exclusively, behind every op already in line, so each op the kit let through
runs on the open connection and the connection closes only after the last.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Self, cast

import aiosqlite

from alkstore_sqlite.coalesce import Params, StatementBatcher, Written
from alkstore_sqlite.columns import Row
from alkstore_sqlite.gate import StatementGate
from alkstore_sqlite.schema import BUSY_TIMEOUT_MS, DEFAULT_SYNCHRONOUS, Synchronous, prepare_connection

__all__ = ["Params", "SqliteDatabase", "Transaction", "Written"]


class Transaction:
    """The statements of one ``BEGIN IMMEDIATE`` … ``COMMIT``; only valid inside ``SqliteDatabase.transaction``."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params) -> int:
        """Run one statement of the transaction (one thread hop); the number of rows it changed."""
        cursor = await self._conn.execute(sql, params)
        return cursor.rowcount


class SqliteDatabase:
    """A store's aiosqlite connection, its statement gate and its statement batcher."""

    def __init__(self, conn: aiosqlite.Connection, *, location: str) -> None:
        self._conn = conn
        self._location = location
        self._gate = StatementGate()
        self._batcher = StatementBatcher(conn)
        self._closing: asyncio.Future[None] | None = None

    @classmethod
    async def connect(cls, path: str | os.PathLike[str], *, synchronous: Synchronous = DEFAULT_SYNCHRONOUS) -> Self:
        """Open ``path`` (created if missing), set the PRAGMAs, and lay out the schema if needed."""
        location = os.fspath(path)
        # isolation_level=None: the sqlite3 module never opens a transaction on its own, so a
        # single statement commits by itself and BEGIN IMMEDIATE is issued only where we mean it.
        conn = await aiosqlite.connect(location, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            # No row factory: rows come back as plain tuples (see columns.py).
            await prepare_connection(conn, synchronous)
        except BaseException:
            await conn.close()
            raise
        return cls(conn, location=location)

    @property
    def location(self) -> str:
        return self._location

    async def fetch(self, sql: str, params: Params, *, bulk: bool = False) -> list[Row]:
        """Run one statement that returns rows (a ``SELECT``, or a write with ``RETURNING``): one hop.

        The rows are stepped out on the connection's thread in the same hop,
        which matters for ``RETURNING``: the write is finished, and committed,
        only once every row has been stepped out. See ``bulk`` in the module docstring.
        """
        async with self._gate.shared():
            if bulk:
                # aiosqlite types its rows as sqlite3.Row; with no row factory they are plain tuples.
                return cast(list[Row], list(await self._conn.execute_fetchall(sql, params)))
            return await self._batcher.fetch(sql, params)

    async def write(self, sql: str, params: Params, *, bulk: bool = False) -> Written:
        """Run one write statement without ``RETURNING``: one hop. See ``bulk`` in the module docstring.

        ``rowcount`` and ``lastrowid`` are this statement's own: read on the
        connection's thread as it finishes, or from its own cursor.
        """
        async with self._gate.shared():
            if bulk:
                cursor = await self._conn.execute(sql, params)
                return Written(rowcount=cursor.rowcount, lastrowid=cursor.lastrowid)
            return await self._batcher.write(sql, params)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on any error or cancellation).

        IMMEDIATE takes the file's write lock up front, waiting up to the busy
        timeout: a deferred transaction that read first and wrote later would
        get ``SQLITE_BUSY`` at the write without waiting at all. Costs two hops
        more than the statements inside it, one hop each: they run in turn,
        each needing the one before.
        """
        async with self._gate.exclusive():
            # A single statement whose caller was cancelled after handing it to the thread may still
            # be running: it must not land inside this transaction.
            await self._batcher.idle()
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
        """Let the ops already in the gate's line finish, then close the connection.

        Idempotent, and safe to cancel: the shutdown runs to the end in its own task.
        """
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._shutdown())
        await asyncio.shield(self._closing)

    async def _shutdown(self) -> None:
        async with self._gate.exclusive():
            await self._batcher.idle()
            await self._conn.close()
