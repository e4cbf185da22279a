"""The connections a store holds out of its asyncpg pool between statements: a statement costs its round trip.

A checkout from asyncpg's pool and its release cost more client CPU than the
statement they wrap: the acquire runs under ``asyncio.timeout``, the release
under ``asyncio.shield`` (a task of its own, two more trips round the event
loop) and under a second timeout, and the pool re-arms an inactivity timer on
every release; measured here (``throughput.py --profile``), 5 loop iterations,
a task and 4 timers per statement against the bare driver's 2, 0 and 0, and
about twice its CPU per job. So a store checks a connection out once and keeps
it: after a statement that succeeded, the connection goes onto a stack of idle
ones, and the next statement takes the top one without awaiting anything.
Everything else still goes through the pool, which keeps its meaning:

- A statement that raised, whatever the error, gives its connection back to
  the pool (``Pool.release``, bounded by ``connect_timeout_s``): the pool waits
  for the cancel request a timed-out statement sent, or terminates the
  connection, and opens a fresh one on a later checkout (contract N1, N2). Only
  a connection whose statement just returned normally, so with no command in
  flight and no transaction open, goes onto the stack.
- A connection the server or the network closed while it sat on the stack was
  already handed back to the pool by asyncpg, which detaches it; taking it
  from the stack finds it unusable and takes the next one, or checks out anew.
- While a checkout waits on the pool (more statements in flight than
  ``max_size``, or the upkeep's vacuum), releases go to the pool, so the
  waiter gets a connection rather than the stack.
- One release in ``ROTATE_EVERY`` goes to the pool anyway, so the pool's own
  hygiene (``max_queries``, ``expire_connections``) still reaches every
  connection; and every ``TRIM_S`` the connections that no statement needed
  since the last trim (the bottom of the stack) go back to the pool, whose
  inactivity timer then closes them down to ``min_size`` as before.

Each held connection also keeps its statements prepared (``Connection.prepare``),
one per SQL text, made by the first statement of that text on it. A
prepared statement's ``fetch`` goes straight to the protocol, where the
connection's ``fetch`` finds the statement in asyncpg's cache through three
more coroutines first: counted with cachegrind on a two-parameter ``SELECT``,
88,000 client instructions a statement against 105,000 through the pool's
proxy (``benchmarks/pg_instructions.py``). The prepared statements
of a connection are dropped when it goes back to the pool (asyncpg refuses
them from then on anyway).

Statements are never retried here (N3): a connection is only chosen before a
statement is sent. The one exception is a statement the server refused to
start because the table changed under its plan (``InvalidCachedStatementError``,
after a migration): nothing ran, and it runs again, prepared anew, as asyncpg
itself does for the statements it caches.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from alkstore_postgres.deadlines import StatementDeadlines

logger = logging.getLogger(__name__)

ROTATE_EVERY = 1_000
"""One release in this many goes through the pool rather than onto the stack."""
TRIM_S = 10.0
"""How often connections unused since the last trim are handed back to the pool."""


def _usable(conn: Any) -> bool:
    """Whether a connection taken off the stack can run a statement (asyncpg detaches one that was lost)."""
    try:
        return not conn.is_closed()
    except asyncpg.exceptions.InterfaceError:
        return False


class HeldConnections:
    """Idle connections held out of one asyncpg pool, most recently used first."""

    def __init__(self, pool: Any, connect_timeout_s: float, op_timeout_s: float) -> None:
        self._pool = pool
        self._connect_timeout_s = connect_timeout_s
        self._deadlines = StatementDeadlines(op_timeout_s)
        self._idle: list[Any] = []
        self._prepared: dict[Any, dict[str, Any]] = {}
        """Each connection checked out of the pool, with its prepared statements by SQL text."""
        self._unused = 0
        """The fewest idle connections since the last trim: that many were not needed."""
        self._waiting = 0
        self._releases = 0
        self._trim: asyncio.TimerHandle | None = None
        self._handing_back: set[asyncio.Task[None]] = set()
        self._closed = False

    async def acquire(self) -> Any:
        """The most recently used idle connection, else one checked out of the pool within ``connect_timeout_s``."""
        idle = self._idle
        while idle:
            conn = idle.pop()
            if len(idle) < self._unused:
                self._unused = len(idle)
            if _usable(conn):
                return conn
            await self._give_back(conn)
        self._waiting += 1
        try:
            conn = await self._pool.acquire(timeout=self._connect_timeout_s)
        finally:
            self._waiting -= 1
        self._prepared[conn] = {}
        return conn

    async def fetch(self, sql: str, *args: object) -> list[Any]:
        """Run one statement on a held connection: kept for the next statement if it returned, else given back.

        The statement runs prepared on that connection (prepared by its first
        run there) and is bounded by the store's ``StatementDeadlines`` (N1),
        its preparation included. The
        top of the stack is taken here rather than through ``acquire``: this
        runs once per statement, and awaiting ``acquire`` would add a
        coroutine to every one.
        """
        idle = self._idle
        if idle and len(idle) > self._unused:
            conn = idle.pop()
            if not _usable(conn):
                await self._give_back(conn)
                conn = await self.acquire()
        else:
            conn = await self.acquire()
        prepared = self._prepared[conn]
        deadlines = self._deadlines
        task = deadlines.started()
        try:
            statement = prepared.get(sql)
            if statement is None:
                statement = prepared[sql] = await conn.prepare(sql)
            try:
                rows: list[Any] = await statement.fetch(*args)
            except asyncpg.exceptions.InvalidCachedStatementError:
                statement = prepared[sql] = await conn.prepare(sql)
                rows = await statement.fetch(*args)
        except BaseException as exc:
            raised = deadlines.failed(task, exc)
            await self._give_back(conn)
            if raised is exc:
                raise
            raise raised from exc
        deadlines.ended(task)
        if not self._keep(conn):
            await self._give_back(conn)
        return rows

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Any]:
        """A held connection for more than one statement (the upkeep's vacuum), released as ``fetch`` releases."""
        conn = await self.acquire()
        try:
            yield conn
        except BaseException:
            await self._give_back(conn)
            raise
        if not self._keep(conn):
            await self._give_back(conn)

    def _keep(self, conn: Any) -> bool:
        """Put a connection whose statement returned normally on the stack; ``False`` if it must go to the pool."""
        self._releases += 1
        if self._closed or self._waiting or self._releases % ROTATE_EVERY == 0:
            return False
        self._idle.append(conn)
        if self._trim is None:
            self._trim = asyncio.get_running_loop().call_later(TRIM_S, self._trim_unused)
        return True

    async def _give_back(self, conn: Any) -> None:
        """To the pool, which waits ``connect_timeout_s`` at most for a pending cancel, else terminates it (N1, N2)."""
        self._prepared.pop(conn, None)
        await self._pool.release(conn, timeout=self._connect_timeout_s)

    def _trim_unused(self) -> None:
        unused, self._idle = self._idle[: self._unused], self._idle[self._unused :]
        self._unused = len(self._idle)
        self._trim = None
        if unused:
            task = asyncio.get_running_loop().create_task(self._give_back_all(unused))
            self._handing_back.add(task)
            task.add_done_callback(self._handing_back.discard)
        if self._idle:
            self._trim = asyncio.get_running_loop().call_later(TRIM_S, self._trim_unused)

    async def _give_back_all(self, conns: list[Any]) -> None:
        for conn in conns:
            try:
                await self._give_back(conn)
            except Exception as exc:  # the pool terminates what it cannot take back; nothing is lost
                logger.warning("alkstore: handing an idle connection back to the pool failed: %r", exc)

    async def close(self) -> None:
        """Hand every idle connection back to the pool (before it closes); later releases go to the pool too."""
        self._closed = True
        if self._trim is not None:
            self._trim.cancel()
            self._trim = None
        idle, self._idle = self._idle, []
        await self._give_back_all(idle)
        if self._handing_back:
            await asyncio.wait(self._handing_back)
