"""One store's connection to its file, with the clock and random source every op reads.

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

Every entry point re-checks ``closed`` once it holds the gate, so an op that was
waiting while the store closed raises ``StoreClosed`` instead of touching a
closed connection (S3).
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Self, cast

import aiosqlite

from alkstore_contract.clock import Clock
from alkstore_contract.handles import raise_if_closed
from alkstore_sqlite.coalesce import Params, StatementBatcher, Written
from alkstore_sqlite.gate import StatementGate
from alkstore_sqlite.rows import Row
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
    """A store's aiosqlite connection, its statement gate, its clock and its random source."""

    def __init__(self, conn: aiosqlite.Connection, *, location: str, clock: Clock, rng: random.Random) -> None:
        self._conn = conn
        self._location = location
        self._clock = clock
        self._rng = rng
        self._gate = StatementGate()
        self._batcher = StatementBatcher(conn)
        self._closed = False
        self._closing: asyncio.Future[None] | None = None

    @classmethod
    async def connect(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Clock,
        rng: random.Random,
        synchronous: Synchronous = DEFAULT_SYNCHRONOUS,
    ) -> Self:
        """Open ``path`` (created if missing), set the PRAGMAs, and lay out the schema if needed."""
        location = os.fspath(path)
        # isolation_level=None: the sqlite3 module never opens a transaction on its own, so a
        # single statement commits by itself and BEGIN IMMEDIATE is issued only where we mean it.
        conn = await aiosqlite.connect(location, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            # No row factory: rows come back as plain tuples (see rows.py).
            await prepare_connection(conn, synchronous)
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

    async def fetch(self, op: str, sql: str, params: Params, *, bulk: bool = False) -> list[Row]:
        """Run one statement that returns rows (a ``SELECT``, or a write with ``RETURNING``): one hop.

        The rows are stepped out on the connection's thread in the same hop,
        which matters for ``RETURNING``: the write is finished, and committed,
        only once every row has been stepped out. See ``bulk`` in the module docstring.
        """
        async with self._gate.shared():
            self.check_open(op)
            if bulk:
                # aiosqlite types its rows as sqlite3.Row; with no row factory they are plain tuples.
                return cast(list[Row], list(await self._conn.execute_fetchall(sql, params)))
            return await self._batcher.fetch(sql, params)

    async def write(self, op: str, sql: str, params: Params, *, bulk: bool = False) -> Written:
        """Run one write statement without ``RETURNING``: one hop. See ``bulk`` in the module docstring.

        ``rowcount`` and ``lastrowid`` are this statement's own: read on the
        connection's thread as it finishes, or from its own cursor.
        """
        async with self._gate.shared():
            self.check_open(op)
            if bulk:
                cursor = await self._conn.execute(sql, params)
                return Written(rowcount=cursor.rowcount, lastrowid=cursor.lastrowid)
            return await self._batcher.write(sql, params)

    @asynccontextmanager
    async def transaction(self, op: str) -> AsyncIterator[Transaction]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on any error or cancellation).

        IMMEDIATE takes the file's write lock up front, waiting up to the busy
        timeout: a deferred transaction that read first and wrote later would
        get ``SQLITE_BUSY`` at the write without waiting at all. Costs two hops
        more than the statements inside it, one hop each: they run in turn,
        each needing the one before.
        """
        async with self._gate.exclusive():
            self.check_open(op)
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
        """Refuse new ops at once, let ops already running finish, then close the connection.

        Idempotent, and safe to cancel: the shutdown runs to the end in its own task.
        """
        if self._closing is None:
            self._closed = True
            self._closing = asyncio.ensure_future(self._shutdown())
        await asyncio.shield(self._closing)

    async def _shutdown(self) -> None:
        async with self._gate.exclusive():
            await self._batcher.idle()
            await self._conn.close()
