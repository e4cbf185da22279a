"""Where an app's store lives: how to open it, how its idle workers wake, how they take turns sweeping.

The runtime uses only the public ``Store``/``Queue``/``JobHandle`` surface to
run jobs; what differs between engines is outside that surface and lives
here, one small class per engine: a wake-up channel (Postgres NOTIFY), a
lock for the sweep, and listing dead letters (the contract has no "list"
operation, so ``alkstore jobs dead`` reads the engine's table read-only).
A third party's engine is served with ``StoreSource(open)``: polling, every
worker sweeping, no dead-letter listing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from alkstore_contract.errors import AlkstoreError
from alkstore_contract.surface import Store
from alkstore_worker.sweeping import FileLock, NoLock, PgAdvisoryLock, SweepLock
from alkstore_worker.wakeup import PgNotifyWaker, PollWaker, Waker


@dataclass(frozen=True, slots=True)
class DeadJob:
    """One dead letter as ``alkstore jobs dead`` lists it."""

    id: object
    queue: str
    attempts: int
    last_error: str | None
    died_at: str


class StoreSource:
    """A store any engine opens: polling wake-up, every worker sweeps, dead letters not listable."""

    poll_max_s = 0.5
    """The longest an idle queue loop waits between claims (the backoff grows to it from 5 ms)."""

    def __init__(self, open_store: Callable[[], Awaitable[Store]], description: str = "store") -> None:
        self._open = open_store
        self.description = description

    async def open(self) -> Store:
        """A new store; the caller closes it."""
        return await self._open()

    async def prepare(self) -> None:
        """Set up what the workers need beyond the store (a NOTIFY trigger); called once per worker process."""
        return None

    def waker(self) -> Waker:
        """How this worker's idle loops are woken."""
        return PollWaker()

    def sweep_lock(self) -> SweepLock:
        """The lock that lets one worker at a time sweep."""
        return NoLock()

    async def dead_jobs(self, queue: str | None, limit: int) -> list[DeadJob]:
        """Dead letters, newest first; engines without a listing raise ``NotImplementedError``."""
        raise NotImplementedError(f"{self.description}: this engine offers no way to list dead jobs")

    def unreachable_errors(self) -> tuple[type[BaseException], ...]:
        """What opening or reading the store raises when it cannot be reached (the CLI's one line and exit 1):
        an OS or timeout error, or the contract's own; a source adds its driver's."""
        return (OSError, TimeoutError, AlkstoreError)


class SqliteSource(StoreSource):
    """An SQLite file: polling, a file lock beside the database for the sweep."""

    poll_max_s = 0.2

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        super().__init__(self._open_sqlite, f"sqlite:{self.path}")

    async def _open_sqlite(self) -> Store:
        import alkstore_sqlite

        return await alkstore_sqlite.open_store(self.path)

    def sweep_lock(self) -> SweepLock:
        return FileLock(self.path.with_name(self.path.name + ".sweep-lock"))

    def unreachable_errors(self) -> tuple[type[BaseException], ...]:
        return (*super().unreachable_errors(), sqlite3.Error)

    async def dead_jobs(self, queue: str | None, limit: int) -> list[DeadJob]:
        uri = f"{self.path.resolve().as_uri()}?mode=ro"
        with sqlite3.connect(uri, uri=True) as connection:
            rows = connection.execute(
                "SELECT id, queue, attempts, last_error, died_at FROM jobs WHERE state = 'dead'"
                " AND (?1 IS NULL OR queue = ?1) ORDER BY died_at DESC, id DESC LIMIT ?2",
                (queue, limit),
            ).fetchall()
        return [DeadJob(row[0], row[1], row[2], row[3], _from_us(row[4])) for row in rows]


def _from_us(value: object) -> str:
    from alkstore_contract.instants import from_epoch_us

    return from_epoch_us(int(str(value))).isoformat() if value is not None else ""


POSTGRES_INSTALL = "pip install 'alkstore[postgres]'"


class PostgresSource(StoreSource):
    """A Postgres schema: LISTEN/NOTIFY wake-up (``notify=True``), an advisory lock for the sweep.

    It needs the asyncpg driver, which the ``postgres`` extra installs
    (``pip install 'alkstore[postgres]'``); made without it, it says so at once
    rather than at the first connection.

    ``listen_dsn`` is where the LISTEN connection goes when it must differ
    from the store's: a pooler in transaction mode (PgBouncer) does not carry
    LISTEN, so the listener connects to the server directly.
    """

    poll_max_s = 1.0

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
        super().__init__(self._open_pg, f"postgres schema {schema}")

    async def _open_pg(self) -> Store:
        import alkstore_postgres

        store: Store = await alkstore_postgres.open_store(self.dsn, schema=self.schema)
        return store

    async def prepare(self) -> None:
        if not self.notify:
            return
        import asyncpg
        from alkstore_postgres.notify import enable_notify

        connection = await asyncpg.connect(self.dsn, timeout=10)
        try:
            await enable_notify(connection, self.schema)
        finally:
            await connection.close()

    def waker(self) -> Waker:
        if not self.notify:
            return PollWaker()
        from alkstore_postgres.notify import notify_channel

        return PgNotifyWaker(self.listen_dsn, notify_channel(self.schema))

    def sweep_lock(self) -> SweepLock:
        return PgAdvisoryLock(self.dsn, self.schema)

    def unreachable_errors(self) -> tuple[type[BaseException], ...]:
        import asyncpg

        return (*super().unreachable_errors(), asyncpg.PostgresError, asyncpg.InterfaceError)

    async def dead_jobs(self, queue: str | None, limit: int) -> list[DeadJob]:
        import asyncpg
        from alkstore_postgres.location import quote_ident

        connection = await asyncpg.connect(self.dsn, timeout=10)
        try:
            rows = await connection.fetch(
                f"SELECT id, queue, attempts, last_error, died_at FROM {quote_ident(self.schema)}.jobs"
                " WHERE state = 'dead' AND ($1::text IS NULL OR queue = $1) ORDER BY died_at DESC, id DESC LIMIT $2",
                queue,
                limit,
            )
        finally:
            await connection.close()
        return [DeadJob(row[0], row[1], row[2], row[3], _iso(row[4])) for row in rows]


def _iso(value: object) -> str:
    return value.isoformat() if isinstance(value, datetime) else ""


class MemSource(StoreSource):
    """An in-memory space: one process only (``--processes`` > 1 would give each its own jobs)."""

    poll_max_s = 0.05

    def __init__(self, space: str = "default") -> None:
        self.space = space
        super().__init__(self._open_mem, f"mem:{space}")

    async def _open_mem(self) -> Store:
        import alkstore_mem

        return await alkstore_mem.open_store(self.space)
