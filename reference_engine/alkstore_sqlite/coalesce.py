"""Running the single statements that tasks submit while the connection's thread is busy in ONE hop.

Every aiosqlite call is a hop to the connection's thread and back: the thread
is woken, runs the call, and wakes the event loop with the result. On a loaded
two-core machine that round trip costs about 110 µs, while a claim or an ack by
primary key costs SQLite some 10–30 µs. Four workers on one store, each
claiming and acking, would spend most of their time waking threads.

``StatementBatcher`` hands a statement to the thread at once, as a batch of
one, and keeps that batch *open* until the thread starts it: a statement
submitted meanwhile — while the thread is still busy with the hop before, or
simply has not been scheduled yet — joins the open batch instead of costing a
hop of its own. A lone task therefore waits for nothing, and tasks that submit
together share a hop. The thread closes the batch (under a lock, so a late
joiner either makes it or starts the next batch) and runs its statements in
the order they joined, each to its own result — its rows, or its row count and
rowid. Nothing about a statement changes: the same SQL with the same
parameters, so a handle's fenced ``UPDATE``/``DELETE`` still reports its own
``True``/``False``.

Two or more statements run inside one ``BEGIN IMMEDIATE`` … ``COMMIT``: a
commit appends every page the statement touched to the WAL, so four acks in
one commit write each shared index page once instead of four times. No result
is delivered before the ``COMMIT`` returns, so a caller still only hears of a
write once it is durable (P3). If any statement of the group fails, or the
``COMMIT`` does, the group is rolled back — nothing of it was committed — and
its statements run again one by one in autocommit mode, so each caller gets
exactly the outcome it would have had alone. A connection already inside a
transaction (a caller that issued ``BEGIN`` itself) is never wrapped.

Cancellation: once submitted, a statement runs to the end, like any aiosqlite
call; a cancelled caller just never sees its outcome. The task that submitted
a batch delivers its outcomes to every statement in it; if that task is
cancelled meanwhile, a task of its own takes over the delivery.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field

import aiosqlite

from alkstore_sqlite.columns import Row

Params = Mapping[str, object]

BEGIN_GROUP = "BEGIN IMMEDIATE"
"""IMMEDIATE: the write lock is taken up front (waiting up to the busy timeout), never mid-group."""


@dataclass(frozen=True, slots=True)
class Written:
    """What a write statement reports: rows changed, and the rowid of an ``INSERT``."""

    rowcount: int
    lastrowid: int | None


Outcome = list[Row] | Written | BaseException
"""A statement's rows (``fetch``), its counts (``write``), or the exception it raised."""


@dataclass(slots=True)
class _Statement:
    sql: str
    params: Params
    fetch: bool
    result: asyncio.Future[list[Row] | Written] = field(repr=False)


@dataclass(slots=True)
class _Batch:
    """The statements of one hop: open to more until the connection's thread starts it."""

    statements: list[_Statement]
    lock: threading.Lock = field(default_factory=threading.Lock)
    closed: bool = False
    outcomes: list[Outcome] | None = None
    """Set on the connection's thread once the hop has run."""

    def join(self, statement: _Statement) -> bool:
        """On the loop: add ``statement`` unless the thread has started the batch already."""
        with self.lock:
            if self.closed:
                return False
            self.statements.append(statement)
            return True

    def close(self) -> list[_Statement]:
        """No statement joins any more; the final list."""
        with self.lock:
            self.closed = True
        return self.statements


def _run_one(conn: sqlite3.Connection, statement: _Statement) -> list[Row] | Written:
    cursor = conn.execute(statement.sql, statement.params)
    if statement.fetch:
        # Stepping out every row finishes the statement (and, for RETURNING, its write).
        return cursor.fetchall()
    return Written(rowcount=cursor.rowcount, lastrowid=cursor.lastrowid)


def _run_alone(conn: sqlite3.Connection, statement: _Statement) -> Outcome:
    try:
        return _run_one(conn, statement)
    except Exception as exc:
        return exc


def _run_group(conn: sqlite3.Connection, statements: list[_Statement]) -> list[Outcome] | None:
    """Every statement inside one transaction; ``None`` (and nothing committed) if any of it failed."""
    try:
        conn.execute(BEGIN_GROUP)
    except sqlite3.Error:
        return None
    try:
        outcomes: list[Outcome] = [_run_one(conn, statement) for statement in statements]
        conn.execute("COMMIT")
    except Exception:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return None
    return outcomes


def _run_batch(conn: aiosqlite.Connection, batch: _Batch) -> None:
    """On the connection's thread: close the batch, run its statements, record their outcomes on it."""
    statements = batch.close()
    try:
        # aiosqlite keeps its sqlite3 connection private; this runs on the one thread allowed to use it.
        raw: sqlite3.Connection = conn._conn
        outcomes = None
        if len(statements) > 1 and not raw.in_transaction:
            outcomes = _run_group(raw, statements)
        if outcomes is None:
            outcomes = [_run_alone(raw, statement) for statement in statements]
    except Exception as exc:  # the connection is gone: no statement ran
        outcomes = [exc] * len(statements)
    batch.outcomes = outcomes


def _barrier() -> None:
    """A no-op hop: the connection's thread runs calls in order, so it returns once every earlier hop has."""


class StatementBatcher:
    """Single statements of one aiosqlite connection, as many per thread hop as arrive before it starts."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn
        self._open: _Batch | None = None
        """The batch submitted last, which statements may join until the thread starts it."""
        self._unfinished = 0
        """Batches submitted whose outcomes are not delivered yet."""
        self._idle: asyncio.Future[None] | None = None
        self._detached: set[asyncio.Task[None]] = set()

    async def fetch(self, sql: str, params: Params) -> list[Row]:
        """Run one statement and return all its rows (a ``SELECT``, or a write with ``RETURNING``)."""
        rows = await self._submit(_Statement(sql, params, True, asyncio.get_running_loop().create_future()))
        assert isinstance(rows, list)
        return rows

    async def write(self, sql: str, params: Params) -> Written:
        """Run one write statement; its row count and rowid, read on the thread as it finished."""
        written = await self._submit(_Statement(sql, params, False, asyncio.get_running_loop().create_future()))
        assert isinstance(written, Written)
        return written

    async def idle(self) -> None:
        """Wait until every submitted statement has run and been answered (before a transaction or a close)."""
        while self._unfinished:
            if self._idle is None:
                self._idle = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._idle)

    async def _submit(self, statement: _Statement) -> list[Row] | Written:
        batch = self._open
        if batch is None or not batch.join(statement):
            batch = self._open = _Batch([statement])
            self._unfinished += 1
            await self._run(batch)
        return await statement.result

    async def _run(self, batch: _Batch) -> None:
        """Run ``batch`` in one hop and deliver its outcomes, however this task ends."""
        try:
            await self._hop(_run_batch, self._conn, batch)
        except asyncio.CancelledError:
            # The hop is queued and runs to the end regardless: deliver once it has.
            self._detach(self._deliver_after_hop(batch))
            raise
        except Exception as exc:  # the hop was refused (the connection is closed): nothing ran
            batch.outcomes = [exc] * len(batch.close())
        self._finish(batch)

    async def _deliver_after_hop(self, batch: _Batch) -> None:
        try:
            await self._hop(_barrier)
        finally:
            self._finish(batch)

    async def _hop(self, fn: Callable[..., None], *args: object) -> None:
        """One aiosqlite call running ``fn(*args)`` on the connection's thread (aiosqlite's ``_execute`` is untyped)."""
        await self._conn._execute(fn, *args)  # type: ignore[no-untyped-call]

    def _finish(self, batch: _Batch) -> None:
        if self._open is batch:
            self._open = None
        outcomes = batch.outcomes
        for index, statement in enumerate(batch.close()):
            if statement.result.done():  # its caller was cancelled meanwhile
                continue
            outcome = None if outcomes is None else outcomes[index]
            if outcome is None:  # the hop's outcome never came back (the loop is shutting down)
                statement.result.cancel()
            elif isinstance(outcome, BaseException):
                statement.result.set_exception(outcome)
            else:
                statement.result.set_result(outcome)
        self._unfinished -= 1
        if self._idle is not None and not self._unfinished:
            self._idle.set_result(None)
            self._idle = None

    def _detach(self, coroutine: Coroutine[object, object, None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._detached.add(task)
        task.add_done_callback(self._detached.discard)
