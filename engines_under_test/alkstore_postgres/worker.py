"""The Postgres engine's side of ``alkstore worker``: a store per worker, LISTEN/NOTIFY wake-ups, an advisory lock
for the sweep, and the dead letters listed read-only.

The worker runtime (``alkstore_worker``) asks a source what it supports and never imports an engine, as River's
client asks its driver (``SupportsListener``, ``GetListener``): this class has the shape of
``alkstore_worker.sources.WorkerSource`` and of its optional parts (``Listens``, ``TakesTurns``,
``ListsDeadJobs``, ``NamesItsErrors``), and imports nothing of the worker. Logs go to the
``alkstore_postgres.worker`` logger with the structured ``alkstore_event``/``alkstore_fields`` extras, which
``alkstore worker``'s log format turns into JSON lines like its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from alkstore_contract.errors import AlkstoreError
from alkstore_contract.surface import Store
from alkstore_contract.types import Job
from alkstore_postgres.location import quote_ident
from alkstore_postgres.notify import enable_notify, notify_channel
from alkstore_postgres.statements import JOB_COLUMNS

LOG = logging.getLogger(__name__)
POSTGRES_INSTALL = "pip install 'alkstore[postgres]'"


def _log(level: int, event: str, **fields: object) -> None:
    LOG.log(level, "%s %s", event, fields, extra={"alkstore_event": event, "alkstore_fields": fields})


class PostgresSource:
    """A Postgres schema: LISTEN/NOTIFY wake-up (``notify=True``), an advisory lock for the sweep.

    It needs the asyncpg driver, which the ``postgres`` extra installs (``pip install 'alkstore[postgres]'``);
    made without it, it says so at once rather than at the first connection.

    ``listen_dsn`` is where the LISTEN connection goes when it must differ from the store's: a pooler in
    transaction mode (PgBouncer) does not carry LISTEN, so the listener connects to the server directly.
    """

    poll_max_s = 1.0
    """The longest an idle queue loop waits between claims: NOTIFY cuts the wait short."""

    def __init__(
        self, dsn: str, schema: str = "alkstore", *, notify: bool = True, listen_dsn: str | None = None
    ) -> None:
        try:
            import asyncpg  # noqa: F401 - the driver every connection of this source uses
        except ModuleNotFoundError as exc:
            raise ModuleNotFoundError(
                f"PostgresSource needs the asyncpg driver, which is not installed: {POSTGRES_INSTALL}", name="asyncpg"
            ) from exc
        self.dsn = dsn
        self.schema = schema
        self.notify = notify
        self.listen_dsn = listen_dsn if listen_dsn is not None else dsn
        self.description = f"postgres schema {schema}"

    async def open(self) -> Store:
        """A new store on the schema; the caller closes it."""
        from alkstore_postgres.store import open_store

        store: Store = await open_store(self.dsn, schema=self.schema)
        return store

    async def prepare(self) -> None:
        """Install the NOTIFY trigger (once per worker process; idempotent)."""
        if not self.notify:
            return
        import asyncpg

        connection = await asyncpg.connect(self.dsn, timeout=10)
        try:
            await enable_notify(connection, self.schema)
        finally:
            await connection.close()

    def waker(self) -> PgNotifyWaker | None:
        """The LISTEN waker, or ``None`` with ``notify=False`` (the worker polls)."""
        return PgNotifyWaker(self.listen_dsn, notify_channel(self.schema)) if self.notify else None

    def sweep_lock(self) -> PgAdvisoryLock:
        return PgAdvisoryLock(self.dsn, self.schema)

    def unreachable_errors(self) -> tuple[type[BaseException], ...]:
        import asyncpg

        return (OSError, TimeoutError, AlkstoreError, asyncpg.PostgresError, asyncpg.InterfaceError)

    async def dead_jobs(self, queue: str | None, limit: int) -> list[Job]:
        """Dead letters, newest first, read on a connection of their own (the contract has no listing op)."""
        import asyncpg

        connection = await asyncpg.connect(self.dsn, timeout=10)
        try:
            rows = await connection.fetch(
                f"SELECT {', '.join(JOB_COLUMNS)} FROM {quote_ident(self.schema)}.jobs"
                " WHERE state = 'dead' AND ($1::text IS NULL OR queue = $1) ORDER BY died_at DESC, id DESC LIMIT $2",
                queue,
                limit,
            )
        finally:
            await connection.close()
        from alkstore_postgres.driver import pg_jobs

        return pg_jobs([tuple(row) for row in rows])


class PgNotifyWaker:
    """LISTEN on a channel over its own asyncpg connection; reconnects after any cut (a ``Waker`` of the worker).

    Each notification sets every event it handed out; so does a broken connection (a job may have arrived while
    it was deaf), before it reconnects with a backoff: a cut costs at most the worker's poll interval.

    ``check_interval_s`` is how often an idle connection is probed with a
    ``SELECT 1`` (a silently dead TCP connection delivers no notification and
    no error, so only a probe finds it); ``connect_timeout_s`` bounds each
    connect and probe.
    """

    def __init__(
        self,
        dsn: str,
        channel: str,
        *,
        check_interval_s: float = 1.0,
        connect_timeout_s: float = 2.0,
        max_backoff_s: float = 2.0,
    ) -> None:
        self._dsn = dsn
        self._channel = channel
        self._check_interval_s = check_interval_s
        self._connect_timeout_s = connect_timeout_s
        self._max_backoff_s = max_backoff_s
        self._events: list[asyncio.Event] = []
        self._task: asyncio.Task[None] | None = None
        self.connects = 0
        """How many times a LISTEN connection was established (more than 1 means it reconnected)."""
        self.notifications = 0
        self.listening = asyncio.Event()
        """Set while a LISTEN connection is up."""

    def subscribe(self) -> asyncio.Event:
        event = asyncio.Event()
        self._events.append(event)
        return event

    def _wake(self, *_args: object) -> None:
        for event in self._events:
            event.set()

    def _notified(self, *_args: object) -> None:
        self.notifications += 1
        self._wake()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._listen_forever(), name="alkstore-worker-listen")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _listen_forever(self) -> None:
        import asyncpg

        backoff = 0.05
        while True:
            connection: Any = None
            try:
                connection = await asyncpg.connect(self._dsn, timeout=self._connect_timeout_s)
                await connection.add_listener(self._channel, self._notified)
                self.connects += 1
                self.listening.set()
                if self.connects > 1:
                    _log(logging.INFO, "listen_reconnected", connects=self.connects)
                self._wake()
                backoff = 0.05
                while True:
                    await asyncio.sleep(self._check_interval_s)
                    await asyncio.wait_for(connection.execute("SELECT 1"), self._connect_timeout_s)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # any failure of the listen connection: fall back to polling, reconnect
                if self.listening.is_set():
                    _log(logging.WARNING, "listen_lost", error=repr(exc))
                self.listening.clear()
                self._wake()
            finally:
                if connection is not None:
                    connection.terminate()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self._max_backoff_s)


class PgAdvisoryLock:
    """A session advisory lock per schema, taken and released around each sweep on one connection (a
    ``SweepLock`` of the worker): one worker of many sweeps a round, the others skip it."""

    def __init__(self, dsn: str, schema: str, *, timeout_s: float = 5.0) -> None:
        self._dsn = dsn
        self._key = int.from_bytes(hashlib.sha256(b"sweep:" + schema.encode("utf-8")).digest()[:8], "big", signed=True)
        self._timeout_s = timeout_s
        self._connection: Any = None

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[bool]:
        import asyncpg

        try:
            if self._connection is None or self._connection.is_closed():
                self._connection = await asyncpg.connect(self._dsn, timeout=self._timeout_s)
            got = await self._connection.fetchval("SELECT pg_try_advisory_lock($1)", self._key, timeout=self._timeout_s)
        except (OSError, asyncpg.PostgresError, TimeoutError):
            await self.close()
            yield False
            return
        if not got:
            yield False
            return
        try:
            yield True
        finally:
            try:
                await self._connection.execute("SELECT pg_advisory_unlock($1)", self._key, timeout=self._timeout_s)
            except (OSError, asyncpg.PostgresError, TimeoutError):
                await self.close()

    async def close(self) -> None:
        if self._connection is not None:
            self._connection.terminate()
            self._connection = None
