"""The store: an open alkstore SQLite file, and ``open_store`` to get one."""

from __future__ import annotations

import os
import random
from types import TracebackType
from typing import ClassVar, Self

from alkstore_contract.clock import Clock, SystemClock
from alkstore_contract.types import QueueOpts, validate_queue_opts
from alkstore_contract.validation import validate_queue_name
from alkstore_sqlite.database import SqliteDatabase
from alkstore_sqlite.queue import SqliteQueue
from alkstore_sqlite.schema import DEFAULT_SYNCHRONOUS, Synchronous, validate_synchronous


class SqliteStore:
    """An open alkstore SQLite file.

    Any number of stores, in any number of processes, may share one file: every
    claim and every handle op is one atomic statement under SQLite's write lock,
    so a job is never handed out twice (C4, P1, P2). Committed writes survive a
    close, or a crash or ``kill -9`` of the process (WAL with
    ``synchronous=NORMAL``); a power loss may lose the last commits (P3),
    unless the store was opened with ``synchronous="FULL"``.

    A store keeps one connection; several asyncio tasks may share it. Use it as
    ``async with await open_store(path) as store:``, or call ``close()``.
    """

    queue_class: ClassVar[type[SqliteQueue]] = SqliteQueue
    database_class: ClassVar[type[SqliteDatabase]] = SqliteDatabase

    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Clock | None = None,
        seed: int | None = None,
        synchronous: Synchronous = DEFAULT_SYNCHRONOUS,
    ) -> Self:
        """Open (creating if needed) the file at ``path``; see ``open_store``."""
        mode = validate_synchronous(synchronous)
        db = await cls.database_class.connect(
            path, clock=clock if clock is not None else SystemClock(), rng=random.Random(seed), synchronous=mode
        )
        return cls(db)

    @property
    def location(self) -> str:
        """The file this store is open on."""
        return self._db.location

    def queue(self, name: str, opts: QueueOpts | None = None) -> SqliteQueue:
        """S1: a handle on queue ``name`` stamping ``opts`` (default ``QueueOpts()``); no I/O."""
        self._db.check_open("queue")
        validate_queue_name(name)
        return self.queue_class(self._db, name, validate_queue_opts(opts))

    @property
    def closed(self) -> bool:
        return self._db.closed

    async def close(self) -> None:
        """S3: refuse every further op, let running ones finish, close the file. Idempotent."""
        await self._db.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


async def open_store(
    path: str | os.PathLike[str],
    *,
    clock: Clock | None = None,
    seed: int | None = None,
    synchronous: Synchronous = DEFAULT_SYNCHRONOUS,
) -> SqliteStore:
    """Open the alkstore SQLite file at ``path``, creating it and its layout when missing.

    ``clock`` is where every op reads ``now`` (default: the host's ``SystemClock``);
    ``seed`` seeds the store's random source for backoff jitter, so a run can be
    replayed. ``synchronous`` is SQLite's ``PRAGMA synchronous`` for this store's
    connection: ``"NORMAL"`` (default) keeps every commit through a crash or
    ``kill -9`` of the process (P3); ``"FULL"`` flushes each commit to disk, so it
    also survives a power loss or OS crash, and writes are slower. Anything else
    is ``InvalidArgument``, raised before the file is touched. Needs SQLite 3.35
    or newer (``RETURNING``) with JSON functions.
    """
    return await SqliteStore.open(path, clock=clock, seed=seed, synchronous=synchronous)
